//! Objects from `-f`: files, directories of `.yaml`/`.yml`/`.json` files, or `-`
//! for standard input; YAML streams with several documents and `kind: List`
//! wrappers become one value per object, each remembering where it came from.

use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};

/// One object read from a manifest, and where it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// `FILE` or `FILE (document N)`, or `stdin` for `-`, for messages.
    pub source: String,
    /// The object.
    pub value: Value,
}

/// Reads every `-f` argument in order. Directories are read in name order (and their
/// subdirectories too when `recursive`, as kubectl's `-R`).
pub fn read(inputs: &[String], recursive: bool) -> Result<Vec<Manifest>> {
    let mut out = Vec::new();
    for input in inputs {
        if input == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| Error::usage(format!("cannot read standard input: {e}")))?;
            out.extend(parse_documents(&text, "stdin")?);
        } else {
            read_path(Path::new(input), recursive, true, &mut out)?;
        }
    }
    // A Secret in a file is as secret as one on the server: messages must not quote it either.
    for manifest in &out {
        crate::redact::remember(&manifest.value);
    }
    Ok(out)
}

fn read_path(path: &Path, recursive: bool, top: bool, out: &mut Vec<Manifest>) -> Result<()> {
    let meta = std::fs::metadata(path)
        .map_err(|e| Error::usage(format!("the path \"{}\" cannot be read: {e}", path.display())))?;
    if meta.is_dir() {
        if !top && !recursive {
            return Ok(());
        }
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .map_err(|e| Error::usage(format!("the directory \"{}\" cannot be read: {e}", path.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for entry in entries {
            let manifest = matches!(entry.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json"));
            if entry.is_dir() || manifest {
                read_path(&entry, recursive, false, out)?;
            }
        }
        return Ok(());
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("the file \"{}\" cannot be read: {e}", path.display())))?;
    out.extend(parse_documents(&text, &path.display().to_string())?);
    Ok(())
}

/// Parses a YAML (or JSON) stream into objects: empty documents are skipped, `List`
/// kinds are unwrapped into their items.
pub fn parse_documents(text: &str, source: &str) -> Result<Vec<Manifest>> {
    let mut values = Vec::new();
    // Stop at the first error: a broken stream may yield the same error forever.
    for (index, document) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let value = Value::deserialize(document).map_err(|e| {
            let first = e.to_string().lines().next().unwrap_or_default().to_string();
            let here = if index > 0 { format!("{source} (document {})", index + 1) } else { source.to_string() };
            Error::usage(format!("cannot parse {here}: {first}"))
        })?;
        values.push(value);
    }
    let several = values.len() > 1;
    let mut out = Vec::new();
    for (index, value) in values.into_iter().enumerate() {
        let here = if several { format!("{source} (document {})", index + 1) } else { source.to_string() };
        match value {
            Value::Null => {}
            Value::Object(_) => unwrap_lists(value, &here, &mut out)?,
            _ => {
                return Err(Error::usage(format!(
                    "cannot parse {here}: expected an object (a map), not a scalar or list"
                )))
            }
        }
    }
    Ok(out)
}

fn unwrap_lists(value: Value, source: &str, out: &mut Vec<Manifest>) -> Result<()> {
    let is_list = value.get("kind").and_then(Value::as_str).is_some_and(|k| k.ends_with("List"))
        && value.get("items").is_some_and(Value::is_array);
    if !is_list {
        out.push(Manifest { source: source.to_string(), value });
        return Ok(());
    }
    if let Some(Value::Array(items)) = value.get("items") {
        for (i, item) in items.iter().enumerate() {
            if !item.is_object() {
                return Err(Error::usage(format!("cannot parse {source}: item {i} of the list is not an object")));
            }
            unwrap_lists(item.clone(), &format!("{source} (item {i})"), out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_document_yaml_lists_and_json() {
        let text = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\nkind: List\nitems:\n- {kind: Pod, metadata: {name: b}}\n- {kind: Pod, metadata: {name: c}}\n";
        let docs = parse_documents(text, "x.yaml").unwrap();
        let names: Vec<_> = docs.iter().map(|d| d.value["metadata"]["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(docs[2].source, "x.yaml (document 3) (item 1)");
        let json = parse_documents("{\"kind\": \"Pod\", \"spec\": {\"x\": 1}}", "p.json").unwrap();
        assert_eq!(json[0].value["spec"]["x"], 1);
    }

    #[test]
    fn bad_documents_are_usage_errors_naming_the_source() {
        for text in ["a: [b", "- 1\n- 2\n", "just text"] {
            let err = parse_documents(text, "bad.yaml").unwrap_err().to_string();
            assert!(err.starts_with("error: cannot parse bad.yaml"), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        assert!(read(&["/nonexistent/x.yaml".into()], false).unwrap_err().to_string().contains("/nonexistent/x.yaml"));
    }
}
