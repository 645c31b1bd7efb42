//! The patch of an edit: what `--edit` sends once the user has changed the object
//! in an editor. The engine follows the patch type, as for every other patch: a
//! strategic two-way patch where the kind has a strategic schema, else a JSON merge
//! patch (lists replaced whole).

use serde_json::Value;

use super::PatchType;
use crate::merge_patch::{self, MergePatchError};
use crate::schema::{Schema, TypeId};
use crate::strategic::{self, StrategicError};

/// Why an edit cannot become a patch.
#[derive(Debug, thiserror::Error)]
pub enum EditPatchError {
    /// The strategic two-way patch cannot be made (a list entry without its merge key).
    #[error("cannot turn the edit into a patch: {0}")]
    Strategic(#[source] Box<StrategicError>),
    /// The merge patch cannot be made.
    #[error("cannot turn the edit into a patch: {0}")]
    Merge(#[source] Box<MergePatchError>),
}

/// The two-way patch from `original` to `edited` for `patch_type`: strategic when asked
/// for and the type is known (`ty`), else a JSON merge patch.
pub fn patch_of_edit(
    original: &Value,
    edited: &Value,
    patch_type: PatchType,
    schema: &Schema,
    ty: Option<TypeId>,
) -> Result<Value, EditPatchError> {
    match (patch_type, ty) {
        (PatchType::Strategic, Some(ty)) => {
            strategic::create_two_way(original, edited, schema, ty).map_err(|e| EditPatchError::Strategic(Box::new(e)))
        }
        _ => merge_patch::create_two_way(original, edited).map_err(|e| EditPatchError::Merge(Box::new(e))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{builtin, Gvk};
    use serde_json::json;

    #[test]
    fn strategic_edits_merge_list_entries_by_key_and_the_rest_replace_lists() {
        let original = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}}}});
        let mut edited = original.clone();
        edited["spec"]["template"]["spec"]["containers"][1]["image"] = json!("b:2");
        let schema = builtin();
        let ty = schema.root(&Gvk::new("apps", "v1", "Deployment"));
        let strategic = patch_of_edit(&original, &edited, PatchType::Strategic, schema, ty).unwrap();
        assert_eq!(
            strategic,
            json!({"spec": {"template": {"spec": {
                "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
                "containers": [{"image": "b:2", "name": "b"}]}}}})
        );
        let merge = patch_of_edit(&original, &edited, PatchType::Merge, schema, ty).unwrap();
        assert_eq!(
            merge,
            json!({"spec": {"template": {"spec": {"containers": edited["spec"]["template"]["spec"]["containers"]}}}})
        );
        // Without a known type a strategic patch cannot be made: a merge patch is.
        assert_eq!(patch_of_edit(&original, &edited, PatchType::Strategic, schema, None).unwrap(), merge);
    }
}
