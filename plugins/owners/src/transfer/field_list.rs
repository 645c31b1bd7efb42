//! A set of field paths as a transfer's output lists them: shortened for people (the preview
//! and the next-apply check name the same sets, so they shorten them the same way), whole in
//! the JSON document. Field paths only, never values: the object may be a Secret.

use fieldwise_core::fieldpath::{Path, Set};
use serde_json::Value;

/// How many fields a list shows before "and N more" (the JSON output has them all).
pub const SHOWN: usize = 8;

/// Up to [`SHOWN`] paths of a set, comma-separated.
pub fn fields_text(set: &Set) -> String {
    paths_text(&set.paths())
}

fn paths_text(paths: &[Path]) -> String {
    let mut text = paths.iter().take(SHOWN).map(Path::to_string).collect::<Vec<_>>().join(", ");
    if paths.len() > SHOWN {
        text.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    text
}

/// Every path of a set, as JSON strings.
pub fn fields_json(set: &Set) -> Value {
    set.paths().iter().map(|p| Value::String(p.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_is_cut_for_people_and_whole_in_json() {
        let many: Set = (0..10).map(|i| Path::fields(["data", &format!("k{i}")])).collect();
        assert!(fields_text(&many).ends_with(".data.k7 and 2 more"), "{}", fields_text(&many));
        assert_eq!(fields_json(&many).as_array().map(Vec::len), Some(10));
    }
}
