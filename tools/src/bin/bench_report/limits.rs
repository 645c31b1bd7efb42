//! The section of `scripts/bench limits`: input a user controls (a file of many documents,
//! a policy with a huge glob or many rules) read in time bounded by what the command takes,
//! each row with the release binaries of an earlier commit beside it when the run had them.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::{median, run_line};

/// What each kind of input is, in the table.
fn input_label(row: &Value) -> String {
    match row["input"].as_str() {
        Some("documents") => format!("`kubectl safe-patch -f` of {} documents, `--max-objects 100`", row["size"]),
        Some("policy-glob") => "`kubectl owners drift`, a policy with one 4 MB glob (3 ConfigMaps of 500 keys)".into(),
        Some("policy-rules") => "`kubectl owners drift`, a policy of 200,000 rules (3 ConfigMaps of 500 keys)".into(),
        other => other.unwrap_or("?").to_string(),
    }
}

/// `limits.json`: rows of timed runs (side `before`/`after`, input, size, wall_seconds,
/// max_rss_kb, exit_code): per input, the median of each side and their ratio.
pub fn limits_section(raw: &Value, run: &Value, out: &mut String) -> Value {
    let rows: Vec<&Value> = raw["rows"].as_array().into_iter().flatten().collect();
    let _ = writeln!(out, "## 14. Input a user controls, in bounded time\n");
    let _ = writeln!(
        out,
        "{}. `scripts/bench limits`, release builds, the local cluster on the same 2 cores. A file of many \
         ConfigMap documents given to `kubectl safe-patch -f` with `--max-objects 100` must be refused by the \
         limit (exit 2) after reading its first 101 objects, whatever its length; a policy's glob is compiled \
         once and matched in time linear in the text (a 4 MB `a*a*...*b` in a rule's ignored fields), and a \
         policy of 200,000 rules (one per kind, and one for ConfigMaps) is indexed by kind. `after` is this \
         commit; `before`, when measured, the release binaries of an earlier commit \
         (`FIELDWISE_BENCH_BEFORE`). Wall time and peak RSS from GNU `time -v`, medians.\n",
        run_line(run)
    );
    let _ = writeln!(
        out,
        "| input | side | runs | wall (median) | peak RSS (median) | exit codes |\n|---|---|---:|---:|---:|---|"
    );
    let mut keys: Vec<(Value, Value)> = Vec::new();
    for r in &rows {
        let key = (r["input"].clone(), r["size"].clone());
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let mut summary = Vec::new();
    for (input, size) in keys {
        let mut walls = Vec::new();
        for side in ["before", "after"] {
            let mine: Vec<&&Value> =
                rows.iter().filter(|r| r["input"] == input && r["size"] == size && r["side"] == side).collect();
            if mine.is_empty() {
                continue;
            }
            let pick = |k: &str| -> Vec<f64> { mine.iter().filter_map(|r| r[k].as_f64()).collect() };
            let wall = median(&mut pick("wall_seconds"));
            let rss = median(&mut pick("max_rss_kb"));
            let mut codes: Vec<i64> = mine.iter().filter_map(|r| r["exit_code"].as_i64()).collect();
            codes.sort_unstable();
            codes.dedup();
            let _ = writeln!(
                out,
                "| {} | {side} | {} | {} | {} | {} |",
                input_label(mine[0]),
                mine.len(),
                wall.map_or("?".into(), |w| format!("{w:.2} s")),
                rss.map_or("?".into(), |k| format!("{:.1} MB", k / 1024.0)),
                codes.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
            );
            walls.push((side, wall));
            summary.push(json!({"input": input, "size": size, "side": side, "runs": mine.len(),
                "median_wall_s": wall, "median_max_rss_kb": rss, "exit_codes": codes}));
        }
        if let [("before", Some(before)), ("after", Some(after))] = walls.as_slice() {
            if *after > 0.0 {
                let _ = writeln!(out, "| | before / after | | **{:.1}x** | | |", before / after);
            }
        }
    }
    let _ = writeln!(out);
    json!({"run": run, "raw": raw, "summary": summary})
}
