//! `fieldwise_kube::api::openapi` against the real cluster: the schema of built-in types and custom
//! resources read from `/openapi/v3`, cached by content hash (a cached entry is used as is, a
//! damaged one fetched again), `/openapi/v2` agreeing with it, and the embedded schema offline.

use std::path::PathBuf;

use fieldwise_core::schema::{Gvk, TypeDef};
use fieldwise_e2e::{install_widget_crd, require_cluster, Cluster};
use fieldwise_kube::api::openapi::{Origin, Schemas};
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::local::cache::ServerCache;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

async fn connect(cluster: &Cluster) -> Connection {
    client::connect(&cluster.flags("default")).await.expect("connect")
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn v3_documents_are_cached_by_hash_and_used_as_cached() {
    let cluster = require_cluster!();
    let base = std::env::temp_dir().join(format!("fw-openapi-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let deployment = Gvk::new("apps", "v1", "Deployment");
    runtime().block_on(async {
        let conn = connect(&cluster).await;
        let cache = || Some(ServerCache::under(&base, &conn.server));
        let typed = Schemas::with_cache(&conn, cache()).for_gvk(&deployment).await.expect("apps/v1");
        assert_eq!((typed.origin, typed.strategic), (Origin::ServerV3, Some(true)));
        let root = typed.root.expect("Deployment");
        assert!(typed.schema.field(root, "spec").is_some());
        let cached: Vec<PathBuf> = fieldwise_e2e::files_below(&base, None);
        assert_eq!(cached.len(), 1, "only the group-version asked for is fetched: {cached:?}");
        let entry = &cached[0];
        assert!(entry.to_string_lossy().contains("/openapi/v3/apis_apps_v1/"), "{}", entry.display());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(entry).unwrap().permissions().mode() & 0o777, 0o600);
        }
        // The entry is used as cached: its hash names its content forever.
        let original = std::fs::read_to_string(entry).unwrap();
        let doctored = original.replace("\"paused\":", "\"pausedInTheCache\":");
        assert_ne!(doctored, original);
        std::fs::write(entry, &doctored).unwrap();
        let typed = Schemas::with_cache(&conn, cache()).for_gvk(&deployment).await.expect("from the cache");
        let spec = typed.schema.field(typed.root.unwrap(), "spec").unwrap().ty;
        assert!(typed.schema.field(spec, "pausedInTheCache").is_some(), "read from the cache, not the server");
        // A damaged entry is fetched again and replaced.
        std::fs::write(entry, b"{not json").unwrap();
        let typed = Schemas::with_cache(&conn, cache()).for_gvk(&deployment).await.expect("fetched again");
        let spec = typed.schema.field(typed.root.unwrap(), "spec").unwrap().ty;
        assert!(typed.schema.field(spec, "paused").is_some());
        assert_eq!(std::fs::read_to_string(entry).unwrap(), original);
    });
    std::fs::remove_dir_all(&base).ok();
}

#[test]
#[ignore = "needs the local cluster (scripts/test runs it with --include-ignored)"]
fn custom_resources_are_typed_by_their_crd_and_v2_agrees() {
    let cluster = require_cluster!();
    install_widget_crd(&cluster);
    let widget = Gvk::new("fieldwise.test", "v1", "Widget");
    runtime().block_on(async {
        let conn = connect(&cluster).await;
        let mut schemas = Schemas::with_cache(&conn, None);
        let v3 = schemas.for_gvk(&widget).await.expect("fieldwise.test/v1");
        assert_eq!((v3.origin, v3.strategic), (Origin::ServerV3, Some(false)));
        let spec = v3.schema.field(v3.root.expect("Widget"), "spec").unwrap().ty;
        let workers = v3.schema.field(spec, "workers").unwrap().ty;
        let TypeDef::List(list) = v3.schema.get(workers) else { panic!("workers is a list") };
        assert_eq!(format!("{:?}", list.list_kind), "Map([\"name\"])");
        // Built-in kinds of other group-versions come from their own document.
        let pod = schemas.for_gvk(&Gvk::new("", "v1", "Pod")).await.expect("api/v1");
        assert_eq!((pod.origin, pod.strategic, pod.root.is_some()), (Origin::ServerV3, Some(true), true));
        // An unknown kind has no root, and the answer says where it looked.
        let unknown = schemas.for_gvk(&Gvk::new("nope.test", "v9", "Nothing")).await.expect("v2 fallback");
        assert_eq!((unknown.origin, unknown.root), (Origin::ServerV2, None));
        let v2 = Schemas::v2_only(&conn).for_gvk(&Gvk::new("apps", "v1", "Deployment")).await.expect("v2");
        assert_eq!((v2.origin, v2.strategic, v2.root.is_some()), (Origin::ServerV2, Some(true), true));
    });
}

#[test]
fn offline_is_the_embedded_schema() {
    let typed = runtime().block_on(Schemas::offline().for_gvk(&Gvk::new("apps", "v1", "Deployment"))).unwrap();
    assert_eq!((typed.origin, typed.root.is_some()), (Origin::Embedded, true));
    let custom = runtime().block_on(Schemas::offline().for_gvk(&Gvk::new("fieldwise.test", "v1", "Widget"))).unwrap();
    assert_eq!((custom.root, custom.strategic), (None, Some(false)));
}
