//! The Go oracle process (`tests/oracle`): cases go in as JSON lines, results
//! come out one line per case, in order.

use serde_json::Value;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A running oracle.
pub struct Oracle {
    child: Child,
    stdin: Option<BufWriter<ChildStdin>>,
    stdout: BufReader<ChildStdout>,
    path: PathBuf,
}

/// Finds the oracle binary: `$FIELDWISE_ORACLE`, else whatever
/// `scripts/build-oracle` builds. The error says what to do.
pub fn locate() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("FIELDWISE_ORACLE").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/build-oracle");
    let output = Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}; set FIELDWISE_ORACLE to a built oracle", script.display()))?;
    if !output.status.success() {
        return Err(format!(
            "{} failed ({}); the differential tests need the Go oracle: install Go 1.24+ or set FIELDWISE_ORACLE",
            script.display(),
            output.status
        ));
    }
    let path = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if path.is_empty() {
        return Err(format!("{} printed no path", script.display()));
    }
    Ok(PathBuf::from(path))
}

impl Oracle {
    /// Starts the oracle found by [`locate`].
    pub fn start() -> Result<Self, String> {
        let path = locate()?;
        let mut child = Command::new(&path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start the oracle {}: {e}", path.display()))?;
        let stdin = child.stdin.take().map(BufWriter::new);
        let stdout = child.stdout.take().map(BufReader::new).ok_or("oracle has no stdout")?;
        Ok(Oracle { child, stdin, stdout, path })
    }

    /// Answers every case, in order. Writing happens on a second thread so
    /// that neither side blocks on a full pipe and Go and Rust work in parallel.
    pub fn ask_all(&mut self, cases: &[Value]) -> Result<Vec<Value>, String> {
        let stdin = self.stdin.as_mut().ok_or("oracle stdin is closed")?;
        let stdout = &mut self.stdout;
        std::thread::scope(|scope| {
            let writer = scope.spawn(move || -> std::io::Result<()> {
                for case in cases {
                    serde_json::to_writer(&mut *stdin, case)?;
                    stdin.write_all(b"\n")?;
                }
                stdin.flush()
            });
            let mut answers = Vec::with_capacity(cases.len());
            let mut line = String::new();
            for _ in cases {
                line.clear();
                let read = stdout.read_line(&mut line).map_err(|e| format!("reading the oracle: {e}"))?;
                if read == 0 {
                    return Err(format!("the oracle {} exited early", self.path.display()));
                }
                let answer =
                    serde_json::from_str(&line).map_err(|e| format!("oracle answered non-JSON {line:?}: {e}"))?;
                answers.push(answer);
            }
            match writer.join() {
                Ok(Ok(())) => Ok(answers),
                Ok(Err(e)) => Err(format!("writing to the oracle: {e}")),
                Err(_) => Err("the oracle writer thread panicked".into()),
            }
        })
    }

    /// Answers one case.
    pub fn ask(&mut self, case: &Value) -> Result<Value, String> {
        self.ask_all(std::slice::from_ref(case))?.pop().ok_or_else(|| "no answer".into())
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        drop(self.stdin.take()); // end of input: the oracle exits
        let _ = self.child.wait();
    }
}
