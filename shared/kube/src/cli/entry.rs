//! Command-line parsing with kubectl's exit codes: help and version exit 0,
//! every usage error exits 1 (clap's default of 2 would collide with the
//! "findings" code some plugins use).

use std::process::ExitCode;

use clap::Parser;

use crate::write::interrupt::{self, Action, Signal};

/// Parses the command line, or prints help/version/usage error and exits. Also makes a
/// closed stdout end the process quietly (see [`crate::output::stdout`]): every plugin parses first.
pub fn parse<T: Parser>() -> T {
    crate::output::stdout::quiet_on_closed_pipe();
    match T::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { 1 } else { 0 };
            let _ = err.print();
            std::process::exit(code);
        }
    }
}

/// Prints an error the way kubectl does and turns it into the exit code. A closed stdout
/// (`| head`) is not an error to the user: nothing is printed (see [`crate::output::stdout`]).
pub fn fail(err: &crate::Error) -> ExitCode {
    if !matches!(err, crate::Error::StdoutClosed) {
        eprintln!("{}", err.printed());
    }
    ExitCode::from(err.exit_code())
}

/// Runs an async entry point on a small runtime: plugins are short-lived CLIs.
///
/// SIGINT, SIGTERM and SIGHUP are handled as [`crate::write::interrupt`] says: with writes in
/// flight the first lets them finish and the command then exits 130, 143 or 129 (a bulk run
/// prints its summary first); otherwise, or on a second signal, the process exits at once.
pub fn run<F>(future: F) -> ExitCode
where
    F: std::future::Future<Output = crate::Result<ExitCode>>,
{
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(&crate::LocalError::io_without_path("start the async runtime", e).into()),
    };
    listen_for_signals();
    let code = match runtime.block_on(future) {
        Ok(code) => code,
        Err(err) => fail(&err),
    };
    match interrupt::received() {
        Some(signal) => ExitCode::from(signal.exit_code()),
        None => code,
    }
}

/// Listens for SIGINT, SIGTERM and SIGHUP (Ctrl-C on Windows) on a thread of its own, so a signal
/// is acted on even while the command's thread waits on something else (a prompt, a disk).
fn listen_for_signals() {
    let listener = std::thread::Builder::new().name("signals".into()).spawn(|| {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
        runtime.block_on(async {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{signal, SignalKind};
                let (Ok(mut interrupts), Ok(mut terminations), Ok(mut hangups)) =
                    (signal(SignalKind::interrupt()), signal(SignalKind::terminate()), signal(SignalKind::hangup()))
                else {
                    return;
                };
                loop {
                    let received = tokio::select! {
                        _ = interrupts.recv() => Signal::Interrupt,
                        _ = terminations.recv() => Signal::Terminate,
                        _ = hangups.recv() => Signal::Hangup,
                    };
                    act_on(received);
                }
            }
            #[cfg(not(unix))]
            while tokio::signal::ctrl_c().await.is_ok() {
                act_on(Signal::Interrupt);
            }
        });
    });
    if let Err(e) = listener {
        eprintln!("warning: cannot listen for Ctrl-C ({e}): it will stop the command at once");
    }
}

fn act_on(signal: Signal) {
    match interrupt::on_signal(signal) {
        Action::ExitNow { code, message } => {
            // On a terminal the line starts below `^C` and any progress bar.
            if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                eprintln!();
            }
            eprintln!("{message}");
            // No destructor runs past here: private files that hold values go first.
            crate::local::private_fs::remove_at_exit();
            std::process::exit(i32::from(code))
        }
        Action::Summarize => eprintln!(
            "{}: stopping, the summary follows; {} again to stop at once",
            signal.name(),
            if signal == Signal::Interrupt { "press Ctrl-C" } else { "signal" }
        ),
        Action::Finish => eprintln!(
            "{}: finishing the writes in flight and starting no new ones; {} again to stop at once",
            signal.name(),
            if signal == Signal::Interrupt { "press Ctrl-C" } else { "signal" }
        ),
    }
}

/// Like [`parse`], for commands that take both positional objects and
/// subcommands (`kubectl safe-patch deploy/x` and `kubectl safe-patch -n ns undo deploy/x`):
/// clap only recognises a subcommand before any option, so the first word
/// that is not an option (or an option's value) moves to the front when it
/// names a subcommand.
///
/// Like [`parse`], it makes a closed stdout end the process quietly.
pub fn parse_with_subcommands<T: Parser + clap::CommandFactory>() -> T {
    crate::output::stdout::quiet_on_closed_pipe();
    let args: Vec<String> = std::env::args().collect();
    let command = with_completion_examples(T::command());
    let args = hoist_subcommand(&command, args);
    let parsed = command.try_get_matches_from(args).and_then(|mut matches| T::from_arg_matches_mut(&mut matches));
    match parsed {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { 1 } else { 0 };
            let _ = err.print();
            std::process::exit(code);
        }
    }
}

/// Adds the examples of the shared `completion` subcommand, which name the plugin: the
/// subcommand's arguments are declared once in the glue, for every plugin.
pub fn with_completion_examples(command: clap::Command) -> clap::Command {
    if command.find_subcommand("completion").is_none() {
        return command;
    }
    let plugin = command.get_bin_name().unwrap_or(command.get_name()).to_string();
    let examples = format!(
        "Examples:\n  # Complete {plugin}'s resource types and names in bash (zsh, fish, powershell alike)\n  \
         source <({plugin} completion bash)\n\n  \
         # Let kubectl complete `{plugin} ...` itself (a kubectl_complete-* link beside the plugin)\n  \
         {plugin} completion install\n\n  # Remove that link again\n  {plugin} completion uninstall"
    );
    command.mut_subcommand("completion", |sub| sub.after_help(examples))
}

/// Moves the first non-option word to just after the program name when it is a subcommand of `cmd`.
pub fn hoist_subcommand(cmd: &clap::Command, args: Vec<String>) -> Vec<String> {
    let takes_value = |arg: Option<&clap::Arg>| arg.is_some_and(|a| a.get_action().takes_values());
    let mut index = 1;
    while index < args.len() {
        let word = &args[index];
        if word == "--" {
            return args;
        }
        if let Some(long) = word.strip_prefix("--") {
            let skip = !long.contains('=') && takes_value(cmd.get_arguments().find(|a| a.get_long() == Some(long)));
            index += if skip { 2 } else { 1 };
        } else if word.len() == 2 && word.starts_with('-') {
            let short = word.chars().nth(1);
            index += if takes_value(cmd.get_arguments().find(|a| a.get_short() == short)) { 2 } else { 1 };
        } else if word.starts_with('-') && word.len() > 2 {
            index += 1; // -nfoo, -p'{...}': value attached
        } else {
            if index > 1 && cmd.find_subcommand(word).is_some() {
                let mut reordered = args.clone();
                let sub = reordered.remove(index);
                reordered.insert(1, sub);
                return reordered;
            }
            return args;
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args, Parser, Subcommand};

    #[derive(Debug, Parser)]
    #[command(args_conflicts_with_subcommands = true)]
    struct Cli {
        #[arg(short = 'n', long, global = true)]
        namespace: Option<String>,
        #[arg(long, global = true)]
        yes: bool,
        #[command(subcommand)]
        command: Option<Sub>,
        #[command(flatten)]
        rest: Rest,
    }
    #[derive(Debug, Args)]
    struct Rest {
        targets: Vec<String>,
    }
    #[derive(Debug, Subcommand)]
    enum Sub {
        Undo { target: String },
    }

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn subcommands_after_options_are_found() {
        use clap::CommandFactory;
        let cmd = Cli::command();
        assert_eq!(
            hoist_subcommand(&cmd, words(&["p", "-n", "ns", "undo", "d/x"])),
            words(&["p", "undo", "-n", "ns", "d/x"])
        );
        assert_eq!(
            hoist_subcommand(&cmd, words(&["p", "--yes", "undo", "d/x"])),
            words(&["p", "undo", "--yes", "d/x"])
        );
        assert_eq!(hoist_subcommand(&cmd, words(&["p", "--namespace=ns", "undo", "d/x"]))[1], "undo");
        // A positional that is not a subcommand, or an option value spelled like one, stays put.
        assert_eq!(hoist_subcommand(&cmd, words(&["p", "-n", "undo", "d/x"])), words(&["p", "-n", "undo", "d/x"]));
        assert_eq!(hoist_subcommand(&cmd, words(&["p", "d/x", "undo"])), words(&["p", "d/x", "undo"]));
        let parsed = Cli::try_parse_from(hoist_subcommand(&cmd, words(&["p", "-n", "ns", "undo", "d/x"]))).unwrap();
        assert!(matches!(parsed.command, Some(Sub::Undo { .. })) && parsed.namespace.as_deref() == Some("ns"));
    }
}
