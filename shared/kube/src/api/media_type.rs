//! The media types the apiserver tells requests apart by: the four patch flavours'
//! Content-Types, which the OpenAPI documents also list for the kinds that take them.

use fieldwise_core::plan::PatchType;

/// The request's Content-Type for a patch of `patch_type`: how the apiserver tells the four apart.
pub fn content_type(patch_type: PatchType) -> &'static str {
    match patch_type {
        PatchType::Strategic => STRATEGIC_MERGE_PATCH,
        PatchType::Merge => "application/merge-patch+json",
        PatchType::Json => "application/json-patch+json",
        PatchType::Apply => "application/apply-patch+yaml",
    }
}

/// The Content-Type of a strategic merge patch; the OpenAPI documents list it for
/// the kinds that take one.
pub const STRATEGIC_MERGE_PATCH: &str = "application/strategic-merge-patch+json";
