//! Whether to print in color: only to a terminal, and never when `NO_COLOR` is set
//! (<https://no-color.org>). Plugins call [`init`] once; `colored` then obeys it.

use std::io::IsTerminal;

/// Decides color for standard output and tells `colored`. Returns the decision.
pub fn init() -> bool {
    let enabled = enabled_for(std::io::stdout().is_terminal(), std::env::var_os("NO_COLOR"));
    colored::control::set_override(enabled);
    enabled
}

/// The rule: a terminal, and `NO_COLOR` unset or empty.
pub fn enabled_for(is_terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    is_terminal && no_color.is_none_or(|v| v.is_empty())
}

/// A stable palette for things told apart by color (managers, owners): the `index`-th color.
pub fn palette(index: usize) -> colored::Color {
    use colored::Color::*;
    const COLORS: [colored::Color; 10] =
        [Cyan, Yellow, Magenta, Green, Blue, BrightRed, BrightCyan, BrightYellow, BrightMagenta, BrightGreen];
    COLORS[index % COLORS.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_and_pipes_turn_color_off() {
        assert!(enabled_for(true, None));
        assert!(enabled_for(true, Some("".into())));
        assert!(!enabled_for(true, Some("1".into())));
        assert!(!enabled_for(false, None));
        assert_ne!(palette(0), palette(1));
        assert_eq!(palette(0), palette(10));
    }
}
