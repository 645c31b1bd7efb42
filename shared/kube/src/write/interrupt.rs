//! Ctrl-C and SIGTERM while writes are in flight, handled as kubectl-style tools handle
//! them: the first signal stops new work, lets the writes in flight finish (so their
//! backup records are settled), lets a bulk run print its summary, and the command then
//! exits 130 (SIGINT), 143 (SIGTERM) or 129 (SIGHUP); a second signal exits at once. With nothing in
//! flight (a prompt, a read, a listing) the first signal exits at once.
//!
//! [`crate::cli::entry::run`] listens for the signals and reports them here; the write
//! path ([`crate::write::guarded`], [`crate::write::bulk`]) marks the stretches that must
//! finish with [`InFlight`] and checks [`received`] before it starts anything new.
//!
//! A watch (`kubectl owners watch`) holds [`Summarizing`] instead: the first signal stops it,
//! it prints its summary, and the command exits 130 or 143.
//!
//! A signal that ends the command at once says what happened ([`Action::ExitNow`]'s
//! message): nothing written when no write had started (a preview, a dry run, a prompt),
//! writes left in flight when a second signal cut them short.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::OnceLock;

use tokio::sync::watch;

use crate::exit_code;

/// A signal that asks the command to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM (`kill`, a container runtime stopping the pod).
    Terminate,
    /// SIGHUP (the terminal was closed).
    Hangup,
}

impl Signal {
    /// The exit code a shell reports for a process the signal ended: 128 + its number.
    pub fn exit_code(self) -> u8 {
        match self {
            Signal::Interrupt => exit_code::INTERRUPT,
            Signal::Terminate => exit_code::TERMINATE,
            Signal::Hangup => exit_code::HANGUP,
        }
    }

    /// Its name, as `kill -l` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
            Signal::Hangup => "SIGHUP",
        }
    }

    fn code(self) -> u8 {
        match self {
            Signal::Interrupt => 2,
            Signal::Terminate => 15,
            Signal::Hangup => 1,
        }
    }

    fn from_code(code: u8) -> Option<Signal> {
        match code {
            1 => Some(Signal::Hangup),
            2 => Some(Signal::Interrupt),
            15 => Some(Signal::Terminate),
            _ => None,
        }
    }
}

/// What this process was told: the first signal, and how many stretches are in flight.
struct State {
    /// The first signal received (0: none yet).
    received: AtomicU8,
    /// How many [`InFlight`] stretches are running.
    in_flight: AtomicUsize,
    /// How many [`Summarizing`] stretches are running.
    summarizing: AtomicUsize,
    /// Whether any [`InFlight`] stretch ever started (a write, a bulk run): before one,
    /// nothing can have been written.
    ever_in_flight: AtomicBool,
    /// The first signal's code, for the futures waiting in [`stopped`] (works across
    /// runtimes and threads).
    stopped: watch::Sender<u8>,
}

impl State {
    fn new() -> State {
        State {
            received: AtomicU8::new(0),
            in_flight: AtomicUsize::new(0),
            summarizing: AtomicUsize::new(0),
            ever_in_flight: AtomicBool::new(false),
            stopped: watch::channel(0).0,
        }
    }

    fn received(&self) -> Option<Signal> {
        Signal::from_code(self.received.load(Ordering::SeqCst))
    }

    fn stopped(&self) -> impl Future<Output = Signal> + Send + 'static {
        let mut receiver = self.stopped.subscribe();
        async move {
            let code = receiver.wait_for(|code| *code != 0).await.map(|code| *code).ok();
            match code.and_then(Signal::from_code) {
                Some(signal) => signal,
                // The state is gone (a test's own): nothing will come.
                None => std::future::pending().await,
            }
        }
    }

    fn on_signal(&self, signal: Signal) -> Action {
        let first = self.received.compare_exchange(0, signal.code(), Ordering::SeqCst, Ordering::SeqCst).is_ok();
        let in_flight = self.in_flight.load(Ordering::SeqCst) > 0;
        if first {
            self.stopped.send_replace(signal.code());
            if in_flight {
                return Action::Finish;
            }
            if self.summarizing.load(Ordering::SeqCst) > 0 {
                return Action::Summarize;
            }
        }
        let why = if !in_flight && self.summarizing.load(Ordering::SeqCst) > 0 {
            "stopped at once, without the summary (a watch writes nothing)"
        } else if in_flight {
            "stopped at once with writes in flight: whether they landed is unknown; their backups are kept \
             (a command that writes the object again settles them)"
        } else if self.ever_in_flight.load(Ordering::SeqCst) {
            "stopped with no write in flight: the writes reported above were made, nothing more was started"
        } else {
            "stopped before any write was sent: nothing was written"
        };
        let message = format!("error: interrupted ({}): {why}", signal.name());
        Action::ExitNow { code: self.received().unwrap_or(signal).exit_code(), message }
    }
}

static PROCESS: OnceLock<State> = OnceLock::new();

fn process() -> &'static State {
    PROCESS.get_or_init(State::new)
}

/// The first stop signal this process received, if any.
pub fn received() -> Option<Signal> {
    process().received()
}

/// Resolves, with the signal, once a stop signal is received (at once if one was).
pub fn stopped() -> impl Future<Output = Signal> + Send + 'static {
    process().stopped()
}

/// What to do about a signal, decided by [`on_signal`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Exit now: nothing is in flight, or this is the second signal.
    ExitNow {
        /// The exit code (the first signal's).
        code: u8,
        /// What happened, as an `error:` line for stderr (nothing written, or writes cut short).
        message: String,
    },
    /// Let the writes in flight finish; the command exits with the signal's code afterwards.
    Finish,
    /// Stop reading (a watch) and print the summary; the command exits with the signal's code.
    Summarize,
}

/// Records `signal` and says what to do: the first one with work in flight lets it
/// finish, anything else exits at once (with the first signal's code).
pub fn on_signal(signal: Signal) -> Action {
    process().on_signal(signal)
}

/// A stretch of work a first signal lets finish (a write from its backup to its settled
/// record, a bulk run until its summary). Held while it lives.
#[derive(Debug)]
pub struct InFlight(());

impl InFlight {
    /// Marks the start of a stretch that must finish.
    pub fn start() -> InFlight {
        let state = process();
        state.ever_in_flight.store(true, Ordering::SeqCst);
        state.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        process().in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A stretch that a first signal ends with its summary rather than at once (a watch, which
/// writes nothing): the command sees [`stopped`] resolve, prints its summary, and exits
/// with the signal's code. Held while it lives.
#[derive(Debug)]
pub struct Summarizing(());

impl Summarizing {
    /// Marks the start of a stretch that ends with a summary.
    pub fn start() -> Summarizing {
        process().summarizing.fetch_add(1, Ordering::SeqCst);
        Summarizing(())
    }
}

impl Drop for Summarizing {
    fn drop(&mut self) {
        process().summarizing.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_signal_finishes_what_is_in_flight_and_the_second_exits() {
        // A state of its own: the process's is shared with every other test.
        let state = State::new();
        assert_eq!(
            state.on_signal(Signal::Interrupt),
            Action::ExitNow {
                code: 130,
                message: "error: interrupted (SIGINT): stopped before any write was sent: nothing was written".into()
            },
            "nothing in flight (a preview): exit at once, saying nothing was written"
        );

        let state = State::new();
        state.in_flight.fetch_add(1, Ordering::SeqCst);
        let waiting = state.stopped();
        let waiter = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(waiting);
        });
        assert_eq!(state.on_signal(Signal::Terminate), Action::Finish);
        waiter.join().unwrap();
        assert_eq!(state.received(), Some(Signal::Terminate));
        let Action::ExitNow { code, message } = state.on_signal(Signal::Interrupt) else { panic!("exits") };
        assert_eq!(code, 143, "the second exits with the first's code");
        assert!(message.starts_with("error: interrupted (SIGINT): stopped at once with writes in flight"), "{message}");
        assert_eq!((Signal::Interrupt.exit_code(), Signal::Terminate.exit_code()), (130, 143));
        assert_eq!(Signal::Hangup.exit_code(), 129);
        for signal in [Signal::Interrupt, Signal::Terminate, Signal::Hangup] {
            assert_eq!(Signal::from_code(signal.code()), Some(signal));
        }
    }

    #[test]
    fn a_watch_stops_with_its_summary_at_the_first_signal_and_at_once_at_the_second() {
        let state = State::new();
        state.summarizing.fetch_add(1, Ordering::SeqCst);
        assert_eq!(state.on_signal(Signal::Interrupt), Action::Summarize);
        let Action::ExitNow { code, message } = state.on_signal(Signal::Terminate) else { panic!("exits") };
        assert_eq!(code, 130, "the second exits with the first's code");
        assert_eq!(
            message, "error: interrupted (SIGTERM): stopped at once, without the summary (a watch writes nothing)",
            "not a write's message"
        );
    }

    #[test]
    fn a_signal_after_the_writes_ended_says_they_were_made() {
        let state = State::new();
        state.ever_in_flight.store(true, Ordering::SeqCst);
        let Action::ExitNow { code, message } = state.on_signal(Signal::Terminate) else { panic!("exits") };
        assert_eq!(code, 143);
        assert_eq!(
            message,
            "error: interrupted (SIGTERM): stopped with no write in flight: the writes reported above were made, nothing more was started"
        );
    }
}
