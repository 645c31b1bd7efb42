//! The global flags every kubectl user types without thinking, parsed the same way.

use std::time::Duration;

use clap::Args;

use crate::error::{Error, Result};

/// kubectl's connection flags. Flatten into each plugin's top-level parser.
#[derive(Debug, Clone, Default, Args)]
pub struct KubeFlags {
    /// Path to the kubeconfig file to use (default: $KUBECONFIG, else ~/.kube/config).
    #[arg(long, global = true, value_name = "PATH")]
    pub kubeconfig: Option<std::path::PathBuf>,

    /// The name of the kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// The namespace scope for this request (default: the context's namespace, else "default").
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE")]
    pub namespace: Option<String>,

    /// How long to wait for a single server request ("0" waits forever; e.g. 5s, 1m, 2h).
    #[arg(long, global = true, value_name = "DURATION", default_value = "0")]
    pub request_timeout: String,
}

impl KubeFlags {
    /// The parsed `--request-timeout`; `None` means no limit.
    pub fn timeout(&self) -> Result<Option<Duration>> {
        parse_request_timeout(&self.request_timeout)
    }
}

/// Parses kubectl's `--request-timeout` syntax: a bare number of seconds, or a
/// number followed by `s`, `m` or `h` (combinations like `1m30s` too).
pub fn parse_request_timeout(text: &str) -> Result<Option<Duration>> {
    let bad = || {
        Error::usage(format!(
            "invalid --request-timeout {text:?}: use a number with a unit (s, m, h), e.g. 30s or 1m; 0 means no timeout"
        ))
    };
    let text = text.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Ok((secs > 0).then(|| Duration::from_secs(secs)));
    }
    let mut total = 0f64;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() || c == '.' {
            number.push(c);
            continue;
        }
        let value: f64 = number.parse().map_err(|_| bad())?;
        number.clear();
        total += value
            * match c {
                's' => 1.0,
                'm' => 60.0,
                'h' => 3600.0,
                _ => return Err(bad()),
            };
    }
    if !number.is_empty() || text.is_empty() {
        return Err(bad());
    }
    Ok((total > 0.0).then(|| Duration::from_secs_f64(total)))
}

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

/// kubectl's `--dry-run` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DryRun {
    /// Write for real.
    #[default]
    None,
    /// Compute locally; send nothing that writes.
    Client,
    /// Send the request with dryRun=All: the server validates and admits but stores nothing.
    Server,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_timeout_forms() {
        assert_eq!(parse_request_timeout("0").unwrap(), None);
        assert_eq!(parse_request_timeout("5").unwrap(), Some(Duration::from_secs(5)));
        assert_eq!(parse_request_timeout("5s").unwrap(), Some(Duration::from_secs(5)));
        assert_eq!(parse_request_timeout("1m30s").unwrap(), Some(Duration::from_secs(90)));
        assert_eq!(parse_request_timeout("2h").unwrap(), Some(Duration::from_secs(7200)));
        for bad in ["", "x", "5d", "s", "1m3"] {
            let err = parse_request_timeout(bad).unwrap_err().to_string();
            assert!(err.contains("--request-timeout"), "{bad}: {err}");
        }
    }
}
