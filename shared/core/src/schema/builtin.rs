//! The built-in Kubernetes types, embedded so that no cluster is needed to patch them.
//!
//! The data file is written by `scripts/gen-builtin-schema` from a running
//! cluster's `/openapi/v3`, in the [`super::compact`] form, and decoded once on
//! first use.

use std::sync::OnceLock;

use super::{compact, Schema};

/// The compact schema of every built-in type (see `scripts/gen-builtin-schema`).
const DATA: &str = include_str!("../../data/builtin-schema.json");

static BUILTIN: OnceLock<Schema> = OnceLock::new();

/// The schema of all built-in Kubernetes types (v1.37), decoded once.
///
/// ```
/// use fieldwise_core::schema::{builtin, Gvk};
/// let deployment = builtin().root(&Gvk::new("apps", "v1", "Deployment"));
/// assert!(deployment.is_some());
/// ```
pub fn builtin() -> &'static Schema {
    BUILTIN.get_or_init(|| serde_json::from_str(DATA).ok().and_then(|v| compact::decode(&v).ok()).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_data_decodes() {
        let value: serde_json::Value = serde_json::from_str(DATA).expect("valid JSON");
        let schema = compact::decode(&value).expect("valid compact schema");
        assert!(schema.len() > 100, "the embedded schema holds the built-in types");
    }
}
