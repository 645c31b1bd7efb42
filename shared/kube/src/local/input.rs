//! What a command reads from its user (`-f` files and directories, `--patch-file`, standard
//! input, `-p`, an edited file) costs a bounded amount, whatever it is: `-f /dev/zero` would
//! otherwise read until memory runs out, and input nested tens of thousands of levels deep
//! would take the parsers minutes (and the recursive code after them, its stack).
//!
//! The limits live here, in one place, for every reader of user input:
//! - [`max_input_bytes`]: the size of one input (32 MiB unless `FIELDWISE_MAX_INPUT_BYTES`
//!   says otherwise; the apiserver takes at most 3 MiB in one request, so no real patch or
//!   object comes near it, while a manifest of many objects may be large);
//! - [`MAX_NESTING_DEPTH`]: how deep JSON may nest (the YAML reader applies its own bound to
//!   block nesting); no Kubernetes object comes near it.

use std::io::Read;
use std::path::Path;

use crate::local::error::{LocalError, LocalResult as Result};

/// The size of one input when `FIELDWISE_MAX_INPUT_BYTES` does not say: 32 MiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 32 * 1024 * 1024;

/// The variable that changes [`DEFAULT_MAX_INPUT_BYTES`] (a number of bytes).
pub const MAX_INPUT_BYTES_VARIABLE: &str = "FIELDWISE_MAX_INPUT_BYTES";

/// How deep JSON input may nest (arrays and objects inside each other): serde_json's own
/// recursion limit, so every value read here can also be parsed and printed.
pub const MAX_NESTING_DEPTH: usize = 128;

/// The size limit of one input, in bytes: `FIELDWISE_MAX_INPUT_BYTES`, else 32 MiB.
pub fn max_input_bytes() -> Result<u64> {
    match std::env::var(MAX_INPUT_BYTES_VARIABLE) {
        Ok(text) => text.trim().parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
            LocalError::input(format!(
                "invalid {MAX_INPUT_BYTES_VARIABLE} {text:?}: give the largest input to read, in bytes (default {DEFAULT_MAX_INPUT_BYTES})"
            ))
        }),
        Err(_) => Ok(DEFAULT_MAX_INPUT_BYTES),
    }
}

/// Reads the text of one input (`source` names it in messages: `standard input`,
/// `the file "x.yaml"`),
/// stopping at the size limit, and checks its nesting ([`check_text`]).
pub fn read_text(reader: impl Read, source: &str) -> Result<String> {
    let bytes = read_bytes(reader, source)?;
    let text = String::from_utf8(bytes).map_err(|e| {
        LocalError::input(format!(
            "{source} is not UTF-8 text (byte {} is not): give a YAML or JSON file",
            e.utf8_error().valid_up_to()
        ))
    })?;
    check_text(&text, source)?;
    Ok(text)
}

/// Reads one input file ([`read_text`]); a regular file over the limit is refused before
/// it is read.
pub fn read_file(path: &Path, source: &str) -> Result<String> {
    read_text(open_within_limit(path, source)?, source)
}

/// The bytes of one input, whatever they are (a kubeconfig in UTF-16, a token file, a
/// cache entry), read up to the size limit ([`max_input_bytes`]) and refused past it
/// before the rest is read: `--kubeconfig /dev/zero` costs one limit, not all memory.
pub fn read_bytes(reader: impl Read, source: &str) -> Result<Vec<u8>> {
    let limit = max_input_bytes()?;
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| LocalError::input(format!("{source} cannot be read: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(source, limit));
    }
    Ok(bytes)
}

/// [`read_bytes`] of a file; a regular file over the limit is refused before it is read.
pub fn read_file_bytes(path: &Path, source: &str) -> Result<Vec<u8>> {
    read_bytes(open_within_limit(path, source)?, source)
}

/// A file the plugins wrote themselves (a cache entry, a backup record, a journal marker),
/// read whole within the input limit; the system's error is kept (a caller tells a file
/// removed meanwhile, `NotFound`, from others), and a file past the limit is `InvalidData`.
pub fn read_own_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let limit = max_input_bytes().unwrap_or(DEFAULT_MAX_INPUT_BYTES);
    let too_large = || std::io::Error::new(std::io::ErrorKind::InvalidData, too_large("the file", limit).to_string());
    let file = std::fs::File::open(path)?;
    if file.metadata().is_ok_and(|m| m.is_file() && m.len() > limit) {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Opens `path` for reading, refusing a regular file larger than the limit at once.
fn open_within_limit(path: &Path, source: &str) -> Result<std::fs::File> {
    let file = std::fs::File::open(path).map_err(|e| LocalError::input(format!("{source} cannot be read: {e}")))?;
    let limit = max_input_bytes()?;
    if file.metadata().is_ok_and(|m| m.is_file() && m.len() > limit) {
        return Err(too_large(source, limit));
    }
    Ok(file)
}

/// Checks text already in memory (`-p`): its size, and how deep its JSON nests.
pub fn check_text(text: &str, source: &str) -> Result<()> {
    let limit = max_input_bytes()?;
    if text.len() as u64 > limit {
        return Err(too_large(source, limit));
    }
    if let Some((line, column)) = too_deep(text) {
        return Err(LocalError::input(format!(
            "{source} nests deeper than {MAX_NESTING_DEPTH} levels (at line {line}, column {column}); no Kubernetes object nests that deep: is it the right input?"
        )));
    }
    Ok(())
}

fn too_large(source: &str, limit: u64) -> LocalError {
    LocalError::input(format!(
        "{source} is larger than {}, the limit on one input; if it really is that large, set {MAX_INPUT_BYTES_VARIABLE} to a larger number of bytes",
        human_size(limit)
    ))
}

fn human_size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// Where JSON text (text whose first non-blank character is `{` or `[`, as kubectl tells
/// JSON from YAML) first nests deeper than [`MAX_NESTING_DEPTH`], as a line and column;
/// `None` for YAML or shallower text. One pass, whatever the depth.
fn too_deep(text: &str) -> Option<(usize, usize)> {
    if !matches!(text.trim_start().chars().next(), Some('{' | '[')) {
        return None;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let (mut line, mut column) = (1usize, 0usize);
    for c in text.chars() {
        column += 1;
        if c == '\n' {
            line += 1;
            column = 0;
        }
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => {
                depth += 1;
                if depth > MAX_NESTING_DEPTH {
                    return Some((line, column));
                }
            }
            '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_is_bounded_and_the_error_says_how_to_raise_it() {
        // /dev/zero never ends: the read stops at the limit.
        let err = read_text(std::io::repeat(0), "the file \"/dev/zero\"").unwrap_err().to_string();
        assert!(err.contains("larger than 32 MiB") && err.contains(MAX_INPUT_BYTES_VARIABLE), "{err}");
        assert_eq!(read_text(&b"a: 1\n"[..], "stdin").unwrap(), "a: 1\n");
        let err = read_text(&[0xff, 0xfe][..], "stdin").unwrap_err().to_string();
        assert!(err.contains("not UTF-8"), "{err}");
    }

    #[test]
    fn files_read_whole_stop_at_the_limit_whatever_they_are() {
        // A device that never ends (`--kubeconfig /dev/zero`) and a file of our own.
        let err = read_file_bytes(Path::new("/dev/zero"), "the file").unwrap_err().to_string();
        assert!(err.contains("the file is larger than 32 MiB"), "{err}");
        let err = read_own_file(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData, "{err}");
        let missing = read_own_file(Path::new("/nonexistent/fieldwise")).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound, "a file removed meanwhile is told apart");
        let dir = std::env::temp_dir().join(format!("fw-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("small"), b"ok").unwrap();
        assert_eq!(read_own_file(&dir.join("small")).unwrap(), b"ok");
        assert_eq!(read_file_bytes(&dir.join("small"), "the file").unwrap(), b"ok");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn json_nesting_is_bounded_in_one_pass() {
        let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        assert!(check_text(&deep(MAX_NESTING_DEPTH), "-p").is_ok());
        let err = check_text(&deep(MAX_NESTING_DEPTH + 1), "-p").unwrap_err().to_string();
        assert!(err.contains("nests deeper than 128 levels (at line 1, column 129)"), "{err}");
        let started = std::time::Instant::now();
        let huge = format!("{}1{}", "{\"a\":".repeat(1_000_000), "}".repeat(1_000_000));
        assert!(check_text(&huge, "the patch from deep.json").is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "linear: {:?}", started.elapsed());
        // Brackets in strings do not count, nor YAML's (whose block nesting the YAML reader bounds).
        let strings = format!("{{\"a\": \"{}\\\"\"}}", "[".repeat(500));
        assert!(check_text(&strings, "-p").is_ok());
        assert!(check_text(&format!("command: {}\n", "[".repeat(500)), "-p").is_ok());
    }
}
