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

/// The known upstream bugs.
pub const KNOWN_BUGS: &[KnownBug] = &[KnownBug {
    id: "strategic-random-key-order",
    doc: "docs/strategic-deviations.md",
    matches: strategic_random_key_order,
}];

/// Most pairs of `F` / `$deleteFromPrimitiveList/F` keys whose orders are tried.
const MAX_ORDERED_PAIRS: usize = 8;

/// `strategic.apply` on a patch object holding both `F` and
/// `$deleteFromPrimitiveList/F`: upstream handles the two keys in Go's random
/// map order, and the order changes the result. The disagreement is this bug
/// when Rust, given the same patch with some of those pairs in the other
/// order, answers exactly what upstream answered.
fn strategic_random_key_order(op: &str, case: &Value, _rust: &Outcome, upstream: &Outcome) -> bool {
    use crate::outcome::{judge, Compare, Verdict};
    use fieldwise_core::schema::builtin;
    if op != "strategic.apply" {
        return false;
    }
    let Some(ty) = crate::cases::gvk_of(case).and_then(|g| builtin().root(&g)) else { return false };
    let pairs = count_ordered_pairs(&case["patch"]);
    if pairs == 0 || pairs > MAX_ORDERED_PAIRS {
        return false;
    }
    (1u32..1 << pairs).any(|flips| {
        let mut patch = case["patch"].clone();
        swap_ordered_pairs(&mut patch, flips, &mut 0);
        let outcome = match fieldwise_core::strategic::apply(&case["original"], &patch, builtin(), ty) {
            Ok(value) => Outcome::Accepted(value),
            Err(e) => Outcome::Rejected(e.to_string()),
        };
        judge(&outcome, upstream, Compare::Json) == Verdict::Identical
    })
}

const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// The objects' keys `F` that have a `$deleteFromPrimitiveList/F` beside them, anywhere in `value`.
fn count_ordered_pairs(value: &Value) -> usize {
    match value {
        Value::Object(map) => {
            let here = map
                .keys()
                .filter(|k| k.strip_prefix(DELETE_FROM_PRIMITIVE_LIST).is_some_and(|f| map.contains_key(f)))
                .count();
            here + map.values().map(count_ordered_pairs).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_ordered_pairs).sum(),
        _ => 0,
    }
}

/// Swaps the positions of the pairs counted by [`count_ordered_pairs`] whose bit is set in `flips`.
fn swap_ordered_pairs(value: &mut Value, flips: u32, next: &mut usize) {
    match value {
        Value::Object(map) => {
            let keys: Vec<String> = map
                .keys()
                .filter(|k| k.strip_prefix(DELETE_FROM_PRIMITIVE_LIST).is_some_and(|f| map.contains_key(f)))
                .cloned()
                .collect();
            let first = *next;
            *next += keys.len();
            map.values_mut().for_each(|v| swap_ordered_pairs(v, flips, next));
            let mut entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
            for (bit, key) in (first..).zip(keys) {
                if flips & (1 << bit) == 0 {
                    continue;
                }
                let field = &key[DELETE_FROM_PRIMITIVE_LIST.len()..];
                let a = entries.iter().position(|(k, _)| *k == key);
                let b = entries.iter().position(|(k, _)| k == field);
                if let (Some(a), Some(b)) = (a, b) {
                    entries.swap(a, b);
                }
            }
            *map = entries.into_iter().collect();
        }
        Value::Array(items) => items.iter_mut().for_each(|v| swap_ordered_pairs(v, flips, next)),
        _ => {}
    }
}

/// Whether `bug` is documented where it says.
pub fn documented(bug: &KnownBug) -> bool {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(bug.doc);
    std::fs::read_to_string(path).is_ok_and(|text| text.contains(bug.id))
}

/// The documented known bug a disagreement is an instance of, if any.
pub fn classify(op: &str, case: &Value, rust: &Outcome, upstream: &Outcome) -> Option<&'static KnownBug> {
    KNOWN_BUGS.iter().find(|bug| (bug.matches)(op, case, rust, upstream) && documented(bug))
}
