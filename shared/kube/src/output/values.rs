//! Values on one line, for the cells of a table: one canonical text per value (map keys
//! sorted at every level, so a map prints alike whichever order its writer used), and two
//! values side by side (a conflict's live value and yours) with their common part elided
//! around the first difference, so the difference stays visible on both sides however long
//! the values are (`…ate-metrics:v2.10.0` against `…ate-metrics:v2.13.0`).
//!
//! Secret values are hidden before they get here ([`crate::redact`]): these functions only
//! lay out what may be printed.
//!
//! ```
//! use fieldwise_kube::output::values::{contrast, one_line};
//! use serde_json::json;
//!
//! assert_eq!(one_line(&json!({"b": 1, "a": {"d": 2, "c": 3}})), r#"{"a":{"c":3,"d":2},"b":1}"#);
//! let live = "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.10.0";
//! let yours = "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0";
//! assert_eq!(contrast(live, yours), ("…kube-state-metrics:v2.10.0".into(), "…kube-state-metrics:v2.13.0".into()));
//! ```

use serde_json::{Map, Value};

/// The widest value a table cell shows in full; longer ones are elided with `…`.
pub const CELL_WIDTH: usize = 40;

/// Characters kept before the first difference when the common prefix is elided.
const CONTEXT_BEFORE: usize = 20;

/// Characters kept after the difference when the common suffix is elided.
const CONTEXT_AFTER: usize = 10;

/// The mark of an elided part.
const ELLIPSIS: char = '…';

/// A scalar (or an empty container) as YAML writes it on one line; multi-line strings
/// are JSON-quoted.
pub fn scalar(value: &Value) -> String {
    match value {
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        Value::String(s) if s.contains('\n') => value.to_string(),
        other => {
            let text = fieldwise_core::yaml::to_yaml(other);
            if text.trim_end().contains('\n') {
                other.to_string()
            } else {
                text.trim_end().to_string()
            }
        }
    }
}

/// A value on one line: scalars as YAML writes them, containers as compact JSON with the
/// keys of every map sorted.
pub fn one_line(value: &Value) -> String {
    match value {
        Value::Object(m) if !m.is_empty() => sorted(value).to_string(),
        Value::Array(a) if !a.is_empty() => sorted(value).to_string(),
        other => scalar(other),
    }
}

/// `value` with the keys of every map in sorted order (the order JSON then prints them in).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&map[k]))).collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// `text` in at most [`CELL_WIDTH`] characters, its end elided with `…`.
pub fn cut(text: &str) -> String {
    cut_to(text, CELL_WIDTH)
}

fn cut_to(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push(ELLIPSIS);
    out
}

/// Two texts for side-by-side cells (a conflict's live value and yours): both in full when
/// both fit [`CELL_WIDTH`]; otherwise the prefix and suffix they share are elided with `…`,
/// keeping a little of each around the first difference, and what is left is cut to the
/// width, so each cell shows where the two differ.
pub fn contrast(left: &str, right: &str) -> (String, String) {
    let (a, b): (Vec<char>, Vec<char>) = (left.chars().collect(), right.chars().collect());
    if (a.len() <= CELL_WIDTH && b.len() <= CELL_WIDTH) || a == b {
        return (cut(left), cut(right));
    }
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let room = a.len().min(b.len()) - prefix;
    let suffix = a.iter().rev().zip(b.iter().rev()).take(room).take_while(|(x, y)| x == y).count();
    let start = if prefix > CONTEXT_BEFORE + 1 { word_start(&a, prefix - CONTEXT_BEFORE) } else { 0 };
    let keep_after = if suffix > CONTEXT_AFTER + 1 { CONTEXT_AFTER } else { suffix };
    let side = |chars: &[char]| {
        let end = chars.len() - suffix + keep_after;
        let mut out = String::new();
        if start > 0 {
            out.push(ELLIPSIS);
        }
        out.extend(&chars[start..end]);
        if end < chars.len() {
            out.push(ELLIPSIS);
        }
        cut_to(&out, CELL_WIDTH)
    };
    (side(&a), side(&b))
}

/// How far back the elided prefix may end earlier, to start the kept part at a word.
const WORD_LOOKBACK: usize = 8;

/// `start`, or a little before it where a word starts (after `/`, `:`, `.`, `-`, ...), so the
/// kept part reads `…kube-state-metrics:v2.1`, not `…e-state-metrics:v2.1`.
fn word_start(chars: &[char], start: usize) -> usize {
    let separator = |c: char| "/:.,-_=@\"'{[ ".contains(c);
    (0..=WORD_LOOKBACK.min(start))
        .map(|back| start - back)
        .find(|&at| at == 0 || separator(chars[at - 1]))
        .unwrap_or(start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_values_are_shown_in_full() {
        assert_eq!(contrast("busybox:1.36", "busybox:1.37"), ("busybox:1.36".into(), "busybox:1.37".into()));
        assert_eq!(contrast("3", "unset"), ("3".into(), "unset".into()));
    }

    #[test]
    fn long_images_differing_near_the_end_show_the_difference_on_both_sides() {
        let live = "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.10.0";
        let yours = "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0";
        let (l, y) = contrast(live, yours);
        assert_eq!((l.as_str(), y.as_str()), ("…kube-state-metrics:v2.10.0", "…kube-state-metrics:v2.13.0"));
    }

    #[test]
    fn a_long_common_suffix_is_elided_after_the_difference() {
        let live = format!("a{}", "x".repeat(60));
        let yours = format!("b{}", "x".repeat(60));
        assert_eq!(contrast(&live, &yours), ("axxxxxxxxxx…".into(), "bxxxxxxxxxx…".into()));
    }

    #[test]
    fn a_long_difference_is_cut_to_the_cell_width_after_the_kept_prefix() {
        let live = format!("{}{}", "p".repeat(30), "a".repeat(50));
        let yours = format!("{}{}", "p".repeat(30), "b".repeat(50));
        let (l, y) = contrast(&live, &yours);
        assert_eq!(l, format!("…{}{}…", "p".repeat(20), "a".repeat(18)));
        assert_eq!(y, format!("…{}{}…", "p".repeat(20), "b".repeat(18)));
        assert_eq!(l.chars().count(), CELL_WIDTH);
    }

    #[test]
    fn one_value_longer_than_the_other_keeps_its_extra_part_visible() {
        let live = "registry.example.com/team/app";
        let yours = "registry.example.com/team/app@sha256:0123456789abcdef";
        assert_eq!(
            contrast(live, yours),
            ("…example.com/team/app".into(), "…example.com/team/app@sha256:0123456789…".into())
        );
    }

    #[test]
    fn maps_print_with_their_keys_sorted_whatever_their_order() {
        let live: Value = serde_json::from_str(r#"{"memory":"64Mi","cpu":"100m"}"#).unwrap();
        let yours: Value = serde_json::from_str(r#"{"cpu":"100m","memory":"128Mi"}"#).unwrap();
        assert_eq!(one_line(&live), r#"{"cpu":"100m","memory":"64Mi"}"#);
        assert_eq!(one_line(&yours), r#"{"cpu":"100m","memory":"128Mi"}"#);
        let nested = json!([{"b": {"z": 1, "y": 2}, "a": 0}]);
        assert_eq!(one_line(&nested), r#"[{"a":0,"b":{"y":2,"z":1}}]"#);
    }

    #[test]
    fn scalars_print_as_yaml_and_multi_line_strings_quoted() {
        assert_eq!(one_line(&json!("a: b")), "'a: b'");
        assert_eq!(one_line(&json!("multi\nline")), "\"multi\\nline\"");
        assert_eq!(one_line(&json!(3)), "3");
        assert_eq!(one_line(&json!({})), "{}");
        assert_eq!(cut(&"x".repeat(50)), format!("{}…", "x".repeat(39)));
    }
}
