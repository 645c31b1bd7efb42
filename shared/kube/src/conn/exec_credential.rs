//! Exec credential plugins (`users[].user.exec` in a kubeconfig), run as kubectl runs
//! them: once per command, again only when the credential it gave expires or the server
//! answers 401, its stderr on the terminal, and its stdout (where the credential is)
//! never quoted in a message.
//!
//! The client library would run the plugin itself, three times for each client it builds
//! (twice for TLS, once for the token), and quote the plugin's whole output, token
//! included, when it exits with a failure. So [`crate::conn::client::connect`] takes the
//! exec entry out of the configuration before building a client: a certificate the plugin
//! gives becomes the user's client certificate, a token is sent by [`CredentialLayer`].

use std::io::IsTerminal;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use base64::Engine;
use futures::future::BoxFuture;
use http::header::AUTHORIZATION;
use http::HeaderValue;
use kube::config::{AuthInfo, ExecConfig, ExecInteractiveMode};
use serde::Deserialize;
use serde_json::json;

use crate::conn::error::CredentialError;

/// What an exec plugin gave.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    /// A bearer token, and when it expires (never, if the plugin did not say).
    Token {
        /// The token.
        token: String,
        /// When to run the plugin again.
        expires: Option<jiff::Timestamp>,
    },
    /// A client certificate and its key, both PEM.
    Certificate {
        /// The certificate (chain), PEM.
        certificate: String,
        /// The private key, PEM.
        key: String,
    },
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credential::Token { expires, .. } => write!(f, "Token {{ token: ***, expires: {expires:?} }}"),
            Credential::Certificate { .. } => f.write_str("Certificate { certificate: .., key: *** }"),
        }
    }
}

/// The ExecCredential a plugin prints (`client.authentication.k8s.io`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredentialOutput {
    api_version: Option<String>,
    kind: Option<String>,
    status: Option<ExecCredentialStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredentialStatus {
    token: Option<String>,
    expiration_timestamp: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
}

/// Runs the plugin of `exec` once and reads its credential.
pub fn run_plugin(exec: &ExecConfig) -> Result<Credential, CredentialError> {
    let command = exec.command.clone().filter(|c| !c.is_empty()).ok_or(CredentialError::NoCommand)?;
    let stdin_is_terminal = std::io::stdin().is_terminal();
    let interactive = match exec.interactive_mode {
        Some(ExecInteractiveMode::Never) => false,
        Some(ExecInteractiveMode::Always) if !stdin_is_terminal => {
            return Err(CredentialError::NeedsTerminal { command })
        }
        Some(ExecInteractiveMode::Always) => true,
        Some(ExecInteractiveMode::IfAvailable) | None => stdin_is_terminal,
    };
    let mut spec = json!({ "interactive": interactive });
    if exec.provide_cluster_info {
        if let Some(cluster) = &exec.cluster {
            spec["cluster"] = serde_json::to_value(cluster).unwrap_or_default();
        }
    }
    let api_version = exec.api_version.clone().unwrap_or_else(|| "client.authentication.k8s.io/v1".into());
    let info = json!({ "apiVersion": api_version, "kind": "ExecCredential", "spec": spec });
    let mut cmd = Command::new(&command);
    cmd.args(exec.args.iter().flatten())
        .env("KUBERNETES_EXEC_INFO", info.to_string())
        .stdin(if interactive { Stdio::inherit() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for pair in exec.env.iter().flatten() {
        if let (Some(name), Some(value)) = (pair.get("name"), pair.get("value")) {
            cmd.env(name, value);
        }
    }
    let output = cmd.output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            CredentialError::NotFound { command: command.clone(), hint: exec.install_hint.clone() }
        }
        _ => CredentialError::CannotStart { command: command.clone(), reason: e.to_string() },
    })?;
    if !output.status.success() {
        let status = match output.status.code() {
            Some(code) => format!("exit code {code}"),
            None => output.status.to_string(),
        };
        return Err(CredentialError::Failed { command, status });
    }
    parse_output(&command, &api_version, &output.stdout)
}

/// An ExecCredential written as YAML, read as client-go reads it.
fn yaml_output(stdout: &[u8]) -> Option<ExecCredentialOutput> {
    let value = fieldwise_core::yaml::to_json(std::str::from_utf8(stdout).ok()?).ok()?;
    serde_json::from_value(value).ok()
}

/// Reads an ExecCredential (JSON, or YAML as client-go also accepts). Errors say what is
/// wrong and where, never what was there.
fn parse_output(command: &str, api_version: &str, stdout: &[u8]) -> Result<Credential, CredentialError> {
    let bad = |problem: String| CredentialError::BadOutput { command: command.to_string(), problem };
    let parsed: ExecCredentialOutput = match serde_json::from_slice(stdout) {
        Ok(parsed) => parsed,
        // YAML as client-go reads it (sigs.k8s.io/yaml, YAML 1.1); its errors quote
        // the text, so only the JSON error's position is told.
        Err(json_error) => yaml_output(stdout).ok_or_else(|| {
            bad(format!(
                "its output is not an ExecCredential (JSON {} error at line {}, column {})",
                match json_error.classify() {
                    serde_json::error::Category::Data => "data",
                    serde_json::error::Category::Eof => "end-of-input",
                    _ => "syntax",
                },
                json_error.line(),
                json_error.column()
            ))
        })?,
    };
    if parsed.kind.as_deref().is_some_and(|k| k != "ExecCredential") {
        return Err(bad("its output is not of kind ExecCredential".into()));
    }
    if parsed.api_version.as_deref().is_some_and(|v| v != api_version) {
        return Err(bad(format!(
            "it answered in apiVersion {}, but the kubeconfig asks for {api_version}",
            parsed.api_version.unwrap_or_default()
        )));
    }
    let status = parsed.status.ok_or_else(|| bad("its ExecCredential has no status".into()))?;
    let expires = match status.expiration_timestamp.as_deref().filter(|t| !t.is_empty()) {
        Some(text) => Some(
            text.parse::<jiff::Timestamp>()
                .map_err(|_| bad("its status.expirationTimestamp is not an RFC 3339 time".into()))?,
        ),
        None => None,
    };
    match (status.token, status.client_certificate_data, status.client_key_data) {
        (_, Some(certificate), Some(key)) => Ok(Credential::Certificate { certificate, key }),
        (_, Some(_), None) | (_, None, Some(_)) => {
            Err(bad("its status has only one of clientCertificateData and clientKeyData".into()))
        }
        (Some(token), None, None) if !crate::conn::header_value::can_carry(&token) => {
            Err(bad("its token has a newline or another control character, which an HTTP header cannot carry".into()))
        }
        (Some(token), None, None) if !token.is_empty() => Ok(Credential::Token { token, expires }),
        _ => Err(bad("it didn't return a token or cert/key pair".into())),
    }
}

/// An exec plugin's token for one command: the first credential comes from [`connect`]
/// (which ran the plugin once already), later ones only when it has expired or the server
/// said 401. Shared by every client of the command (see [`CredentialLayer`]).
///
/// [`connect`]: crate::conn::client::connect
pub struct ExecCredentials {
    exec: ExecConfig,
    cached: Mutex<Option<Credential>>,
}

impl std::fmt::Debug for ExecCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecCredentials").field("command", &self.exec.command).finish_non_exhaustive()
    }
}

impl ExecCredentials {
    /// Takes the exec entry out of `user` and runs its plugin once. A certificate goes into
    /// `user` as its client certificate (`None` is returned: no layer is needed); a token is
    /// returned for [`CredentialLayer`] to send. `user` without an exec entry is left alone.
    pub fn take_from(user: &mut AuthInfo) -> Result<Option<Arc<ExecCredentials>>, CredentialError> {
        // A token or token file in the same entry wins over exec, as client-go orders them.
        if user.token.is_some() || user.token_file.is_some() {
            user.exec = None;
            return Ok(None);
        }
        let Some(exec) = user.exec.take() else { return Ok(None) };
        match run_plugin(&exec)? {
            Credential::Certificate { certificate, key } => {
                let encode = |pem: &str| base64::engine::general_purpose::STANDARD.encode(pem.as_bytes());
                user.client_certificate_data = Some(encode(&certificate));
                user.client_key_data = Some(encode(&key).into());
                user.client_certificate = None;
                user.client_key = None;
                Ok(None)
            }
            token => Ok(Some(Arc::new(ExecCredentials { exec, cached: Mutex::new(Some(token)) }))),
        }
    }

    /// The `Authorization` header, running the plugin again if the token expired.
    fn header(&self) -> Result<HeaderValue, CredentialError> {
        let mut cached = self.cached.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let fresh = match cached.as_ref() {
            Some(Credential::Token { expires, .. }) => expires.is_none_or(|at| jiff::Timestamp::now() < at),
            _ => false,
        };
        if !fresh {
            *cached = Some(run_plugin(&self.exec)?);
        }
        match cached.as_ref() {
            Some(Credential::Token { token, .. }) => {
                let mut value =
                    HeaderValue::try_from(format!("Bearer {token}")).map_err(|_| CredentialError::BadOutput {
                        command: self.exec.command.clone().unwrap_or_default(),
                        problem: "its token has characters an HTTP header cannot carry".into(),
                    })?;
                value.set_sensitive(true);
                Ok(value)
            }
            _ => Err(CredentialError::BadOutput {
                command: self.exec.command.clone().unwrap_or_default(),
                problem: "it returned a client certificate where it had returned a token".into(),
            }),
        }
    }

    /// The server refused the token: the next request runs the plugin again (as kubectl does).
    fn forget(&self) {
        *self.cached.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = None;
    }
}

/// A client layer that sends the exec plugin's token on every request.
#[derive(Clone)]
pub struct CredentialLayer(pub Arc<ExecCredentials>);

impl<S> tower::Layer<S> for CredentialLayer {
    type Service = WithCredential<S>;
    fn layer(&self, inner: S) -> Self::Service {
        WithCredential { inner, credentials: self.0.clone() }
    }
}

/// The service [`CredentialLayer`] makes.
pub struct WithCredential<S> {
    inner: S,
    credentials: Arc<ExecCredentials>,
}

impl<S, B, R> tower::Service<http::Request<B>> for WithCredential<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
    S::Error: Into<tower::BoxError>,
    S::Future: Send + 'static,
    R: Send + 'static,
{
    type Response = http::Response<R>;
    type Error = tower::BoxError;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        // Runs the plugin in place when the token expired: every request waits for it anyway.
        match self.credentials.header() {
            Ok(value) => {
                request.headers_mut().insert(AUTHORIZATION, value);
            }
            Err(e) => return Box::pin(futures::future::ready(Err(Box::new(e) as tower::BoxError))),
        }
        let credentials = self.credentials.clone();
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await.map_err(Into::into)?;
            if response.status() == http::StatusCode::UNAUTHORIZED {
                credentials.forget();
            }
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn exec(script: &str) -> (ExecConfig, std::path::PathBuf) {
        static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir = std::env::temp_dir().join(format!("fw-exec-{}-{n}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("plugin.sh");
        std::fs::write(&path, format!("#!/bin/sh\necho run >> '{}/calls'\n{script}\n", dir.display())).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        let config = ExecConfig {
            api_version: Some("client.authentication.k8s.io/v1".into()),
            command: Some(path.to_string_lossy().into_owned()),
            args: None,
            env: None,
            drop_env: None,
            install_hint: None,
            interactive_mode: Some(ExecInteractiveMode::Never),
            provide_cluster_info: false,
            cluster: None,
            other: Default::default(),
        };
        (config, dir)
    }

    #[cfg(unix)]
    const TOKEN_OUTPUT: &str =
        r#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"s3cr3t-t0ken"}}"#;

    #[cfg(unix)]
    #[test]
    fn a_failing_plugin_is_reported_without_its_output() {
        let (config, dir) = exec(&format!("echo '{TOKEN_OUTPUT}'\nexit 1"));
        let err = run_plugin(&config).unwrap_err();
        let text = crate::conn::error::ConnError::Credential(err.clone()).to_string();
        assert!(text.contains("failed with exit code 1"), "{text}");
        assert!(!text.contains("s3cr3t") && !format!("{err:?}").contains("s3cr3t"), "the token leaked: {text}");
        std::fs::remove_dir_all(dir).ok();
    }

    #[cfg(unix)]
    #[test]
    fn output_that_is_not_a_credential_is_reported_without_quoting_it() {
        for output in [r#"{"status": "s3cr3t-t0ken"}"#, "s3cr3t-t0ken: [", r#"{"status":{"token":""}}"#] {
            let err = parse_output("plugin", "client.authentication.k8s.io/v1", output.as_bytes()).unwrap_err();
            assert!(!err.to_string().contains("s3cr3t"), "{output}: {err}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_plugin_runs_once_until_its_token_expires() {
        let (config, dir) = exec(&format!("echo '{TOKEN_OUTPUT}'"));
        let mut user = AuthInfo { exec: Some(config), ..Default::default() };
        let credentials = ExecCredentials::take_from(&mut user).unwrap().expect("a token");
        assert!(user.exec.is_none(), "the client must not run the plugin again");
        for _ in 0..3 {
            let header = credentials.header().unwrap();
            assert_eq!(header.to_str().unwrap(), "Bearer s3cr3t-t0ken");
        }
        let calls = || std::fs::read_to_string(dir.join("calls")).unwrap().lines().count();
        assert_eq!(calls(), 1);
        credentials.forget();
        credentials.header().unwrap();
        assert_eq!(calls(), 2, "a 401 runs it again");
        *credentials.cached.lock().unwrap() = Some(Credential::Token {
            token: "old".into(),
            expires: Some(jiff::Timestamp::now() - jiff::SignedDuration::from_secs(1)),
        });
        assert_eq!(credentials.header().unwrap().to_str().unwrap(), "Bearer s3cr3t-t0ken");
        assert_eq!(calls(), 3, "an expired token runs it again");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_token_no_header_can_carry_is_refused_without_quoting_it() {
        let out = r#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"s3cr3t\nt0ken"}}"#;
        let err = parse_output("p", "client.authentication.k8s.io/v1", out.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("its token has a newline or another control character"), "{err}");
        assert!(!err.contains("s3cr3t"), "{err}");
    }

    #[test]
    fn certificates_become_the_users_client_certificate() {
        let out = r#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"CERT","clientKeyData":"KEY"}}"#;
        let credential = parse_output("p", "client.authentication.k8s.io/v1", out.as_bytes()).unwrap();
        assert_eq!(credential, Credential::Certificate { certificate: "CERT".into(), key: "KEY".into() });
        assert!(!format!("{credential:?}").contains("KEY"));
    }

    #[test]
    fn yaml_output_is_read_as_client_go_reads_it() {
        let out = "apiVersion: client.authentication.k8s.io/v1\nkind: ExecCredential\nstatus:\n  token: s3cr3t-t0ken\n";
        let credential = parse_output("p", "client.authentication.k8s.io/v1", out.as_bytes()).unwrap();
        assert_eq!(credential, Credential::Token { token: "s3cr3t-t0ken".into(), expires: None });
        // YAML 1.1: an unquoted `yes` is a boolean, not a token; the error does not quote it.
        let err = parse_output("p", "client.authentication.k8s.io/v1", b"status:\n  token: yes\n").unwrap_err();
        assert!(!err.to_string().contains("yes"), "{err}");
    }
}
