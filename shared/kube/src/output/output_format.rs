//! The `-o/--output` formats every plugin shares; the printers render them.

/// `-o/--output` formats shared by the plugins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// JSON, for machines.
    Json,
    /// YAML, for machines and people.
    Yaml,
    /// `kind.group/name`, one per line.
    Name,
}
