//! A Helm release read from the cluster as Helm 3 stores it, without a helm binary: the
//! Secrets (driver `secret`, Helm's default) or ConfigMaps (driver `configmap`) labelled
//! `owner=helm,name=NAME` in the release's namespace, one per revision. The decoding is
//! pure and lives in [`fieldwise_core::release::helm`]; this module lists and hands over.
//! A release Secret is decoded in memory only: errors name the release and the revision,
//! never its data.

use base64::Engine;
use fieldwise_core::release::helm::{self, Release, StoredRevision, DEPLOYED};
use http::Request;
use serde_json::Value;

use crate::api::discovery::ResourceType;
use crate::api::listing::PARTIAL_METADATA_LIST;
use crate::api::objects::{get_path, send};
use crate::api::request_url::{self, Query};
use crate::conn::client::Connection;
use crate::error::{Error, Result};
use crate::local::input::max_input_bytes;

/// The Secret type Helm 3 stores releases as.
pub const RELEASE_SECRET_TYPE: &str = "helm.sh/release.v1";

/// Reads release `name` in `namespace`: revision `revision`, else the latest deployed one.
///
/// The revisions are listed by their metadata alone (Helm's labels say each one's version
/// and status), the one chosen is read and decoded, and no other: a release's revisions
/// are written by whoever may write Secrets there, each up to a megabyte that may expand
/// far more, so only one is ever held, within the input limit.
pub async fn read(conn: &Connection, namespace: &str, name: &str, revision: Option<u64>) -> Result<Release> {
    crate::conn::namespace::check(namespace, None)?;
    let mut query = Query::new();
    query.push("labelSelector", format!("owner=helm,name={name}"));
    for driver in [Driver::Secret, Driver::ConfigMap] {
        let resource = driver.resource();
        let path = query.on(&request_url::collection_path(&resource, Some(namespace))?);
        let listed =
            send(conn, Request::get(path).header(http::header::ACCEPT, PARTIAL_METADATA_LIST).body(Vec::new())).await?;
        let items = listed.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        // Helm uses one driver per release; the first that holds it is the one.
        if items.is_empty() {
            continue;
        }
        let revisions: Vec<StoredRevision> = items.iter().filter_map(stored_revision).collect();
        let chosen = helm::choose(&revisions, revision).ok_or_else(|| match revision {
            Some(n) => Error::usage(format!(
                "the Helm release \"{name}\" in namespace \"{namespace}\" has no revision {n}; see its revisions with helm history {name} -n {namespace}"
            )),
            None => {
                let mut listed: Vec<&StoredRevision> = revisions.iter().collect();
                listed.sort_by_key(|r| r.version);
                let listed: Vec<String> = listed.iter().map(|r| format!("{} {}", r.version, r.status)).collect();
                Error::usage(format!(
                    "the Helm release \"{name}\" in namespace \"{namespace}\" has no {DEPLOYED} revision (revisions: {}); name one with --revision",
                    listed.join(", ")
                ))
            }
        })?;
        let item = get_path(conn, &request_url::object_path(&resource, Some(namespace), &chosen.object, None)?).await?;
        let release = decode_item(driver, &item, name, chosen)?;
        release.check_stored(name, namespace, chosen.version).map_err(|why| fail(driver, name, chosen, &why))?;
        return Ok(release);
    }
    Err(Error::usage(format!(
        "no Helm release \"{name}\" in namespace \"{namespace}\": no Secret (type {RELEASE_SECRET_TYPE}) or ConfigMap is labelled owner=helm,name={name}; check the name and -n (helm list -n {namespace})"
    )))
}

/// Helm's two storage drivers that keep releases in the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Driver {
    /// `secret`, Helm's default: a Secret of type [`RELEASE_SECRET_TYPE`].
    Secret,
    /// `configmap`.
    ConfigMap,
}

impl Driver {
    /// The core type the driver stores revisions as.
    fn resource(self) -> ResourceType {
        match self {
            Driver::Secret => ResourceType::core_v1("secrets", "Secret", true),
            Driver::ConfigMap => ResourceType::core_v1("configmaps", "ConfigMap", true),
        }
    }

    fn kind(self) -> &'static str {
        match self {
            Driver::Secret => "Secret",
            Driver::ConfigMap => "ConfigMap",
        }
    }
}

/// A listed object's revision, from Helm's `version` and `status` labels; an object whose
/// version label is not a revision number is no revision Helm could choose either.
fn stored_revision(item: &Value) -> Option<StoredRevision> {
    let label = |key: &str| item.pointer(&format!("/metadata/labels/{key}")).and_then(Value::as_str);
    Some(StoredRevision {
        object: item.pointer("/metadata/name").and_then(Value::as_str)?.to_string(),
        version: label("version")?.parse().ok().filter(|v| *v >= 1)?,
        status: label("status").unwrap_or_default().to_string(),
    })
}

/// The refusal of one stored revision, naming the release, the revision and its object.
fn fail(driver: Driver, name: &str, revision: &StoredRevision, why: &str) -> Error {
    Error::usage(format!(
        "the Helm release \"{name}\" revision {} ({} {}) cannot be read: {why}",
        revision.version,
        driver.kind(),
        revision.object
    ))
}

/// Decodes one stored revision: a Secret's `data.release` is base64 once more on the wire;
/// a ConfigMap's `data.release` is Helm's text as it is.
fn decode_item(driver: Driver, item: &Value, name: &str, revision: &StoredRevision) -> Result<Release> {
    let fail = |why: &str| fail(driver, name, revision, why);
    if driver == Driver::Secret {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or_default();
        if kind != RELEASE_SECRET_TYPE {
            return Err(fail(&format!("it is a Secret of type {kind:?}, not {RELEASE_SECRET_TYPE}")));
        }
    }
    let field = item.pointer("/data/release").and_then(Value::as_str).ok_or_else(|| fail("it has no data.release"))?;
    let text = if driver == Driver::Secret {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(field)
            .map_err(|_| fail("its data.release is not base64"))?;
        String::from_utf8(bytes).map_err(|_| fail("its data.release is not text"))?
    } else {
        field.to_string()
    };
    helm::decode(&text, max_input_bytes()?).map_err(|e| fail(&e.to_string()))
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
