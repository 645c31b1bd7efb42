//! Whether a repair may put a Secret's values into its last-applied annotation.
//!
//! The annotation is metadata: anyone who may list or watch Secrets' metadata, and
//! every tool that logs objects, reads it. `kubectl apply` copies a Secret's `data`
//! and `stringData` there in clear text (kubernetes/kubernetes#23564), which is what a
//! scan reports as *leaking*. A repair that writes such an annotation would create
//! that finding itself, so it does so only when the user asked for exactly that
//! (`--store-secret-values`); the way out that needs no annotation is server-side
//! apply (`kubectl last-applied migrate`).

use serde_json::Value;

use super::string_data::is_secret;

/// How many values of a Secret `config` holds in `data` and `stringData` (0 for other kinds).
pub fn held_values(config: &Value) -> usize {
    if !is_secret(config) {
        return 0;
    }
    ["data", "stringData"].iter().filter_map(|f| config.get(*f).and_then(Value::as_object)).map(|m| m.len()).sum()
}

/// What a repair does with an annotation it computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepairDecision {
    /// Write it: it holds no Secret value, or the user asked to store them.
    Write,
    /// Do not write it: it would hold this many Secret values in clear text.
    Refuse {
        /// The number of `data`/`stringData` values it would hold.
        values: usize,
    },
}

/// Whether an annotation made from `config` may be written; `store_secret_values` is the
/// user's explicit consent.
///
/// ```
/// use fieldwise_core::last_applied::secret_values::{repair_decision, RepairDecision};
/// use serde_json::json;
///
/// let secret = json!({"apiVersion": "v1", "kind": "Secret", "data": {"pw": "aHVudGVyMg=="}});
/// assert_eq!(repair_decision(&secret, false), RepairDecision::Refuse { values: 1 });
/// assert_eq!(repair_decision(&secret, true), RepairDecision::Write);
/// assert_eq!(repair_decision(&json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}}), false), RepairDecision::Write);
/// ```
pub fn repair_decision(config: &Value, store_secret_values: bool) -> RepairDecision {
    match held_values(config) {
        0 => RepairDecision::Write,
        _ if store_secret_values => RepairDecision::Write,
        values => RepairDecision::Refuse { values },
    }
}

/// Why a refused repair was refused and what to do instead, for `display` (`secret/x`);
/// one line, no value quoted.
pub fn refusal_reason(display: &str, values: usize) -> String {
    format!(
        "{display}: not repaired: the annotation would hold {values} Secret value(s) in clear text, readable by anyone \
         who can read its metadata; move it to server-side apply, which needs no annotation \
         (`kubectl last-applied migrate {display}`), or pass --store-secret-values to store them anyway"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_secret_values_need_consent() {
        let empty = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"labels": {"a": "b"}}});
        assert_eq!(repair_decision(&empty, false), RepairDecision::Write);
        let both = json!({"apiVersion": "v1", "kind": "Secret", "data": {"a": "eA=="}, "stringData": {"b": "y"}});
        assert_eq!(repair_decision(&both, false), RepairDecision::Refuse { values: 2 });
        let reason = refusal_reason("secret/s2", 2);
        assert!(reason.contains("kubectl last-applied migrate secret/s2") && reason.contains("--store-secret-values"));
        assert!(!reason.contains("eA=="));
    }
}
