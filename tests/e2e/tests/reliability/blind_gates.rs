//! Blind gates (issue #44 point 2): every check of the suite run by an account bound to no
//! role (it may read no object, only discovery), in every output format it has. Each must
//! exit 1 and name what it could not read: on stdout in every format that can hold it (the
//! text, the documents, JUnit, SARIF, JSON Lines), on stderr for `-o name` and for a watch
//! that never started; with `--allow-unreadable` each exits as if complete (0 here: nothing
//! was found) and still names it. The figures count the cases.

use std::process::Output;

use fieldwise_e2e::{require_cluster, run, text, write_file, Cluster};
use serde_json::Value;

use super::report::Section;

/// One command of the matrix: its plugin, its arguments, its output formats (`None`: the
/// text), and how it names a type: `configmaps` is the one every case cannot read.
struct Check {
    name: &'static str,
    plugin: &'static str,
    args: Vec<String>,
    formats: Vec<Option<&'static str>>,
}

/// Whether the stdout of `format` names `configmaps` as not read, in that format's own way.
fn names_on_stdout(format: Option<&str>, out: &Output) -> bool {
    let stdout = text(&out.stdout);
    let listed =
        |list: &Value| list.as_array().is_some_and(|l| l.iter().any(|u| u["resource"].as_str() == Some("configmaps")));
    match format {
        None => stdout.contains("Not read (") && stdout.contains("configmaps"),
        Some("json") | Some("yaml") => {
            let doc: Value = match format {
                Some("json") => serde_json::from_str(&stdout).unwrap_or(Value::Null),
                _ => serde_yaml::from_str(&stdout).unwrap_or(Value::Null),
            };
            listed(&doc["unread"]) || listed(&doc["skipped"])
        }
        // A watch's JSON Lines: the summary record; a scan's: a skipped record.
        Some("json-lines") | Some("watch-json") => stdout.lines().any(|l| {
            let record: Value = serde_json::from_str(l).unwrap_or(Value::Null);
            listed(&record["unread"]) || record["skipped"]["resource"] == "configmaps"
        }),
        // A test case in error (or skipped, when allowed) whose message is the server's refusal.
        Some("junit") => stdout
            .lines()
            .any(|l| (l.contains("<error message=") || l.contains("<skipped message=")) && l.contains("configmaps")),
        Some("sarif") => {
            let log: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
            log["runs"][0]["invocations"][0]["toolExecutionNotifications"].as_array().is_some_and(|n| {
                n.iter().any(|n| n["message"]["text"].as_str().is_some_and(|t| t.starts_with("configmaps")))
            })
        }
        _ => false,
    }
}

/// The formats that cannot hold it: names only (`-o name`), and the text and JSON Lines of
/// a watch that was refused before it started (it names it on stderr).
fn stdout_cannot_name(check: &str, format: Option<&str>, allowed: bool) -> bool {
    format == Some("name") || (check == "owners watch" && !allowed)
}

fn run_case(cluster: &Cluster, ns: &str, token: &str, check: &Check, format: Option<&str>, allowed: bool) -> Output {
    let mut cmd = cluster.plugin(check.plugin);
    cmd.args(["-n", ns, "--token", token]).args(&check.args);
    match format {
        None => {}
        Some("json-lines") => {
            cmd.arg("--json-lines");
        }
        Some("watch-json") => {
            cmd.args(["-o", "json"]);
        }
        Some(format) => {
            cmd.args(["-o", format]);
        }
    }
    if allowed {
        cmd.arg("--allow-unreadable");
    }
    run(&mut cmd)
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn every_check_run_blind_fails_and_names_what_it_could_not_read_in_every_format() {
    let cluster = require_cluster!();
    let mut section = Section::start("Blind gates", &cluster);
    let ns = cluster.namespace("rel-blind");
    let dir = std::env::temp_dir().join(format!("fw-rel-blind-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    cluster.kubectl_ok(&["create", "configmap", "settings", "-n", &ns, "--from-literal=a=b"]);
    let policy = write_file(
        &dir,
        "policy.yaml",
        "apiVersion: fieldwise.dev/v1alpha1\nkind: OwnershipPolicy\nrules:\n- name: settings\n  match:\n    kinds: [ConfigMap]\n  managers: [kubectl-create]\n",
    );
    let manifest = write_file(
        &dir,
        "settings.yaml",
        &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: {ns}\ndata:\n  a: c\n"),
    );
    let token = cluster.service_account_token(&ns, "nobody");
    let strings = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let checks = [
        Check {
            name: "owners drift",
            plugin: "kubectl-owners",
            args: strings(&["drift", "--policy", &policy]),
            formats: vec![None, Some("json"), Some("yaml"), Some("junit"), Some("sarif")],
        },
        Check {
            name: "last-applied scan",
            plugin: "kubectl-last_applied",
            args: strings(&["scan"]),
            formats: vec![None, Some("json"), Some("yaml"), Some("json-lines"), Some("name")],
        },
        Check {
            name: "owners plan",
            plugin: "kubectl-owners",
            args: strings(&["plan", "-f", &manifest]),
            formats: vec![None, Some("json"), Some("yaml"), Some("junit"), Some("name")],
        },
        Check {
            name: "owners watch",
            plugin: "kubectl-owners",
            args: strings(&["watch", "cm/settings", "--for", "2s"]),
            formats: vec![None, Some("watch-json")],
        },
    ];
    let cases: usize = checks.iter().map(|c| c.formats.len()).sum();
    section.figure("account", "a ServiceAccount bound to no role (`kubectl create token`), `--token`");
    section.figure("cases (command × output format)", format!("{cases} ({} commands)", checks.len()));

    let mut failed_closed = 0;
    let mut named_stdout = 0;
    let mut named_stderr = 0;
    let mut can_name = 0;
    let mut passed_allowed = 0;
    let mut named_allowed = 0;
    let mut can_name_allowed = 0;
    let mut wrong = Vec::new();
    for check in &checks {
        for &format in &check.formats {
            let label = format!("{} {}", check.name, format.unwrap_or("text"));
            let out = run_case(&cluster, &ns, &token, check, format, false);
            let stderr = text(&out.stderr);
            if out.status.code() == Some(1) {
                failed_closed += 1;
            } else {
                wrong.push(format!("{label}: exit {:?}, not 1", out.status.code()));
            }
            if stderr.contains("could not read") && stderr.contains("configmaps") {
                named_stderr += 1;
            } else {
                wrong.push(format!("{label}: stderr does not name configmaps: {stderr}"));
            }
            if !stdout_cannot_name(check.name, format, false) {
                can_name += 1;
                if names_on_stdout(format, &out) {
                    named_stdout += 1;
                } else {
                    wrong.push(format!("{label}: stdout does not name configmaps: {}", text(&out.stdout)));
                }
            }

            let out = run_case(&cluster, &ns, &token, check, format, true);
            if out.status.code() == Some(0) {
                passed_allowed += 1;
            } else {
                wrong.push(format!("{label} --allow-unreadable: exit {:?}: {}", out.status.code(), text(&out.stderr)));
            }
            if !stdout_cannot_name(check.name, format, true) {
                can_name_allowed += 1;
                if names_on_stdout(format, &out) {
                    named_allowed += 1;
                } else {
                    wrong.push(format!("{label} --allow-unreadable: stdout does not name it: {}", text(&out.stdout)));
                }
            }
        }
    }
    section.figure("exited 1 (could not read: the gate failed)", format!("{failed_closed} of {cases}"));
    section.figure("named what was not read on stderr (the error line)", format!("{named_stderr} of {cases}"));
    section.figure(
        "named it on stdout, in the format asked for (every case but `-o name` and a refused watch)",
        format!("{named_stdout} of {can_name}"),
    );
    section.figure(
        "with --allow-unreadable: exited 0 (nothing found in what was read)",
        format!("{passed_allowed} of {cases}"),
    );
    section.figure("with --allow-unreadable: still named on stdout", format!("{named_allowed} of {can_name_allowed}"));
    assert!(wrong.is_empty(), "{} case(s) went blind:\n{}", wrong.len(), wrong.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
    cluster.kubectl_ok(&["delete", "namespace", &ns, "--wait=false"]);
}
