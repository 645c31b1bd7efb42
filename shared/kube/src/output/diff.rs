//! Colored, unified diffs of two objects as YAML, the way `kubectl diff`
//! shows them, with the fields only the server changes left out and Secret
//! values hidden unless asked for.

use colored::Colorize;
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use fieldwise_core::ownership::diff_view;

use crate::output::printer;
use crate::redact::{is_secret, REDACTED};

/// Removes what every write changes and nobody asked for: managedFields,
/// resourceVersion, generation (the core's one list of server-set metadata,
/// [`fieldwise_core::ownership::server_owned`]). Keeps everything a user could have meant.
pub use fieldwise_core::ownership::without_write_noise as without_server_noise;

/// The one human diff every command shows: `old` and `new` as YAML, the server-set metadata
/// left out, Secret values hidden unless `show_secrets`, colored on a terminal only; `None`
/// when nothing a user would see differs. Plugins call this, never the parts below, so every
/// diff hides and colors the same way.
pub fn human(old_label: &str, new_label: &str, old: &Value, new: &Value, show_secrets: bool) -> Option<String> {
    let (old, new) = (without_server_noise(old), without_server_noise(new));
    let (old, new) = if show_secrets { (old, new) } else { redact_pair(&old, &new) };
    unified(old_label, new_label, &old, &new, colored::control::SHOULD_COLORIZE.should_colorize())
}

/// [`human`] of a change that sets `metadata.managedFields` itself (a patch of them, an
/// ownership transfer, the undo of one): the managers are the change, so they are shown
/// ([`fieldwise_core::ownership::written_managers`]); the rest is hidden as [`human`] hides it.
pub fn human_with_managers(
    old_label: &str,
    new_label: &str,
    old: &Value,
    new: &Value,
    show_secrets: bool,
) -> Option<String> {
    let (old, new) = (diff_view(old, true), diff_view(new, true));
    let (old, new) = if show_secrets { (old, new) } else { redact_pair(&old, &new) };
    unified(old_label, new_label, &old, &new, colored::control::SHOULD_COLORIZE.should_colorize())
}

/// Hides Secret values on both sides, keeping changes visible: on the new side a
/// changed value shows as `*** (changed)`; everything else is `*** (N bytes)`.
/// ConfigMaps and other kinds are shown as they are.
fn redact_pair(old: &Value, new: &Value) -> (Value, Value) {
    // Values the change itself writes were never read from a server: known from here on, so
    // the scrub of the diff text masks them wherever else they appear (a label `v-***`).
    crate::redact::remember(old);
    crate::redact::remember(new);
    let (mut old_shown, mut new_shown) = (old.clone(), new.clone());
    if !is_secret(old) && !is_secret(new) {
        return (old_shown, new_shown);
    }
    crate::redact::redact(&mut old_shown);
    crate::redact::redact(&mut new_shown);
    for field in ["data", "stringData"] {
        mark_changed(&mut new_shown, new, old, field);
    }
    (old_shown, new_shown)
}

fn mark_changed(shown: &mut Value, original: &Value, other: &Value, field: &str) {
    let Some(Value::Object(map)) = shown.get_mut(field) else { return };
    for (key, value) in map.iter_mut() {
        if original.get(field).and_then(|m| m.get(key)) != other.get(field).and_then(|m| m.get(key)) {
            *value = Value::String(format!("{REDACTED} (changed)"));
        }
    }
}

/// A unified diff of `old` and `new` rendered as YAML; `None` when they render the same.
/// The text goes through the redaction boundary ([`crate::redact::scrub`]).
fn unified(old_label: &str, new_label: &str, old: &Value, new: &Value, color: bool) -> Option<String> {
    let old_text = printer::yaml(old).unwrap_or_default();
    let new_text = printer::yaml(new).unwrap_or_default();
    if old_text == new_text {
        return None;
    }
    let diff = TextDiff::from_lines(&old_text, &new_text);
    let mut out = String::new();
    let header = format!("--- {old_label}\n+++ {new_label}\n");
    out.push_str(&if color { header.bold().to_string() } else { header });
    for group in diff.grouped_ops(3) {
        let first = &group[0];
        let last = &group[group.len() - 1];
        let hunk = format!(
            "@@ -{},{} +{},{} @@\n",
            first.old_range().start + 1,
            last.old_range().end - first.old_range().start,
            first.new_range().start + 1,
            last.new_range().end - first.new_range().start
        );
        out.push_str(&if color { hunk.cyan().to_string() } else { hunk });
        for op in &group {
            for change in diff.iter_changes(op) {
                let (sign, text) = match change.tag() {
                    ChangeTag::Delete => ("-", change.value()),
                    ChangeTag::Insert => ("+", change.value()),
                    ChangeTag::Equal => (" ", change.value()),
                };
                let line = format!("{sign}{text}");
                let line = if line.ends_with('\n') { line } else { format!("{line}\n") };
                out.push_str(&match (color, change.tag()) {
                    (true, ChangeTag::Delete) => line.red().to_string(),
                    (true, ChangeTag::Insert) => line.green().to_string(),
                    _ => line,
                });
            }
        }
    }
    Some(crate::redact::scrub(&out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shows_only_the_changed_lines_with_context() {
        let old = json!({"spec": {"replicas": 1, "paused": false}});
        let new = json!({"spec": {"replicas": 2, "paused": false}});
        let diff = unified("live", "patched", &old, &new, false).unwrap();
        assert!(diff.contains("-  replicas: 1\n+  replicas: 2\n"), "{diff}");
        assert!(unified("a", "b", &old, &old, false).is_none());
    }

    #[test]
    fn secret_values_never_appear_but_changes_do() {
        let old = json!({"apiVersion": "v1", "kind": "Secret", "data": {"password": "c2VjcmV0", "user": "YWRtaW4="}});
        let new = json!({"apiVersion": "v1", "kind": "Secret", "data": {"password": "bmV3", "user": "YWRtaW4="}});
        let (old_r, new_r) = redact_pair(&old, &new);
        let diff = unified("live", "patched", &old_r, &new_r, false).unwrap();
        assert!(!diff.contains("c2VjcmV0") && !diff.contains("bmV3") && !diff.contains("YWRtaW4="), "{diff}");
        assert!(diff.contains("+  password: '*** (changed)'"), "{diff}");
    }

    #[test]
    fn a_value_the_change_writes_is_masked_wherever_else_it_appears() {
        let old = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}});
        let new = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "labels": {"x": "v-t0ken-in-diff"}},
            "stringData": {"token": "t0ken-in-diff"}});
        let diff = human("live", "patched", &old, &new, false).unwrap();
        assert!(!diff.contains("t0ken-in-diff") && diff.contains("x: v-***"), "{diff}");
    }

    #[test]
    fn server_noise_is_left_out() {
        let v = json!({"metadata": {"name": "x", "resourceVersion": "5", "managedFields": [], "generation": 2}});
        assert_eq!(without_server_noise(&v), json!({"metadata": {"name": "x"}}));
    }
}
