//! A panic of the YAML parser, turned into an error the caller reports.
//!
//! Why: the `libyaml-safer` port still has a few `panic!`s where C libyaml has
//! code it did not port (a tag followed by `,` inside `[...]` panics with
//! "TODO"). Every such place is reached only by a text go-yaml refuses too, so
//! an error is the right answer; a panic would end the command (issue #28:
//! bad input is an error, never a panic). The panic hook is told to stay quiet
//! for these, so no "thread panicked" line reaches the user's terminal.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Whether this thread is inside [`contain`]: its panics are not printed.
    static CONTAINING: Cell<bool> = const { Cell::new(false) };
}

static QUIET_HOOK: Once = Once::new();

/// Runs `parse`; a panic inside it is `Err` with the panic's message.
pub(super) fn contain<T>(parse: impl FnOnce() -> T) -> Result<T, String> {
    QUIET_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CONTAINING.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let outer = CONTAINING.with(|containing| containing.replace(true));
    let outcome = catch_unwind(AssertUnwindSafe(parse));
    CONTAINING.with(|containing| containing.set(outer));
    outcome.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|message| message.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_an_error_with_its_message_and_the_thread_goes_on() {
        assert_eq!(contain(|| 7), Ok(7));
        let caught: Result<(), String> = contain(|| panic!("TODO: What is expected here?"));
        assert_eq!(caught, Err("TODO: What is expected here?".to_string()));
        let formatted: Result<(), String> = contain(|| panic!("{} {}", "unexpected", "end"));
        assert_eq!(formatted, Err("unexpected end".to_string()));
        assert!(!CONTAINING.with(Cell::get), "the thread is no longer quiet");
    }
}
