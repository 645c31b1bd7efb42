//! `--edit`: a safe `kubectl edit`. The live object opens in `$KUBE_EDITOR`/`$EDITOR`
//! through [`fieldwise_kube::cli::edit`]: a private file (0600, created exclusively) in a
//! fresh 0700 directory, removed on every exit path; an edit that is not valid YAML
//! is kept there, its path and the parse error's line and column printed, and on a
//! terminal the editor re-opens on it. A Secret's values are never in the file unless
//! `--show-secrets`: placeholders stand for them, merged back after the edit; stale
//! directories of killed edits are removed when an edit starts. The edit becomes a two-way patch, which then
//! goes through the same preview and guarded write as any other patch. Which
//! two-way patch (strategic or merge) is the core's choice
//! ([`fieldwise_core::plan::patch_of_edit`]).

use fieldwise_core::plan::patch_of_edit;
use fieldwise_core::schema::{Schema, TypeId};
use fieldwise_kube::cli::edit::{edit_object, Edited};
use fieldwise_kube::cli::prompt;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::output::diff::without_server_noise;
use fieldwise_kube::write::PatchType;
use serde_json::Value;

/// `--edit`: opens the editor on the live object and returns the two-way patch of
/// the edit; `None` when nothing was changed (an unchanged or emptied file).
pub fn edit_to_patch(
    live: &Value,
    patch_type: PatchType,
    schema: &Schema,
    ty: Option<TypeId>,
    display: &str,
    show_secrets: bool,
) -> Result<Option<Value>> {
    let edited = match edit_object(live, display, prompt::interactive(), show_secrets)? {
        Edited::Unchanged => return Ok(None),
        Edited::Changed(edited) => edited,
    };
    let original = without_server_noise(live);
    let patch = patch_of_edit(&original, &edited, patch_type, schema, ty).map_err(|e| Error::usage(e.to_string()))?;
    Ok(Some(patch))
}
