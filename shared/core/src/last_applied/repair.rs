//! The repair of one object's annotation, planned against one version of the object:
//! what `kubectl last-applied repair` sends, or why it refuses.
//!
//! The wanted configuration (from a file, or rebuilt from the live object by
//! [`super::rebuild`](mod@super::rebuild)) is encoded as `kubectl apply` would store it; an annotation that
//! already holds exactly that needs no write; one that would hold Secret values (without
//! the user's explicit consent) or push the annotations past the apiserver's limit is
//! refused. The write is a JSON merge patch of the annotation alone.
//!
//! An annotation left over after a move to server-side apply ([`super::check::left_over`])
//! has no client-side intent left to rebuild it from: its repair from the live object is its
//! removal ([`plan_removal`]).

use serde_json::{json, Value};

use super::secret_values::{repair_decision, RepairDecision};
use super::{annotation_of, annotations_size_with, encode, LAST_APPLIED_ANNOTATION, TOTAL_ANNOTATIONS_LIMIT};
use crate::merge_patch::{self, MergePatchError};
use crate::plan::{PatchType, Planned};

/// Why a repair is refused, or could not be planned.
#[derive(Debug, thiserror::Error)]
pub enum RepairError {
    /// The annotation would hold this many Secret values in clear text, and the user did
    /// not ask for that (`--store-secret-values`).
    #[error("the annotation would hold {values} Secret value(s) in clear text")]
    SecretValues {
        /// How many values.
        values: usize,
    },
    /// The annotation would make the object's annotations larger than the apiserver takes.
    #[error("the annotation would make the annotations {size} bytes, over the {limit}-byte limit")]
    TooLarge {
        /// The annotations' size with the repaired annotation.
        size: usize,
        /// The apiserver's limit.
        limit: usize,
    },
    /// The merge patch could not be applied to the live object (it is not an object).
    #[error(transparent)]
    Patch(#[from] MergePatchError),
}

/// Plans the repair of `live`'s annotation to hold `config` (encoded for `namespace`): a
/// merge patch of the annotation and its result, an empty patch when the annotation is
/// already right, or the reason to refuse.
pub fn plan_repair(
    live: &Value,
    config: &Value,
    namespace: Option<&str>,
    store_secret_values: bool,
) -> Result<Planned, RepairError> {
    if let RepairDecision::Refuse { values } = repair_decision(config, store_secret_values) {
        return Err(RepairError::SecretValues { values });
    }
    let text = encode(config, namespace);
    if annotation_of(live) == Some(text.as_str()) {
        return Ok(Planned { patch_type: PatchType::Merge, patch: json!({}), result: live.clone(), findings: vec![] });
    }
    let size = annotations_size_with(live, &text);
    if size > TOTAL_ANNOTATIONS_LIMIT {
        return Err(RepairError::TooLarge { size, limit: TOTAL_ANNOTATIONS_LIMIT });
    }
    let patch = json!({"metadata": {"annotations": {LAST_APPLIED_ANNOTATION: text}}});
    let result = merge_patch::try_apply(live, &patch)?;
    Ok(Planned { patch_type: PatchType::Merge, patch, result, findings: vec![] })
}

/// Plans the removal of `live`'s annotation (a merge patch setting it to `null`); an empty
/// patch when there is none.
pub fn plan_removal(live: &Value) -> Result<Planned, RepairError> {
    if annotation_of(live).is_none() {
        return Ok(Planned { patch_type: PatchType::Merge, patch: json!({}), result: live.clone(), findings: vec![] });
    }
    let patch = json!({"metadata": {"annotations": {LAST_APPLIED_ANNOTATION: null}}});
    let result = merge_patch::try_apply(live, &patch)?;
    Ok(Planned { patch_type: PatchType::Merge, patch, result, findings: vec![] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removal_drops_the_annotation_and_keeps_the_others() {
        let mut live = config_map(Some("{}"));
        live["metadata"]["annotations"]["note"] = json!("keep");
        let planned = plan_removal(&live).unwrap();
        assert_eq!(planned.patch, json!({"metadata": {"annotations": {LAST_APPLIED_ANNOTATION: null}}}));
        assert_eq!(planned.result["metadata"]["annotations"], json!({"note": "keep"}));
        let again = plan_removal(&planned.result).unwrap();
        assert_eq!((again.patch, again.result), (json!({}), planned.result));
    }

    fn config_map(annotation: Option<&str>) -> Value {
        let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}, "data": {"a": "1"}});
        if let Some(text) = annotation {
            object["metadata"]["annotations"] = json!({LAST_APPLIED_ANNOTATION: text});
        }
        object
    }

    #[test]
    fn a_missing_annotation_is_written_as_kubectl_apply_stores_it() {
        let live = config_map(None);
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
        let planned = plan_repair(&live, &config, Some("ns"), false).unwrap();
        let text = encode(&config, Some("ns"));
        assert_eq!(planned.patch, json!({"metadata": {"annotations": {LAST_APPLIED_ANNOTATION: text}}}));
        assert_eq!(annotation_of(&planned.result), Some(text.as_str()));
        assert_eq!(planned.result["data"], live["data"], "nothing else changes");
    }

    #[test]
    fn a_right_annotation_needs_no_write() {
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
        let live = config_map(Some(&encode(&config, Some("ns"))));
        let planned = plan_repair(&live, &config, Some("ns"), false).unwrap();
        assert_eq!(planned.patch, json!({}));
        assert_eq!(planned.result, live);
    }

    #[test]
    fn secret_values_are_refused_unless_asked_for() {
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"}, "data": {"pw": "aHVudGVyMg=="}});
        let err = plan_repair(&secret, &secret, Some("ns"), false).unwrap_err();
        assert!(matches!(err, RepairError::SecretValues { values: 1 }), "{err}");
        assert!(plan_repair(&secret, &secret, Some("ns"), true).is_ok());
    }

    #[test]
    fn an_annotation_past_the_limit_is_refused() {
        let big = "x".repeat(TOTAL_ANNOTATIONS_LIMIT);
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": big}});
        let err = plan_repair(&config_map(None), &config, Some("ns"), false).unwrap_err();
        assert!(matches!(err, RepairError::TooLarge { limit: TOTAL_ANNOTATIONS_LIMIT, .. }), "{err}");
    }
}
