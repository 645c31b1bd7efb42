//! SARIF logs checked against the OASIS SARIF 2.1.0 JSON schema by a real JSON Schema validator:
//! the Go program in `tests/sarif` (santhosh-tekuri/jsonschema, formats asserted), built once
//! per test process with `go build`, on the schema `scripts/fetch-test-data` puts under `target/test-data/sarif/`
//! (from a package registry; never committed). Without the schema the check fails, never
//! skips: a SARIF test that was asked to run never passes without having validated.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use crate::{text, workspace_root};

/// Where `scripts/fetch-test-data` puts the schema.
pub fn schema_path() -> PathBuf {
    workspace_root().join("target/test-data/sarif/sarif-schema-2.1.0.json")
}

/// Validates `log` (a SARIF document's bytes): `Ok(())` when the schema accepts it, else
/// the validator's errors (each with the JSON pointer of the value refused). Panics when
/// the schema is missing or the validator cannot run.
pub fn validate(log: &[u8]) -> Result<(), String> {
    let schema = schema_path();
    assert!(
        schema.is_file(),
        "the SARIF 2.1.0 schema is not fetched yet at {}: run scripts/fetch-test-data (scripts/test does)",
        schema.display()
    );
    let validator = validator();
    let file = tempfile_in(validator.parent().expect("the validator's directory"));
    std::fs::write(&file, log).expect("write the SARIF log");
    let out = Command::new(validator)
        .arg(&schema)
        .arg(&file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", validator.display()));
    let _ = std::fs::remove_file(&file);
    match out.status.code() {
        Some(0) => Ok(()),
        Some(1) => Err(text(&out.stderr)),
        _ => panic!("the SARIF validator failed to run: {}{}", text(&out.stdout), text(&out.stderr)),
    }
}

/// The validator, built from `tests/sarif` on first use (Go's build cache makes it quick).
fn validator() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("fw-sarif-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let binary = dir.join("sarif-validate");
        let out = Command::new("go")
            .args(["build", "-o"])
            .arg(&binary)
            .arg(".")
            .current_dir(workspace_root().join("tests/sarif"))
            .output()
            .unwrap_or_else(|e| panic!("cannot run `go build` in tests/sarif (Go is required): {e}"));
        assert!(out.status.success(), "go build in tests/sarif failed: {}", text(&out.stderr));
        binary
    })
}

/// A file name in `dir` no other validation of this process uses.
fn tempfile_in(dir: &std::path::Path) -> PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    dir.join(format!("log-{}.sarif", NEXT.fetch_add(1, Ordering::Relaxed)))
}
