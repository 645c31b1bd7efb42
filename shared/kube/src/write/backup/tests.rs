//! The backup store's records, keys, ends and retention.

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use super::names::encode_component;
use super::*;

fn key(name: &str) -> ObjectKey {
    ObjectKey {
        cluster: "127.0.0.1_6443-00000000000000c1".into(),
        namespace: String::new(),
        resource: "clusterroles.rbac.authorization.k8s.io".into(),
        name: name.into(),
        context: "ctx".into(),
        server: "https://127.0.0.1:6443".into(),
    }
}

fn record(time: &str, name: &str) -> BackupRecord {
    record_of(&key(name), time)
}

fn record_of(k: &ObjectKey, time: &str) -> BackupRecord {
    let k = k.clone();
    BackupRecord {
        time: time.into(),
        context: k.context,
        cluster: k.cluster,
        server: k.server,
        namespace: k.namespace,
        resource: k.resource,
        name: k.name,
        subresource: None,
        operation: "safe-patch merge".into(),
        patch: serde_json::json!({}),
        patch_type: None,
        before: serde_json::json!({"data": {"k": "dg=="}}),
        state: WriteState::Pending,
        after_resource_version: None,
        after: None,
        provenance: Provenance::default(),
    }
}

fn temp_store(test: &str) -> (BackupStore, PathBuf) {
    let root = std::env::temp_dir().join(format!("fw-backup-{test}-{}", std::process::id()));
    fs::remove_dir_all(&root).ok();
    (BackupStore::at(&root), root)
}

#[test]
fn backups_are_private_ordered_and_never_overwritten() {
    let (store, root) = temp_store("order");
    let a = store.begin(record("2026-01-01T00:00:00.000Z", "r"), "/api/v1/x").unwrap();
    let b = store.begin(record("2026-01-01T00:00:00.000Z", "r"), "/api/v1/x").unwrap();
    let c = store.begin(record("2025-12-31T00:00:00.000Z", "r"), "/api/v1/x").unwrap();
    assert_ne!(a.file(), b.file());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(a.file()), 0o600);
        assert_eq!(mode(a.file().parent().unwrap()), 0o700);
    }
    let (fa, fb, fc) = (a.file().to_path_buf(), b.file().to_path_buf(), c.file().to_path_buf());
    let written = a.written(&serde_json::json!({"metadata": {"resourceVersion": "42"}})).unwrap();
    assert_eq!(written, fa);
    let listed: Vec<PathBuf> = store.list(&key("r")).unwrap().into_iter().map(|b| b.file).collect();
    assert_eq!(listed, vec![fc, fa.clone(), fb]);
    let first = store.list(&key("r")).unwrap();
    assert_eq!(first[1].record.after_resource_version.as_deref(), Some("42"));
    assert_eq!(first[1].record.state, WriteState::Written);
    assert_eq!(first[0].record.state, WriteState::Pending);
    fs::remove_dir_all(root).unwrap();
}

#[test]
fn names_that_sanitize_alike_never_share_backups() {
    let (store, root) = temp_store("keys");
    assert_ne!(store.dir_of(&key("demo:role")), store.dir_of(&key("demo_role")));
    assert!(store.dir_of(&key("demo:role")).ends_with("demo%3Arole"));
    store
        .begin(record("2026-01-01T00:00:00.000Z", "demo:role"), "/api/v1/x")
        .unwrap()
        .written(&serde_json::json!({}))
        .unwrap();
    store
        .begin(record("2026-01-02T00:00:00.000Z", "demo_role"), "/api/v1/x")
        .unwrap()
        .written(&serde_json::json!({}))
        .unwrap();
    // A legacy record of demo:role (same sanitized directory as demo_role) is found, and kept apart.
    let legacy = store.legacy_dir_of(&key("demo:role"));
    assert_eq!(legacy, store.legacy_dir_of(&key("demo_role")));
    fs::create_dir_all(&legacy).unwrap();
    let mut old_underscore = record("2025-01-01T00:00:00.000Z", "demo_role");
    old_underscore.cluster = String::new();
    fs::write(legacy.join("old_.json"), serde_json::to_vec(&old_underscore).unwrap()).unwrap();
    let mut old = record("2025-01-01T00:00:00.000Z", "demo:role");
    old.after_resource_version = Some("7".into());
    old.cluster = String::new();
    fs::write(legacy.join("old.json"), serde_json::to_vec(&old).unwrap()).unwrap();
    let colon = store.list(&key("demo:role")).unwrap();
    let underscore = store.list(&key("demo_role")).unwrap();
    assert_eq!(colon.len(), 2);
    assert!(colon.iter().all(|b| b.record.name == "demo:role"));
    assert_eq!(colon[0].record.state, WriteState::Written, "legacy records with an after are written");
    assert_eq!(underscore.len(), 2);
    assert!(underscore.iter().all(|b| b.record.name == "demo_role"));
    for part in ["", ".", "..", "a/b", "ü"] {
        let encoded = encode_component(part);
        assert!(!encoded.is_empty() && encoded != "." && encoded != ".." && !encoded.contains('/'), "{part:?}");
    }
    fs::remove_dir_all(root).unwrap();
}

#[test]
fn discard_unknown_and_rebase() {
    let (store, root) = temp_store("ends");
    let pending = store.begin(record("2026-01-01T00:00:00.000Z", "x"), "/api/v1/x").unwrap();
    let file = pending.file().to_path_buf();
    pending.discard();
    assert!(!file.exists());
    assert!(store.list(&key("x")).unwrap().is_empty());
    let mut pending = store.begin(record("2026-01-01T00:00:00.000Z", "x"), "/api/v1/x").unwrap();
    pending.rebase(&serde_json::json!({"v": 2}), &serde_json::json!({"p": 2})).unwrap();
    let file = pending.unknown().unwrap();
    let listed = store.list(&key("x")).unwrap();
    assert_eq!(listed[0].file, file);
    assert_eq!(listed[0].record.state, WriteState::Unknown);
    assert_eq!(listed[0].record.before, serde_json::json!({"v": 2}));
    fs::remove_dir_all(root).unwrap();
}

#[test]
fn unknown_records_of_writes_that_never_landed_are_settled() {
    let (store, root) = temp_store("settle");
    let mut landed = record("2026-01-01T00:00:00.000Z", "s");
    landed.before = serde_json::json!({"metadata": {"resourceVersion": "5"}});
    store.begin(landed, "/api/v1/x").unwrap().unknown().unwrap();
    let mut lost = record("2026-01-02T00:00:00.000Z", "s");
    lost.before = serde_json::json!({"metadata": {"resourceVersion": "7"}});
    store.begin(lost, "/api/v1/x").unwrap().unknown().unwrap();
    let live = serde_json::json!({"metadata": {"resourceVersion": "7"}});
    assert_eq!(store.settle_unknown(&key("s"), &live).unwrap(), 1);
    let left = store.list(&key("s")).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].record.before["metadata"]["resourceVersion"], "5", "the one that may have landed stays");
    fs::remove_dir_all(root).unwrap();
}

#[test]
fn retention_by_count_and_age() {
    let (store, root) = temp_store("prune");
    let recent = now();
    for time in ["2020-01-01T00:00:00.000Z", "2020-01-02T00:00:00.000Z"] {
        store.begin(record(time, "old"), "/api/v1/x").unwrap().written(&serde_json::json!({})).unwrap();
    }
    for _ in 0..5 {
        store.begin(record(&recent, "many"), "/api/v1/x").unwrap().written(&serde_json::json!({})).unwrap();
    }
    let policy = Retention { keep: 3, max_age: Some(Duration::from_secs(86_400)) };
    let report = store.prune(&key("many"), policy).unwrap();
    assert_eq!(report, PruneReport { removed: 2, kept: 3 });
    let all = store.prune_all(policy).unwrap();
    assert_eq!(all, PruneReport { removed: 2, kept: 3 });
    assert!(!store.dir_of(&key("old")).exists(), "empty object directories are removed");
    assert_eq!(parse_age("30d", "x").unwrap(), Some(Duration::from_secs(30 * 86_400)));
    assert_eq!(parse_age("0", "x").unwrap(), None);
    assert!(parse_age("3w", "x").is_err() && parse_keep("-1", "x").is_err());
    fs::remove_dir_all(root).unwrap();
}

#[test]
fn concurrent_writers_never_see_half_a_record_and_prune_without_failing() {
    let (store, root) = temp_store("concurrent");
    // Large pre-images make a record take long enough to write that a reader would catch it half done.
    let mut big = record("2026-01-01T00:00:00.000Z", "busy");
    big.before = serde_json::json!({"data": {"blob": "x".repeat(512 * 1024)}});
    let policy = Retention { keep: 3, max_age: None };
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for writer in 0..4 {
            let (store, big, failures) = (&store, &big, &failures);
            scope.spawn(move || {
                for i in 0..15 {
                    let mut record = big.clone();
                    record.time = format!("2026-01-01T00:00:{:02}.{:03}Z", i, writer);
                    let outcome = store
                        .begin(record, "/api/v1/x")
                        .and_then(|pending| pending.written(&serde_json::json!({"metadata": {"resourceVersion": "1"}})))
                        .and_then(|_| store.prune(&key("busy"), policy));
                    if let Err(e) = outcome {
                        failures.lock().unwrap().push(format!("writer: {e}"));
                    }
                }
            });
        }
        for _ in 0..2 {
            let (store, failures) = (&store, &failures);
            scope.spawn(move || {
                for _ in 0..60 {
                    if let Err(e) = store.list(&key("busy")) {
                        failures.lock().unwrap().push(format!("reader: {e}"));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{} failures, the first: {:?}", failures.len(), failures.first());
    assert_eq!(store.list(&key("busy")).unwrap().len(), 3);
    assert_eq!(fs::read_dir(root.join("%tmp")).unwrap().count(), 0, "no temporary file is left");
    fs::remove_dir_all(root).unwrap();
}

#[test]
fn backups_are_kept_per_cluster_whatever_the_context_is_called() {
    let (store, root) = temp_store("clusters");
    let here = key("r");
    // Another kubeconfig's context of the same name, pointing at another cluster.
    let elsewhere = ObjectKey {
        cluster: "10.0.0.1_6443-00000000000000c2".into(),
        server: "https://10.0.0.1:6443".into(),
        ..here.clone()
    };
    store
        .begin(record_of(&here, "2026-01-01T00:00:00.000Z"), "/api/v1/x")
        .unwrap()
        .written(&serde_json::json!({}))
        .unwrap();
    assert_eq!(store.list(&here).unwrap().len(), 1);
    assert!(store.list(&elsewhere).unwrap().is_empty(), "another cluster sees no history of this one");
    // Another context of the same cluster sees it.
    let other_context = ObjectKey { context: "admin@here".into(), ..here.clone() };
    assert_eq!(store.list(&other_context).unwrap().len(), 1);

    // A record of an earlier version, kept under the context's name, counts for its own server only.
    let mut old = record_of(&here, "2025-01-01T00:00:00.000Z");
    old.cluster = String::new();
    let old_dir = root.join("ctx/_cluster/clusterroles.rbac.authorization.k8s.io/r");
    fs::create_dir_all(&old_dir).unwrap();
    fs::write(old_dir.join("old.json"), serde_json::to_vec(&old).unwrap()).unwrap();
    assert_eq!(store.list(&here).unwrap().len(), 2);
    assert!(store.list(&elsewhere).unwrap().is_empty(), "a record naming another server is not this cluster's");
    fs::remove_dir_all(root).unwrap();
}

#[test]
fn records_left_pending_by_a_dead_process_are_settled_by_the_next() {
    let (store, root) = temp_store("abandoned");
    let cluster = key("x").cluster;
    let at_rv = |rv: &str, name: &str| {
        let mut r = record("2026-01-01T00:00:00.000Z", name);
        r.before = serde_json::json!({"metadata": {"resourceVersion": rv}});
        r
    };
    // A write in flight in a live process is not abandoned; its marker goes when it settles.
    let alive = store.begin(at_rv("5", "alive"), "/api/v1/alive").unwrap();
    assert!(store.abandoned(&cluster).is_empty());
    alive.written(&serde_json::json!({"metadata": {"resourceVersion": "6"}})).unwrap();
    assert!(store.abandoned(&cluster).is_empty());
    // Dropped without an end: what a killed process leaves.
    drop(store.begin(at_rv("5", "never-landed"), "/api/v1/never-landed").unwrap());
    drop(store.begin(at_rv("5", "maybe-landed"), "/api/v1/maybe-landed").unwrap());
    assert!(store.abandoned("another-cluster").is_empty(), "each cluster settles its own");
    let mut found = store.abandoned(&cluster);
    found.sort_by(|a, b| a.read.cmp(&b.read));
    assert_eq!(
        found.iter().map(|a| a.read.as_str()).collect::<Vec<_>>(),
        ["/api/v1/maybe-landed", "/api/v1/never-landed"]
    );
    let never = found.pop().unwrap();
    let maybe = found.pop().unwrap();
    let unchanged = serde_json::json!({"metadata": {"resourceVersion": "5"}});
    let moved = serde_json::json!({"metadata": {"resourceVersion": "9"}});
    assert_eq!(store.settle_abandoned(never, Some(&unchanged)).unwrap(), Settled::Removed);
    assert_eq!(store.settle_abandoned(maybe, Some(&moved)).unwrap(), Settled::MarkedUnknown);
    assert!(store.list(&key("never-landed")).unwrap().is_empty(), "no phantom record");
    assert_eq!(store.list(&key("maybe-landed")).unwrap()[0].record.state, WriteState::Unknown);
    assert!(store.abandoned(&cluster).is_empty(), "settled once");
    fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_pending_record_nobody_holds_is_settled_by_the_next_write_of_its_object() {
    let (store, root) = temp_store("unheld");
    let mut r = record("2026-01-01T00:00:00.000Z", "o");
    r.before = serde_json::json!({"metadata": {"resourceVersion": "5"}});
    let live = serde_json::json!({"metadata": {"resourceVersion": "5"}});
    let in_flight = store.begin(r.clone(), "/api/v1/o").unwrap();
    assert_eq!(store.settle_unknown(&key("o"), &live).unwrap(), 0, "a write in flight is left alone");
    // Killed after its record was saved (and before its marker): the record is not held any more.
    drop(in_flight);
    fs::remove_dir_all(root.join("%inflight")).unwrap();
    assert_eq!(store.settle_unknown(&key("o"), &live).unwrap(), 1);
    assert!(store.list(&key("o")).unwrap().is_empty(), "no phantom record");
    drop(store.begin(r, "/api/v1/o").unwrap());
    let moved = serde_json::json!({"metadata": {"resourceVersion": "8"}});
    assert_eq!(store.settle_unknown(&key("o"), &moved).unwrap(), 0);
    assert_eq!(store.list(&key("o")).unwrap()[0].record.state, WriteState::Unknown, "it may have landed");
    fs::remove_dir_all(root).unwrap();
}

#[test]
fn to_a_time_takes_one_backup_and_refuses_a_prefix_several_share() {
    let backup = |time: &str, id: &str| Backup { file: PathBuf::from(format!("{id}.json")), record: record(time, "x") };
    let backups = vec![
        backup("2026-01-01T10:00:00.000Z", "20260101T100000.000Z"),
        backup("2026-03-01T10:00:00.000Z", "20260301T100000.000Z"),
        backup("2026-03-01T10:00:00.000Z", "20260301T100000.000Z-1"),
        backup("2026-04-02T11:00:00.000Z", "20260402T110000.000Z"),
        backup("2027-01-01T00:00:00.000Z", "20270101T000000.000Z"),
    ];
    let taken = |time: &str| taken_at(&backups, time, "configmap/x").map(|b| b.map(Backup::id));
    assert_eq!(taken("2026-01").unwrap().as_deref(), Some("20260101T100000.000Z"));
    assert_eq!(taken("2026-04-02T11:00:00.000Z").unwrap().as_deref(), Some("20260402T110000.000Z"));
    assert_eq!(taken("20260301T100000.000Z-1").unwrap().as_deref(), Some("20260301T100000.000Z-1"), "an id");
    assert_eq!(taken("2025").unwrap(), None);
    assert_eq!(
        taken("2026").unwrap_err().to_string(),
        "--to 2026 matches 4 backups of configmap/x: 2026-01-01T10:00:00.000Z, \
         2026-03-01T10:00:00.000Z (id 20260301T100000.000Z), 2026-03-01T10:00:00.000Z (id 20260301T100000.000Z-1), \
         2026-04-02T11:00:00.000Z; give more of the time, so that it matches one"
    );
}
