//! A Secret's values are secret in `data` and `stringData` only. Copied into a label or
//! an annotation (a JSON Patch `copy` or `move` from `/data/pw`, or the value pasted into
//! a merge patch), a value is readable by anyone who may read the Secret's metadata
//! (`kubectl get secrets` lists labels), and printed in clear by every tool. A diff that
//! masks Secret values cannot show the reviewer that it happens, so this lint says where
//! each value would land; the write is refused unless the user allows it explicitly.

use base64::Engine as _;
use serde_json::Value;

use super::{Finding, Severity};
use crate::json_patch::{JsonPointer, Operation};
use crate::last_applied::string_data::is_secret;

/// Values shorter than this are matched only when a JSON Patch moves or copies them: a label
/// `x: "1"` is no evidence of a Secret value `1`.
const MIN_MATCHED_LEN: usize = 4;

/// Where the patch puts a value of the Secret's `data` or `stringData` outside them: one
/// finding per place, [`Severity::ExposesSecret`]. `ops` are the JSON Patch operations
/// (empty for other patch types). Objects that are not Secrets have nothing to expose.
pub fn secret_exposures(live: &Value, result: &Value, ops: &[Operation]) -> Vec<Finding> {
    if !is_secret(live) && !is_secret(result) {
        return Vec::new();
    }
    let secrets = secret_values(live).into_iter().chain(secret_values(result)).collect::<Vec<_>>();
    let mut findings: Vec<Finding> = Vec::new();
    let mut add = |at: &str, key: &str, how: &str| {
        let path = dotted(at);
        if findings.iter().any(|f| f.path == path) {
            return;
        }
        findings.push(
            Finding::new(
                Severity::ExposesSecret,
                path.clone(),
                format!("{how} the value of the Secret's {key} into {path}, where it is not secret: anyone who can read the Secret's metadata reads it in clear (the diff masks it)"),
            )
            .with_fix("keep Secret values in data or stringData; add --allow-secret-exposure if it must be exposed"),
        );
    };
    for op in ops {
        let (from, to, how) = match op {
            Operation::Copy { from, path } => (from, path, "copies"),
            Operation::Move { from, path } => (from, path, "moves"),
            _ => continue,
        };
        if let (Some(key), false) = (secret_key(from), inside_secret_fields(to.as_str())) {
            add(to.as_str(), &key, how);
        }
    }
    let mut leaves = Vec::new();
    strings_outside_secret_fields(result, String::new(), &mut leaves);
    for (at, text) in leaves {
        if live.pointer(&at).and_then(Value::as_str) == Some(text) || text.len() < MIN_MATCHED_LEN {
            continue; // unchanged, or too short to tell
        }
        if let Some((key, _)) = secrets.iter().find(|(_, spellings)| spellings.iter().any(|s| s == text)) {
            add(&at, key, "puts");
        }
    }
    findings
}

/// `data.KEY` or `stringData.KEY` for a pointer into them.
fn secret_key(pointer: &JsonPointer) -> Option<String> {
    match pointer.tokens()? {
        [field, key, ..] if field == "data" || field == "stringData" => Some(format!("{field}.{key}")),
        _ => None,
    }
}

fn inside_secret_fields(pointer: &str) -> bool {
    ["/data", "/stringData"].iter().any(|field| pointer == *field || pointer.starts_with(&format!("{field}/")))
}

/// Each value of `data` (as stored, base64, and decoded) and `stringData` (as written, and
/// base64-encoded), named `data.KEY`, with the spellings it may be copied in.
fn secret_values(object: &Value) -> Vec<(String, Vec<String>)> {
    let engine = base64::engine::general_purpose::STANDARD;
    let mut out = Vec::new();
    for (field, encoded) in [("data", true), ("stringData", false)] {
        let Some(Value::Object(values)) = object.get(field) else { continue };
        for (key, value) in values {
            let Some(text) = value.as_str() else { continue };
            let other = if encoded {
                engine.decode(text).ok().and_then(|bytes| String::from_utf8(bytes).ok())
            } else {
                Some(engine.encode(text))
            };
            let spellings: Vec<String> =
                [Some(text.to_string()), other].into_iter().flatten().filter(|s| !s.is_empty()).collect();
            out.push((format!("{field}.{key}"), spellings));
        }
    }
    out
}

/// Every string in `value` outside `/data` and `/stringData`, with its JSON Pointer.
fn strings_outside_secret_fields<'v>(value: &'v Value, at: String, out: &mut Vec<(String, &'v str)>) {
    if inside_secret_fields(&at) {
        return;
    }
    match value {
        Value::String(text) => out.push((at, text)),
        Value::Object(map) => {
            for (key, child) in map {
                let token = key.replace('~', "~0").replace('/', "~1");
                strings_outside_secret_fields(child, format!("{at}/{token}"), out);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                strings_outside_secret_fields(child, format!("{at}/{index}"), out);
            }
        }
        _ => {}
    }
}

/// `metadata.labels.x` for `/metadata/labels/x` (a key with dots stays one: `metadata.annotations[example.com/a]`).
fn dotted(pointer: &str) -> String {
    let tokens = JsonPointer::parse(pointer).tokens().map(<[String]>::to_vec).unwrap_or_default();
    let mut out = String::new();
    for token in tokens {
        if token.contains('.') || token.contains('/') {
            out.push_str(&format!("[{token}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&token);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_patch;
    use serde_json::json;

    fn secret() -> Value {
        // pw: hunter22, short: "1"
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "labels": {"app": "web"}},
               "data": {"pw": "aHVudGVyMjI=", "short": "MQ=="}})
    }

    #[test]
    fn a_json_patch_copy_or_move_into_metadata_is_found() {
        let live = secret();
        for (op, how) in [("copy", "copies"), ("move", "moves")] {
            let patch = json!([{"op": op, "from": "/data/pw", "path": "/metadata/labels/x"}]);
            let ops = json_patch::parse(&patch).unwrap();
            let result = json_patch::apply(&live, &patch).unwrap();
            let findings = secret_exposures(&live, &result, &ops);
            assert_eq!(findings.len(), 1, "{findings:?}");
            assert_eq!(findings[0].severity, Severity::ExposesSecret);
            assert_eq!(findings[0].path, "metadata.labels.x");
            assert!(
                findings[0].message.starts_with(&format!("{how} the value of the Secret's data.pw")),
                "{findings:?}"
            );
        }
        // Even a value too short to match by text is found when a patch copies it.
        let patch = json!([{"op": "copy", "from": "/data/short", "path": "/metadata/annotations"}]);
        let result = json_patch::apply(&live, &patch).unwrap();
        assert_eq!(secret_exposures(&live, &result, &json_patch::parse(&patch).unwrap()).len(), 1);
    }

    #[test]
    fn a_pasted_value_decoded_or_not_is_found_and_ordinary_changes_are_not() {
        let live = secret();
        for pasted in ["hunter22", "aHVudGVyMjI="] {
            let mut result = live.clone();
            result["metadata"]["annotations"] = json!({"example.com/pw": pasted});
            let findings = secret_exposures(&live, &result, &[]);
            assert_eq!(findings.len(), 1, "{pasted}: {findings:?}");
            assert_eq!(findings[0].path, "metadata.annotations[example.com/pw]");
        }
        // Changing the data itself, or labels unrelated to it, exposes nothing; nor does a ConfigMap.
        let mut result = live.clone();
        result["data"]["pw"] = json!("bmV3");
        result["metadata"]["labels"]["tier"] = json!("1");
        result["stringData"] = json!({"token": "abcdef"});
        assert!(secret_exposures(&live, &result, &[]).is_empty());
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"pw": "hunter22"}});
        let mut copied = cm.clone();
        copied["metadata"] = json!({"labels": {"x": "hunter22"}});
        assert!(secret_exposures(&cm, &copied, &[]).is_empty());
        // A stringData value written in the same patch and pasted into a label is found too.
        let mut result = live.clone();
        result["stringData"] = json!({"token": "s3cr3t-token"});
        result["metadata"]["labels"]["token"] = json!("s3cr3t-token");
        assert_eq!(secret_exposures(&live, &result, &[])[0].path, "metadata.labels.token");
    }
}
