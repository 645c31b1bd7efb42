//! Connecting the way kubectl connects, on the real cluster: the User-Agent in
//! the audit log, impersonation, bearer tokens, exec credential plugins, token
//! files, client certificates, a kubeconfig's `proxy-url`, TLS flags and
//! merged `KUBECONFIG` files. Each check compares with what the server says
//! (the audit log's user) or with the real `kubectl` given the same flags.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

use fieldwise_e2e::connect_proxy::ConnectProxy;
use fieldwise_e2e::{require_cluster, run, text, Cluster};
use serde_json::Value;

/// A private directory per run (backups, cache, kubeconfigs, scripts).
fn scratch(name: &str) -> PathBuf {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "fw-conn-{name}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A plugin run under a unique name (so the audit log singles out its
/// requests), with private data and cache directories.
struct Run {
    name: String,
    out: Output,
}

fn plugin(cluster: &Cluster, exe: &str, tag: &str, args: &[&str]) -> Run {
    plugin_with(cluster, exe, tag, args, |_| {})
}

fn plugin_with(cluster: &Cluster, exe: &str, tag: &str, args: &[&str], env: impl FnOnce(&mut Command)) -> Run {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let name = format!("{exe}-{tag}-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::SeqCst));
    let dir = scratch(tag);
    let mut cmd = cluster.plugin_named(exe, &name);
    cmd.env("FIELDWISE_DATA_DIR", dir.join("data")).env("FIELDWISE_CACHE_DIR", dir.join("cache")).args(args);
    env(&mut cmd);
    Run { name, out: run(&mut cmd) }
}

impl Run {
    fn ok(&self) -> &Self {
        assert!(
            self.out.status.success(),
            "{} failed ({:?}): {}\n{}",
            self.name,
            self.out.status.code(),
            text(&self.out.stdout),
            text(&self.out.stderr)
        );
        self
    }

    fn forbidden(&self) -> &Self {
        let stderr = text(&self.out.stderr);
        assert_eq!(self.out.status.code(), Some(1), "{}: {stderr}", self.name);
        let last = stderr.lines().last().unwrap_or_default();
        assert!(last.starts_with("Error from server (Forbidden):"), "{}: {stderr}", self.name);
        self
    }

    /// The users the server authenticated this run's requests as (after impersonation).
    fn users(&self, cluster: &Cluster) -> Vec<String> {
        let events = cluster.audited_by(&self.name);
        assert!(!events.is_empty(), "{}: no request in the audit log", self.name);
        let mut users: Vec<String> = events
            .iter()
            .map(|e| {
                let user = if e["impersonatedUser"].is_object() { &e["impersonatedUser"] } else { &e["user"] };
                user["username"].as_str().unwrap_or_default().to_string()
            })
            .collect();
        users.dedup();
        users
    }
}

fn deployment(cluster: &Cluster, prefix: &str) -> String {
    let ns = cluster.namespace(prefix);
    cluster.kubectl_ok(&["create", "deployment", "web", "-n", &ns, "--image=busybox:1.36", "--replicas=0"]);
    ns
}

fn kubectl(cluster: &Cluster, args: &[&str]) -> Output {
    run(cluster.kubectl().args(args))
}

const PATCH: &str = r#"{"spec":{"replicas":1}}"#;

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn every_request_carries_a_kubectl_style_user_agent() {
    let cluster = require_cluster!();
    let ns = deployment(&cluster, "fw-conn-ua");
    let owners = plugin(&cluster, "kubectl-owners", "ua", &["-n", &ns, "deploy/web"]);
    owners.ok();
    let events = cluster.audited_by(&owners.name);
    assert!(events.len() >= 2, "discovery and the GET: {events:?}");
    let expected_prefix = format!("{}/v{} (linux/amd64) fieldwise/", owners.name, env!("CARGO_PKG_VERSION"));
    for event in &events {
        let agent = event["userAgent"].as_str().unwrap();
        assert!(agent.starts_with(&expected_prefix), "{agent}");
        let commit = &agent[expected_prefix.len()..];
        assert!(commit == "unknown" || (commit.len() == 7 && commit.chars().all(|c| c.is_ascii_hexdigit())), "{agent}");
    }
    assert!(events.iter().any(|e| e["requestURI"] == format!("/apis/apps/v1/namespaces/{ns}/deployments/web")));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn as_impersonates_where_kubectl_does_and_is_forbidden_where_kubectl_is() {
    let cluster = require_cluster!();
    let ns = deployment(&cluster, "fw-conn-as");
    cluster.kubectl_ok(&["create", "secret", "generic", "s", "-n", &ns, "--from-literal=k=v"]);
    let who = "fieldwise-restricted";

    // Reading a Deployment: the view role allows it, for kubectl and for us.
    assert!(kubectl(&cluster, &["get", "deploy/web", "-n", &ns, "--as", who]).status.success());
    let read = plugin(&cluster, "kubectl-owners", "as-read", &["-n", &ns, "deploy/web", "--as", who]);
    assert_eq!(read.ok().users(&cluster), [who]);

    // Reading a Secret and patching a Deployment: forbidden to both.
    let kubectl_secret = kubectl(&cluster, &["get", "secret/s", "-n", &ns, "--as", who]);
    assert!(text(&kubectl_secret.stderr).contains("Forbidden"), "{}", text(&kubectl_secret.stderr));
    plugin(&cluster, "kubectl-owners", "as-secret", &["-n", &ns, "secret/s", "--as", who]).forbidden();
    let kubectl_patch = kubectl(&cluster, &["patch", "deploy/web", "-n", &ns, "-p", PATCH, "--as", who]);
    assert!(text(&kubectl_patch.stderr).contains("Forbidden"), "{}", text(&kubectl_patch.stderr));
    let patch = plugin(
        &cluster,
        "kubectl-safe_patch",
        "as-patch",
        &["-n", &ns, "deploy/web", "-p", PATCH, "--yes", "--as", who],
    );
    patch.forbidden();
    assert_eq!(cluster.get_json(&ns, "deploy/web")["spec"]["replicas"], 0, "nothing was written");

    // --as-group adds groups: as a member of system:masters the same user may patch.
    let args = ["-n", &ns, "deploy/web", "-p", PATCH, "--yes", "--as", who, "--as-group", "system:masters"];
    let grouped = plugin(&cluster, "kubectl-safe_patch", "as-group", &args);
    assert_eq!(text(&grouped.ok().out.stdout).trim(), "deployment.apps/web patched");
    let groups = cluster.audited_by(&grouped.name)[0]["impersonatedUser"]["groups"].clone();
    assert!(groups.as_array().unwrap().iter().any(|g| g == "system:masters"), "{groups}");
    assert_eq!(cluster.get_json(&ns, "deploy/web")["spec"]["replicas"], 1);

    // --as-uid reaches the server with the user.
    let with_uid =
        plugin(&cluster, "kubectl-owners", "as-uid", &["-n", &ns, "deploy/web", "--as", who, "--as-uid", "uid-42"]);
    let impersonated = cluster.audited_by(&with_uid.ok().name)[0]["impersonatedUser"].clone();
    assert_eq!((impersonated["username"].as_str(), impersonated["uid"].as_str()), (Some(who), Some("uid-42")));

    // Groups without a user are refused before anything is sent, as kubectl refuses them.
    let alone = plugin(&cluster, "kubectl-owners", "as-alone", &["-n", &ns, "deploy/web", "--as-group", "x"]);
    assert_eq!(alone.out.status.code(), Some(1));
    assert!(text(&alone.out.stderr).contains("add --as USER"), "{}", text(&alone.out.stderr));
    assert!(cluster.audited_by(&alone.name).is_empty());
}

/// A ServiceAccount bound to `view` in `ns`, and a token for it from `kubectl create token`.
fn service_account_token(cluster: &Cluster, ns: &str) -> (String, String) {
    cluster.kubectl_ok(&["create", "serviceaccount", "reader", "-n", ns]);
    cluster.kubectl_ok(&[
        "create",
        "rolebinding",
        "reader-view",
        "-n",
        ns,
        "--clusterrole=view",
        &format!("--serviceaccount={ns}:reader"),
    ]);
    let token = cluster.kubectl_ok(&["create", "token", "reader", "-n", ns, "--duration=10m"]).trim().to_string();
    (token, format!("system:serviceaccount:{ns}:reader"))
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_token_flag_authenticates_as_its_service_account() {
    let cluster = require_cluster!();
    let ns = deployment(&cluster, "fw-conn-token");
    let (token, account) = service_account_token(&cluster, &ns);
    let read = plugin(&cluster, "kubectl-owners", "token-read", &["-n", &ns, "deploy/web", "--token", &token]);
    assert_eq!(read.ok().users(&cluster), [account.as_str()]);
    let write = plugin(
        &cluster,
        "kubectl-safe_patch",
        "token-write",
        &["-n", &ns, "deploy/web", "-p", PATCH, "--yes", "--token", &token],
    );
    write.forbidden();
    let all = format!("{}{}", text(&write.out.stdout), text(&write.out.stderr));
    assert!(!all.contains(&token), "the token leaked: {all}");
    // kubectl agrees when the kubeconfig holds no other credential. (On the admin
    // kubeconfig kubectl would send the admin's certificate as well, and the server
    // would pick the certificate: kubectl patches as the admin there. We send only
    // the credential the flag names.)
    let dir = scratch("token-kubectl");
    let bare = kubeconfig_with_users(&cluster, &dir, None, &[("nobody", serde_json::json!({}))]);
    let bare = bare.to_str().unwrap();
    let kubectl_patch =
        kubectl(&cluster, &["--kubeconfig", bare, "patch", "deploy/web", "-n", &ns, "-p", PATCH, "--token", &token]);
    assert!(text(&kubectl_patch.stderr).contains("Forbidden"), "{}", text(&kubectl_patch.stderr));
    let kubectl_get = kubectl(&cluster, &["--kubeconfig", bare, "get", "deploy/web", "-n", &ns, "--token", &token]);
    assert!(kubectl_get.status.success(), "{}", text(&kubectl_get.stderr));
    let on_bare = plugin(
        &cluster,
        "kubectl-owners",
        "token-bare",
        &["--kubeconfig", bare, "-n", &ns, "deploy/web", "--token", &token],
    );
    assert_eq!(on_bare.ok().users(&cluster), [account.as_str()]);
    assert_eq!(cluster.get_json(&ns, "deploy/web")["spec"]["replicas"], 0, "nothing was written");
}

/// The server URL and CA of the cluster, from its kubeconfig.
fn server_and_ca(cluster: &Cluster) -> (String, String) {
    let config: Value = serde_yaml::from_str(&std::fs::read_to_string(&cluster.kubeconfig).unwrap()).unwrap();
    let entry = &config["clusters"][0]["cluster"];
    (entry["server"].as_str().unwrap().to_string(), entry["certificate-authority-data"].as_str().unwrap().to_string())
}

/// A kubeconfig with one cluster (optionally behind `proxy`) and the given user entries, one context each.
fn kubeconfig_with_users(cluster: &Cluster, dir: &Path, proxy: Option<&str>, users: &[(&str, Value)]) -> PathBuf {
    let (server, ca) = server_and_ca(cluster);
    let mut entry = serde_json::json!({"server": server, "certificate-authority-data": ca});
    if let Some(proxy) = proxy {
        entry["proxy-url"] = proxy.into();
    }
    let config = serde_json::json!({
        "apiVersion": "v1", "kind": "Config", "current-context": users[0].0,
        "clusters": [{"name": "local", "cluster": entry}],
        "users": users.iter().map(|(name, user)| serde_json::json!({"name": name, "user": user})).collect::<Vec<_>>(),
        "contexts": users.iter().map(|(name, _)| serde_json::json!({"name": name, "context": {"cluster": "local", "user": name}})).collect::<Vec<_>>(),
    });
    let path = dir.join("kubeconfig");
    std::fs::write(&path, serde_yaml::to_string(&config).unwrap()).unwrap();
    path
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn exec_credential_plugins_and_token_files_work() {
    let cluster = require_cluster!();
    let ns = deployment(&cluster, "fw-conn-exec");
    let (token, account) = service_account_token(&cluster, &ns);
    let dir = scratch("exec");
    let script = dir.join("issue-token.sh");
    let calls = dir.join("calls");
    let credential = serde_json::json!({
        "apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": token}
    });
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho called >> '{}'\ncat <<'EOF'\n{credential}\nEOF\n", calls.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let token_file = dir.join("token");
    std::fs::write(&token_file, &token).unwrap();
    let kubeconfig = kubeconfig_with_users(
        &cluster,
        &dir,
        None,
        &[
            (
                "exec",
                serde_json::json!({"exec": {"apiVersion": "client.authentication.k8s.io/v1",
                "command": script.to_str().unwrap(), "interactiveMode": "Never"}}),
            ),
            ("file", serde_json::json!({"tokenFile": token_file.to_str().unwrap()})),
        ],
    );
    let kc = kubeconfig.to_str().unwrap();
    let exec = plugin(&cluster, "kubectl-owners", "exec", &["--kubeconfig", kc, "-n", &ns, "deploy/web"]);
    assert_eq!(exec.ok().users(&cluster), [account.as_str()]);
    assert!(std::fs::read_to_string(&calls).unwrap().lines().count() >= 1, "the plugin ran");
    let file = plugin(
        &cluster,
        "kubectl-owners",
        "tokenfile",
        &["--kubeconfig", kc, "--context", "file", "-n", &ns, "deploy/web"],
    );
    assert_eq!(file.ok().users(&cluster), [account.as_str()]);
    // kubectl agrees on both.
    for context in ["exec", "file"] {
        let out = kubectl(
            &cluster,
            &["--kubeconfig", kc, "--context", context, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"],
        );
        assert_eq!(text(&out.stdout), account, "{}", text(&out.stderr));
    }
    // --user picks the other entry of the same kubeconfig.
    let by_user =
        plugin(&cluster, "kubectl-owners", "user", &["--kubeconfig", kc, "--user", "file", "-n", &ns, "deploy/web"]);
    assert_eq!(by_user.ok().users(&cluster), [account.as_str()]);
}

/// The restricted user's certificate and key, from the harness's kubeconfig, as files.
fn restricted_certificate(cluster: &Cluster, dir: &Path) -> (PathBuf, PathBuf) {
    let config: Value = serde_yaml::from_str(&std::fs::read_to_string(&cluster.kubeconfig).unwrap()).unwrap();
    let context = config["contexts"].as_array().unwrap().iter().find(|c| c["name"] == "fieldwise-restricted").unwrap();
    let user_name = &context["context"]["user"];
    let user = &config["users"].as_array().unwrap().iter().find(|u| &u["name"] == user_name).unwrap()["user"];
    let decode = |field: &str| {
        let encoded = dir.join(format!("{field}.b64"));
        std::fs::write(&encoded, user[field].as_str().unwrap()).unwrap();
        let out = run(Command::new("base64").arg("-d").arg(&encoded));
        assert!(out.status.success(), "base64 -d: {}", text(&out.stderr));
        out.stdout
    };
    let (cert, key) = (dir.join("restricted.crt"), dir.join("restricted.key"));
    std::fs::write(&cert, decode("client-certificate-data")).unwrap();
    std::fs::write(&key, decode("client-key-data")).unwrap();
    (cert, key)
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn client_certificate_flags_replace_the_kubeconfig_user() {
    let cluster = require_cluster!();
    let ns = deployment(&cluster, "fw-conn-cert");
    let dir = scratch("cert");
    let (cert, key) = restricted_certificate(&cluster, &dir);
    let flags = ["--client-certificate", cert.to_str().unwrap(), "--client-key", key.to_str().unwrap()];
    let read = plugin(&cluster, "kubectl-owners", "cert-read", &[&["-n", &ns, "deploy/web"][..], &flags].concat());
    assert_eq!(read.ok().users(&cluster), ["fieldwise-restricted"]);
    let patch = [&["-n", &ns, "deploy/web", "-p", PATCH, "--yes"][..], &flags].concat();
    plugin(&cluster, "kubectl-safe_patch", "cert-write", &patch).forbidden();
    // kubectl agrees on a kubeconfig without credentials (on the admin kubeconfig it
    // refuses the flags: "client-cert-data and client-cert are both specified").
    let bare = kubeconfig_with_users(&cluster, &dir, None, &[("nobody", serde_json::json!({}))]);
    let bare = bare.to_str().unwrap();
    let kubectl_patch = kubectl(
        &cluster,
        &[&["--kubeconfig", bare, "patch", "deploy/web", "-n", &ns, "-p", PATCH][..], &flags].concat(),
    );
    assert!(text(&kubectl_patch.stderr).contains("Forbidden"), "{}", text(&kubectl_patch.stderr));
    let kubectl_get =
        kubectl(&cluster, &[&["--kubeconfig", bare, "get", "deploy/web", "-n", &ns][..], &flags].concat());
    assert!(kubectl_get.status.success(), "{}", text(&kubectl_get.stderr));
    // A missing key file is a one-line error naming it.
    let missing = plugin(
        &cluster,
        "kubectl-owners",
        "cert-missing",
        &[
            "-n",
            &ns,
            "deploy/web",
            "--client-certificate",
            cert.to_str().unwrap(),
            "--client-key",
            "/nonexistent/key.pem",
        ],
    );
    let stderr = text(&missing.out.stderr);
    assert_eq!(missing.out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("error: ") && stderr.contains("/nonexistent/key.pem") && stderr.lines().count() == 1,
        "{stderr}"
    );
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_kubeconfig_proxy_url_carries_every_request() {
    let cluster = require_cluster!();
    let ns = deployment(&cluster, "fw-conn-proxy");
    let dir = scratch("proxy");
    let proxy = ConnectProxy::start();
    let (cert, key) = restricted_certificate(&cluster, &dir);
    let user = serde_json::json!({"client-certificate": cert.to_str().unwrap(), "client-key": key.to_str().unwrap()});
    let kubeconfig = kubeconfig_with_users(&cluster, &dir, Some(&proxy.url), &[("restricted", user.clone())]);
    let kc = kubeconfig.to_str().unwrap();
    let through = plugin(&cluster, "kubectl-owners", "proxy", &["--kubeconfig", kc, "-n", &ns, "deploy/web"]);
    through.ok();
    let requests = cluster.audited_by(&through.name).len();
    let tunnels = proxy.tunnels();
    assert!(requests >= 2, "discovery and the GET went through: {requests}");
    assert!(tunnels >= 1, "no tunnel opened through {}", proxy.url);
    // A proxy that is not there: the command fails instead of going around it.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let dead_dir = scratch("proxy-dead");
    let kubeconfig = kubeconfig_with_users(&cluster, &dead_dir, Some(&dead), &[("restricted", user)]);
    let blocked = plugin(
        &cluster,
        "kubectl-owners",
        "proxy-dead",
        &["--kubeconfig", kubeconfig.to_str().unwrap(), "-n", &ns, "deploy/web", "--request-timeout", "10s"],
    );
    assert_eq!(blocked.out.status.code(), Some(1), "{}", text(&blocked.out.stderr));
    assert!(cluster.audited_by(&blocked.name).is_empty(), "no request may bypass the proxy");
    assert_eq!(proxy.tunnels(), tunnels, "the second run used the other proxy");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn server_and_tls_flags_override_the_kubeconfig() {
    let cluster = require_cluster!();
    let ns = deployment(&cluster, "fw-conn-tls");
    let (server, _) = server_and_ca(&cluster);
    let port = server.rsplit(':').next().unwrap().to_string();
    let ca = cluster.dir.join("pki").join("ca.crt");
    let ca = ca.to_str().unwrap();
    // -s with a closed port: the flag wins over the kubeconfig, and the error names it.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let wrong = format!("https://{}", closed.local_addr().unwrap());
    drop(closed);
    let refused = plugin(&cluster, "kubectl-owners", "server-wrong", &["-n", &ns, "deploy/web", "-s", &wrong]);
    let stderr = text(&refused.out.stderr);
    assert_eq!(refused.out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&wrong), "{stderr}");
    // --server by host name, checked against the CA given by flag.
    let by_name = format!("https://localhost:{port}");
    plugin(
        &cluster,
        "kubectl-owners",
        "server-name",
        &["-n", &ns, "deploy/web", "--server", &by_name, "--certificate-authority", ca],
    )
    .ok();
    // --tls-server-name: a name the serving certificate has passes, one it lacks fails; --insecure-skip-tls-verify skips the check.
    plugin(
        &cluster,
        "kubectl-owners",
        "sni-good",
        &["-n", &ns, "deploy/web", "--tls-server-name", "kubernetes.default"],
    )
    .ok();
    let bad = plugin(
        &cluster,
        "kubectl-owners",
        "sni-bad",
        &["-n", &ns, "deploy/web", "--tls-server-name", "not-the-apiserver.example"],
    );
    assert_eq!(bad.out.status.code(), Some(1), "{}", text(&bad.out.stderr));
    assert!(cluster.audited_by(&bad.name).is_empty());
    let kubectl_bad =
        kubectl(&cluster, &["get", "deploy/web", "-n", &ns, "--tls-server-name", "not-the-apiserver.example"]);
    assert!(!kubectl_bad.status.success());
    plugin(
        &cluster,
        "kubectl-owners",
        "insecure",
        &["-n", &ns, "deploy/web", "--tls-server-name", "not-the-apiserver.example", "--insecure-skip-tls-verify"],
    )
    .ok();
    // Both CA and insecure: refused as kubectl refuses it.
    let both = plugin(
        &cluster,
        "kubectl-owners",
        "ca-insecure",
        &["-n", &ns, "deploy/web", "--certificate-authority", ca, "--insecure-skip-tls-verify"],
    );
    assert_eq!(both.out.status.code(), Some(1));
    assert!(text(&both.out.stderr).contains("not allowed"), "{}", text(&both.out.stderr));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn kubeconfig_files_merge_in_order_like_kubectl() {
    let cluster = require_cluster!();
    let ns = deployment(&cluster, "fw-conn-merge");
    let admin = cluster.kubeconfig.to_str().unwrap().to_string();
    let restricted = cluster.dir.join("restricted.kubeconfig").to_str().unwrap().to_string();
    let patch = ["-n", &ns, "deploy/web", "-p", PATCH, "--yes"];
    // The first file that sets current-context wins: restricted first means the restricted user.
    let restricted_first = plugin_with(&cluster, "kubectl-safe_patch", "merge-r", &patch, |cmd| {
        cmd.env("KUBECONFIG", format!("{restricted}:{admin}"));
    });
    restricted_first.forbidden();
    assert_eq!(restricted_first.users(&cluster), ["fieldwise-restricted"]);
    let kubectl_first = run(cluster.kubectl().env("KUBECONFIG", format!("{restricted}:{admin}")).args([
        "patch",
        "deploy/web",
        "-n",
        &ns,
        "-p",
        PATCH,
    ]));
    assert!(text(&kubectl_first.stderr).contains("Forbidden"), "{}", text(&kubectl_first.stderr));
    // Admin first: the write goes through; a missing file in the list is skipped as kubectl skips it.
    let admin_first = plugin_with(&cluster, "kubectl-safe_patch", "merge-a", &patch, |cmd| {
        cmd.env("KUBECONFIG", format!("/nonexistent/kubeconfig:{admin}:{restricted}"));
    });
    admin_first.ok();
    assert_eq!(admin_first.users(&cluster), ["fieldwise-admin"]);
    // --context reaches a context defined only in the second file.
    let by_context = plugin_with(
        &cluster,
        "kubectl-owners",
        "merge-ctx",
        &["-n", &ns, "deploy/web", "--context", "fieldwise-restricted"],
        |cmd| {
            cmd.env("KUBECONFIG", format!("{admin}:{restricted}"));
        },
    );
    assert_eq!(by_context.ok().users(&cluster), ["fieldwise-restricted"]);
}
