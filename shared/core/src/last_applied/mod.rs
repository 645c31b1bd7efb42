//! The `kubectl.kubernetes.io/last-applied-configuration` annotation: what
//! client-side `kubectl apply` remembers of the configuration it applied, and
//! what goes wrong with it.
//!
//! The next client-side apply computes a three-way patch from this annotation
//! (the previous intent), the file (the new intent) and the live object: a
//! field in the annotation and not in the file is deleted. So the annotation
//! must hold exactly the fields the user's configuration sets:
//! - [`encode`]: the annotation text `kubectl apply -f FILE` stores, byte for byte;
//! - [`rebuild`](mod@rebuild): an annotation rebuilt from a live object's `managedFields`,
//!   from the fields kubectl's own managers own and nobody else does;
//! - [`check`]: the problems a scan reports (missing, stale, oversized, leaking);
//! - [`reapply`](mod@reapply): what the next `kubectl apply` of the annotation would change: stale is that;
//! - [`controller_copy`](mod@controller_copy): objects a controller made that carry a copy of
//!   their owner's annotation (ControllerRevisions), which a scan leaves out;
//! - [`string_data`]: a Secret's `stringData` as the server stores it (in `data`), so
//!   an applied `stringData` key is neither stale nor drift when its text is there;
//! - [`secret_values`]: whether a repair may store a Secret's values in the annotation;
//! - [`upgrade`]: moving client-side ownership to a server-side apply manager,
//!   as `kubectl apply --server-side` does (client-go's `csaupgrade`);
//! - [`migration`]: that move (and optionally the annotation's removal) as the JSON
//!   Patch `kubectl last-applied migrate` sends.
//!
//! ```
//! use fieldwise_core::last_applied::{encode, LAST_APPLIED_ANNOTATION};
//! use serde_json::json;
//!
//! let file = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "<v>"}});
//! assert_eq!(
//!     encode(&file, Some("default")),
//!     "{\"apiVersion\":\"v1\",\"data\":{\"k\":\"\\u003cv\\u003e\"},\"kind\":\"ConfigMap\",\
//!      \"metadata\":{\"annotations\":{},\"name\":\"a\",\"namespace\":\"default\"}}\n"
//! );
//! # let _ = LAST_APPLIED_ANNOTATION;
//! ```

pub mod check;
pub mod controller_copy;
pub mod drift;
mod encode;
pub mod migration;
pub mod reapply;
pub mod rebuild;
pub mod repair;
pub mod secret_values;
pub mod string_data;

/// Moved to the ownership module, where Helm 4's conversion uses it too.
pub use crate::ownership::csa_upgrade as upgrade;
pub use crate::ownership::csa_upgrade::upgrade_managed_fields;
pub use check::{Finding, FindingKind};
pub use controller_copy::is_controller_copy;
pub use drift::{drift, Drift};
pub use encode::{encode, go_json};
pub use migration::{migratable, moved_managers, plan_migration, Migration, MigrationError};
pub use reapply::{reapply, ReapplyError};
pub use rebuild::{rebuild, IntentError};
pub use repair::{plan_removal, plan_repair, RepairError};

use serde_json::Value;

pub use crate::well_known::{CLIENT_SIDE_APPLY_MANAGER, CREATE_MANAGER, LAST_APPLIED_ANNOTATION};

/// The apiserver's limit on the total size of an object's annotations (keys and values), in bytes.
pub const TOTAL_ANNOTATIONS_LIMIT: usize = 256 * 1024;

/// From this share of [`TOTAL_ANNOTATIONS_LIMIT`] on (in percent), an annotation is reported as near the limit.
pub const NEAR_LIMIT_PERCENT: usize = 80;

/// The annotation's text on `object`, if it has one.
pub fn annotation_of(object: &Value) -> Option<&str> {
    object.pointer("/metadata/annotations")?.get(LAST_APPLIED_ANNOTATION)?.as_str()
}

/// The size the apiserver counts against [`TOTAL_ANNOTATIONS_LIMIT`]: the bytes of every key and value.
pub fn annotations_size(object: &Value) -> usize {
    match object.pointer("/metadata/annotations") {
        Some(Value::Object(map)) => map.iter().map(|(k, v)| k.len() + v.as_str().map_or(0, str::len)).sum(),
        _ => 0,
    }
}

/// The size of `object`'s annotations if the last-applied annotation were `text`.
pub fn annotations_size_with(object: &Value, text: &str) -> usize {
    let current = annotation_of(object).map_or(0, |t| LAST_APPLIED_ANNOTATION.len() + t.len());
    annotations_size(object) - current + LAST_APPLIED_ANNOTATION.len() + text.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sizes_count_keys_and_values() {
        let object = json!({"metadata": {"annotations": {"a": "xy", LAST_APPLIED_ANNOTATION: "{}\n"}}});
        assert_eq!(annotations_size(&object), 3 + LAST_APPLIED_ANNOTATION.len() + 3);
        assert_eq!(annotations_size_with(&object, "12345"), 3 + LAST_APPLIED_ANNOTATION.len() + 5);
        assert_eq!(annotations_size_with(&json!({}), ""), LAST_APPLIED_ANNOTATION.len());
        assert_eq!(annotation_of(&object), Some("{}\n"));
    }
}
