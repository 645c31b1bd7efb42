//! Hostile Helm releases (issue #44.3 and #44.8): a release is data anyone who may write a
//! Secret in the namespace may have written. A small Secret that gunzips to hundreds of
//! megabytes took 1.2 GB (a 1 MB one aborted at 4.7 GB); every revision was decoded, not
//! only the one planned; a manifest that is an object planned 0 objects with exit 0; a
//! version of -1, 1e300 or a string said "has no version"; the release's own namespace was
//! used when it differed from its Secret's. Each is stored here as Helm's Secret driver
//! stores a release, and `kubectl owners plan --helm-release` must refuse it, naming what
//! is wrong, within a bounded memory; and a sound deployed revision among hostile ones
//! must plan as usual.

use std::io::Write;
use std::process::{Command, Output};

use base64::Engine;
use fieldwise_e2e::{text, Cluster};
use serde_json::{json, Value};

use super::{describe, report::Section, Checks};

const MANIFEST: &str = "---\n# Source: web/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  mode: blue\n";

/// What Helm stores for a release document: base64 of gzipped bytes.
fn gzipped(bytes: &[u8]) -> String {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(bytes).expect("gzip");
    base64::engine::general_purpose::STANDARD.encode(gz.finish().expect("gzip"))
}

/// A release document of `web` in `ns`.
fn release(ns: &str, version: Value, manifest: Value) -> Value {
    json!({"name": "web", "namespace": ns, "version": version, "info": {"status": "deployed"},
        "chart": {"metadata": {"name": "web", "version": "0.1.0"}}, "config": {}, "manifest": manifest})
}

/// Stores `stored` (Helm's base64 text) as revision `version` of `web` in `ns`, with `status`.
fn store(cluster: &Cluster, ns: &str, version: u64, status: &str, stored: &str) -> usize {
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
        "metadata": {"name": format!("sh.helm.release.v1.web.v{version}"),
            "labels": {"owner": "helm", "name": "web", "status": status, "version": version.to_string()}},
        "data": {"release": base64::engine::general_purpose::STANDARD.encode(stored)}});
    let text = secret.to_string();
    cluster.kubectl_stdin(&["create", "-n", ns, "-f", "-"], &text);
    text.len()
}

/// A release whose JSON holds `megabytes` MB of one repeated character: a few hundred
/// bytes per megabyte once gzipped, written in pieces so the test never holds it whole.
fn bomb(ns: &str, megabytes: usize) -> String {
    let mut document = release(ns, json!(1), json!(MANIFEST));
    document["config"] = json!({ "filler": "@@" });
    let text = document.to_string();
    let (before, after) = text.split_once("@@").expect("the filler's place");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(before.as_bytes()).expect("gzip");
    let megabyte = vec![b'0'; 1 << 20];
    for _ in 0..megabytes {
        gz.write_all(&megabyte).expect("gzip");
    }
    gz.write_all(after.as_bytes()).expect("gzip");
    base64::engine::general_purpose::STANDARD.encode(gz.finish().expect("gzip"))
}

/// `kubectl owners plan --helm-release web` in `ns`, with its peak memory (kB), measured by a
/// parent that reads its children's `ru_maxrss`.
fn plan(cluster: &Cluster, ns: &str) -> (Output, u64) {
    let plugin = cluster.plugin("kubectl-owners");
    let program = plugin.get_program().to_owned();
    let rss_file = std::env::temp_dir().join(format!("fw-rel-rss-{ns}"));
    let mut cmd = Command::new("python3");
    cmd.args([
        "-c",
        "import resource, subprocess, sys\n\
         code = subprocess.run(sys.argv[2:]).returncode\n\
         open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n\
         sys.exit(code)",
    ]);
    cmd.arg(&rss_file).arg(program).args(["plan", "--helm-release", "web", "-n", ns]);
    for (key, value) in plugin.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    let out = fieldwise_e2e::run(&mut cmd);
    let rss = std::fs::read_to_string(&rss_file).ok().and_then(|t| t.trim().parse().ok()).unwrap_or(0);
    let _ = std::fs::remove_file(&rss_file);
    (out, rss)
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn hostile_helm_releases_are_refused_by_what_is_wrong_within_bounded_memory() {
    let cluster = fieldwise_e2e::require_cluster!();
    let mut section = Section::start("Hostile Helm releases", &cluster);
    let mut checks = Checks::default();

    // A decompression bomb: small stored, far past the 32 MiB input limit decompressed.
    let ns = cluster.namespace("fw-rel-bomb");
    let stored_bytes = store(&cluster, &ns, 1, "deployed", &bomb(&ns, 200));
    let (out, rss) = plan(&cluster, &ns);
    let stderr = text(&out.stderr);
    section.figure("decompression bomb: Secret size / decompressed", format!("{} KB / 200 MB", stored_bytes / 1000));
    section.figure(
        "decompression bomb: exit, peak memory of the plugin",
        format!("{:?}, {} MB", out.status.code(), rss / 1000),
    );
    checks.promise(out.status.code() == Some(1) && stderr.contains("the limit on one input"), || {
        format!("the bomb is refused at the input limit: {}", describe(&out))
    });
    checks.promise(rss > 0 && rss < 200_000, || format!("peak memory {rss} kB, over 200 MB"));

    // Revisions never planned are never decoded: 20 bombs superseded, one sound deployed.
    let ns = cluster.namespace("fw-rel-revisions");
    cluster.kubectl_stdin(&["apply", "--server-side", "--field-manager=helm", "-n", &ns, "-f", "-"], MANIFEST);
    let bomb_text = bomb(&ns, 100);
    for version in 1..=20 {
        store(&cluster, &ns, version, "superseded", &bomb_text);
    }
    store(&cluster, &ns, 21, "deployed", &gzipped(release(&ns, json!(21), json!(MANIFEST)).to_string().as_bytes()));
    let (out, rss) = plan(&cluster, &ns);
    section.figure(
        "20 superseded bombs beside a sound deployed revision: exit, peak memory",
        format!("{:?}, {} MB", out.status.code(), rss / 1000),
    );
    checks.promise(out.status.success() && text(&out.stdout).contains("web-config"), || {
        format!("the deployed revision plans as usual: {}", describe(&out))
    });
    checks.promise(rss > 0 && rss < 200_000, || format!("peak memory {rss} kB: other revisions were decoded"));

    // Fields of a type Helm never writes, and a release stored in another namespace.
    let cases: [(&str, Value, Value, &str); 7] = [
        ("manifest is an object", json!(1), json!({"apiVersion": "v1"}), "manifest as an object"),
        ("version -1", json!(-1), json!(MANIFEST), "version as a negative number"),
        ("version 1e300", json!(1e300), json!(MANIFEST), "version as a number that is not whole"),
        ("version \"1\"", json!("1"), json!(MANIFEST), "version as text"),
        ("version 2^64", json!(null), json!(MANIFEST), "version as a number that is not whole"),
        ("version 2 under label 1", json!(2), json!(MANIFEST), "its version label says 1"),
        (
            "namespace of the release differs from its Secret's",
            json!(1),
            json!(MANIFEST),
            "but it is stored in namespace",
        ),
    ];
    let mut refused = 0;
    for (what, version, manifest, says) in cases {
        let ns = cluster.namespace("fw-rel-types");
        let mut document = release(&ns, version, manifest);
        if what == "version 2^64" {
            // serde_json cannot hold it: written as text, read as Go would (a float, no int).
            let text = document.to_string().replace("\"version\":null", "\"version\":18446744073709551616");
            store(&cluster, &ns, 1, "deployed", &gzipped(text.as_bytes()));
        } else {
            if what.starts_with("namespace") {
                document["namespace"] = json!("kube-system");
            }
            store(&cluster, &ns, 1, "deployed", &gzipped(document.to_string().as_bytes()));
        }
        let (out, _) = plan(&cluster, &ns);
        let stderr = text(&out.stderr);
        let ok = out.status.code() == Some(1) && stderr.contains(says) && stderr.contains("revision 1");
        if ok {
            refused += 1;
        }
        checks.promise(ok, || format!("{what}: refused saying {says:?}: {}", describe(&out)));
    }
    section
        .figure("releases with wrong types or another namespace: refused naming the field", format!("{refused} of 7"));
    checks.verify();
}
