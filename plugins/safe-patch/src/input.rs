//! Reading the patch (`-p`, `--patch-file`) and the object file (`-f`).

use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::local::input;
use fieldwise_kube::write::FieldValidation;
use serde_json::Value;

/// Parses patch text as `kubectl patch` does (`yaml.ToJSON`, see
/// [`fieldwise_core::yaml::to_json`]): text starting with `{` is JSON, anything else
/// YAML 1.1 (so `paused: yes` is `true`, and a JSON Patch array is read as YAML too).
/// Where kubectl silently takes the first of several YAML documents, this refuses.
pub fn parse_patch(text: &str, source: &str) -> Result<Value> {
    use fieldwise_core::yaml;
    if text.trim().is_empty() {
        return Err(Error::usage(format!("the patch from {source} is empty")));
    }
    let json = text.trim_start().starts_with('{');
    let patch = yaml::to_json(text).map_err(|e| {
        let what = if json { "not valid JSON" } else { "neither JSON nor YAML" };
        let hint = if json { " (check quotes and commas)" } else { "" };
        Error::usage(format!(
            "the patch from {source} is {what}: line {}, column {}: {}{hint}",
            e.line, e.column, e.problem
        ))
    })?;
    if !json {
        if let Ok(documents) = yaml::read_stream(text) {
            if documents.len() > 1 {
                return Err(Error::usage(format!(
                    "the patch from {source} holds {} YAML documents (the second at line {}); give one patch",
                    documents.len(),
                    documents[1].line
                )));
            }
        }
    }
    Ok(patch)
}

/// The patch from `-p` or `--patch-file`; one of them is required. Each is bounded in size
/// and nesting (see `fieldwise_kube::local::input`); a field written twice in one object is
/// refused, warned about or ignored as `validation` (`--validate`) says.
pub fn read_patch(inline: Option<&str>, file: Option<&str>, validation: FieldValidation) -> Result<Value> {
    let (text, source) = match (inline, file) {
        (Some(text), _) => {
            input::check_text(text, "the patch from -p")?;
            (text.to_string(), "-p")
        }
        (None, Some("-")) => (input::read_text(std::io::stdin().lock(), "the patch from stdin")?, "stdin"),
        (None, Some(path)) => (input::read_file(std::path::Path::new(path), &format!("--patch-file {path}"))?, path),
        (None, None) => {
            return Err(Error::usage("a patch is required: pass -p PATCH or --patch-file FILE (or --edit)"))
        }
    };
    let patch = parse_patch(&text, source)?;
    validation.on_duplicate_fields(&text, &format!("the patch from {source}"))?;
    Ok(patch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_yaml_and_clear_errors() {
        assert_eq!(parse_patch(r#"{"spec":{"replicas":2}}"#, "-p").unwrap()["spec"]["replicas"], 2);
        assert_eq!(parse_patch("spec:\n  replicas: 3\n", "-p").unwrap()["spec"]["replicas"], 3);
        let err = parse_patch(r#"{"spec":{"replicas":2}"#, "-p").unwrap_err().printed();
        assert!(err.starts_with("error: the patch from -p is not valid JSON"), "{err}");
        let err = parse_patch("", "-p").unwrap_err().to_string();
        assert!(err.contains("is empty"), "{err}");
        let err = parse_patch("a: [b\n", "x.yaml").unwrap_err().to_string();
        assert!(err.contains("neither JSON nor YAML") && !err.contains('\n'), "{err}");
    }

    #[test]
    fn patches_are_read_as_kubectl_patch_reads_them() {
        // YAML 1.1: `yes` is true, `y` is the key "true", 0777 is octal.
        let patch = parse_patch("spec:\n  paused: yes\n  y: 0777\n", "-p").unwrap();
        assert_eq!(patch, serde_json::json!({"spec": {"paused": true, "true": 511}}));
        // A JSON Patch array is read as YAML too: 1.0 becomes 1, as kubectl sends it.
        let ops = parse_patch(r#"[{"op": "replace", "path": "/spec/replicas", "value": 1.0}]"#, "-p").unwrap();
        assert_eq!(ops[0]["value"], serde_json::json!(1));
        // kubectl would take the first document and drop the rest silently.
        let err = parse_patch("a: 1\n---\nb: 2\n", "p.yaml").unwrap_err().to_string();
        assert!(err.contains("holds 2 YAML documents (the second at line 3)"), "{err}");
    }
}
