//! A Helm 3 release as Helm's storage drivers keep it, read without a helm binary.
//!
//! Helm stores each revision of a release in a Secret `sh.helm.release.v1.NAME.vN` (type
//! `helm.sh/release.v1`) or a ConfigMap of the same name, under the key `release`: the
//! release as JSON, gzipped, then base64 (Helm's `pkg/storage/driver/util.go`,
//! `encodeRelease`/`decodeRelease`). A Secret's data is base64 once more on the wire; the
//! glue removes that layer and hands the stored text here. [`decode`] undoes the rest as
//! `decodeRelease` does (base64, then gunzip only when the bytes start with gzip's magic),
//! and [`choose`] picks the revision Helm would (`Deployed`: the latest deployed one).
//! Tested with payloads built as Helm builds them, in the tests below.
//!
//! A release may hold Secrets of the chart: errors never quote the stored bytes.

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
    /// A field the plan needs is missing or has the wrong type.
    #[error("its JSON has no {0}")]
    Missing(&'static str),
}

/// gzip's magic bytes, as Helm's `magicGzip`.
const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];

/// Decodes what Helm stored under `release` (after the Secret's own base64 layer):
/// base64, gunzip when gzipped, JSON.
pub fn decode(stored: &str) -> Result<Release, ReleaseError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(stored.trim()).map_err(|_| ReleaseError::NotBase64)?;
    let json = if bytes.starts_with(&GZIP_MAGIC) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes.as_slice()).read_to_end(&mut out).map_err(|_| ReleaseError::Gzip)?;
        out
    } else {
        bytes
    };
    let value: Value =
        serde_json::from_slice(&json).map_err(|e| ReleaseError::Json { line: e.line(), column: e.column() })?;
    let text = |pointer: &str, what: &'static str| {
        value.pointer(pointer).and_then(Value::as_str).map(str::to_string).ok_or(ReleaseError::Missing(what))
    };
    Ok(Release {
        name: text("/name", "name")?,
        namespace: text("/namespace", "namespace")?,
        version: value.get("version").and_then(Value::as_u64).ok_or(ReleaseError::Missing("version"))?,
        status: text("/info/status", "info.status")?,
        // A release of a chart without templates has no manifest.
        manifest: value.get("manifest").and_then(Value::as_str).unwrap_or_default().to_string(),
        apply_method: value.get("apply_method").and_then(Value::as_str).unwrap_or_default().to_string(),
    })
}

/// Helm's status of the revision in effect.
pub const DEPLOYED: &str = "deployed";

/// The revision a plan reads: `revision` when given, else the latest deployed one (Helm's
/// `Storage.Deployed`). `None` when there is no such revision.
pub fn choose(releases: Vec<Release>, revision: Option<u64>) -> Option<Release> {
    match revision {
        Some(n) => releases.into_iter().find(|r| r.version == n),
        None => releases.into_iter().filter(|r| r.status == DEPLOYED).max_by_key(|r| r.version),
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
        let decoded = decode(&text).unwrap();
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
        assert!(!decode(&encode(&ssa)).unwrap().written_client_side());
        let mut csa = release(2, "deployed");
        csa["apply_method"] = "csa".into();
        assert!(decode(&encode(&csa)).unwrap().written_client_side());
    }

    #[test]
    fn json_without_gzip_is_read_as_helm_reads_it() {
        let stored = base64::engine::general_purpose::STANDARD.encode(release(1, "superseded").to_string());
        assert_eq!(decode(&stored).unwrap().status, "superseded");
    }

    #[test]
    fn bad_payloads_name_the_problem_never_the_data() {
        assert_eq!(decode("not base64 at all: s3cr3t!"), Err(ReleaseError::NotBase64));
        let broken = base64::engine::general_purpose::STANDARD.encode([0x1f, 0x8b, 0x08, 1, 2, 3]);
        assert_eq!(decode(&broken), Err(ReleaseError::Gzip));
        let not_json = base64::engine::general_purpose::STANDARD.encode("password: s3cr3t");
        let err = decode(&not_json).unwrap_err();
        assert_eq!(err, ReleaseError::Json { line: 1, column: 1 });
        assert!(!err.to_string().contains("s3cr3t"));
        let no_status = base64::engine::general_purpose::STANDARD.encode(r#"{"name":"a","namespace":"b","version":1}"#);
        assert_eq!(decode(&no_status), Err(ReleaseError::Missing("info.status")));
    }

    #[test]
    fn the_latest_deployed_revision_unless_one_is_named() {
        let all = || {
            [(1, "superseded"), (2, "deployed"), (3, "failed"), (4, "pending-upgrade")]
                .map(|(v, s)| decode(&encode(&release(v, s))).unwrap())
                .to_vec()
        };
        assert_eq!(choose(all(), None).map(|r| r.version), Some(2));
        assert_eq!(choose(all(), Some(3)).map(|r| r.version), Some(3));
        assert_eq!(choose(all(), Some(9)), None);
        assert_eq!(choose(all().into_iter().filter(|r| r.status != DEPLOYED).collect(), None), None);
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
