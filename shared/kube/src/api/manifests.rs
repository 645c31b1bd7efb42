//! Objects from `-f`: files, directories of `.yaml`/`.yml`/`.json` files, or `-`
//! for standard input; YAML streams with several documents and `kind: List`
//! wrappers become one value per object, each remembering where it came from.

use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::local::error::LocalError;
use crate::local::input;

/// One object read from a manifest, and where it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// `FILE` or `FILE (document N)`, or `stdin` for `-`, for messages.
    pub source: String,
    /// The object.
    pub value: Value,
}

impl Manifest {
    /// The name of the Namespace this manifest creates (a `v1` `Namespace`), if it is one:
    /// applying it makes the namespace its objects are applied in.
    pub fn namespace_declared(&self) -> Option<&str> {
        let object = &self.value;
        (object.get("apiVersion").and_then(Value::as_str) == Some("v1")
            && object.get("kind").and_then(Value::as_str) == Some("Namespace"))
        .then(|| object.pointer("/metadata/name").and_then(Value::as_str))
        .flatten()
        .filter(|name| !name.is_empty())
    }
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
    read_each(inputs, recursive, &mut |manifest| {
        out.push(manifest);
        Ok(())
    })?;
    Ok(out)
}

/// [`read`], handing each object to `take` as soon as its document is parsed, in the same
/// order: the first error (reading, parsing, or `take`'s own) stops the reading there, so a
/// caller that has seen enough (a selection over its limit) never parses the rest.
pub fn read_each(inputs: &[String], recursive: bool, take: &mut dyn FnMut(Manifest) -> Result<()>) -> Result<()> {
    let mut found = 0usize;
    // A Secret in a file is as secret as one on the server: messages must not quote it either.
    let mut give = |manifest: Manifest, found: &mut usize| {
        crate::redact::remember(&manifest.value);
        *found += 1;
        take(manifest)
    };
    let mut empty = Vec::new();
    for input in inputs {
        let before = found;
        let mut files = 0;
        let mut sink = |manifest: Manifest| give(manifest, &mut found);
        if input == "-" {
            let text = input::read_text(std::io::stdin().lock(), "standard input")?;
            each_document(&text, "stdin", &mut sink)?;
            files += 1;
        } else {
            read_path(Path::new(input), recursive, true, &mut sink, &mut files)?;
        }
        if found == before {
            empty.push(nothing_in(input, files, recursive));
        }
    }
    if found == 0 {
        return Err(Error::usage(format!(
            "no objects passed in -f: {}; give a file with at least one Kubernetes object",
            empty.join("; ")
        )));
    }
    Ok(())
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

fn read_path(
    path: &Path,
    recursive: bool,
    top: bool,
    take: &mut dyn FnMut(Manifest) -> Result<()>,
    files: &mut usize,
) -> Result<()> {
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
                read_path(&entry, recursive, false, take, files)?;
            }
        }
        return Ok(());
    }
    let text = input::read_file(path, &format!("the file \"{}\"", path.display()))?;
    *files += 1;
    each_document(&text, &path.display().to_string(), take)
}

/// Parses a YAML (or JSON) stream into objects exactly as `kubectl apply -f` reads it
/// ([`fieldwise_core::yaml::read_stream`]: YAML 1.1, so `y: 2` is `true: 2` and `on` is
/// `true`; documents cut at `---` lines): empty documents are skipped, `List` kinds are
/// unwrapped into their items. Documents are numbered as kubectl cuts them. A field written
/// twice in one object is warned about on stderr (the last value is the one read).
pub fn parse_documents(text: &str, source: &str) -> Result<Vec<Manifest>> {
    let mut out = Vec::new();
    each_document(text, source, &mut |manifest| {
        out.push(manifest);
        Ok(())
    })?;
    Ok(out)
}

/// [`parse_documents`], handing each object to `take` as soon as its document is parsed
/// ([`fieldwise_core::yaml::documents`]): the first error, the parser's or `take`'s, ends
/// the reading, and the documents after it are never parsed. One document is read ahead,
/// to know whether the text holds several (their sources then name their number).
pub fn each_document(text: &str, source: &str, take: &mut dyn FnMut(Manifest) -> Result<()>) -> Result<()> {
    let parse_error = |e: fieldwise_core::yaml::ReadError| {
        Error::usage(format!(
            "cannot parse {source}: document {}, line {}, column {}: {}",
            e.document, e.line, e.column, e.problem
        ))
    };
    let mut documents = fieldwise_core::yaml::documents(text).peekable();
    let several = match documents.next() {
        None => return Ok(()),
        Some(Err(e)) => return Err(parse_error(e)),
        Some(Ok(first)) => {
            let several = first.index > 1 || documents.peek().is_some();
            one_document(first, source, several, take)?;
            several
        }
    };
    for document in documents {
        one_document(document.map_err(parse_error)?, source, several, take)?;
    }
    Ok(())
}

/// One document of [`each_document`]: its duplicate fields warned about, its objects (the
/// items of a `List`) handed to `take`.
fn one_document(
    document: fieldwise_core::yaml::Document,
    source: &str,
    several: bool,
    take: &mut dyn FnMut(Manifest) -> Result<()>,
) -> Result<()> {
    let here = if several { format!("{source} (document {})", document.index) } else { source.to_string() };
    // An object file is read here, not sent as written: a field written twice loses its first
    // value without a word from the decoder, so the user hears it here (see `duplicate_fields`).
    for field in &document.duplicates {
        eprintln!("warning: {here}: duplicate field \"{field}\": only its last value is read");
    }
    match document.value {
        Value::Null => Ok(()),
        value @ Value::Object(_) => unwrap_lists(value, &here, take),
        _ => Err(Error::usage(format!("cannot parse {here}: expected an object (a map), not a scalar or list"))),
    }
}

fn unwrap_lists(value: Value, source: &str, take: &mut dyn FnMut(Manifest) -> Result<()>) -> Result<()> {
    let is_list = value.get("kind").and_then(Value::as_str).is_some_and(|k| k.ends_with("List"))
        && value.get("items").is_some_and(Value::is_array);
    if !is_list {
        return take(Manifest { source: source.to_string(), value });
    }
    let Value::Object(mut list) = value else { return Ok(()) };
    if let Some(Value::Array(items)) = list.remove("items") {
        for (i, item) in items.into_iter().enumerate() {
            if !item.is_object() {
                return Err(Error::usage(format!("cannot parse {source}: item {i} of the list is not an object")));
            }
            unwrap_lists(item, &format!("{source} (item {i})"), take)?;
        }
    }
    Ok(())
}

/// The names kustomize looks for in a directory: such a file is a kustomization, never an object.
pub const KUSTOMIZATION_FILES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The `-f` inputs read one file at a time, for commands that report a bad file and go on
/// with the others, as `kubectl apply -f DIR` does: each item is an object, or an error
/// naming the file that could not be read or parsed (a kustomization file among the
/// manifests is one: it is not an object). Files are read when reached, so memory holds
/// one file's objects at a time. Directories are read as [`read`] reads them. When the
/// inputs hold no object and no bad file, the last item is [`read`]'s "no objects" error.
pub struct ManifestStream {
    /// Paths (files or directories) not reached yet, each with the index of the input it
    /// came from and whether it is that input itself.
    pending: std::collections::VecDeque<(std::path::PathBuf, usize, bool)>,
    ready: std::collections::VecDeque<Result<Manifest>>,
    recursive: bool,
    inputs: Vec<String>,
    /// Manifest files read, per input (for the "no objects" message).
    files: Vec<usize>,
    found_any: bool,
    done: bool,
}

/// Streams the objects of `inputs` (see [`ManifestStream`]).
pub fn stream(inputs: &[String], recursive: bool) -> ManifestStream {
    ManifestStream {
        pending: inputs.iter().enumerate().map(|(n, i)| (std::path::PathBuf::from(i), n, true)).collect(),
        ready: Default::default(),
        recursive,
        inputs: inputs.to_vec(),
        files: vec![0; inputs.len()],
        found_any: false,
        done: false,
    }
}

impl ManifestStream {
    /// Reads the next pending path into `ready` (files) or `pending` (a directory's entries).
    fn advance(&mut self) {
        let Some((path, input, top)) = self.pending.pop_front() else { return };
        let shown = path.display().to_string();
        if top && shown == "-" {
            match input::read_text(std::io::stdin().lock(), "standard input") {
                Ok(text) => self.parsed(parse_documents(&text, "stdin")),
                Err(e) => self.ready.push_back(Err(e.into())),
            }
            return;
        }
        let meta = match std::fs::metadata(&path) {
            Ok(meta) => meta,
            Err(e) => {
                let message = format!("the path \"{shown}\" cannot be read: {e}");
                self.ready.push_back(Err(Error::usage(message)));
                return;
            }
        };
        if meta.is_dir() {
            if !top && !self.recursive {
                return;
            }
            let entries = match std::fs::read_dir(&path) {
                Ok(entries) => entries,
                Err(e) => {
                    let message = format!("the directory \"{shown}\" cannot be read: {e}");
                    self.ready.push_back(Err(Error::usage(message)));
                    return;
                }
            };
            let mut entries: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            entries.sort();
            let taken = entries.into_iter().filter(|entry| {
                entry.is_dir()
                    || matches!(entry.extension().and_then(|e| e.to_str()), Some("yaml" | "yml" | "json"))
                    || entry.file_name().is_some_and(|n| n == "Kustomization")
            });
            for (i, entry) in taken.enumerate() {
                self.pending.insert(i, (entry, input, false));
            }
            return;
        }
        if path.file_name().and_then(|n| n.to_str()).is_some_and(|n| KUSTOMIZATION_FILES.contains(&n)) {
            self.ready.push_back(Err(Error::usage(format!(
                "\"{shown}\" is a kustomization, not a Kubernetes object: give its directory with -k to read what it builds"
            ))));
            return;
        }
        self.files[input] += 1;
        match input::read_file(&path, &format!("the file \"{shown}\"")) {
            Ok(text) => self.parsed(parse_documents(&text, &shown)),
            Err(e) => self.ready.push_back(Err(e.into())),
        }
    }

    fn parsed(&mut self, documents: Result<Vec<Manifest>>) {
        match documents {
            Ok(documents) => {
                for manifest in documents {
                    crate::redact::remember(&manifest.value);
                    self.found_any = true;
                    self.ready.push_back(Ok(manifest));
                }
            }
            Err(e) => self.ready.push_back(Err(e)),
        }
    }
}

impl Iterator for ManifestStream {
    type Item = Result<Manifest>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.ready.pop_front() {
                if item.is_err() {
                    // A bad file counts as input: "no objects" would be a second, wrong error.
                    self.found_any = true;
                }
                return Some(item);
            }
            if self.pending.is_empty() {
                if self.done || self.found_any {
                    return None;
                }
                self.done = true;
                // Nothing at all: the same error as `read`, naming each input.
                let why: Vec<String> = self
                    .inputs
                    .iter()
                    .zip(&self.files)
                    .map(|(input, files)| nothing_in(input, *files, self.recursive))
                    .collect();
                return Some(Err(Error::usage(format!(
                    "no objects passed in -f: {}; give a file with at least one Kubernetes object",
                    why.join("; ")
                ))));
            }
            self.advance();
        }
    }
}

/// The objects `kubectl kustomize DIR` builds, run with the kubectl that runs the plugin
/// (`$KUBECTL_PLUGINS_CALLER`, which kubectl sets for its plugins; else `kubectl` on PATH),
/// so `-k` reads a kustomization exactly as `kubectl apply -k` would. Each object's source
/// is `DIR (kustomize) (document N)`.
pub fn kustomize(dir: &str) -> Result<Vec<Manifest>> {
    let mut out = Vec::new();
    kustomize_each(dir, &mut |manifest| {
        out.push(manifest);
        Ok(())
    })?;
    Ok(out)
}

/// [`kustomize`], handing each object to `take` as its document is parsed (see
/// [`each_document`]).
pub fn kustomize_each(dir: &str, take: &mut dyn FnMut(Manifest) -> Result<()>) -> Result<()> {
    let kubectl = std::env::var_os("KUBECTL_PLUGINS_CALLER").unwrap_or_else(|| "kubectl".into());
    let output = std::process::Command::new(&kubectl)
        .arg("kustomize")
        .arg(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| {
            LocalError::io_without_path(
                format!("run {} kustomize (for -k)", std::path::Path::new(&kubectl).display()),
                source,
            )
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let reason = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("it failed without a message");
        let reason = reason.trim_start_matches("error: ").trim_start_matches("Error: ");
        return Err(Error::usage(format!("kubectl kustomize \"{dir}\" failed: {reason}")));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut found = 0usize;
    each_document(&text, &format!("{dir} (kustomize)"), &mut |manifest| {
        crate::redact::remember(&manifest.value);
        found += 1;
        take(manifest)
    })?;
    if found == 0 {
        return Err(Error::usage(format!("kubectl kustomize \"{dir}\" built no object")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v1_namespace_declares_its_name_other_kinds_none() {
        let text = "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: shop}\n---\napiVersion: x.test/v1\nkind: Namespace\nmetadata: {name: other}\n";
        let docs = parse_documents(text, "x.yaml").unwrap();
        let declared: Vec<Option<&str>> = docs.iter().map(Manifest::namespace_declared).collect();
        assert_eq!(declared, [Some("shop"), None, None]);
    }

    #[test]
    fn multi_document_yaml_lists_and_json() {
        let text = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\nkind: List\nitems:\n- {kind: Pod, metadata: {name: b}}\n- {kind: Pod, metadata: {name: c}}\n";
        let docs = parse_documents(text, "x.yaml").unwrap();
        let names: Vec<_> = docs.iter().map(|d| d.value["metadata"]["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        // kubectl's count: a `---` with nothing before it opens the next document.
        assert_eq!(docs[2].source, "x.yaml (document 2) (item 1)");
        let json = parse_documents("{\"kind\": \"Pod\", \"spec\": {\"x\": 1}}", "p.json").unwrap();
        assert_eq!(json[0].value["spec"]["x"], 1);
    }

    #[test]
    fn documents_are_read_as_kubectl_reads_them() {
        let docs = parse_documents("kind: ConfigMap\ndata:\n  y: 2\n  on: yes\n  mode: 0777\n", "cm.yaml").unwrap();
        assert_eq!(docs[0].value["data"], serde_json::json!({"true": true, "mode": 511}));
        let err = parse_documents("kind: A\n---\nkind: B\nmetadata: {name: [}\n", "x.yaml").unwrap_err().printed();
        assert!(err.starts_with("error: cannot parse x.yaml: document 2, line 4, column "), "{err}");
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

    #[test]
    fn a_stream_reports_a_bad_file_and_goes_on() {
        let dir = TempDir::new("stream");
        dir.file("a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n");
        dir.file("b.yaml", "a: [b");
        dir.file("kustomization.yaml", "resources: [a.yaml]\n");
        dir.file("c.json", "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"c\"}}");
        let path = dir.0.display().to_string();
        let items: Vec<Result<Manifest>> = stream(std::slice::from_ref(&path), false).collect();
        let shown: Vec<String> = items
            .iter()
            .map(|i| match i {
                Ok(m) => m.value["metadata"]["name"].as_str().unwrap().to_string(),
                Err(e) => e.to_string(),
            })
            .collect();
        assert_eq!(shown.len(), 4, "{shown:?}");
        assert_eq!(shown[0], "a");
        assert!(shown[1].starts_with("cannot parse ") && shown[1].contains("b.yaml"), "{shown:?}");
        assert_eq!(shown[2], "c");
        assert!(shown[3].contains("kustomization.yaml\" is a kustomization") && shown[3].contains("-k"), "{shown:?}");
        // Nothing at all is still an error, once.
        let empty = dir.file("empty.yaml", "");
        let items: Vec<_> = stream(&[empty], false).collect();
        assert_eq!(items.len(), 1);
        assert!(items[0].as_ref().unwrap_err().to_string().contains("no objects passed in -f"));
    }
}
