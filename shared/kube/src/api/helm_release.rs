//! A Helm release read from the cluster as Helm 3 stores it, without a helm binary: the
//! Secrets (driver `secret`, Helm's default) or ConfigMaps (driver `configmap`) labelled
//! `owner=helm,name=NAME` in the release's namespace, one per revision. The decoding is
//! pure and lives in [`fieldwise_core::release::helm`]; this module lists and hands over.
//! A release Secret is decoded in memory only: errors name the release and the revision,
//! never its data.

use base64::Engine;
use fieldwise_core::release::helm::{self, Release, DEPLOYED};
use serde_json::Value;

use crate::api::objects::{encode, get_path};
use crate::conn::client::Connection;
use crate::error::{Error, Result};

/// The Secret type Helm 3 stores releases as.
pub const RELEASE_SECRET_TYPE: &str = "helm.sh/release.v1";

/// Reads release `name` in `namespace`: revision `revision`, else the latest deployed one.
pub async fn read(conn: &Connection, namespace: &str, name: &str, revision: Option<u64>) -> Result<Release> {
    crate::conn::namespace::check(namespace, None)?;
    let selector = encode(&format!("owner=helm,name={name}"));
    let mut stored = Vec::new();
    let mut found = false;
    for (kind, plural) in [("Secret", "secrets"), ("ConfigMap", "configmaps")] {
        let path = format!("/api/v1/namespaces/{namespace}/{plural}?labelSelector={selector}");
        let items = get_path(conn, &path).await?.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
        for item in &items {
            if kind == "Secret" && item.get("type").and_then(Value::as_str) != Some(RELEASE_SECRET_TYPE) {
                continue;
            }
            let version = item.pointer("/metadata/labels/version").and_then(Value::as_str).unwrap_or("?");
            if revision.is_some_and(|n| n.to_string() != version) {
                continue;
            }
            stored.push(decode_item(kind, item, name, version)?);
        }
        // Helm uses one driver per release; the first that holds it is the one.
        if !items.is_empty() {
            found = true;
            break;
        }
    }
    if !found {
        return Err(Error::usage(format!(
            "no Helm release \"{name}\" in namespace \"{namespace}\": no Secret (type {RELEASE_SECRET_TYPE}) or ConfigMap is labelled owner=helm,name={name}; check the name and -n (helm list -n {namespace})"
        )));
    }
    let revisions: Vec<String> = stored.iter().map(|r| format!("{} {}", r.version, r.status)).collect();
    helm::choose(stored, revision).ok_or_else(|| match revision {
        Some(n) => Error::usage(format!(
            "the Helm release \"{name}\" in namespace \"{namespace}\" has no revision {n}; see its revisions with helm history {name} -n {namespace}"
        )),
        None => Error::usage(format!(
            "the Helm release \"{name}\" in namespace \"{namespace}\" has no {DEPLOYED} revision (revisions: {}); name one with --revision",
            revisions.join(", ")
        )),
    })
}

/// Decodes one stored revision: a Secret's `data.release` is base64 once more on the wire;
/// a ConfigMap's `data.release` is Helm's text as it is.
fn decode_item(kind: &str, item: &Value, name: &str, version: &str) -> Result<Release> {
    let object = item.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    let fail = |why: String| {
        Error::usage(format!("the Helm release \"{name}\" revision {version} ({kind} {object}) cannot be read: {why}"))
    };
    let field =
        item.pointer("/data/release").and_then(Value::as_str).ok_or_else(|| fail("it has no data.release".into()))?;
    let text = if kind == "Secret" {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(field)
            .map_err(|_| fail("its data.release is not base64".into()))?;
        String::from_utf8(bytes).map_err(|_| fail("its data.release is not text".into()))?
    } else {
        field.to_string()
    };
    helm::decode(&text).map_err(|e| fail(e.to_string()))
}

/// The objects of the release's manifest, each named `Helm release NAME revision N`
/// (with ` (document D)` when it holds several), known to the redaction boundary (a chart may render Secrets).
pub fn objects(release: &Release) -> Result<Vec<crate::api::manifests::Manifest>> {
    let source = format!("Helm release {} revision {}", release.name, release.version);
    let manifests = crate::api::manifests::parse_documents(&release.manifest, &source)?;
    for manifest in &manifests {
        crate::redact::remember(&manifest.value);
    }
    Ok(manifests)
}
