//! Objects from `-f`: files, directories of `.yaml`/`.yml`/`.json` files, or `-`
//! for standard input; YAML streams with several documents and `kind: List`
//! wrappers become one value per object, each remembering where it came from.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::local::input;

/// One object read from a manifest, and where it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// `FILE` or `FILE (document N)`, or `stdin` for `-`, for messages.
    pub source: String,
    /// The object.
    pub value: Value,
}

/// Reads every `-f` argument in order, each bounded in size and nesting ([`input`]). Directories are read in name order (and their
/// subdirectories too when `recursive`, as kubectl's `-R`), taking only the files kubectl
/// takes: `*.yaml`, `*.yml` and `*.json`.
///
/// Reading nothing at all is an error, as in kubectl (`error: no objects passed to apply`):
/// an empty file, a stream of empty documents or a directory without manifest files
/// (`-f /etc`) is almost certainly the wrong path, and a command that then reported
/// "nothing found" with success would hide it.
pub fn read(inputs: &[String], recursive: bool) -> Result<Vec<Manifest>> {
    let mut out = Vec::new();
    let mut empty = Vec::new();
    for input in inputs {
        let before = out.len();
        let mut files = 0;
        if input == "-" {
            let text = input::read_text(std::io::stdin().lock(), "standard input")?;
            out.extend(parse_documents(&text, "stdin")?);
            files += 1;
        } else {
            read_path(Path::new(input), recursive, true, &mut out, &mut files)?;
        }
        if out.len() == before {
            empty.push(nothing_in(input, files, recursive));
        }
    }
    if out.is_empty() {
        return Err(Error::usage(format!(
            "no objects passed in -f: {}; give a file with at least one Kubernetes object",
            empty.join("; ")
        )));
    }
    // A Secret in a file is as secret as one on the server: messages must not quote it either.
    for manifest in &out {
        crate::redact::remember(&manifest.value);
    }
    Ok(out)
}

/// Why one `-f` input gave no object, in a few words naming it.
fn nothing_in(input: &str, files: usize, recursive: bool) -> String {
    const EMPTY: &str = "empty or only comments and empty documents";
    if input == "-" {
        return format!("standard input holds no object (it is {EMPTY})");
    }
    if !Path::new(input).is_dir() {
        return format!("\"{input}\" holds no object (it is {EMPTY})");
    }
    match files {
        // Not every command has -R, so the hint names it only as kubectl's.
        0 if recursive => format!("the directory \"{input}\" and its subdirectories hold no .yaml, .yml or .json file"),
        0 => format!(
            "the directory \"{input}\" holds no .yaml, .yml or .json file (kubectl reads only those, and subdirectories only with -R)"
        ),
        1 => format!("the one manifest file in the directory \"{input}\" holds no object (it is {EMPTY})"),
        n => format!("the {n} manifest files in the directory \"{input}\" hold no object (they are {EMPTY})"),
    }
}

fn read_path(path: &Path, recursive: bool, top: bool, out: &mut Vec<Manifest>, files: &mut usize) -> Result<()> {
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
                read_path(&entry, recursive, false, out, files)?;
            }
        }
        return Ok(());
    }
    let text = input::read_file(path, &format!("the file \"{}\"", path.display()))?;
    *files += 1;
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
            let err = parse_documents(text, "bad.yaml").unwrap_err().printed();
            assert!(err.starts_with("error: cannot parse bad.yaml"), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        assert!(read(&["/nonexistent/x.yaml".into()], false).unwrap_err().to_string().contains("/nonexistent/x.yaml"));
    }

    /// A private directory for one test, removed when dropped.
    struct TempDir(std::path::PathBuf);

    impl TempDir {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("fw-manifests-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }

        fn file(&self, name: &str, text: &str) -> String {
            let path = self.0.join(name);
            std::fs::write(&path, text).unwrap();
            path.display().to_string()
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            std::fs::remove_dir_all(&self.0).ok();
        }
    }

    #[test]
    fn empty_inputs_are_errors_naming_each_input() {
        let dir = TempDir::new("empty");
        let empty = dir.file("empty.yaml", "");
        let comments = dir.file("comments.yaml", "# nothing here\n---\n---\n");
        for (input, expected) in
            [(&empty, format!("\"{empty}\" holds no object")), (&comments, format!("\"{comments}\" holds no object"))]
        {
            let err = read(std::slice::from_ref(input), false).unwrap_err().printed();
            assert!(err.starts_with("error: no objects passed in -f: "), "{err}");
            assert!(err.contains(&expected), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
        let both = read(&[empty.clone(), comments.clone()], false).unwrap_err().to_string();
        assert!(both.contains(&empty) && both.contains(&comments), "{both}");
        // One input with objects is enough, as in kubectl.
        let one = dir.file("one.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n");
        assert_eq!(read(&[empty, one], false).unwrap().len(), 1);
    }

    #[test]
    fn directories_give_their_manifest_files_or_a_clear_error() {
        let dir = TempDir::new("dir");
        dir.file("notes.txt", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ignored}\n");
        let path = dir.0.display().to_string();
        let err = read(std::slice::from_ref(&path), false).unwrap_err().to_string();
        assert!(err.contains(&format!("the directory \"{path}\" holds no .yaml, .yml or .json file")), "{err}");
        assert!(err.contains("subdirectories only with -R"), "{err}");
        std::fs::create_dir_all(dir.0.join("sub")).unwrap();
        std::fs::write(dir.0.join("sub/a.yml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n").unwrap();
        assert!(read(std::slice::from_ref(&path), false).is_err(), "subdirectories only with -R");
        std::fs::create_dir_all(dir.0.join("empty-sub")).unwrap();
        let err = read(std::slice::from_ref(&dir.0.join("empty-sub").display().to_string()), true).unwrap_err();
        assert!(err.to_string().contains("and its subdirectories hold no .yaml"), "{err}");
        let found = read(std::slice::from_ref(&path), true).unwrap();
        assert_eq!(found[0].value["metadata"]["name"], "a");
        dir.file("empty.json", "");
        let err = read(std::slice::from_ref(&path), false).unwrap_err().to_string();
        assert!(err.contains(&format!("the one manifest file in the directory \"{path}\" holds no object")), "{err}");
    }
}
