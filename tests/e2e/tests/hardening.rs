//! Hardening (issue #22) on the real cluster: credentials that never reach a message,
//! backups that cannot restore onto the wrong object, untrusted input that cannot cost
//! without bound, messages that say what happened, and Secret data kept out of metadata.
//! Each test reproduces one reported defect and checks the fixed behaviour, comparing
//! with the real `kubectl` where both do the same thing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use fieldwise_e2e::{require_cluster, run, text, Cluster};
use serde_json::{json, Value};

/// A private directory per use (backups, cache, kubeconfigs, scripts).
fn scratch(name: &str) -> PathBuf {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "fw-hard-{name}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A plugin binary pointed at the cluster, with private backup and cache directories under `dir`.
fn plugin(cluster: &Cluster, exe: &str, dir: &Path) -> Command {
    let mut cmd = cluster.plugin(exe);
    cmd.env("FIELDWISE_DATA_DIR", dir.join("data")).env("FIELDWISE_CACHE_DIR", dir.join("cache"));
    cmd
}

fn describe(out: &Output) -> String {
    format!("exit {:?}\nstdout: {}\nstderr: {}", out.status.code(), text(&out.stdout), text(&out.stderr))
}

// ---------------------------------------------------------------------------------------------
// #22.2: exec credential plugins

/// A kubeconfig for the cluster whose only user runs `script` as its exec credential plugin.
fn exec_kubeconfig(cluster: &Cluster, dir: &Path, script: &Path) -> PathBuf {
    let config: Value =
        serde_yaml::from_str(&std::fs::read_to_string(&cluster.kubeconfig).expect("kubeconfig")).expect("YAML");
    let entry = &config["clusters"][0]["cluster"];
    let kubeconfig = json!({
        "apiVersion": "v1", "kind": "Config", "current-context": "exec",
        "clusters": [{"name": "local", "cluster": {"server": entry["server"], "certificate-authority-data": entry["certificate-authority-data"]}}],
        "users": [{"name": "exec", "user": {"exec": {"apiVersion": "client.authentication.k8s.io/v1",
            "command": script.to_str().expect("UTF-8 path"), "interactiveMode": "Never"}}}],
        "contexts": [{"name": "exec", "context": {"cluster": "local", "user": "exec"}}],
    });
    let path = dir.join("kubeconfig");
    std::fs::write(&path, serde_yaml::to_string(&kubeconfig).expect("YAML")).expect("write kubeconfig");
    path
}

/// An exec plugin that counts its runs in `dir/calls`, prints an ExecCredential with
/// `token`, and exits with `code`.
fn exec_plugin(dir: &Path, token: &str, code: i32) -> PathBuf {
    let credential =
        json!({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {"token": token}});
    let script = dir.join(format!("plugin-{code}.sh"));
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho run >> '{}'\ncat <<'EOF'\n{credential}\nEOF\nexit {code}\n",
            dir.join("calls").display()
        ),
    )
    .expect("write the plugin");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o700)).expect("chmod");
    script
}

fn calls(dir: &Path) -> usize {
    let count = std::fs::read_to_string(dir.join("calls")).map(|t| t.lines().count()).unwrap_or(0);
    let _ = std::fs::remove_file(dir.join("calls"));
    count
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn exec_credential_plugins_run_once_and_their_output_never_reaches_an_error() {
    let cluster = require_cluster!();
    let ns = cluster.namespace("fw-hard-exec");
    cluster.kubectl_ok(&["create", "configmap", "x", "-n", &ns, "--from-literal=a=1"]);
    cluster.kubectl_ok(&["create", "serviceaccount", "editor", "-n", &ns]);
    let account = format!("--serviceaccount={ns}:editor");
    cluster.kubectl_ok(&["create", "rolebinding", "editor", "-n", &ns, "--clusterrole=edit", &account]);
    let token = cluster.kubectl_ok(&["create", "token", "editor", "-n", &ns, "--duration=10m"]).trim().to_string();
    let dir = scratch("exec");

    // A plugin that fails after printing its credential: kubectl prints none of it, nor do we.
    let failing = exec_kubeconfig(&cluster, &dir, &exec_plugin(&dir, &token, 1));
    for (exe, args) in [
        ("kubectl-owners", vec!["cm/x"]),
        ("kubectl-safe_patch", vec!["cm/x", "-p", r#"{"data":{"b":"2"}}"#, "--yes"]),
        ("kubectl-last_applied", vec!["view", "cm/x"]),
    ] {
        let out = run(plugin(&cluster, exe, &dir).arg("--kubeconfig").arg(&failing).args(["-n", &ns]).args(&args));
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{exe}: {}", describe(&out));
        assert!(!all.contains(&token) && !all.contains("status"), "{exe}: the plugin's output leaked: {all}");
        assert!(
            text(&out.stderr).contains("exec: executable") && text(&out.stderr).contains("failed with exit code 1"),
            "{exe}: kubectl's wording: {}",
            describe(&out)
        );
        calls(&dir);
    }
    let kubectl = run(cluster.kubectl().arg("--kubeconfig").arg(&failing).args(["get", "cm/x", "-n", &ns]));
    assert!(!text(&kubectl.stderr).contains(&token), "kubectl does not print it either");
    calls(&dir);

    // A working plugin runs once per command, reads and writes alike (kubectl: once when its
    // discovery cache is warm; not counted here, as that depends on its cache).
    let working = exec_kubeconfig(&cluster, &dir, &exec_plugin(&dir, &token, 0));
    let out = run(cluster.kubectl().arg("--kubeconfig").arg(&working).args(["get", "cm/x", "-n", &ns]));
    assert!(out.status.success(), "kubectl: {}", describe(&out));
    calls(&dir);
    for (exe, args) in
        [("kubectl-owners", vec!["cm/x"]), ("kubectl-safe_patch", vec!["cm/x", "-p", r#"{"data":{"b":"2"}}"#, "--yes"])]
    {
        let out = run(plugin(&cluster, exe, &dir).arg("--kubeconfig").arg(&working).args(["-n", &ns]).args(&args));
        assert!(out.status.success(), "{exe}: {}", describe(&out));
        assert_eq!(calls(&dir), 1, "{exe} ran the plugin more than once");
    }
    assert_eq!(cluster.get_json(&ns, "cm/x")["data"]["b"], "2", "the write authenticated with the plugin's token");
}

// ---------------------------------------------------------------------------------------------
// #22.7: untrusted input costs a bounded amount

/// Runs `cmd` with `stdin`, returning its output and how long it took (at most `limit`, then killed).
fn timed(cmd: &mut Command, stdin: Stdio, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = cmd.stdin(stdin).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    while child.try_wait().expect("wait").is_none() && started.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output().expect("output");
    (out, started.elapsed())
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn endless_or_huge_input_is_refused_at_the_size_limit() {
    let cluster = require_cluster!();
    let dir = scratch("size");
    let object = dir.join("cm.json");
    std::fs::write(&object, r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1"}}"#)
        .expect("write");
    let safe_patch = || {
        let mut cmd = plugin(&cluster, "kubectl-safe_patch", &dir);
        cmd.arg("-f").arg(&object).args(["--local", "-o", "json"]);
        cmd
    };
    let limit = Duration::from_secs(20);
    let cases: Vec<(&str, Command, Stdio)> = vec![
        (
            "--patch-file /dev/zero",
            {
                let mut c = safe_patch();
                c.args(["--patch-file", "/dev/zero"]);
                c
            },
            Stdio::null(),
        ),
        (
            "--patch-file - < /dev/zero",
            {
                let mut c = safe_patch();
                c.args(["--patch-file", "-"]);
                c
            },
            zero(),
        ),
        (
            "-f /dev/zero",
            {
                let mut c = plugin(&cluster, "kubectl-owners", &dir);
                c.args(["-f", "/dev/zero"]);
                c
            },
            Stdio::null(),
        ),
        (
            "-f - < /dev/zero",
            {
                let mut c = plugin(&cluster, "kubectl-last_applied", &dir);
                c.args(["repair", "-f", "-"]);
                c
            },
            zero(),
        ),
        (
            // Issue 44: read whole (4.2 GB) before; now the same limit as any input.
            "--kubeconfig /dev/zero",
            {
                let mut c = plugin(&cluster, "kubectl-owners", &dir);
                c.args(["--kubeconfig", "/dev/zero", "cm/x"]);
                c
            },
            Stdio::null(),
        ),
    ];
    for (what, mut cmd, stdin) in cases {
        let (out, took) = timed(&mut cmd, stdin, limit);
        let stderr = text(&out.stderr);
        assert!(took < limit, "{what}: still reading after {took:?}");
        assert_eq!(out.status.code(), Some(1), "{what}: {}", describe(&out));
        assert!(
            stderr.contains("larger than 32 MiB, the limit on one input")
                && stderr.contains("FIELDWISE_MAX_INPUT_BYTES"),
            "{what}: the error names the limit and how to raise it: {stderr}"
        );
    }
    // The limit is the user's to raise (or lower).
    let patch = dir.join("patch.json");
    std::fs::write(&patch, format!(r#"{{"data":{{"b":"{}"}}}}"#, "x".repeat(2000))).expect("write");
    let out = run(safe_patch().arg("--patch-file").arg(&patch).env("FIELDWISE_MAX_INPUT_BYTES", "1000"));
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(text(&out.stderr).contains("larger than 1000 bytes"), "{}", describe(&out));
    let out = run(safe_patch().arg("--patch-file").arg(&patch).env("FIELDWISE_MAX_INPUT_BYTES", "100000"));
    assert!(out.status.success(), "{}", describe(&out));
}

fn zero() -> Stdio {
    Stdio::from(std::fs::File::open("/dev/zero").expect("/dev/zero"))
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn deeply_nested_input_is_refused_at_once() {
    let cluster = require_cluster!();
    let dir = scratch("deep");
    let object = dir.join("cm.json");
    std::fs::write(&object, r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1"}}"#)
        .expect("write");
    // 65,536 levels in a file; 20,000 on the command line (an argument is at most 128 KiB on Linux).
    let deep = |levels: usize| format!("{}1{}", r#"{"a":"#.repeat(levels), "}".repeat(levels));
    let file = dir.join("deep.json");
    std::fs::write(&file, deep(65_536)).expect("write");
    let inline = format!("{}{}", "[".repeat(20_000), "]".repeat(20_000));
    let safe_patch = || {
        let mut cmd = plugin(&cluster, "kubectl-safe_patch", &dir);
        cmd.args(["--local", "-o", "json"]);
        cmd
    };
    let limit = Duration::from_secs(20);
    let cases: Vec<(&str, Command)> = vec![
        ("-f deep.json", {
            let mut c = safe_patch();
            c.arg("-f").arg(&file).args(["-p", "{}"]);
            c
        }),
        ("--patch-file deep.json", {
            let mut c = safe_patch();
            c.arg("-f").arg(&object).arg("--patch-file").arg(&file);
            c
        }),
        ("-p", {
            let mut c = safe_patch();
            c.arg("-f").arg(&object).args(["-p", &inline]);
            c
        }),
        ("a selection: -f cm.json -f tree/ -R (deep.json two levels down)", {
            let tree = dir.join("tree");
            std::fs::create_dir_all(tree.join("sub")).expect("mkdir");
            std::fs::copy(&file, tree.join("sub").join("deep.json")).expect("copy");
            let mut c = plugin(&cluster, "kubectl-safe_patch", &dir);
            c.arg("-f").arg(&object).arg("-f").arg(&tree).args(["-R", "-p", "{}", "--yes"]);
            c
        }),
        ("owners -f deep.json", {
            let mut c = plugin(&cluster, "kubectl-owners", &dir);
            c.arg("-f").arg(&file);
            c
        }),
    ];
    for (what, mut cmd) in cases {
        let (out, took) = timed(&mut cmd, Stdio::null(), limit);
        let stderr = text(&out.stderr);
        assert!(took < Duration::from_secs(3), "{what}: took {took:?} (kubectl answers in 0.1 s)");
        assert_eq!(out.status.code(), Some(1), "{what}: {}", describe(&out));
        assert!(stderr.contains("nests deeper than 128 levels"), "{what}: {stderr}");
    }
}

// ---------------------------------------------------------------------------------------------
// #22.8: messages that say what happened

/// A TCP server that accepts connections and never answers (not even TLS).
fn silent_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    port
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn request_timeout_takes_kubectls_durations_and_says_which_limit_ran_out() {
    let cluster = require_cluster!();
    let dir = scratch("timeout");
    let server = format!("https://127.0.0.1:{}", silent_server());
    let owners = |timeout: &str| {
        let mut cmd = plugin(&cluster, "kubectl-owners", &dir);
        cmd.args(["-s", &server, "--insecure-skip-tls-verify", "--request-timeout", timeout, "cm/x"]);
        cmd
    };
    // kubectl takes Go durations below a second.
    let kubectl = run(cluster.kubectl().args(["get", "ns", "--request-timeout", "1ms"]));
    assert!(!text(&kubectl.stderr).contains("invalid"), "kubectl accepts 1ms: {}", describe(&kubectl));
    let (out, took) = timed(&mut owners("1ms"), Stdio::null(), Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(took < Duration::from_secs(5), "1ms: {took:?}");
    assert!(text(&out.stderr).contains("no answer within --request-timeout 1ms"), "{}", describe(&out));
    // 0 sets no limit on the answer; connecting still has kubectl's 30 s, and the message and --help say so.
    let (out, took) = timed(&mut owners("0"), Stdio::null(), Duration::from_secs(90));
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(took >= Duration::from_secs(25) && took < Duration::from_secs(60), "0: gave up after {took:?}");
    assert!(text(&out.stderr).contains("no connection within 30 s"), "{}", describe(&out));
    let help = text(&run(plugin(&cluster, "kubectl-owners", &dir).arg("--help")).stdout);
    assert!(!help.contains("waits forever") && help.contains("connecting still gives up after 30 s"), "{help}");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn names_namespaces_and_managed_fields_are_reported_as_they_are() {
    let cluster = require_cluster!();
    let dir = scratch("names");
    let ns = cluster.namespace("fw-hard-msg");
    cluster.kubectl_ok(&["create", "deployment", "web", "-n", &ns, "--image=busybox:1.36", "--replicas=0"]);

    // An unknown subresource is refused before anything is sent, and the discovery cache stays.
    let out = run(plugin(&cluster, "kubectl-safe_patch", &dir).args([
        "-n",
        &ns,
        "deploy/web",
        "--subresource",
        "bogus",
        "-p",
        "{}",
        "--yes",
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("has no subresource \"bogus\" (it has: ") && !stderr.contains("cache"), "{stderr}");
    let cached = fieldwise_e2e::files_below(&dir.join("cache"), None);
    assert!(
        cached.iter().any(|f| f.to_string_lossy().contains("discovery")),
        "the discovery cache was cleared: {cached:?}"
    );

    // A name with -A: kubectl refuses, and so do we.
    let kubectl = run(cluster.kubectl().args(["get", "-A", "deploy/web"]));
    assert!(text(&kubectl.stderr).contains("a resource cannot be retrieved by name across all namespaces"));
    let out = run(plugin(&cluster, "kubectl-owners", &dir).args(["-A", "deploy/web"]));
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        text(&out.stderr).contains("a resource cannot be retrieved by name across all namespaces"),
        "{}",
        describe(&out)
    );

    // `-n ''` is no -n at all: the context's namespace (default), as in kubectl.
    let name = format!("fw-hard-empty-ns-{}", std::process::id());
    cluster.kubectl_ok(&["create", "configmap", &name, "-n", "default", "--from-literal=a=1"]);
    let kubectl = run(cluster.kubectl().args(["get", "-n", "", &format!("cm/{name}")]));
    let out = run(plugin(&cluster, "kubectl-owners", &dir).args(["-n", "", &format!("cm/{name}")]));
    cluster.kubectl_ok(&["delete", "configmap", &name, "-n", "default"]);
    assert!(kubectl.status.success(), "kubectl: {}", describe(&kubectl));
    assert!(out.status.success(), "{}", describe(&out));

    // An object whose makers set no tracked field has no managedFields: said as it is.
    cluster.kubectl_ok(&["create", "serviceaccount", "bare", "-n", &ns]);
    let out = run(plugin(&cluster, "kubectl-owners", &dir).args(["-n", &ns, "sa/bare"]));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        !stderr.contains("before server-side field tracking") && stderr.contains("kubectl create serviceaccount"),
        "{stderr}"
    );
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn json_patch_paths_and_position_guards_are_named_as_written() {
    let cluster = require_cluster!();
    let dir = scratch("pointers");
    let ns = cluster.namespace("fw-hard-ptr");
    cluster.kubectl_ok(&["create", "deployment", "web", "-n", &ns, "--image=busybox:1.36", "--replicas=0"]);
    cluster.kubectl_ok(&["set", "env", "deploy/web", "-n", &ns, "A=1", "B=2"]);
    let safe_patch = |patch: &str| {
        run(plugin(&cluster, "kubectl-safe_patch", &dir).args([
            "-n",
            &ns,
            "deploy/web",
            "--type",
            "json",
            "-p",
            patch,
            "--dry-run=server",
        ]))
    };
    let out = safe_patch(r#"[{"op":"add","path":"metadata/labels/x","value":"1"}]"#);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        stderr.contains("does not start with \"/\"") && stderr.contains("write \"/metadata/labels/x\""),
        "{stderr}"
    );
    assert!(!stderr.contains("not found"), "{stderr}");

    let out = safe_patch(r#"[{"op":"replace","path":"/spec/template/spec/containers/0/env/1/value","value":"3"}]"#);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{}", describe(&out));
    let infos: Vec<&str> = stderr.lines().filter(|l| l.starts_with("info:")).collect();
    assert_eq!(infos.len(), 2, "{stderr}");
    assert!(
        infos[0].starts_with("info: /spec/template/spec/containers/0 is a position")
            && infos[0].contains("name=\"busybox\""),
        "{infos:?}"
    );
    assert!(
        infos[1].starts_with("info: /spec/template/spec/containers/0/env/1 is a position")
            && infos[1].contains("name=\"B\""),
        "{infos:?}"
    );
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn several_objects_dry_runs_and_exit_codes_are_reported_like_kubectl() {
    let cluster = require_cluster!();
    let dir = scratch("several");
    let ns = cluster.namespace("fw-hard-many");
    for name in ["a", "b"] {
        cluster.kubectl_ok(&["create", "configmap", name, "-n", &ns, "--from-literal=k=0"]);
    }
    // An object that fails is reported, and the others are still patched, as kubectl does.
    let patch = r#"{"data":{"k":"1"}}"#;
    let kubectl = run(cluster.kubectl().args(["patch", "-n", &ns, "cm", "a", "missing", "b", "-p", patch]));
    assert_eq!(kubectl.status.code(), Some(1), "kubectl: {}", describe(&kubectl));
    let patch = r#"{"data":{"k":"2"}}"#;
    let out =
        run(plugin(&cluster, "kubectl-safe_patch", &dir)
            .args(["-n", &ns, "cm", "a", "missing", "b", "-p", patch, "--yes"]));
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(text(&out.stderr).contains("\"missing\" not found"), "{}", describe(&out));
    assert!(
        text(&out.stdout).contains("configmap/a patched") && text(&out.stdout).contains("configmap/b patched"),
        "{}",
        describe(&out)
    );
    for name in ["a", "b"] {
        assert_eq!(cluster.get_json(&ns, &format!("cm/{name}"))["data"]["k"], "2", "{name} was patched");
    }

    // A dry run that would change nothing still says nothing was written.
    let out =
        run(plugin(&cluster, "kubectl-safe_patch", &dir).args(["-n", &ns, "cm/a", "-p", patch, "--dry-run=server"]));
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(text(&out.stdout).trim(), "configmap/a patched (no change) (server dry run)");

    // An undo of a write that was never confirmed needs --force: exit 2, as the exit-code table says.
    // The hook makes the object move and then kills the command before its write: the record is
    // left pending, and the next command finds the object moved: its write may have landed (unknown).
    cluster.kubectl_ok(&["create", "configmap", "c", "-n", &ns, "--from-literal=k=0"]);
    let hook = format!("kubectl annotate -n {ns} cm/c moved=1 >/dev/null 2>&1; kill -9 $PPID");
    let killed = run(plugin(&cluster, "kubectl-safe_patch", &dir)
        .args(["-n", &ns, "cm/c", "-p", r#"{"data":{"k":"3"}}"#, "--yes"])
        .env("FIELDWISE_HOOK_BEFORE_WRITE", &hook)
        .env("KUBECONFIG", &cluster.kubeconfig)
        .env("PATH", fieldwise_e2e::path_with_plugins()));
    assert!(!killed.status.success(), "{}", describe(&killed));
    let history = text(&run(plugin(&cluster, "kubectl-safe_patch", &dir).args(["-n", &ns, "history", "cm/c"])).stdout);
    let unconfirmed = history.lines().find(|l| l.contains("(unknown)")).unwrap_or_else(|| panic!("{history}"));
    let time = unconfirmed.split_whitespace().next().expect("a time");
    // Without --to, undo says why it has nothing to restore while history lists a backup (#22.4).
    let out = run(plugin(&cluster, "kubectl-safe_patch", &dir).args(["-n", &ns, "undo", "cm/c", "--yes"]));
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        text(&out.stderr).contains("no confirmed write of configmap/c to undo: its 1 backup(s) are of writes whose outcome was never confirmed"),
        "{}",
        describe(&out)
    );
    let out =
        run(plugin(&cluster, "kubectl-safe_patch", &dir).args(["-n", &ns, "undo", "cm/c", "--to", time, "--yes"]));
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(text(&out.stderr).contains("never confirmed; use --force"), "{}", describe(&out));
    let help = text(&run(plugin(&cluster, "kubectl-safe_patch", &dir).arg("--help")).stdout);
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("2 refused (") && help.contains("an undo of a write never confirmed without --force)"),
        "{help}"
    );

    // `repair secret/x` exits 2, and last-applied's help says when it does.
    cluster.kubectl_ok(&["create", "secret", "generic", "s", "-n", &ns, "--from-literal=pw=hunter2"]);
    let out = run(plugin(&cluster, "kubectl-last_applied", &dir).args(["-n", &ns, "repair", "secret/s", "--yes"]));
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let help = text(&run(plugin(&cluster, "kubectl-last_applied", &dir).arg("--help")).stdout);
    assert!(help.contains("refused (repair of a Secret without --store-secret-values"), "{help}");
}

// ---------------------------------------------------------------------------------------------
// #22.9: Secret data kept out of metadata

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_secret_value_copied_into_metadata_is_refused_without_allow_secret_exposure() {
    let cluster = require_cluster!();
    let dir = scratch("exposure");
    let ns = cluster.namespace("fw-hard-exposure");
    // "abcdef" is YWJjZGVm in data: a valid label value, so only the lint stands in the way.
    cluster.kubectl_ok(&["create", "secret", "generic", "s", "-n", &ns, "--from-literal=pw=abcdef"]);
    cluster.kubectl_ok(&["label", "secret", "s", "-n", &ns, "app=web"]);
    let copy = r#"[{"op":"copy","from":"/data/pw","path":"/metadata/labels/x"}]"#;
    let safe_patch =
        |args: &[&str]| run(plugin(&cluster, "kubectl-safe_patch", &dir).args(["-n", &ns, "secret/s"]).args(args));
    let labels = || cluster.get_json(&ns, "secret/s")["metadata"]["labels"].clone();

    for extra in [&["--yes"][..], &["--yes", "--force"]] {
        let out = safe_patch(&[&["--type", "json", "-p", copy][..], extra].concat());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", describe(&out));
        assert!(
            stderr.contains("exposes a Secret value: copies the value of the Secret's data.pw into metadata.labels.x")
                && stderr.contains("--allow-secret-exposure"),
            "{extra:?}: {stderr}"
        );
        assert_eq!(labels(), json!({"app": "web"}), "{extra:?}: nothing was written");
    }
    // Pasting the value (decoded) into an annotation is the same exposure.
    let out = safe_patch(&["-p", r#"{"metadata":{"annotations":{"note":"abcdef"}}}"#, "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(text(&out.stderr).contains("into metadata.annotations.note"), "{}", describe(&out));
    // Asked for explicitly, it is written.
    let out = safe_patch(&["--type", "json", "-p", copy, "--yes", "--allow-secret-exposure"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(labels(), json!({"app": "web", "x": "YWJjZGVm"}));
}

// ---------------------------------------------------------------------------------------------
// #28.4: values no request can carry are refused by name, never a panic (exit 101)

/// The three plugins, each reading (and safe-patch writing) `cm/x`.
fn every_plugin() -> [(&'static str, Vec<&'static str>); 3] {
    [
        ("kubectl-owners", vec!["cm/x"]),
        ("kubectl-safe_patch", vec!["cm/x", "-p", r#"{"data":{"b":"2"}}"#, "--yes"]),
        ("kubectl-last_applied", vec!["view", "cm/x"]),
    ]
}

/// The cluster's kubeconfig with its users replaced by one, `u` (`user` is its entry), and
/// its contexts' namespace set to `namespace` when given.
fn kubeconfig_with(cluster: &Cluster, dir: &Path, name: &str, user: Option<Value>, namespace: Option<&str>) -> PathBuf {
    let mut config: Value =
        serde_yaml::from_str(&std::fs::read_to_string(&cluster.kubeconfig).expect("kubeconfig")).expect("YAML");
    let contexts = config["contexts"].as_array_mut().expect("contexts");
    for context in contexts.iter_mut() {
        if user.is_some() {
            context["context"]["user"] = json!("u");
        }
        if let Some(ns) = namespace {
            context["context"]["namespace"] = json!(ns);
        }
    }
    if let Some(user) = user {
        config["users"] = json!([{"name": "u", "user": user}]);
    }
    let path = dir.join(name);
    std::fs::write(&path, serde_yaml::to_string(&config).expect("YAML")).expect("write kubeconfig");
    path
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn huge_request_timeouts_and_tokens_with_newlines_are_refused_by_name_never_a_panic() {
    let cluster = require_cluster!();
    let dir = scratch("values");
    let ns = cluster.namespace("fw-hard-values");
    cluster.kubectl_ok(&["create", "configmap", "x", "-n", &ns, "--from-literal=a=1"]);
    let data = || cluster.get_json(&ns, "cm/x")["data"].clone();

    for timeout in ["18446744073709551615s", "5000000000000000h"] {
        let kubectl = run(cluster.kubectl().args(["get", "cm/x", "-n", &ns, "--request-timeout", timeout]));
        assert!(!kubectl.status.success(), "kubectl refuses {timeout} too: {}", describe(&kubectl));
        for (exe, args) in every_plugin() {
            let out = run(plugin(&cluster, exe, &dir).args(["-n", &ns, "--request-timeout", timeout]).args(&args));
            assert_eq!(out.status.code(), Some(1), "{exe} {timeout}: {}", describe(&out));
            assert_eq!(
                text(&out.stderr),
                format!(
                    "error: invalid argument \"{timeout}\" for \"--request-timeout\" flag: time: invalid duration \"{timeout}\": longer than Go's limit of 2562047h47m16.854775807s (use a number with a unit, e.g. 30s, 1m or 500ms; 0 means no timeout)\n"
                ),
                "{exe}"
            );
        }
    }

    let token_refused = |what: &str| {
        format!(
            "error: invalid {what}: it contains a newline or another control character, which an HTTP header cannot carry (look for a line break copied with it)\n"
        )
    };
    let kubectl = run(cluster.kubectl().args(["get", "cm/x", "-n", &ns, "--token", "s3cret\ntoken"]));
    assert!(!kubectl.status.success(), "kubectl cannot send it either: {}", describe(&kubectl));
    let in_kubeconfig = kubeconfig_with(&cluster, &dir, "newline", Some(json!({"token": "s3cret\ntoken"})), None);
    for (exe, args) in every_plugin() {
        let out = run(plugin(&cluster, exe, &dir).args(["-n", &ns, "--token", "s3cret\ntoken"]).args(&args));
        assert_eq!(out.status.code(), Some(1), "{exe} --token: {}", describe(&out));
        assert_eq!(text(&out.stderr), token_refused("--token"), "{exe}");
        let out =
            run(plugin(&cluster, exe, &dir).arg("--kubeconfig").arg(&in_kubeconfig).args(["-n", &ns]).args(&args));
        assert_eq!(out.status.code(), Some(1), "{exe} kubeconfig token: {}", describe(&out));
        assert_eq!(text(&out.stderr), token_refused("token of kubeconfig user \"u\""), "{exe}");
        assert!(!text(&out.stderr).contains("s3cret"), "{exe}: the token was printed");
    }
    assert_eq!(data(), json!({"a": "1"}), "nothing was written");

    // A tokenFile ending with a newline (`echo TOKEN > file`) is read as client-go reads it: trimmed.
    cluster.kubectl_ok(&["create", "serviceaccount", "editor", "-n", &ns]);
    let account = format!("--serviceaccount={ns}:editor");
    cluster.kubectl_ok(&["create", "rolebinding", "editor", "-n", &ns, "--clusterrole=edit", &account]);
    let token = cluster.kubectl_ok(&["create", "token", "editor", "-n", &ns, "--duration=10m"]).trim().to_string();
    let file = dir.join("token");
    std::fs::write(&file, format!("{token}\n")).expect("write the token file");
    let from_file =
        kubeconfig_with(&cluster, &dir, "file", Some(json!({"tokenFile": file.to_str().expect("UTF-8")})), None);
    let kubectl = run(cluster.kubectl().arg("--kubeconfig").arg(&from_file).args(["get", "cm/x", "-n", &ns]));
    assert!(kubectl.status.success(), "kubectl: {}", describe(&kubectl));
    let out = run(plugin(&cluster, "kubectl-safe_patch", &dir).arg("--kubeconfig").arg(&from_file).args([
        "-n",
        &ns,
        "cm/x",
        "-p",
        r#"{"data":{"b":"2"}}"#,
        "--yes",
    ]));
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(data(), json!({"a": "1", "b": "2"}));
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn namespaces_no_request_can_name_are_refused_and_the_discovery_cache_is_kept() {
    let cluster = require_cluster!();
    let dir = scratch("namespace");
    let ns = cluster.namespace("fw-hard-ns");
    cluster.kubectl_ok(&["create", "configmap", "x", "-n", &ns, "--from-literal=a=1"]);
    // A warm discovery cache, which a misread 404 used to clear.
    let out = run(plugin(&cluster, "kubectl-owners", &dir).args(["-n", &ns, "cm/x"]));
    assert!(out.status.success(), "{}", describe(&out));
    let cached = || {
        fieldwise_e2e::files_below(&dir.join("cache"), None).iter().any(|f| f.to_string_lossy().contains("discovery"))
    };
    assert!(cached(), "the discovery cache was written");

    let kubectl = run(cluster.kubectl().args(["get", "cm/x", "-n", "a/b"]));
    assert!(text(&kubectl.stderr).contains("invalid namespace \"a/b\""), "kubectl: {}", describe(&kubectl));
    for (namespace, problem) in [
        ("a/b", "[may not contain '/']"),
        ("a%2Fb", "[may not contain '%']"),
        (".", "[may not be '.']"),
        ("..", "[may not be '..']"),
    ] {
        for (exe, args) in every_plugin() {
            let out = run(plugin(&cluster, exe, &dir).args(["-n", namespace]).args(&args));
            assert_eq!(out.status.code(), Some(1), "{exe} -n {namespace}: {}", describe(&out));
            assert_eq!(text(&out.stderr), format!("error: invalid namespace {namespace:?}: {problem}\n"), "{exe}");
        }
    }
    // The same namespace from the kubeconfig's context, named as coming from there.
    let in_context = kubeconfig_with(&cluster, &dir, "context-ns", None, Some("a/b"));
    let context = cluster.kubectl_ok(&["config", "current-context"]).trim().to_string();
    for (exe, args) in every_plugin() {
        let out = run(plugin(&cluster, exe, &dir).arg("--kubeconfig").arg(&in_context).args(&args));
        assert_eq!(out.status.code(), Some(1), "{exe}: {}", describe(&out));
        assert_eq!(
            text(&out.stderr),
            format!(
                "error: invalid namespace \"a/b\" (the namespace of context \"{context}\" in the kubeconfig): [may not contain '/']\n"
            ),
            "{exe}"
        );
    }
    assert!(cached(), "the discovery cache was kept");
    assert_eq!(cluster.get_json(&ns, "cm/x")["data"], json!({"a": "1"}), "nothing was written");
}

// ---------------------------------------------------------------------------------------------
// #28.9: inputs kubectl refuses or warns about

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn duplicate_fields_in_a_patch_are_refused_under_strict_validation_and_warned_about_otherwise() {
    let cluster = require_cluster!();
    let dir = scratch("duplicates");
    let ns = cluster.namespace("fw-hard-dup");
    cluster.kubectl_ok(&["create", "configmap", "x", "-n", &ns, "--from-literal=a=1"]);
    let data = || cluster.get_json(&ns, "cm/x")["data"].clone();
    let safe_patch =
        |args: &[&str]| run(plugin(&cluster, "kubectl-safe_patch", &dir).args(["-n", &ns, "cm/x"]).args(args));
    let refused = |source: &str| {
        format!(
            "error: the patch from {source} has duplicate field \"data.a\": only its last value would be used, and the apiserver's strict field validation (--validate=strict, the default) refuses such a body; remove the duplicate, or pass --validate=warn to send the last value\n"
        )
    };

    let out = safe_patch(&["-p", r#"{"data":{"a":"2","a":"3"}}"#, "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert_eq!(text(&out.stderr), refused("-p"));
    let file = dir.join("patch.yaml");
    std::fs::write(&file, "data:\n  a: '2'\n  a: '3'\n").expect("write");
    let path = file.to_str().expect("UTF-8");
    let out = safe_patch(&["--patch-file", path, "--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert_eq!(text(&out.stderr), refused(path));
    assert_eq!(data(), json!({"a": "1"}), "nothing was written");

    // --validate=warn: said, and the last value sent, as the apiserver's warn level does.
    let out = safe_patch(&["-p", r#"{"data":{"a":"2","a":"3"}}"#, "--yes", "--validate=warn"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        text(&out.stderr)
            .contains("warning: the patch from -p: duplicate field \"data.a\": only its last value is used"),
        "{}",
        describe(&out)
    );
    assert_eq!(data(), json!({"a": "3"}));

    // An object file (-f) is read, not sent as written: its duplicates are warned about.
    let object = dir.join("cm.yaml");
    std::fs::write(&object, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: '1'\n  a: '2'\n")
        .expect("write");
    let out = run(plugin(&cluster, "kubectl-safe_patch", &dir).arg("-f").arg(&object).args([
        "--local",
        "-p",
        r#"{"data":{"b":"1"}}"#,
        "-o",
        "json",
    ]));
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        text(&out.stderr).contains(&format!(
            "warning: {}: duplicate field \"data.a\": only its last value is read",
            object.display()
        )),
        "{}",
        describe(&out)
    );
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn undo_to_a_prefix_several_backups_share_is_refused_with_the_matches() {
    let cluster = require_cluster!();
    let dir = scratch("undo-to");
    let ns = cluster.namespace("fw-hard-undo-to");
    cluster.kubectl_ok(&["create", "configmap", "x", "-n", &ns, "--from-literal=a=1"]);
    let safe_patch = |args: &[&str]| run(plugin(&cluster, "kubectl-safe_patch", &dir).args(["-n", &ns]).args(args));
    for value in ["2", "3"] {
        let out = safe_patch(&["cm/x", "-p", &format!(r#"{{"data":{{"a":"{value}"}}}}"#), "--yes"]);
        assert!(out.status.success(), "{}", describe(&out));
    }
    let history = text(&safe_patch(&["history", "cm/x"]).stdout);
    let times: Vec<&str> = history
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|t| t.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    assert_eq!(times.len(), 2, "{history}");
    let year = &times[0][..4];
    let out = safe_patch(&["undo", "cm/x", "--to", year, "--yes"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: --to {year} matches 2 backups of configmap/x: {}, {}; give more of the time, so that it matches one\n",
            times[0], times[1]
        )
    );
    assert_eq!(cluster.get_json(&ns, "cm/x")["data"], json!({"a": "3"}), "nothing was written");
    // The whole time names one: restored to the state before the second write.
    let out = safe_patch(&["undo", "cm/x", "--to", times[1], "--yes"]);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(cluster.get_json(&ns, "cm/x")["data"], json!({"a": "2"}));
}

// ---------------------------------------------------------------------------------------------
// #28.8: messages that name what they are about

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn undo_of_a_run_names_the_object_whose_write_was_never_confirmed() {
    let cluster = require_cluster!();
    let dir = scratch("undo-run");
    let ns = cluster.namespace("fw-hard-undo-run");
    cluster.kubectl_ok(&["create", "configmap", "c", "-n", &ns, "--from-literal=k=0"]);
    cluster.kubectl_ok(&["label", "configmap", "c", "-n", &ns, "run=fw28"]);
    // The hook makes the change itself (as if the write had landed unseen) and kills the run
    // before its write: the record stays pending, and the next command finds the object moved
    // (its write may have landed: unknown). An object already at the pre-image would be
    // `unchanged`, not refused: the restore must have something to write.
    let hook = format!(
        "kubectl patch -n {ns} cm/c --type merge -p '{{\"data\":{{\"k\":\"1\"}}}}' >/dev/null 2>&1; kill -9 $PPID"
    );
    let killed = run(plugin(&cluster, "kubectl-safe_patch", &dir)
        .args(["-n", &ns, "cm", "-l", "run=fw28", "-p", r#"{"data":{"k":"1"}}"#, "--yes"])
        .env("FIELDWISE_HOOK_BEFORE_WRITE", &hook)
        .env("KUBECONFIG", &cluster.kubeconfig)
        .env("PATH", fieldwise_e2e::path_with_plugins()));
    assert!(!killed.status.success(), "{}", describe(&killed));
    // The run wrote nothing confirmed, so --last-run steps over it: it is named by its id.
    let runs = text(&run(plugin(&cluster, "kubectl-safe_patch", &dir).args(["history", "--runs"])).stdout);
    let id = runs.lines().nth(1).and_then(|l| l.split_whitespace().next()).unwrap_or_else(|| panic!("{runs}"));
    let out = run(plugin(&cluster, "kubectl-safe_patch", &dir).args(["-n", &ns, "undo", "--run", id, "--yes"]));
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        text(&out.stderr).contains(&format!(
            "error: the write of configmap/c in namespace {ns} in that backup was never confirmed; use --force to restore its pre-image anyway"
        )),
        "{}",
        describe(&out)
    );
    assert_eq!(cluster.get_json(&ns, "cm/c")["data"], json!({"k": "1"}), "nothing was written");
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_bulk_patch_interrupted_while_previewing_says_nothing_was_written() {
    let cluster = require_cluster!();
    let dir = scratch("interrupt-preview");
    let ns = cluster.namespace("fw-hard-interrupt");
    let mut list = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..150 {
        list.push_str(&format!(
            "- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: cm-{i:03}, labels: {{app: fw28}}}}, data: {{k: v}}}}\n"
        ));
    }
    cluster.kubectl_stdin(&["create", "-n", &ns, "-f", "-"], &list);
    // A warm discovery cache, so the signal finds the run previewing rather than discovering.
    assert!(run(plugin(&cluster, "kubectl-owners", &dir).args(["-n", &ns, "cm/cm-000"])).status.success());
    let patch = r#"{"data":{"k":"w"}}"#;
    let child = plugin(&cluster, "kubectl-safe_patch", &dir)
        .args(["-n", &ns, "cm", "-l", "app=fw28", "-p", patch, "--yes", "--concurrency", "1", "--max-objects", "200"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn safe-patch");
    std::thread::sleep(Duration::from_millis(400));
    let kill = run(Command::new("kill").arg("-INT").arg(child.id().to_string()));
    assert!(kill.status.success(), "{}", describe(&kill));
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(130), "{}", describe(&out));
    assert_eq!(
        text(&out.stderr).lines().last(),
        Some("error: interrupted (SIGINT): stopped before any write was sent: nothing was written"),
        "{}",
        describe(&out)
    );
    let list: Value =
        serde_json::from_str(&cluster.kubectl_ok(&["get", "cm", "-n", &ns, "-l", "app=fw28", "-o", "json"]))
            .expect("JSON");
    let written = list["items"].as_array().expect("items").iter().filter(|cm| cm["data"]["k"] != "v").count();
    assert_eq!(written, 0, "nothing was written");
}

/// `owners plan` writes nothing (its requests are dry runs): SIGTERM while it plans ends it at
/// once saying so (issue 44.9), where it said "the writes in flight were finished".
#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_plan_stopped_by_sigterm_says_nothing_was_written() {
    let cluster = require_cluster!();
    let dir = scratch("interrupt-plan");
    let ns = cluster.namespace("fw-hard-plan-term");
    let mut list = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..150 {
        list.push_str(&format!(
            "- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: cm-{i:03}}}, data: {{k: v}}}}\n"
        ));
    }
    let file = fieldwise_e2e::write_file(&dir, "many.yaml", &list);
    // A warm discovery cache, so the signal finds the run planning rather than discovering.
    assert!(run(plugin(&cluster, "kubectl-owners", &dir).args(["-n", &ns, "plan", "-f", &file, "--concurrency", "1"]))
        .status
        .code()
        .is_some());
    let child = plugin(&cluster, "kubectl-owners", &dir)
        .args(["-n", &ns, "plan", "-f", &file, "--concurrency", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn owners plan");
    std::thread::sleep(Duration::from_millis(600));
    let kill = run(Command::new("kill").arg("-TERM").arg(child.id().to_string()));
    assert!(kill.status.success(), "{}", describe(&kill));
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(143), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("writes in flight"), "{stderr}");
    assert_eq!(
        stderr.lines().last(),
        Some("error: interrupted (SIGTERM): stopped before any write was sent: nothing was written"),
        "{}",
        describe(&out)
    );
}
