//! An editor session the way `kubectl edit` runs one, without its temporary-file traps.
//!
//! The object being edited may be a Secret, so the file that holds it is private:
//! a directory made fresh for the session (a random name, created exclusively, mode
//! 0700) inside `$TMPDIR`, holding one file created exclusively (`create_new`, mode
//! 0600). Nothing at a predictable path is ever opened, so a file another local user
//! created in advance is never reused. The directory is removed when the session ends,
//! on every return and error path ([`EditSession`]'s `Drop`), and when a signal (SIGINT,
//! SIGTERM, SIGHUP) ends the process while the editor is open
//! ([`crate::local::private_fs::RemovedAtExit`]); only when an edit is not
//! valid YAML is the user's text kept (in the session's private directory), its path
//! and the parse error's line and column printed, and, on a terminal, the editor
//! re-opened on that text, as kubectl edit does.
//!
//! A Secret is edited as it is shown ([`crate::redact::redact`]): its values are
//! `*** (N bytes)` placeholders, their copies elsewhere (a label, the last-applied annotation)
//! `***`, so no value is ever written to the file; the edit is merged back onto the live
//! object ([`crate::redact::restore`]): a placeholder kept means "unchanged", a replaced one is
//! the new value, a placeholder beside new text is refused. Only `show_secrets`
//! (`--show-secrets`) puts the values in clear in the file.
//!
//! A process killed with SIGKILL removes nothing: the next session removes such leftovers
//! first ([`stale`]).
//!
//! ```no_run
//! use fieldwise_kube::cli::edit::{edit_object, Edited};
//! use serde_json::json;
//!
//! let live = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}});
//! let on_a_terminal = std::io::IsTerminal::is_terminal(&std::io::stdin());
//! match edit_object(&live, "configmap/x", on_a_terminal, false)? {
//!     Edited::Changed(new) => println!("{new}"),
//!     Edited::Unchanged => println!("Edit cancelled, no changes made."),
//! }
//! # Ok::<(), fieldwise_kube::Error>(())
//! ```

use std::collections::hash_map::RandomState;
use std::fs::DirBuilder;
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::local::private_fs::RemovedAtExit;
use crate::output::printer;

pub mod stale;

/// The name of the file inside the session's private directory (the directory's name is the random part).
const FILE_NAME: &str = "edit.yaml";

/// How many fresh directory names are tried before giving up (a collision means someone made one).
const ATTEMPTS: u32 = 16;

/// One private file for one edit; the directory and the file go away on drop unless [`EditSession::keep`].
#[derive(Debug)]
pub struct EditSession {
    dir: PathBuf,
    file: PathBuf,
    keep: bool,
    /// Removes the directory if a signal ends the process during the session.
    _at_exit: RemovedAtExit,
}

impl EditSession {
    /// Makes a fresh private directory in `std::env::temp_dir()` (`$TMPDIR`) and a file in it
    /// holding `text`, then removes the stale directories of earlier sessions ([`stale`]).
    pub fn create(text: &str) -> Result<Self> {
        let base = std::env::temp_dir();
        let mut last_error = None;
        for _ in 0..ATTEMPTS {
            let dir = base.join(stale::session_name(&random_suffix()));
            // Exclusive, so not private_fs::create_dirs (which accepts an existing directory):
            // a directory someone made in advance is an error, never reused.
            // Unix modes where there are any (Windows: the user's temp directory's ACL applies).
            #[cfg_attr(not(unix), allow(unused_mut))]
            let mut builder = DirBuilder::new();
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            match builder.create(&dir) {
                Ok(()) => {
                    let at_exit = RemovedAtExit::register(&dir);
                    let session = EditSession { file: dir.join(FILE_NAME), dir, keep: false, _at_exit: at_exit };
                    #[cfg(unix)]
                    {
                        use std::os::unix::fs::PermissionsExt;
                        std::fs::set_permissions(&session.dir, std::fs::Permissions::from_mode(0o700))
                            .map_err(|e| io_error("cannot make private", &session.dir, e))?;
                    }
                    session.write_new(text)?;
                    stale::remove_stale(&base, &session.dir);
                    return Ok(session);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last_error = Some(e),
                Err(e) => return Err(io_error("cannot create a private directory in", &base, e)),
            }
        }
        Err(io_error(
            "cannot create a fresh private directory in",
            &base,
            last_error.unwrap_or_else(|| std::io::Error::other("name collisions")),
        ))
    }

    /// The file the editor opens.
    pub fn path(&self) -> &Path {
        &self.file
    }

    /// The private directory holding the file.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn write_new(&self, text: &str) -> Result<()> {
        let mut file = crate::local::private_fs::create_file(&self.file, true)
            .map_err(|e| io_error("cannot create", &self.file, e))?;
        file.write_all(text.as_bytes()).map_err(|e| io_error("cannot write", &self.file, e))
    }

    /// Replaces the file's text (for re-opening the editor on a failed edit): the old
    /// file is removed and a new one created exclusively, so an editor that replaced
    /// it with a link cannot redirect the write.
    pub fn rewrite(&self, text: &str) -> Result<()> {
        std::fs::remove_file(&self.file).map_err(|e| io_error("cannot replace", &self.file, e))?;
        self.write_new(text)
    }

    /// Runs `$KUBE_EDITOR`, else `$EDITOR`, else `vi` on the file, and returns what it saved.
    pub fn run_editor(&self) -> Result<String> {
        let editor = editor_command();
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{editor} \"$1\""))
            .arg("editor")
            .arg(&self.file)
            .status()
            .map_err(|e| Error::Program { command: editor.clone(), start_error: Some(e), status: None })?;
        if !status.success() {
            return Err(Error::Program { command: editor, start_error: None, status: Some(status) });
        }
        Ok(crate::local::input::read_file(&self.file, &format!("the edited file \"{}\"", self.file.display()))?)
    }

    /// Keeps the directory and the file when the session ends, and returns the file's path.
    /// The directory is marked kept, so later sessions leave it for a while ([`stale`]).
    pub fn keep(mut self) -> PathBuf {
        self.keep = true;
        let _ = crate::local::private_fs::create_file(&self.dir.join(stale::KEPT_MARKER), true);
        self.file.clone()
    }
}

impl Drop for EditSession {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The editor command: `$KUBE_EDITOR`, `$EDITOR`, else `vi` (as kubectl).
pub fn editor_command() -> String {
    ["KUBE_EDITOR", "EDITOR"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".into())
}

fn random_suffix() -> String {
    // RandomState is seeded from the OS's randomness per process; mix in time and pid.
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    format!("{:016x}", hasher.finish())
}

fn io_error(what: &str, path: &Path, err: std::io::Error) -> Error {
    Error::local_io(what.trim_start_matches("cannot "), path, err)
}

/// The result of an edit.
#[derive(Debug, Clone, PartialEq)]
pub enum Edited {
    /// The user saved a different object.
    Changed(Value),
    /// The user saved the object unchanged (or emptied the file): nothing to do.
    Unchanged,
}

/// Where an edited text is not valid YAML: line and column (from 1) and the parser's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseFailure {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What the parser said, first line only.
    pub message: String,
}

/// Parses an edited text as `kubectl edit` reads it back (YAML 1.1, see
/// [`fieldwise_core::yaml::read_stream`]); an empty document (every line removed)
/// means "cancel", and more than one document is refused.
pub fn parse_edit(text: &str) -> std::result::Result<Option<Value>, ParseFailure> {
    let mut documents = fieldwise_core::yaml::read_stream(text).map_err(|e| ParseFailure {
        line: e.line,
        column: e.column,
        message: e.problem.clone(),
    })?;
    match documents.len() {
        0 => Ok(None),
        1 => Ok(documents.pop().map(|d| d.value)),
        _ => Err(ParseFailure {
            line: documents[1].line,
            column: 1,
            message: "a second document starts here; edit the one object only".into(),
        }),
    }
}

/// Opens the editor on `live` (without server noise) as YAML and returns the edited object.
/// A Secret is edited redacted and merged back, unless `show_secrets` (see the module docs).
///
/// A text that is not valid YAML is kept in the session's private file: when
/// `interactive` (a terminal: the caller knows, e.g. stdin and stderr are TTYs) the
/// editor re-opens on it with the error in a header; otherwise (or when the user saves
/// the same invalid text again) the error, with line and column, and the kept file's
/// path are returned. An edit of a redacted Secret that cannot be merged back is kept too,
/// and the error names the field.
pub fn edit_object(live: &Value, display: &str, interactive: bool, show_secrets: bool) -> Result<Edited> {
    let original = crate::output::diff::without_server_noise(live);
    let redacted = !show_secrets && crate::redact::is_secret(&original);
    let mut shown = original.clone();
    if redacted {
        crate::redact::redact(&mut shown);
    }
    let mut header = format!(
        "# Editing {display}. Save and quit to preview the patch; an unchanged or empty file cancels.\n\
         # The file is private (0600 in a fresh 0700 directory) and removed when the edit ends.\n"
    );
    if redacted {
        header.push_str(
            "# Secret values are hidden: keep a `*** (N bytes)` or `***` as it is to leave that value unchanged,\n\
             # or replace it whole with the new value (base64 in data, clear in stringData); --show-secrets edits them in clear.\n",
        );
    }
    let session = EditSession::create(&format!("{header}{}", printer::yaml(&shown)?))?;
    let mut previous_failure: Option<String> = None;
    loop {
        // Line numbers count in the user's text, without the error header of a previous round.
        let text = strip_error_header(&session.run_editor()?);
        match parse_edit(&text) {
            Ok(None) => return Ok(Edited::Unchanged),
            Ok(Some(edited)) if edited == shown => return Ok(Edited::Unchanged),
            Ok(Some(edited)) if redacted => match crate::redact::restore(&original, &shown, &edited) {
                Ok(merged) if merged == original => return Ok(Edited::Unchanged),
                Ok(merged) => return Ok(Edited::Changed(merged)),
                Err(ambiguous) => {
                    let kept = session.keep();
                    return Err(Error::Usage(format!(
                        "the edit cannot be merged back: {ambiguous}; your changes are kept in {}",
                        kept.display()
                    )));
                }
            },
            Ok(Some(edited)) => return Ok(Edited::Changed(edited)),
            Err(failure) => {
                let body = text;
                let again = interactive && previous_failure.as_deref() != Some(body.as_str());
                if !again {
                    session.rewrite(&body)?;
                    let kept = session.keep();
                    return Err(Error::Usage(format!(
                        "the edited object is not valid YAML at line {}, column {}: {}; your changes are kept in {} (fix them and run the edit again)",
                        failure.line,
                        failure.column,
                        failure.message,
                        kept.display()
                    )));
                }
                eprintln!(
                    "error: the edited object is not valid YAML at line {}, column {}: {}; re-opening the editor",
                    failure.line, failure.column, failure.message
                );
                let error_header = format!(
                    "{ERROR_HEADER_START}\n# line {}, column {}: {}\n# (line numbers count from the first line after this header)\n{ERROR_HEADER_END}\n",
                    failure.line, failure.column, failure.message
                );
                session.rewrite(&format!("{error_header}{body}"))?;
                previous_failure = Some(body);
            }
        }
    }
}

const ERROR_HEADER_START: &str = "# The edit is not valid YAML:";
const ERROR_HEADER_END: &str = "# ----";

/// The user's text without the error header a previous round added.
fn strip_error_header(text: &str) -> String {
    match (text.strip_prefix(ERROR_HEADER_START), text.find(&format!("\n{ERROR_HEADER_END}\n"))) {
        (Some(_), Some(end)) => text[end + ERROR_HEADER_END.len() + 2..].to_string(),
        _ => text.to_string(),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::fs::Permissions;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn private_fresh_and_removed() {
        let session = EditSession::create("secret: value\n").unwrap();
        let (dir, file) = (session.dir().to_path_buf(), session.path().to_path_buf());
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o600);
        let other = EditSession::create("x").unwrap();
        assert_ne!(other.dir(), dir);
        drop(session);
        assert!(!dir.exists() && !file.exists());
        let kept = other.keep();
        assert!(kept.exists());
        std::fs::remove_dir_all(kept.parent().unwrap()).unwrap();
    }

    #[test]
    fn parse_errors_have_line_and_column() {
        let failure = parse_edit("a: 1\nb: [\n").unwrap_err();
        assert!(failure.line >= 2 && failure.column >= 1, "{failure:?}");
        assert!(!failure.message.contains(" at line "), "{failure:?}");
        assert_eq!(parse_edit("# only comments\n\n"), Ok(None));
        assert_eq!(parse_edit("a: 1\n"), Ok(Some(serde_json::json!({"a": 1}))));
    }

    #[test]
    fn edits_are_read_as_kubectl_edit_reads_them() {
        assert_eq!(parse_edit("data:\n  on: yes\n"), Ok(Some(serde_json::json!({"data": {"true": true}}))));
        let failure = parse_edit("a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!((failure.line, failure.column), (3, 1), "{failure:?}");
        assert!(failure.message.contains("second document"), "{failure:?}");
    }

    #[test]
    fn the_error_header_is_not_part_of_the_text() {
        let text = format!("{ERROR_HEADER_START}\n# line 1, column 1: x\n{ERROR_HEADER_END}\na: [\n");
        assert_eq!(strip_error_header(&text), "a: [\n");
        assert_eq!(strip_error_header("a: 1\n"), "a: 1\n");
    }

    /// Issue #13, problem 2, with a fake editor: the file is 0600 in a fresh 0700
    /// directory, a file pre-created at the old predictable path is not used, an
    /// invalid edit is kept with its line and column, a valid one is returned.
    #[test]
    fn a_fake_editor_sees_a_private_file_and_an_invalid_edit_is_kept() {
        let scratch = std::env::temp_dir().join(format!("fw-edit-test-{}", random_suffix()));
        std::fs::create_dir_all(&scratch).unwrap();
        let trap = std::env::temp_dir().join(format!("safe-patch-edit-{}.yaml", std::process::id()));
        std::fs::write(&trap, "").unwrap();
        std::fs::set_permissions(&trap, Permissions::from_mode(0o666)).unwrap();
        let log = scratch.join("log");
        let editor = scratch.join("editor.sh");
        let script = format!(
            "#!/bin/sh\nstat -c '%a' \"$1\" >> {log}\nstat -c '%a' \"$(dirname \"$1\")\" >> {log}\necho \"$1\" >> {log}\n$EDIT_ACTION \"$1\"\n",
            log = log.display()
        );
        std::fs::write(&editor, script).unwrap();
        std::fs::set_permissions(&editor, Permissions::from_mode(0o755)).unwrap();
        std::env::set_var("KUBE_EDITOR", &editor);
        let live = serde_json::json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "managedFields": []},
            "data": {"pw": "aHVudGVyMg=="}});

        std::env::set_var("EDIT_ACTION", "sed -i s/aHVudGVyMg==/bmV3/");
        let edited = edit_object(&live, "secret/s", false, true).unwrap();
        assert_eq!(
            edited,
            Edited::Changed(serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s"}, "data": {"pw": "bmV3"}}))
        );
        std::env::set_var("EDIT_ACTION", "true");
        assert_eq!(edit_object(&live, "secret/s", false, true).unwrap(), Edited::Unchanged);
        std::env::set_var("EDIT_ACTION", "sed -i $a\\data:\\x20[");
        let err = edit_object(&live, "secret/s", false, true).unwrap_err().to_string();

        let logged = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<&str> = logged.lines().collect();
        assert_eq!(lines.len(), 9, "{logged}");
        for round in lines.chunks(3) {
            assert_eq!(&round[..2], ["600", "700"], "{logged}");
            assert_ne!(Path::new(round[2]), trap.as_path());
            assert!(!Path::new(round[2]).exists() || round[2] == lines[8], "{logged}");
        }
        assert_eq!(std::fs::read_to_string(&trap).unwrap(), "", "the pre-created file was used");
        let kept = lines[8];
        assert!(err.contains(kept) && err.contains("line ") && err.contains("column "), "{err}");
        assert!(std::fs::read_to_string(kept).unwrap().contains("data: ["));
        std::fs::remove_dir_all(Path::new(kept).parent().unwrap()).unwrap();
        std::fs::remove_file(&trap).unwrap();

        // Issue #44, point 6: without --show-secrets a Secret is edited redacted (no value in the
        // file the editor gets, the label copying one included) and merged back.
        let live = serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "labels": {"copy": "hunter22"}}, "data": {"pw": "aHVudGVyMjI=", "user": "YWRtaW4="}});
        let seen = scratch.join("seen.yaml");
        let action = scratch.join("redacted-action.sh");
        std::fs::write(
            &action,
            format!("#!/bin/sh\ncp \"$1\" {}\nsed -i 's/^  user: .*$/  user: bmV3/' \"$1\"\n", seen.display()),
        )
        .unwrap();
        std::fs::set_permissions(&action, Permissions::from_mode(0o755)).unwrap();
        std::env::set_var("EDIT_ACTION", &action);
        let edited = edit_object(&live, "secret/s", false, false).unwrap();
        let given = std::fs::read_to_string(&seen).unwrap();
        assert!(!given.contains("hunter22") && !given.contains("aHVudGVyMjI") && !given.contains("YWRtaW4"), "{given}");
        assert!(given.contains("*** (8 bytes)") && given.contains("copy: '***'"), "{given}");
        let mut expected = live.clone();
        expected["data"]["user"] = "bmV3".into();
        assert_eq!(edited, Edited::Changed(expected));
        std::fs::remove_dir_all(&scratch).unwrap();
    }
}
