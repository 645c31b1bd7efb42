//! The house conventions of a plugin's `--help`, checked by each plugin's tests: every command
//! shows an example starting with `kubectl `, and the connection flags stand under their own
//! heading. Test-only: compiled with the `test-hooks` feature (the plugins' dev-dependency), so
//! it is not in the shipped crate's API.

use super::entry::with_completion_examples;

/// The subcommands (by path, e.g. `undo`) whose `--help` shows no example starting with
/// `kubectl `: every command a user can run must show one, as kubectl's do.
pub fn subcommands_without_examples(command: &clap::Command) -> Vec<String> {
    let mut missing = Vec::new();
    for sub in command.get_subcommands().filter(|sub| sub.get_name() != "help") {
        let help = [sub.get_after_help(), sub.get_after_long_help()]
            .into_iter()
            .flatten()
            .map(|text| text.to_string())
            .collect::<String>();
        if !help.lines().any(|line| line.trim_start().starts_with("kubectl ")) {
            missing.push(sub.get_name().to_string());
        }
        missing.extend(subcommands_without_examples(sub).into_iter().map(|path| format!("{} {path}", sub.get_name())));
    }
    missing
}

/// What a plugin's `--help` does against the house conventions, for its tests: a subcommand
/// without an example starting with `kubectl ` ([`subcommands_without_examples`], the
/// completion examples added as the binary adds them), or the connection flags
/// (`--kubeconfig` ...) not under their own heading after the command's own options.
pub fn help_convention_problems(command: clap::Command) -> Vec<String> {
    let mut command = with_completion_examples(command);
    let mut problems: Vec<String> =
        subcommands_without_examples(&command).into_iter().map(|sub| format!("{sub}: no example")).collect();
    let help = command.render_help().to_string();
    match (help.find("Options:"), help.find("Connection options:")) {
        (Some(own), Some(connection)) if own < connection => {
            if !help[connection..].contains("--kubeconfig") || help[..connection].contains("--kubeconfig") {
                problems.push("--kubeconfig is not under \"Connection options:\" alone".into());
            }
        }
        _ => problems.push("no \"Options:\" heading before \"Connection options:\"".into()),
    }
    problems
}
