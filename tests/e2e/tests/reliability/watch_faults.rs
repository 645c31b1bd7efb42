//! `kubectl owners watch` under faults (issue #44.5): the apiserver killed and started again
//! during a watch, and a proxy that stops forwarding without closing the connection (a black
//! hole). The watch must say once that the connection was lost and once that it is back,
//! report every change (made after the restart, or while the proxy held the connection), end
//! with its summary, and exit as the table says (SIGINT 130, SIGTERM 143). On a private
//! cluster: the apiserver is killed.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use fieldwise_e2e::connect_proxy::ConnectProxy;
use fieldwise_e2e::private_cluster::PrivateCluster;
use fieldwise_e2e::{require_cluster, Cluster};
use serde_json::Value;

use super::describe;
use super::report::Section;

/// The silence bound of the black-hole case (`FIELDWISE_WATCH_SILENCE`, a test-hooks build's
/// knob): the shipped bound is 2 min, twice the apiserver's bookmark interval.
const SILENCE: Duration = Duration::from_secs(8);

/// A watch running as a child process, its lines timestamped as they come.
struct Running {
    child: Child,
    stdout: mpsc::Receiver<(Instant, String)>,
    stderr: mpsc::Receiver<(Instant, String)>,
    out: Vec<(Instant, String)>,
    err: Vec<(Instant, String)>,
}

fn timestamped(from: impl std::io::Read + Send + 'static) -> mpsc::Receiver<(Instant, String)> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            let _ = send.send((Instant::now(), line));
        }
    });
    receive
}

impl Running {
    /// `kubectl owners watch cm/x -o json` in `ns` with `kubeconfig` and `env`, once it said
    /// it is watching.
    fn start(cluster: &Cluster, kubeconfig: &std::path::Path, ns: &str, env: &[(&str, String)]) -> Running {
        let mut cmd = cluster.plugin("kubectl-owners");
        cmd.env("KUBECONFIG", kubeconfig).args(["-n", ns, "watch", "cm/x", "-o", "json"]);
        for (key, value) in env {
            cmd.env(key, value);
        }
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start the watch");
        let stdout = timestamped(child.stdout.take().expect("stdout"));
        let stderr = timestamped(child.stderr.take().expect("stderr"));
        let mut running = Running { child, stdout, stderr, out: Vec::new(), err: Vec::new() };
        running.wait("the watch to start", Duration::from_secs(60), |r| {
            r.err.iter().any(|(_, l)| l.starts_with("Watching 1 object(s)"))
        });
        running
    }

    fn drain(&mut self) {
        self.out.extend(self.stdout.try_iter());
        self.err.extend(self.stderr.try_iter());
    }

    /// Waits until `done`, at most `limit`.
    fn wait(&mut self, what: &str, limit: Duration, done: impl Fn(&Running) -> bool) {
        let deadline = Instant::now() + limit;
        loop {
            self.drain();
            if done(self) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "waited {limit:?} for {what}; stdout {:?}; stderr {:?}",
                self.out,
                self.err
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The values `.data.x` took, in the order the watch reported them.
    fn values(&self) -> Vec<String> {
        self.out
            .iter()
            .filter_map(|(_, l)| serde_json::from_str::<Value>(l).ok())
            .filter(|r| r["type"] == "change" && r["field"] == ".data.x")
            .map(|r| r["after"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    fn wait_value(&mut self, value: &str, limit: Duration) {
        self.wait(&format!("the change to {value}"), limit, |r| r.values().iter().any(|v| v == value));
    }

    /// Stderr's lines that start with `prefix`, with when they came.
    fn said(&self, prefix: &str) -> Vec<(Instant, String)> {
        self.err.iter().filter(|(_, l)| l.starts_with(prefix)).cloned().collect()
    }

    /// Sends `signal`, waits for the end: the exit code and the summary record.
    fn stop(mut self, signal: &str) -> (Option<i32>, Value, Running) {
        let pid = self.child.id().to_string();
        assert!(std::process::Command::new("kill").args([signal, &pid]).status().expect("kill").success());
        let status = self.child.wait().expect("the watch ends");
        std::thread::sleep(Duration::from_millis(200));
        self.drain();
        let summary = self
            .out
            .iter()
            .filter_map(|(_, l)| serde_json::from_str::<Value>(l).ok())
            .find(|r| r["type"] == "summary")
            .unwrap_or_else(|| panic!("a summary: stdout {:?}; stderr {:?}", self.out, self.err));
        (status.code(), summary, self)
    }
}

fn patch_x(cluster: &Cluster, ns: &str, value: &str) {
    let patch = format!(r#"{{"data":{{"x":"{value}"}}}}"#);
    cluster.kubectl_ok(&["patch", "cm", "x", "-n", ns, "--type", "merge", "-p", &patch]);
}

/// The seconds in "Reconnected after 4.2s (...)".
fn reconnected_after(line: &str) -> f64 {
    line.trim_start_matches("Reconnected after ").split('s').next().and_then(|s| s.parse().ok()).unwrap_or(f64::NAN)
}

/// The cluster's kubeconfig with every cluster reached through `proxy`.
fn through_proxy(cluster: &Cluster, proxy: &ConnectProxy) -> std::path::PathBuf {
    let text = std::fs::read_to_string(&cluster.kubeconfig).expect("kubeconfig");
    let mut config: serde_yaml::Value = serde_yaml::from_str(&text).expect("kubeconfig YAML");
    for entry in config["clusters"].as_sequence_mut().expect("clusters") {
        entry["cluster"]["proxy-url"] = proxy.url.clone().into();
    }
    let path = std::env::temp_dir().join(format!("fw-rel-watch-{}.kubeconfig", std::process::id()));
    std::fs::write(&path, serde_yaml::to_string(&config).expect("YAML")).expect("write kubeconfig");
    path
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn a_watch_survives_an_apiserver_restart_and_a_black_hole_missing_no_change() {
    let shared = require_cluster!();
    let mut section = Section::start("Watch faults", &shared);
    let private = PrivateCluster::up("watch-faults");
    let cluster = &private.cluster;
    section.figure("private cluster", fieldwise_e2e::run_info::kubernetes_version(cluster));
    let ns = cluster.namespace("fw-rel-watch");
    cluster.kubectl_ok(&["create", "configmap", "x", "-n", &ns, "--from-literal=x=0"]);

    // 1. The apiserver killed for a few seconds, started again; changes after the restart.
    let mut watch = Running::start(cluster, &cluster.kubeconfig, &ns, &[]);
    patch_x(cluster, &ns, "1");
    watch.wait_value("1", Duration::from_secs(30));
    let stop = private.apiserver("stop");
    assert!(stop.status.success(), "apiserver stop: {}", describe(&stop));
    let killed = Instant::now();
    std::thread::sleep(Duration::from_secs(4));
    let start = private.apiserver("start");
    assert!(start.status.success(), "apiserver start: {}", describe(&start));
    let down = killed.elapsed();
    patch_x(cluster, &ns, "2");
    patch_x(cluster, &ns, "3");
    watch.wait_value("3", Duration::from_secs(60));
    watch.wait("the line saying the watch is back", Duration::from_secs(30), |r| {
        !r.said("Reconnected after").is_empty()
    });
    let (code, summary, restart) = watch.stop("-INT");
    let lost = restart.said("warning: lost the connection");
    let back = restart.said("Reconnected after");
    assert_eq!(restart.values(), ["1", "2", "3"], "every change once, in order; stderr {:?}", restart.err);
    assert_eq!((lost.len(), back.len()), (1, 1), "one outage, said once each way: {:?}", restart.err);
    assert!(lost[0].1.contains("until Ctrl-C"), "{}", lost[0].1);
    assert_eq!(
        (&summary["changes"], &summary["outages"], &summary["disconnected"], &summary["ended"]),
        (&3.into(), &1.into(), &false.into(), &"signal".into()),
        "{summary}"
    );
    assert_eq!(code, Some(130), "ended by SIGINT; stderr {:?}", restart.err);
    section.figure("apiserver killed, then started again (stop to ready)", format!("{:.1} s", down.as_secs_f64()));
    section.figure(
        "restart: the watch reconnected after (as it reported)",
        format!("{:.1} s", reconnected_after(&back[0].1)),
    );

    // 2. A black hole: the proxy holds every byte and answers no new tunnel, closing nothing.
    let proxy = ConnectProxy::start();
    let kubeconfig = through_proxy(cluster, &proxy);
    let silence = ("FIELDWISE_WATCH_SILENCE", format!("{}s", SILENCE.as_secs()));
    let mut watch = Running::start(cluster, &kubeconfig, &ns, &[silence]);
    patch_x(cluster, &ns, "4");
    watch.wait_value("4", Duration::from_secs(30));
    proxy.stall();
    let stalled = Instant::now();
    // Made while the watch's connection is held (the kubectl calls go around the proxy).
    patch_x(cluster, &ns, "5");
    patch_x(cluster, &ns, "6");
    watch.wait("the watch to notice the silent connection", SILENCE * 4, |r| {
        r.said("warning: lost the connection").iter().any(|(at, _)| *at > stalled)
    });
    let noticed = watch.said("warning: lost the connection").into_iter().find(|(at, _)| *at > stalled).expect("lost");
    let notice = noticed.0 - stalled;
    assert!(noticed.1.contains("silent"), "said why: {}", noticed.1);
    std::thread::sleep(Duration::from_secs(3));
    proxy.resume();
    let resumed = Instant::now();
    watch.wait_value("6", SILENCE * 4);
    let caught_up = resumed.elapsed();
    let (code, summary, hole) = watch.stop("-TERM");
    let _ = std::fs::remove_file(&kubeconfig);
    assert_eq!(hole.values(), ["4", "5", "6"], "every change once, in order; stderr {:?}", hole.err);
    assert!(
        notice >= SILENCE - Duration::from_secs(1) && notice <= SILENCE + Duration::from_secs(4),
        "noticed after {notice:?}, the bound is {SILENCE:?}"
    );
    assert!(
        hole.err.iter().any(|(_, l)| l.starts_with("SIGTERM: stopping, the summary follows")),
        "it says it stopped: {:?}",
        hole.err
    );
    assert!(!hole.err.iter().any(|(_, l)| l.contains("nothing was written")), "{:?}", hole.err);
    assert_eq!((&summary["changes"], &summary["ended"]), (&3.into(), &"signal".into()), "{summary}");
    assert!(summary["outages"].as_u64().unwrap_or(0) >= 1, "{summary}");
    assert_eq!(code, Some(143), "ended by SIGTERM; stderr {:?}", hole.err);

    let reported = restart.values().len() + hole.values().len();
    let outages = summary["outages"].as_u64().unwrap_or(0) + 1;
    section.figure("outages injected", "2 (apiserver killed and restarted; proxy stalled 3 s past the notice)");
    section.figure("changes made / reported (each once, in order)", format!("6 / {reported}"));
    section.figure("reconnects (outages in the summaries)", outages);
    section.figure(
        "time to notice a silent connection",
        format!("{:.1} s (bound {} s here; 120 s shipped)", notice.as_secs_f64(), SILENCE.as_secs()),
    );
    section.figure(
        "black hole: the changes made meanwhile reported after forwarding resumed",
        format!("{:.1} s", caught_up.as_secs_f64()),
    );
    section.figure("exit codes (SIGINT, SIGTERM), each after its summary", "130, 143");
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}
