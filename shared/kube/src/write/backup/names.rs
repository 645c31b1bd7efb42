//! How an object's key becomes the path of its backups: each component percent-encoded,
//! so any namespace, resource or name (and a context name with slashes) maps to one
//! directory, reversibly, on every filesystem. In a module of its own because both the
//! store and the journal of writes in flight name directories this way.

/// Percent-encodes a path component: reversible, and safe on every filesystem.
pub(super) fn encode_component(part: &str) -> String {
    if part.is_empty() {
        return "%".into();
    }
    if part == "." || part == ".." {
        return part.replace('.', "%2E");
    }
    let mut out = String::with_capacity(part.len());
    for b in part.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// How versions before percent-encoding named directories (lossy: `_` for anything else),
/// so their backups are still found.
pub(super) fn legacy_sanitize(part: &str) -> String {
    let cleaned: String =
        part.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.@".contains(c) { c } else { '_' }).collect();
    if cleaned.is_empty() || cleaned == "." || cleaned == ".." {
        "_".into()
    } else {
        cleaned
    }
}
