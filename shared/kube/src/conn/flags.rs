//! The global flags every kubectl user types without thinking, parsed the same way:
//! kubeconfig selection (`--kubeconfig`, `--context`, `--cluster`, `--user`),
//! `-n`, `--request-timeout`, and the connection overrides (`-s/--server`,
//! `--token`, client certificates, TLS, impersonation). How they combine with
//! the kubeconfig is [`crate::conn::client`]'s business.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::conn::duration::{self, Units};
use crate::conn::error::{ConnError, ConnResult as Result};

/// kubectl's connection flags. Flatten into each plugin's top-level parser; `--help` lists
/// them under their own heading, after the command's own options, as kubectl keeps them in
/// `kubectl options`.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Connection options")]
pub struct KubeFlags {
    /// Path to the kubeconfig file to use (default: $KUBECONFIG, else ~/.kube/config).
    #[arg(long, global = true, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// The name of the kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,

    /// The namespace scope for this request (default: the context's namespace, else "default").
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE")]
    pub namespace: Option<String>,

    /// How long to wait for a single server request, e.g. 500ms, 5s, 1m ("0", the default: no
    /// limit on the answer; connecting still gives up after 30 s, as kubectl's does).
    #[arg(long, global = true, value_name = "DURATION", default_value = "0")]
    pub request_timeout: String,

    /// Username to impersonate for the operation (a user or a service account).
    #[arg(long = "as", global = true, value_name = "USER")]
    pub as_user: Option<String>,

    /// Group to impersonate for the operation; repeat it for several groups (needs --as).
    #[arg(long = "as-group", global = true, value_name = "GROUP")]
    pub as_group: Vec<String>,

    /// UID to impersonate for the operation (needs --as).
    #[arg(long = "as-uid", global = true, value_name = "UID")]
    pub as_uid: Option<String>,

    /// The name of the kubeconfig user to use (instead of the context's).
    #[arg(long, global = true, value_name = "NAME")]
    pub user: Option<String>,

    /// The name of the kubeconfig cluster to use (instead of the context's).
    #[arg(long, global = true, value_name = "NAME")]
    pub cluster: Option<String>,

    /// The address and port of the Kubernetes API server.
    #[arg(short = 's', long, global = true, value_name = "URL")]
    pub server: Option<String>,

    /// Bearer token for authentication to the API server (replaces the kubeconfig user's credentials).
    #[arg(long, global = true, value_name = "TOKEN")]
    pub token: Option<SecretFlag>,

    /// Path to a cert file for the certificate authority.
    #[arg(long, global = true, value_name = "PATH")]
    pub certificate_authority: Option<PathBuf>,

    /// Path to a client certificate file for TLS (replaces the kubeconfig user's credentials).
    #[arg(long, global = true, value_name = "PATH")]
    pub client_certificate: Option<PathBuf>,

    /// Path to a client key file for TLS.
    #[arg(long, global = true, value_name = "PATH")]
    pub client_key: Option<PathBuf>,

    /// Do not check the server's certificate (insecure: anyone on the path can read and change requests).
    #[arg(long, global = true)]
    pub insecure_skip_tls_verify: bool,

    /// Server name to use for server certificate validation (default: the server URL's host).
    #[arg(long, global = true, value_name = "NAME")]
    pub tls_server_name: Option<String>,
}

/// A flag value that must never be printed (`--token`): `Debug` shows `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretFlag(pub String);

impl SecretFlag {
    /// The value itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretFlag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

impl std::str::FromStr for SecretFlag {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        Ok(SecretFlag(s.to_string()))
    }
}

impl KubeFlags {
    /// The parsed `--request-timeout`; `None` means no limit.
    pub fn timeout(&self) -> Result<Option<Duration>> {
        parse_request_timeout(&self.request_timeout)
    }
}

/// Parses kubectl's `--request-timeout` syntax (client-go's `ParseTimeout`): a bare number of
/// seconds, or a Go duration ([`crate::conn::duration`]: `1m30s`, `1.5h`, `500ms`). Zero
/// means no limit. Anything longer than Go's limit (about 292 years) is refused, as Go refuses
/// it, rather than overflowing a deadline.
pub fn parse_request_timeout(text: &str) -> Result<Option<Duration>> {
    let refuse = |why: &dyn std::fmt::Display| {
        ConnError::usage(format!(
            "invalid argument {text:?} for \"--request-timeout\" flag: {why} (use a number with a unit, e.g. 30s, 1m or 500ms; 0 means no timeout)"
        ))
    };
    let text = text.trim();
    let timeout = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let seconds: Option<u64> = text.parse().ok().filter(|s| *s <= duration::MAX.as_secs());
        Duration::from_secs(seconds.ok_or_else(|| {
            refuse(&format!("longer than Go's limit of {} seconds (2562047h47m16s)", duration::MAX.as_secs()))
        })?)
    } else {
        duration::parse(text, Units::Go).map_err(|e| refuse(&e))?
    };
    Ok((!timeout.is_zero()).then_some(timeout))
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
        // Go's units below a second, and fractions, as kubectl accepts them.
        assert_eq!(parse_request_timeout("1ms").unwrap(), Some(Duration::from_millis(1)));
        assert_eq!(parse_request_timeout("1.5h").unwrap(), Some(Duration::from_secs(5400)));
        assert_eq!(parse_request_timeout("2m300ms").unwrap(), Some(Duration::from_millis(120_300)));
        assert_eq!(parse_request_timeout("250us").unwrap(), Some(Duration::from_micros(250)));
        assert_eq!(parse_request_timeout("0s").unwrap(), None);
        for bad in ["", "x", "5d", "s", "1m3", "ms", "1.2.3s"] {
            let err = parse_request_timeout(bad).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("invalid argument {bad:?} for \"--request-timeout\" flag: time: ")),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn request_timeouts_too_long_for_a_deadline_are_refused_not_a_panic() {
        assert_eq!(
            parse_request_timeout("18446744073709551615s").unwrap_err().to_string(),
            "invalid argument \"18446744073709551615s\" for \"--request-timeout\" flag: time: invalid duration \"18446744073709551615s\": longer than Go's limit of 2562047h47m16.854775807s (use a number with a unit, e.g. 30s, 1m or 500ms; 0 means no timeout)"
        );
        for long in ["5000000000000000h", "18446744073709551615", "9223372037"] {
            let err = parse_request_timeout(long).unwrap_err().to_string();
            assert!(err.contains("longer than Go's limit"), "{long}: {err}");
        }
        assert_eq!(parse_request_timeout("9223372036").unwrap(), Some(Duration::from_secs(9_223_372_036)));
        let longest = parse_request_timeout("2562047h47m16.854775807s").unwrap().unwrap();
        assert!(std::time::Instant::now().checked_add(longest).is_some(), "a deadline can be computed");
    }
}
