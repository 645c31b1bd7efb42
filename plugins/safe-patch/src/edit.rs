//! `--edit`: a safe `kubectl edit`. The edit of the live object becomes a
//! two-way patch, which then goes through the same preview and guarded write as
//! any other patch.

use fieldwise_core::schema::{Schema, TypeId};
use fieldwise_core::{merge_patch, strategic};
use fieldwise_kube::diff::without_server_noise;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::printer;
use fieldwise_kube::write::PatchType;
use serde_json::Value;

/// `--edit`: opens `$KUBE_EDITOR`/`$EDITOR` (else `vi`) on the live object and
/// returns the two-way patch of the edit; `None` when nothing was changed.
pub fn edit_to_patch(
    live: &Value,
    patch_type: PatchType,
    schema: &Schema,
    ty: Option<TypeId>,
    display: &str,
) -> Result<Option<Value>> {
    let original = without_server_noise(live);
    let text = printer::yaml(&original)?;
    let path = std::env::temp_dir().join(format!("safe-patch-edit-{}.yaml", std::process::id()));
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| Error::Other(format!("cannot create {}: {e}", path.display())))?;
        f.write_all(
            format!("# Editing {display}. Save and quit to preview the patch; an unchanged file cancels.\n{text}")
                .as_bytes(),
        )
        .map_err(|e| Error::Other(format!("cannot write {}: {e}", path.display())))?;
    }
    let editor = std::env::var("KUBE_EDITOR").or_else(|_| std::env::var("EDITOR")).unwrap_or_else(|_| "vi".into());
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("editor")
        .arg(&path)
        .status()
        .map_err(|e| Error::Other(format!("cannot run the editor {editor:?}: {e}")))?;
    let edited_text =
        std::fs::read_to_string(&path).map_err(|e| Error::Other(format!("cannot read {}: {e}", path.display())));
    std::fs::remove_file(&path).ok();
    if !status.success() {
        return Err(Error::Other(format!("the editor {editor:?} failed; nothing was changed")));
    }
    let edited: Value = serde_yaml::from_str(&edited_text?).map_err(|e| {
        Error::usage(format!("the edited object is not valid YAML: {}", e.to_string().lines().next().unwrap_or("")))
    })?;
    if edited == original {
        return Ok(None);
    }
    let patch = match (patch_type, ty) {
        (PatchType::Strategic, Some(ty)) => strategic::create_two_way(&original, &edited, schema, ty)
            .map_err(|e| Error::usage(format!("cannot turn the edit into a patch: {e}")))?,
        _ => merge_patch::create_two_way(&original, &edited)
            .map_err(|e| Error::usage(format!("cannot turn the edit into a patch: {e}")))?,
    };
    Ok(Some(patch))
}
