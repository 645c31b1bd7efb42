//! Upstream bugs fieldwise differs from on purpose.
//!
//! A disagreement with the oracle is a failure unless it matches an entry here
//! AND the entry's id is written in the document under `docs/` it names: a
//! deliberate difference is one our users can read about. Entries whose
//! document does not mention them are ignored (the disagreement fails).

use crate::outcome::Outcome;
use serde_json::Value;
use std::path::Path;

/// One upstream behaviour we do not copy.
pub struct KnownBug {
    /// Stable id, quoted in the document.
    pub id: &'static str,
    /// The document under the repository root that explains it, e.g. `docs/upstream-bugs.md`.
    pub doc: &'static str,
    /// Whether a disagreement on this case (op, case, Rust answer, upstream answer) is this bug.
    pub matches: fn(&str, &Value, &Outcome, &Outcome) -> bool,
}

/// The known upstream bugs. Empty until one is documented.
pub const KNOWN_BUGS: &[KnownBug] = &[];

/// Whether `bug` is documented where it says.
pub fn documented(bug: &KnownBug) -> bool {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(bug.doc);
    std::fs::read_to_string(path).is_ok_and(|text| text.contains(bug.id))
}

/// The documented known bug a disagreement is an instance of, if any.
pub fn classify(op: &str, case: &Value, rust: &Outcome, upstream: &Outcome) -> Option<&'static KnownBug> {
    KNOWN_BUGS.iter().find(|bug| (bug.matches)(op, case, rust, upstream) && documented(bug))
}
