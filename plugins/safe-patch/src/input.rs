//! Reading the patch (`-p`, `--patch-file`) and the object file (`-f`).

use fieldwise_kube::api::manifests::{self, Manifest};
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::local::input;
use serde_json::Value;

/// Parses patch text: JSON first (the usual `-p '{...}'`), then YAML.
pub fn parse_patch(text: &str, source: &str) -> Result<Value> {
    if text.trim().is_empty() {
        return Err(Error::usage(format!("the patch from {source} is empty")));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v) => Ok(v),
        Err(json_err) => {
            let looks_like_json = matches!(text.trim_start().chars().next(), Some('{' | '['));
            if looks_like_json {
                return Err(Error::usage(format!(
                    "the patch from {source} is not valid JSON: {json_err} (check quotes and commas)"
                )));
            }
            serde_yaml::from_str::<Value>(text).map_err(|e| {
                let first = e.to_string().lines().next().unwrap_or_default().to_string();
                Error::usage(format!("the patch from {source} is neither JSON nor YAML: {first}"))
            })
        }
    }
}

/// The patch from `-p` or `--patch-file`; one of them is required. Each is bounded in size
/// and nesting (see `fieldwise_kube::local::input`).
pub fn read_patch(inline: Option<&str>, file: Option<&str>) -> Result<Value> {
    match (inline, file) {
        (Some(text), _) => {
            input::check_text(text, "the patch from -p")?;
            parse_patch(text, "-p")
        }
        (None, Some("-")) => {
            let text = input::read_text(std::io::stdin().lock(), "the patch from stdin")?;
            parse_patch(&text, "stdin")
        }
        (None, Some(path)) => {
            let text = input::read_file(std::path::Path::new(path), &format!("--patch-file {path}"))?;
            parse_patch(&text, path)
        }
        (None, None) => Err(Error::usage("a patch is required: pass -p PATCH or --patch-file FILE (or --edit)")),
    }
}

/// The one object in an `-f` file, and where it was read from (an empty file is refused
/// by [`manifests::read`]).
pub fn read_object_file(path: &str) -> Result<Manifest> {
    let mut docs = manifests::read(&[path.to_string()], false)?;
    match docs.len() {
        1 => Ok(docs.remove(0)),
        n => Err(Error::usage(format!("{path} holds {n} objects; safe-patch takes one object per file"))),
    }
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
}
