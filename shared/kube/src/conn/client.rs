//! A client built from kubeconfig and flags exactly as kubectl builds it:
//! `--kubeconfig`, else every file in `$KUBECONFIG` merged (the first file to
//! set a value wins), else `~/.kube/config`; the current context unless
//! `--context`, its cluster and user unless `--cluster`/`--user`; then the
//! connection flags override what the kubeconfig says (see [`apply_overrides`]).
//! Exec credential plugins (run once per command, see [`crate::conn::exec_credential`]), token files, client certificates and a cluster's
//! `proxy-url` (HTTP CONNECT or SOCKS5) work as the kubeconfig says. Every
//! request carries kubectl's style of User-Agent ([`crate::conn::version::user_agent`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use kube::config::{AuthInfo, Cluster, KubeConfigOptions, Kubeconfig, NamedAuthInfo};

use crate::conn::error::{ConnError, ConnResult as Result};
use crate::conn::exec_credential::{CredentialLayer, ExecCredentials};
use crate::conn::flags::KubeFlags;
use crate::conn::{header_value, kubeconfig_file, namespace};
use crate::local::cache::ServerCache;

/// A connected client and the choices kubeconfig and flags made for it.
#[derive(Clone)]
pub struct Connection {
    /// The client.
    pub client: kube::Client,
    /// The namespace from `-n`, else the context's, else `default`.
    pub namespace: String,
    /// Whether `-n`/`--namespace` chose [`Connection::namespace`]: kubectl then refuses
    /// manifests in other namespaces (see [`crate::api::reference::NamespaceScope`]).
    pub namespace_from_flag: bool,
    /// The context in use (empty when the kubeconfig has none).
    pub context: String,
    /// The server URL, for messages.
    pub server: String,
    /// Which cluster this is, for keying what is kept about it (backups): the server's
    /// host and port and a hash of its URL and CA (see [`cluster_identity`]).
    pub cluster: String,
    /// The configuration the client was built from, to build another client
    /// for work that must not run on the caller's runtime (discovery refetches).
    config: kube::Config,
    /// The exec credential plugin's token, shared by every client of this command so the
    /// plugin runs once (see [`crate::conn::exec_credential`]).
    credentials: Option<Arc<ExecCredentials>>,
    /// Set when this run's discovery came from the disk cache, so a 404 on a
    /// type the cache named can invalidate it.
    discovery_from_cache: Arc<AtomicBool>,
    /// `--request-timeout`, for saying which limit a request that timed out ran into.
    timeout: Option<std::time::Duration>,
}

impl Connection {
    /// Converts a kube error into a user error that names this server.
    ///
    /// A 404 that is not about a named object ("the server could not find the
    /// requested resource") on a run whose discovery came from the disk cache
    /// means the cache named a type the server no longer serves: the cache is
    /// dropped so the next run rediscovers, and the error says so
    /// ([`ConnError::NoLongerServed`]; a listing of many types skips the type instead).
    pub fn error(&self, err: kube::Error) -> ConnError {
        let unknown_path = matches!(&err, kube::Error::Api(status)
            if status.code == 404 && status.details.as_ref().is_none_or(|d| d.name.is_empty()));
        let converted = match ConnError::from_kube(err, &self.server) {
            ConnError::Unreachable { server, reason, maybe_sent } if reason == "deadline has elapsed" => {
                ConnError::Unreachable { server, reason: self.timed_out(), maybe_sent }
            }
            other => other,
        };
        if unknown_path && self.discovery_from_cache.swap(false, Ordering::SeqCst) {
            if let Some(cache) = self.discovery_cache() {
                cache.forget_discovery();
            }
            return ConnError::NoLongerServed { answer: Box::new(converted), cache_cleared: true };
        }
        converted
    }

    /// What a request that ran out of time ran into: `--request-timeout`, or (without one)
    /// the 30 s connecting may take, as kubectl's dialer allows.
    fn timed_out(&self) -> String {
        match self.timeout {
            Some(limit) => format!("no answer within --request-timeout {limit:?}"),
            None => format!(
                "no connection within {} s; --request-timeout 0 sets no limit on the answer, but connecting still has one",
                CONNECT_TIMEOUT.as_secs()
            ),
        }
    }

    /// `--request-timeout`, when given: the limit of each ordinary request (a get, a list's
    /// page), which a watch applies to its lists and to opening each watch request.
    pub fn request_timeout(&self) -> Option<std::time::Duration> {
        self.timeout
    }

    /// This connection for long-lived streams (a watch): `--request-timeout` does not apply to
    /// them, as kubectl's does not end `kubectl get -w`; instead a connection on which no byte
    /// arrives for `idle` fails (the transport's read timeout, reset by every byte read), so
    /// a connection that hangs without closing is noticed. Connecting keeps its limit.
    pub fn for_streams(&self, idle: std::time::Duration) -> Result<Connection> {
        let mut config = self.config.clone();
        config.read_timeout = Some(idle);
        config.write_timeout = Some(idle);
        let client = build_client(config.clone(), self.credentials.as_ref())
            .map_err(|e| ConnError::Kubeconfig(format!("cannot build a client: {}", describe(&e))))?;
        Ok(Connection { client, config, ..self.clone() })
    }

    /// The on-disk cache of this server (`None` when the platform has no cache directory).
    pub fn discovery_cache(&self) -> Option<ServerCache> {
        ServerCache::for_server(&self.server)
    }

    /// Records whether this run's discovery came from the disk cache.
    pub(crate) fn set_discovery_from_cache(&self, cached: bool) {
        self.discovery_from_cache.store(cached, Ordering::SeqCst);
    }

    /// A new client from the same configuration, bound to whichever runtime
    /// first uses it (a `kube::Client` serves requests on the runtime it was made on).
    pub(crate) fn fresh_client(&self) -> Result<kube::Client> {
        build_client(self.config.clone(), self.credentials.as_ref())
            .map_err(|e| ConnError::Kubeconfig(format!("cannot build a client: {}", describe(&e))))
    }
}

/// A client from `config`, sending the exec plugin's token when there is one.
fn build_client(config: kube::Config, credentials: Option<&Arc<ExecCredentials>>) -> kube::Result<kube::Client> {
    let builder = kube::client::ClientBuilder::try_from(config)?;
    Ok(match credentials {
        Some(credentials) => builder.with_layer(&CredentialLayer(credentials.clone())).build(),
        None => builder.build(),
    })
}

/// How long connecting may take without `--request-timeout` (kubectl's dialer: 30 s).
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Loads the kubeconfig the way kubectl does (see the module docs).
pub fn load_kubeconfig(flags: &KubeFlags) -> Result<Kubeconfig> {
    if let Some(path) = &flags.kubeconfig {
        return kubeconfig_file::read(path)
            .map_err(|e| ConnError::Kubeconfig(format!("cannot load kubeconfig {}: {e}", path.display())));
    }
    if let Ok(list) = std::env::var("KUBECONFIG") {
        let paths: Vec<_> = std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()).collect();
        if !paths.is_empty() {
            let mut merged: Option<Kubeconfig> = None;
            for path in paths.iter().filter(|p| p.exists()) {
                let next = kubeconfig_file::read(path).map_err(|e| {
                    ConnError::Kubeconfig(format!("cannot load kubeconfig {} (from KUBECONFIG): {e}", path.display()))
                })?;
                merged = Some(match merged {
                    None => next,
                    Some(m) => m.merge(next).map_err(|e| {
                        ConnError::Kubeconfig(format!("cannot merge the files in KUBECONFIG: {}", describe(&e)))
                    })?,
                });
            }
            return merged.ok_or_else(|| {
                ConnError::Kubeconfig(format!(
                    "none of the files in KUBECONFIG exist ({}); set KUBECONFIG to a kubeconfig file or pass --kubeconfig",
                    list
                ))
            });
        }
    }
    let default = dirs::home_dir().map(|h| h.join(".kube").join("config"));
    match default {
        Some(path) if path.exists() => kubeconfig_file::read(&path)
            .map_err(|e| ConnError::Kubeconfig(format!("cannot load kubeconfig {}: {e}", path.display()))),
        _ => Err(ConnError::Kubeconfig(
            "no kubeconfig found: set KUBECONFIG, pass --kubeconfig, or create ~/.kube/config".into(),
        )),
    }
}

/// Connects with kubeconfig and flags. Makes no request: a bad server shows up on first use.
pub async fn connect(flags: &KubeFlags) -> Result<Connection> {
    connect_with(load_kubeconfig(flags)?, flags).await
}

/// [`connect`] with the kubeconfig already loaded. Everything the flags and the kubeconfig
/// give that would go into a request is checked here first (the request timeout, the
/// namespace, every header value: see [`crate::conn::namespace`] and
/// [`crate::conn::header_value`]), so none of them reaches the client library unchecked.
pub async fn connect_with(mut kubeconfig: Kubeconfig, flags: &KubeFlags) -> Result<Connection> {
    let context = flags.context.clone().or_else(|| kubeconfig.current_context.clone()).unwrap_or_default();
    if let Some(wanted) = &flags.context {
        if !kubeconfig.contexts.iter().any(|c| &c.name == wanted) {
            let known: Vec<_> = kubeconfig.contexts.iter().map(|c| c.name.as_str()).collect();
            return Err(ConnError::Kubeconfig(format!(
                "context \"{wanted}\" does not exist in the kubeconfig (contexts: {})",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            )));
        }
    }
    if context.is_empty() {
        return Err(ConnError::Kubeconfig(
            "the kubeconfig has no current context: pass --context or run `kubectl config use-context NAME`".into(),
        ));
    }
    let timeout = flags.timeout()?;
    let flag_namespace = flags.namespace.as_deref().filter(|ns| !ns.is_empty());
    if let Some(ns) = flag_namespace {
        namespace::check(ns, None)?;
    }
    let (cluster, user) = apply_overrides(&mut kubeconfig, &context, flags)?;
    let options = KubeConfigOptions { context: Some(context.clone()), cluster: Some(cluster), user: user.clone() };
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| ConnError::Kubeconfig(format!("context \"{context}\": {}", describe(&e))))?;
    header_value::check_user(&mut config.auth_info, user.as_deref().unwrap_or_default(), flags)?;
    if flag_namespace.is_none() {
        let origin = format!("the namespace of context \"{context}\" in the kubeconfig");
        namespace::check(&config.default_namespace, Some(&origin))?;
    }
    config.connect_timeout = Some(timeout.unwrap_or(CONNECT_TIMEOUT));
    if timeout.is_some() {
        config.read_timeout = timeout;
        config.write_timeout = timeout;
    }
    let agent = http::HeaderValue::from_str(&crate::conn::version::user_agent())
        .map_err(|e| ConnError::usage(format!("the User-Agent header cannot be built: {e}")))?;
    config.headers.push((http::header::USER_AGENT, agent));
    // `-n ''` means no namespace flag, as in kubectl: the context's namespace, else default.
    let namespace =
        flags.namespace.clone().filter(|ns| !ns.is_empty()).unwrap_or_else(|| config.default_namespace.clone());
    let server = config.cluster_url.to_string().trim_end_matches('/').to_string();
    let cluster = cluster_identity(&server, config.root_cert.as_deref().unwrap_or_default());
    // The exec plugin runs here, once, rather than three times inside the client library.
    let credentials = ExecCredentials::take_from(&mut config.auth_info).map_err(ConnError::Credential)?;
    let client = build_client(config.clone(), credentials.as_ref()).map_err(|e| {
        ConnError::Kubeconfig(format!("context \"{context}\": cannot build a client: {}", describe(&e)))
    })?;
    let namespace_from_flag = flags.namespace.as_deref().is_some_and(|ns| !ns.is_empty());
    Ok(Connection {
        client,
        namespace,
        namespace_from_flag,
        context,
        server,
        cluster,
        config,
        credentials,
        discovery_from_cache: Arc::default(),
        timeout,
    })
}

/// A cluster's identity, from what the client trusts it by: its URL and the CA that signs
/// its certificate (none with `--insecure-skip-tls-verify`). Two contexts of one cluster
/// (other users, other namespaces) share it; a context name reused for another cluster,
/// or a cluster recreated at the same address with a new CA, does not.
pub fn cluster_identity(server: &str, ca_certificates: &[Vec<u8>]) -> String {
    let mut identity = server.as_bytes().to_vec();
    for certificate in ca_certificates {
        identity.push(b'\n');
        identity.extend_from_slice(certificate);
    }
    let host = server.split("://").nth(1).unwrap_or(server).trim_end_matches('/');
    let readable: String =
        host.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect();
    format!("{readable}-{:016x}", crate::local::cache::fnv1a(&identity))
}

/// Applies the connection flags to the entries `context` uses, with kubectl's
/// precedence (a flag beats the kubeconfig), and returns the cluster and user
/// names to load.
///
/// - `--cluster`/`--user` pick other entries than the context's; they must exist.
/// - `-s/--server`, `--tls-server-name` replace the cluster's; `--certificate-authority`
///   replaces its CA; `--insecure-skip-tls-verify` drops the CA, as client-go does
///   (both together are refused, as kubectl refuses them).
/// - `--token` and `--client-certificate`/`--client-key` replace the user's
///   credentials (token, token file, exec plugin, auth provider, basic auth, and
///   each other's unless both are given), so the request authenticates as what
///   the flags name rather than as whichever credential the server tries first.
/// - `--as`, `--as-group`, `--as-uid` replace the user's impersonation;
///   groups or a UID without a user are refused, as client-go refuses them.
pub fn apply_overrides(
    kubeconfig: &mut Kubeconfig,
    context: &str,
    flags: &KubeFlags,
) -> Result<(String, Option<String>)> {
    let ctx = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.clone())
        .ok_or_else(|| ConnError::Kubeconfig(format!("context \"{context}\" does not exist in the kubeconfig")))?;
    let cluster_name = flags.cluster.clone().unwrap_or(ctx.cluster.clone());
    let Some(cluster_entry) = kubeconfig.clusters.iter_mut().find(|c| c.name == cluster_name) else {
        let known: Vec<_> = kubeconfig.clusters.iter().map(|c| c.name.as_str()).collect();
        let via = if flags.cluster.is_some() { "--cluster".to_string() } else { format!("context \"{context}\"") };
        return Err(ConnError::Kubeconfig(format!(
            "cluster \"{cluster_name}\" (from {via}) does not exist in the kubeconfig (clusters: {})",
            if known.is_empty() { "none".to_string() } else { known.join(", ") }
        )));
    };
    override_cluster(cluster_entry.cluster.get_or_insert_with(Cluster::default), flags)?;

    let mut user_name = flags.user.clone().or(ctx.user.clone());
    if let Some(wanted) = &flags.user {
        if !kubeconfig.auth_infos.iter().any(|a| &a.name == wanted) {
            let known: Vec<_> = kubeconfig.auth_infos.iter().map(|a| a.name.as_str()).collect();
            return Err(ConnError::Kubeconfig(format!(
                "user \"{wanted}\" (from --user) does not exist in the kubeconfig (users: {})",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            )));
        }
    }
    let overrides_user = flags.token.is_some()
        || flags.client_certificate.is_some()
        || flags.client_key.is_some()
        || flags.as_user.is_some()
        || !flags.as_group.is_empty()
        || flags.as_uid.is_some();
    if overrides_user {
        let name = user_name.get_or_insert_with(|| "fieldwise-flags".to_string()).clone();
        if !kubeconfig.auth_infos.iter().any(|a| a.name == name) {
            kubeconfig.auth_infos.push(NamedAuthInfo { name: name.clone(), auth_info: None, ..Default::default() });
        }
        if let Some(entry) = kubeconfig.auth_infos.iter_mut().find(|a| a.name == name) {
            override_user(entry.auth_info.get_or_insert_with(AuthInfo::default), flags)?;
        }
    }
    Ok((cluster_name, user_name))
}

fn override_cluster(cluster: &mut Cluster, flags: &KubeFlags) -> Result<()> {
    if let Some(server) = &flags.server {
        let server = server.trim();
        if server.is_empty() {
            return Err(ConnError::usage("--server is empty: give the API server's URL, e.g. https://127.0.0.1:6443"));
        }
        // kubectl accepts a bare host:port and means https.
        cluster.server = Some(if server.contains("://") { server.to_string() } else { format!("https://{server}") });
    }
    if flags.insecure_skip_tls_verify && flags.certificate_authority.is_some() {
        return Err(ConnError::usage(
            "--certificate-authority and --insecure-skip-tls-verify contradict each other: \
             specifying a root certificates file with the insecure flag is not allowed; drop one",
        ));
    }
    if let Some(ca) = &flags.certificate_authority {
        cluster.certificate_authority = Some(ca.to_string_lossy().into_owned());
        cluster.certificate_authority_data = None;
        cluster.insecure_skip_tls_verify = Some(false);
    }
    if flags.insecure_skip_tls_verify {
        cluster.insecure_skip_tls_verify = Some(true);
        cluster.certificate_authority = None;
        cluster.certificate_authority_data = None;
    }
    if let Some(name) = &flags.tls_server_name {
        cluster.tls_server_name = Some(name.clone());
    }
    Ok(())
}

fn override_user(user: &mut AuthInfo, flags: &KubeFlags) -> Result<()> {
    let cert_flags = flags.client_certificate.is_some() || flags.client_key.is_some();
    if flags.token.is_some() || cert_flags {
        user.token_file = None;
        user.exec = None;
        user.auth_provider = None;
        user.username = None;
        user.password = None;
        if !cert_flags {
            user.client_certificate = None;
            user.client_certificate_data = None;
            user.client_key = None;
            user.client_key_data = None;
        }
        user.token = flags.token.as_ref().map(|t| t.expose().to_string().into());
    }
    if let Some(cert) = &flags.client_certificate {
        user.client_certificate = Some(cert.to_string_lossy().into_owned());
        user.client_certificate_data = None;
    }
    if let Some(key) = &flags.client_key {
        user.client_key = Some(key.to_string_lossy().into_owned());
        user.client_key_data = None;
    }
    if let Some(name) = &flags.as_user {
        user.impersonate = Some(name.clone());
    }
    if !flags.as_group.is_empty() {
        user.impersonate_groups = Some(flags.as_group.clone());
    }
    if let Some(uid) = &flags.as_uid {
        user.impersonate_uid = Some(uid.clone());
    }
    let groups = user.impersonate_groups.as_ref().is_some_and(|g| !g.is_empty());
    if user.impersonate.as_deref().unwrap_or_default().is_empty() && (groups || user.impersonate_uid.is_some()) {
        return Err(ConnError::usage(
            "--as-group and --as-uid need a user to impersonate: add --as USER (impersonating groups or a UID without a user is not allowed)",
        ));
    }
    Ok(())
}

/// The whole chain of an error on one line, each cause once. Only the first
/// line of each message is kept: some errors append a source snippet.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conn::flags::SecretFlag;
    use kube::config::Kubeconfig;

    const KUBECONFIG: &str = r#"
apiVersion: v1
kind: Config
current-context: admin
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: Q0E=, proxy-url: "http://127.0.0.1:3128"}
- name: other
  cluster: {server: "https://10.0.0.1:6443"}
users:
- name: admin
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
    exec: {apiVersion: client.authentication.k8s.io/v1, command: get-token, interactiveMode: Never}
- name: viewer
  user: {token: viewer-token}
contexts:
- name: admin
  context: {cluster: local, user: admin}
"#;

    fn kubeconfig() -> Kubeconfig {
        kubeconfig_file::parse(KUBECONFIG, None).expect("test kubeconfig")
    }

    fn user<'k>(k: &'k Kubeconfig, name: &str) -> &'k AuthInfo {
        k.auth_infos.iter().find(|a| a.name == name).and_then(|a| a.auth_info.as_ref()).expect("user")
    }

    fn cluster<'k>(k: &'k Kubeconfig, name: &str) -> &'k Cluster {
        k.clusters.iter().find(|c| c.name == name).and_then(|c| c.cluster.as_ref()).expect("cluster")
    }

    #[test]
    fn cluster_identity_is_the_server_and_its_ca() {
        let local = cluster_identity("https://127.0.0.1:6443", &[b"CA1".to_vec()]);
        assert!(local.starts_with("127.0.0.1_6443-"), "{local}");
        assert_eq!(local, cluster_identity("https://127.0.0.1:6443", &[b"CA1".to_vec()]));
        assert_ne!(local, cluster_identity("https://127.0.0.1:6443", &[b"CA2".to_vec()]), "a recreated cluster");
        assert_ne!(local, cluster_identity("https://127.0.0.1:7443", &[b"CA1".to_vec()]), "another server");
        assert_ne!(local, cluster_identity("https://127.0.0.1:6443", &[]));
    }

    #[test]
    fn no_flags_change_nothing() {
        let mut k = kubeconfig();
        let picked = apply_overrides(&mut k, "admin", &KubeFlags::default()).unwrap();
        assert_eq!(picked, ("local".to_string(), Some("admin".to_string())));
        assert_eq!(format!("{:?}", k), format!("{:?}", kubeconfig()));
    }

    #[test]
    fn a_token_flag_replaces_the_users_credentials_and_keeps_the_proxy() {
        let mut k = kubeconfig();
        let flags = KubeFlags { token: Some(SecretFlag("t0k".into())), ..Default::default() };
        apply_overrides(&mut k, "admin", &flags).unwrap();
        let admin = user(&k, "admin");
        assert!(admin.exec.is_none() && admin.client_certificate_data.is_none() && admin.client_key_data.is_none());
        assert_eq!(serde_json::to_value(admin).unwrap()["token"], "t0k");
        assert_eq!(cluster(&k, "local").proxy_url.as_deref(), Some("http://127.0.0.1:3128"));
        assert!(!format!("{flags:?}").contains("t0k"), "the token must not reach Debug output");
    }

    #[test]
    fn certificate_flags_replace_the_exec_plugin_and_the_data() {
        let mut k = kubeconfig();
        let flags = KubeFlags {
            client_certificate: Some("/pki/u.crt".into()),
            client_key: Some("/pki/u.key".into()),
            ..Default::default()
        };
        apply_overrides(&mut k, "admin", &flags).unwrap();
        let admin = user(&k, "admin");
        assert!(admin.exec.is_none() && admin.client_certificate_data.is_none() && admin.client_key_data.is_none());
        assert_eq!(admin.client_certificate.as_deref(), Some("/pki/u.crt"));
        assert_eq!(admin.client_key.as_deref(), Some("/pki/u.key"));
    }

    #[test]
    fn cluster_flags_override_the_kubeconfig() {
        let mut k = kubeconfig();
        let flags = KubeFlags {
            server: Some("127.0.0.1:7443".into()),
            tls_server_name: Some("kubernetes".into()),
            insecure_skip_tls_verify: true,
            ..Default::default()
        };
        apply_overrides(&mut k, "admin", &flags).unwrap();
        let local = cluster(&k, "local");
        assert_eq!(local.server.as_deref(), Some("https://127.0.0.1:7443"));
        assert_eq!(local.tls_server_name.as_deref(), Some("kubernetes"));
        assert_eq!(local.insecure_skip_tls_verify, Some(true));
        assert!(local.certificate_authority_data.is_none());

        let mut k = kubeconfig();
        let flags = KubeFlags { certificate_authority: Some("/pki/ca.crt".into()), ..Default::default() };
        apply_overrides(&mut k, "admin", &flags).unwrap();
        assert_eq!(cluster(&k, "local").certificate_authority.as_deref(), Some("/pki/ca.crt"));
        assert!(cluster(&k, "local").certificate_authority_data.is_none());
    }

    #[test]
    fn cluster_and_user_flags_pick_other_entries_that_must_exist() {
        let mut k = kubeconfig();
        let flags = KubeFlags { cluster: Some("other".into()), user: Some("viewer".into()), ..Default::default() };
        assert_eq!(
            apply_overrides(&mut k, "admin", &flags).unwrap(),
            ("other".to_string(), Some("viewer".to_string()))
        );
        for (flags, wanted) in [
            (KubeFlags { cluster: Some("nope".into()), ..Default::default() }, "cluster \"nope\" (from --cluster)"),
            (KubeFlags { user: Some("nope".into()), ..Default::default() }, "user \"nope\" (from --user)"),
        ] {
            let err = apply_overrides(&mut kubeconfig(), "admin", &flags).unwrap_err();
            assert!(matches!(err, ConnError::Kubeconfig(_)), "{err:?}");
            assert!(err.to_string().contains(wanted), "{err}");
        }
    }

    #[test]
    fn impersonation_flags_and_their_refusals() {
        let mut k = kubeconfig();
        let flags = KubeFlags {
            as_user: Some("jane".into()),
            as_group: vec!["dev".into(), "ops".into()],
            as_uid: Some("42".into()),
            ..Default::default()
        };
        apply_overrides(&mut k, "admin", &flags).unwrap();
        let admin = user(&k, "admin");
        assert_eq!(admin.impersonate.as_deref(), Some("jane"));
        assert_eq!(admin.impersonate_groups.as_deref(), Some(&["dev".to_string(), "ops".to_string()][..]));
        assert_eq!(admin.impersonate_uid.as_deref(), Some("42"));
        assert!(admin.exec.is_some(), "impersonation keeps the user's own credentials");

        let flags = KubeFlags { as_group: vec!["dev".into()], ..Default::default() };
        let err = apply_overrides(&mut kubeconfig(), "admin", &flags).unwrap_err().to_string();
        assert!(err.contains("--as USER"), "{err}");
        let flags = KubeFlags {
            insecure_skip_tls_verify: true,
            certificate_authority: Some("ca.crt".into()),
            ..Default::default()
        };
        let err = apply_overrides(&mut kubeconfig(), "admin", &flags).unwrap_err().to_string();
        assert!(err.contains("--insecure-skip-tls-verify"), "{err}");
    }
}
