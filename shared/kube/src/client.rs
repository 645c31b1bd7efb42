//! A client built from kubeconfig exactly as kubectl builds it: `--kubeconfig`,
//! else every file in `$KUBECONFIG` merged, else `~/.kube/config`; the current
//! context unless `--context`; exec credential plugins and client certificates
//! as the kubeconfig says.

use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::error::{Error, Result};
use crate::flags::KubeFlags;

/// A connected client and the choices kubeconfig and flags made for it.
#[derive(Clone)]
pub struct Connection {
    /// The client.
    pub client: kube::Client,
    /// The namespace from `-n`, else the context's, else `default`.
    pub namespace: String,
    /// The context in use (empty when the kubeconfig has none).
    pub context: String,
    /// The server URL, for messages.
    pub server: String,
}

impl Connection {
    /// Converts a kube error into a user error that names this server.
    pub fn error(&self, err: kube::Error) -> Error {
        Error::from_kube(err, &self.server)
    }
}

/// Loads the kubeconfig the way kubectl does (see the module docs).
pub fn load_kubeconfig(flags: &KubeFlags) -> Result<Kubeconfig> {
    if let Some(path) = &flags.kubeconfig {
        return Kubeconfig::read_from(path)
            .map_err(|e| Error::Kubeconfig(format!("cannot load kubeconfig {}: {}", path.display(), describe(&e))));
    }
    if let Ok(list) = std::env::var("KUBECONFIG") {
        let paths: Vec<_> = std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()).collect();
        if !paths.is_empty() {
            let mut merged: Option<Kubeconfig> = None;
            for path in paths.iter().filter(|p| p.exists()) {
                let next = Kubeconfig::read_from(path).map_err(|e| {
                    Error::Kubeconfig(format!(
                        "cannot load kubeconfig {} (from KUBECONFIG): {}",
                        path.display(),
                        describe(&e)
                    ))
                })?;
                merged = Some(match merged {
                    None => next,
                    Some(m) => m.merge(next).map_err(|e| {
                        Error::Kubeconfig(format!("cannot merge the files in KUBECONFIG: {}", describe(&e)))
                    })?,
                });
            }
            return merged.ok_or_else(|| {
                Error::Kubeconfig(format!(
                    "none of the files in KUBECONFIG exist ({}); set KUBECONFIG to a kubeconfig file or pass --kubeconfig",
                    list
                ))
            });
        }
    }
    let default = dirs::home_dir().map(|h| h.join(".kube").join("config"));
    match default {
        Some(path) if path.exists() => Kubeconfig::read_from(&path)
            .map_err(|e| Error::Kubeconfig(format!("cannot load kubeconfig {}: {}", path.display(), describe(&e)))),
        _ => Err(Error::Kubeconfig(
            "no kubeconfig found: set KUBECONFIG, pass --kubeconfig, or create ~/.kube/config".into(),
        )),
    }
}

/// Connects with kubeconfig and flags. Makes no request: a bad server shows up on first use.
pub async fn connect(flags: &KubeFlags) -> Result<Connection> {
    let kubeconfig = load_kubeconfig(flags)?;
    let context = flags.context.clone().or_else(|| kubeconfig.current_context.clone()).unwrap_or_default();
    if let Some(wanted) = &flags.context {
        if !kubeconfig.contexts.iter().any(|c| &c.name == wanted) {
            let known: Vec<_> = kubeconfig.contexts.iter().map(|c| c.name.as_str()).collect();
            return Err(Error::Kubeconfig(format!(
                "context \"{wanted}\" does not exist in the kubeconfig (contexts: {})",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            )));
        }
    }
    if context.is_empty() {
        return Err(Error::Kubeconfig(
            "the kubeconfig has no current context: pass --context or run `kubectl config use-context NAME`".into(),
        ));
    }
    let options = KubeConfigOptions { context: Some(context.clone()), ..Default::default() };
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| Error::Kubeconfig(format!("context \"{context}\": {}", describe(&e))))?;
    let timeout = flags.timeout()?;
    if timeout.is_some() {
        config.connect_timeout = timeout;
        config.read_timeout = timeout;
        config.write_timeout = timeout;
    }
    let namespace = flags.namespace.clone().unwrap_or_else(|| config.default_namespace.clone());
    let server = config.cluster_url.to_string().trim_end_matches('/').to_string();
    let client = kube::Client::try_from(config)
        .map_err(|e| Error::Kubeconfig(format!("context \"{context}\": cannot build a client: {}", describe(&e))))?;
    Ok(Connection { client, namespace, context, server })
}

/// The whole chain of an error on one line, each cause once. Only the first
/// line of each message is kept: YAML errors append a source snippet.
fn describe(err: &(dyn std::error::Error + 'static)) -> String {
    let first_line = |text: String| text.lines().next().unwrap_or_default().trim().to_string();
    let mut parts = vec![first_line(err.to_string())];
    let mut source = err.source();
    while let Some(s) = source {
        let text = first_line(s.to_string());
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}
