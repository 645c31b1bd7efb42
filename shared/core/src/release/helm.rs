//! A Helm 3 release as Helm's storage drivers keep it, read without a helm binary.
//!
//! Helm stores each revision of a release in a Secret `sh.helm.release.v1.NAME.vN` (type
//! `helm.sh/release.v1`) or a ConfigMap of the same name, under the key `release`: the
//! release as JSON, gzipped, then base64 (Helm's `pkg/storage/driver/util.go`,
//! `encodeRelease`/`decodeRelease`). A Secret's data is base64 once more on the wire; the
//! glue removes that layer and hands the stored text here. [`choose`] picks the revision
//! Helm would (`Deployed`: the latest deployed one) from the labels Helm puts on each stored
//! object (`version`, `status`), so only that one revision is ever decoded; [`decode`] undoes
//! the rest as `decodeRelease` does (base64, then gunzip only when the bytes start with
//! gzip's magic), within a size limit, and refuses what Helm's own decoding would not
//! read (a version that is no revision number, a manifest that is no text).
//! Tested with payloads built as Helm builds them, in the tests below.
//!
//! A release is data anyone who can write a Secret may have written: gunzipped without a
//! limit, 1 MB stored became gigabytes. A release may hold Secrets of the chart: errors
//! never quote the stored bytes.

use std::io::Read;

use base64::Engine;
use serde_json::Value;

/// The parts of a release a plan needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// `name`.
    pub name: String,
    /// `namespace`: where the release lives, and where its namespaced objects without a
    /// namespace go.
    pub namespace: String,
    /// `version`: the revision.
    pub version: u64,
    /// `info.status`: `deployed`, `superseded`, `failed`, `pending-upgrade`, ...
    pub status: String,
    /// `manifest`: the rendered objects, one YAML stream.
    pub manifest: String,
    /// `apply_method`: `ssa` when Helm 4 applied the revision server-side; `csa` or empty
    /// (Helm 3, or Helm 4 with `--server-side=false`) when it was written client-side.
    pub apply_method: String,
}

impl Release {
    /// Whether Helm 4's next server-side upgrade first converts Helm's client-side fields of
    /// each object into its `Apply` entry ([`crate::ownership::csa_upgrade::helm_conversion`]):
    /// it does when the revision was written client-side (helm.sh/helm/v4
    /// `pkg/action/upgrade.go`: `isReleaseApplyMethodClientSideApply`).
    pub fn written_client_side(&self) -> bool {
        self.apply_method != SERVER_SIDE_APPLY
    }
}

/// Helm 4's `apply_method` of a revision applied server-side.
pub const SERVER_SIDE_APPLY: &str = "ssa";

/// Why a stored release cannot be read. The messages never quote the stored data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReleaseError {
    /// The stored text is not base64.
    #[error("its stored data is not base64 (Helm stores base64 of gzipped JSON)")]
    NotBase64,
    /// The gzip stream is broken.
    #[error("its stored data is not a valid gzip stream")]
    Gzip,
    /// The JSON cannot be read.
    #[error("its JSON cannot be read (line {line}, column {column})")]
    Json {
        /// Line of the problem.
        line: usize,
        /// Column of the problem.
        column: usize,
    },
    /// A field the plan needs is missing.
    #[error("its JSON has no {0}")]
    Missing(&'static str),
    /// A field has a type Helm never writes there.
    #[error("its JSON has {field} as {found}, not {expected}")]
    WrongType {
        /// The field, as Helm's JSON names it (`version`, `manifest`).
        field: &'static str,
        /// What Helm writes there.
        expected: &'static str,
        /// What was found, by kind only (never the value).
        found: &'static str,
    },
    /// Decompressed, the release is larger than the limit on one input.
    #[error("decompressed, it is larger than {limit} bytes, the limit on one input (FIELDWISE_MAX_INPUT_BYTES)")]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
}

/// gzip's magic bytes, as Helm's `magicGzip`.
const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

/// Decodes what Helm stored under `release` (after the Secret's own base64 layer):
/// base64, gunzip when gzipped (stopping past `limit` bytes), JSON.
pub fn decode(stored: &str, limit: u64) -> Result<Release, ReleaseError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(stored.trim()).map_err(|_| ReleaseError::NotBase64)?;
    let json = if bytes.starts_with(&GZIP_MAGIC) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes.as_slice())
            .take(limit.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|_| ReleaseError::Gzip)?;
        out
    } else {
        bytes
    };
    if json.len() as u64 > limit {
        return Err(ReleaseError::TooLarge { limit });
    }
    let value: Value =
        serde_json::from_slice(&json).map_err(|e| ReleaseError::Json { line: e.line(), column: e.column() })?;
    let text = |pointer: &str, what: &'static str| match value.pointer(pointer) {
        None | Some(Value::Null) => Err(ReleaseError::Missing(what)),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(ReleaseError::WrongType { field: what, expected: "text", found: kind_of(other) }),
    };
    // Optional text: a release of a chart without templates has no manifest; Helm 3 records
    // no apply method.
    let optional = |field: &'static str| match value.get(field) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(ReleaseError::WrongType { field, expected: "text", found: kind_of(other) }),
    };
    Ok(Release {
        name: text("/name", "name")?,
        namespace: text("/namespace", "namespace")?,
        version: revision_number(value.get("version"))?,
        status: text("/info/status", "info.status")?,
        manifest: optional("manifest")?,
        apply_method: optional("apply_method")?,
    })
}

/// Helm's `version`: a Go `int` that Helm counts from 1.
fn revision_number(value: Option<&Value>) -> Result<u64, ReleaseError> {
    let value = value.filter(|v| !v.is_null()).ok_or(ReleaseError::Missing("version"))?;
    value.as_u64().filter(|n| (1..=i64::MAX as u64).contains(n)).ok_or(ReleaseError::WrongType {
        field: "version",
        expected: "a revision number (a whole number from 1 to 2^63-1)",
        found: if value.as_u64().is_some() { "a whole number out of range" } else { kind_of(value) },
    })
}

/// What a JSON value is, for messages that must not quote it.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.as_u64().is_some() => "a whole number",
        Value::Number(n) if n.as_i64().is_some() => "a negative number",
        Value::Number(_) => "a number that is not whole or out of range",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Helm's status of the revision in effect.
pub const DEPLOYED: &str = "deployed";

/// One stored revision as its labels describe it (Helm labels every stored object with
/// its `version` and `status`), before anything of it is decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRevision {
    /// The Secret or ConfigMap that holds it (`sh.helm.release.v1.web.v3`).
    pub object: String,
    /// Its `version` label.
    pub version: u64,
    /// Its `status` label.
    pub status: String,
}

/// The revision a plan reads: `revision` when given, else the latest deployed one (Helm's
/// `Storage.Deployed`, which selects by the same labels). `None` when there is no such revision.
pub fn choose(revisions: &[StoredRevision], revision: Option<u64>) -> Option<&StoredRevision> {
    match revision {
        Some(n) => revisions.iter().find(|r| r.version == n),
        None => revisions.iter().filter(|r| r.status == DEPLOYED).max_by_key(|r| r.version),
    }
}

impl Release {
    /// Refuses a decoded revision that is not the one its storage says it is: another
    /// release's name, another namespace than the one it is stored in (its objects would be
    /// planned there), another version than its label.
    pub fn check_stored(&self, name: &str, namespace: &str, version: u64) -> Result<(), String> {
        if self.name != name {
            return Err(format!("its JSON names release {:?}, not {name:?}", self.name));
        }
        if self.namespace != namespace {
            return Err(format!(
                "its JSON says namespace {:?}, but it is stored in namespace {namespace:?}",
                self.namespace
            ));
        }
        if self.version != version {
            return Err(format!("its JSON says version {}, but its version label says {version}", self.version));
        }
        Ok(())
    }
}

/// The label Helm puts on every object of a release, with its value.
pub const MANAGED_BY_LABEL: (&str, &str) = ("app.kubernetes.io/managed-by", "Helm");
/// The annotation naming the release an object belongs to.
pub const RELEASE_NAME_ANNOTATION: &str = "meta.helm.sh/release-name";
/// The annotation naming the release's namespace.
pub const RELEASE_NAMESPACE_ANNOTATION: &str = "meta.helm.sh/release-namespace";

/// `object` as Helm sends it in an install or upgrade of release `name` in `namespace`:
/// its label `app.kubernetes.io/managed-by: Helm` and annotations `meta.helm.sh/release-name`
/// and `meta.helm.sh/release-namespace` set over what the chart renders (helm.sh/helm/v4
/// `pkg/action/validate.go`, `setMetadataVisitor`; Helm 3 since 3.2 alike). The manifest
/// Helm stores lacks them, yet its apply owns them.
pub fn with_release_metadata(mut object: Value, name: &str, namespace: &str) -> Value {
    let Some(map) = object.as_object_mut() else { return object };
    let metadata = map.entry("metadata").or_insert_with(|| Value::Object(Default::default()));
    let Some(metadata) = metadata.as_object_mut() else { return object };
    let mut set = |key: &str, entries: &[(&str, &str)]| {
        let field = metadata.entry(key).or_insert_with(|| Value::Object(Default::default()));
        if !field.is_object() {
            *field = Value::Object(Default::default());
        }
        if let Some(field) = field.as_object_mut() {
            for (k, v) in entries {
                field.insert((*k).to_string(), Value::String((*v).to_string()));
            }
        }
    };
    set("labels", &[MANAGED_BY_LABEL]);
    set("annotations", &[(RELEASE_NAME_ANNOTATION, name), (RELEASE_NAMESPACE_ANNOTATION, namespace)]);
    object
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use serde_json::json;

    use super::*;

    const LIMIT: u64 = 32 << 20;

    /// What Helm's `encodeRelease` stores: base64 of gzip of JSON.
    fn encode(release: &Value) -> String {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(release.to_string().as_bytes()).unwrap();
        base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap())
    }

    fn release(version: u64, status: &str) -> Value {
        json!({"name": "web", "namespace": "shop", "version": version, "info": {"status": status},
            "manifest": "---\n# Source: web/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n"})
    }

    #[test]
    fn a_secret_payload_decodes_through_both_base64_layers_and_gzip() {
        let stored = encode(&release(3, "deployed"));
        // The Secret's data on the wire: base64 once more; the glue removes this layer.
        let wire = base64::engine::general_purpose::STANDARD.encode(&stored);
        let text = String::from_utf8(base64::engine::general_purpose::STANDARD.decode(wire).unwrap()).unwrap();
        let decoded = decode(&text, LIMIT).unwrap();
        assert_eq!(
            decoded,
            Release {
                name: "web".into(),
                namespace: "shop".into(),
                version: 3,
                status: "deployed".into(),
                manifest:
                    "---\n# Source: web/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n"
                        .into(),
                apply_method: String::new(),
            }
        );
        assert!(decoded.written_client_side(), "Helm 3 records no apply method: client-side");
    }

    #[test]
    fn helm_4s_apply_method_says_whether_the_revision_was_applied_server_side() {
        let mut ssa = release(2, "deployed");
        ssa["apply_method"] = "ssa".into();
        assert!(!decode(&encode(&ssa), LIMIT).unwrap().written_client_side());
        let mut csa = release(2, "deployed");
        csa["apply_method"] = "csa".into();
        assert!(decode(&encode(&csa), LIMIT).unwrap().written_client_side());
    }

    #[test]
    fn json_without_gzip_is_read_as_helm_reads_it() {
        let stored = base64::engine::general_purpose::STANDARD.encode(release(1, "superseded").to_string());
        assert_eq!(decode(&stored, LIMIT).unwrap().status, "superseded");
    }

    #[test]
    fn bad_payloads_name_the_problem_never_the_data() {
        assert_eq!(decode("not base64 at all: s3cr3t!", LIMIT), Err(ReleaseError::NotBase64));
        let broken = base64::engine::general_purpose::STANDARD.encode([0x1f, 0x8b, 0x08, 1, 2, 3]);
        assert_eq!(decode(&broken, LIMIT), Err(ReleaseError::Gzip));
        let not_json = base64::engine::general_purpose::STANDARD.encode("password: s3cr3t");
        let err = decode(&not_json, LIMIT).unwrap_err();
        assert_eq!(err, ReleaseError::Json { line: 1, column: 1 });
        assert!(!err.to_string().contains("s3cr3t"));
        let no_status = base64::engine::general_purpose::STANDARD.encode(r#"{"name":"a","namespace":"b","version":1}"#);
        assert_eq!(decode(&no_status, LIMIT), Err(ReleaseError::Missing("info.status")));
    }

    #[test]
    fn the_latest_deployed_revision_unless_one_is_named() {
        let all: Vec<StoredRevision> = [(1, "superseded"), (2, "deployed"), (3, "failed"), (4, "pending-upgrade")]
            .map(|(version, status)| StoredRevision {
                object: format!("sh.helm.release.v1.web.v{version}"),
                version,
                status: status.into(),
            })
            .to_vec();
        assert_eq!(choose(&all, None).map(|r| r.version), Some(2));
        assert_eq!(choose(&all, Some(3)).map(|r| r.object.as_str()), Some("sh.helm.release.v1.web.v3"));
        assert_eq!(choose(&all, Some(9)), None);
        let undeployed: Vec<_> = all.into_iter().filter(|r| r.status != DEPLOYED).collect();
        assert_eq!(choose(&undeployed, None), None);
    }

    #[test]
    fn a_release_that_expands_past_the_limit_is_refused_without_expanding_it_all() {
        // 64 MiB of zeros gzip to about 64 KiB: a small Secret, a huge release.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![b'0'; 1 << 20];
        for _ in 0..64 {
            gz.write_all(&zeros).unwrap();
        }
        let stored = base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap());
        assert!(stored.len() < 200_000, "{}", stored.len());
        assert_eq!(decode(&stored, 1 << 20), Err(ReleaseError::TooLarge { limit: 1 << 20 }));
        // The same bound on a release stored without gzip.
        let plain = base64::engine::general_purpose::STANDARD.encode(release(1, "deployed").to_string());
        assert_eq!(decode(&plain, 10), Err(ReleaseError::TooLarge { limit: 10 }));
    }

    #[test]
    fn fields_of_a_type_helm_never_writes_are_refused_by_kind_never_by_value() {
        let with = |field: &str, value: Value| {
            let mut r = release(3, "deployed");
            r[field] = value;
            decode(&encode(&r), LIMIT)
        };
        let wrong = |field: &'static str, found: &'static str| {
            let expected =
                if field == "version" { "a revision number (a whole number from 1 to 2^63-1)" } else { "text" };
            Err(ReleaseError::WrongType { field, expected, found })
        };
        assert_eq!(with("manifest", json!({"apiVersion": "v1"})), wrong("manifest", "an object"));
        assert_eq!(with("manifest", json!(["s3cr3t"])), wrong("manifest", "a list"));
        assert_eq!(with("version", json!(-1)), wrong("version", "a negative number"));
        assert_eq!(with("version", json!(0)), wrong("version", "a whole number out of range"));
        assert_eq!(with("version", json!(u64::MAX)), wrong("version", "a whole number out of range"));
        assert_eq!(with("version", json!(1e300)), wrong("version", "a number that is not whole or out of range"));
        assert_eq!(with("version", json!("3")), wrong("version", "text"));
        assert_eq!(with("apply_method", json!(1)), wrong("apply_method", "a whole number"));
        assert_eq!(
            with("name", json!(7)),
            Err(ReleaseError::WrongType { field: "name", expected: "text", found: "a whole number" })
        );
        // 2^64 is read as a float, as Go's decoder refuses it for an int.
        let stored = base64::engine::general_purpose::STANDARD
            .encode(r#"{"name":"web","namespace":"shop","version":18446744073709551616,"info":{"status":"deployed"}}"#);
        assert_eq!(decode(&stored, LIMIT), wrong("version", "a number that is not whole or out of range"));
        assert_eq!(with("manifest", Value::Null).map(|r| r.manifest), Ok(String::new()));
    }

    #[test]
    fn a_revision_stored_as_another_is_refused() {
        let decoded = decode(&encode(&release(3, "deployed")), LIMIT).unwrap();
        assert_eq!(decoded.check_stored("web", "shop", 3), Ok(()));
        assert!(decoded.check_stored("web", "prod", 3).unwrap_err().contains("stored in namespace \"prod\""));
        assert!(decoded.check_stored("api", "shop", 3).unwrap_err().contains("not \"api\""));
        assert!(decoded.check_stored("web", "shop", 4).unwrap_err().contains("version label says 4"));
    }

    #[test]
    fn helm_sets_its_label_and_annotations_over_the_charts() {
        let rendered = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "web", "labels": {"app": "web", "app.kubernetes.io/managed-by": "Tiller"}}});
        assert_eq!(
            with_release_metadata(rendered, "web", "shop"),
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web",
                "labels": {"app": "web", "app.kubernetes.io/managed-by": "Helm"},
                "annotations": {"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "shop"}}})
        );
    }
}
