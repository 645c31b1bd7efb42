//! The `--summary` table: one row per manager entry of `metadata.managedFields`.

use serde_json::Value;

/// Renders the managers of `object` as an aligned table headed by `name`.
pub fn render(name: &str, object: &Value) -> String {
    let entries = object.pointer("/metadata/managedFields").and_then(Value::as_array);
    let Some(entries) = entries.filter(|e| !e.is_empty()) else {
        return format!("{name}: no managedFields (the object predates server-side field tracking, or they were cleared)\n");
    };
    let header = ["MANAGER", "OPERATION", "SUBRESOURCE", "APIVERSION", "TIME"];
    let mut rows: Vec<[String; 5]> = Vec::new();
    for entry in entries {
        let text = |key: &str| entry.get(key).and_then(Value::as_str).unwrap_or("").to_string();
        rows.push([text("manager"), text("operation"), text("subresource"), text("apiVersion"), text("time")]);
    }
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let mut out = format!("{name}\n");
    let line = |cells: [&str; 5]| {
        let padded: Vec<String> = cells.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        format!("{}\n", padded.join("   ").trim_end())
    };
    out.push_str(&line(header));
    for row in &rows {
        out.push_str(&line([&row[0], &row[1], &row[2], &row[3], &row[4]]));
    }
    out
}
