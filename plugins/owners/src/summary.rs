//! The `--summary` table: one row per `metadata.managedFields` entry.

use fieldwise_core::ownership::ManagedFieldsEntry;
use jiff::Timestamp;
use serde_json::Value;

use crate::age::{self, TimeStyle};
use crate::subject::owner_json;

/// How many fields an entry owns: the leaves of its set (what a person counts as fields).
pub fn field_count(entry: &ManagedFieldsEntry) -> usize {
    entry.fields.leaves().len()
}

/// The managers of an object as an aligned table headed by `name`.
pub fn render(name: &str, entries: &[ManagedFieldsEntry], style: TimeStyle, now: Timestamp) -> String {
    let header = ["MANAGER", "OPERATION", "SUBRESOURCE", "APIVERSION", "TIME", "FIELDS", "CLASS"].map(String::from);
    let rows: Vec<[String; 7]> = entries
        .iter()
        .map(|e| {
            [
                e.manager.clone(),
                e.operation.as_str().to_string(),
                e.subresource.clone(),
                e.api_version.clone(),
                age::show(e.time.as_deref(), style, now),
                field_count(e).to_string(),
                e.kind().name().to_string(),
            ]
        })
        .collect();
    format!("{name}\n{}", table(&header, &rows))
}

/// Left-aligned columns separated by three spaces, kubectl style.
pub fn table<const N: usize>(header: &[String; N], rows: &[[String; N]]) -> String {
    styled_table(header, rows, |_, _, padded| padded)
}

/// [`table`], with each body cell passed through `style(row, column, padded text)` after
/// padding, so color codes do not disturb the alignment.
pub fn styled_table<const N: usize>(
    header: &[String; N],
    rows: &[[String; N]],
    style: impl Fn(usize, usize, String) -> String,
) -> String {
    let mut widths = header.clone().map(|h| h.len());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; N], row: Option<usize>| {
        let last = N.saturating_sub(1);
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(column, (c, w))| {
                // The last column is not padded: no trailing spaces.
                let text = if column == last { c.clone() } else { format!("{c:<w$}") };
                match row {
                    Some(row) => style(row, column, text),
                    None => text,
                }
            })
            .collect();
        format!("{}\n", padded.join("   ").trim_end())
    };
    let mut out = line(header, None);
    for (i, row) in rows.iter().enumerate() {
        out.push_str(&line(row, Some(i)));
    }
    out
}

/// The `managers` section of the JSON output.
pub fn json(entries: &[ManagedFieldsEntry]) -> Value {
    Value::Array(
        entries
            .iter()
            .map(|e| {
                let mut owner = owner_json(e);
                owner["fields"] = field_count(e).into();
                owner
            })
            .collect(),
    )
}
