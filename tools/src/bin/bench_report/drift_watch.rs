//! The sections of `scripts/bench drift` and `scripts/bench watch`: `kubectl owners drift`
//! and `kubectl owners watch` at 1,000 to 10,000 objects, each beside kubectl piped into a
//! Python script doing the same work (tools/bench/), with the targets met or not.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::{median, run_line};

/// The distinct values of `key` in `rows`, in order of appearance.
fn distinct<'a>(rows: &[&'a Value], key: &str) -> Vec<&'a Value> {
    let mut out: Vec<&Value> = Vec::new();
    for r in rows {
        if !out.contains(&&r[key]) {
            out.push(&r[key]);
        }
    }
    out
}

fn numbers(rows: &[&&Value], key: &str) -> Vec<f64> {
    rows.iter().filter_map(|r| r[key].as_f64()).collect()
}

fn mb(kb: f64) -> String {
    format!("{:.1} MB", kb / 1024.0)
}

/// Peak RSS growing at most this much from the smallest size to the largest is flat.
const FLAT_GROWTH: f64 = 1.25;
/// The drift target: at least this many times faster than kubectl and the script.
const DRIFT_SPEEDUP: f64 = 5.0;

/// `drift.json`: rows of timed runs (name, size, wall_seconds, max_rss_kb, exit_code and the
/// counts objects, objectsWithViolations, violations), the policy learned and the type count.
pub fn drift_section(raw: &Value, run: &Value, out: &mut String) -> Value {
    let rows: Vec<&Value> = raw["rows"].as_array().into_iter().flatten().collect();
    let ours_name = |n: &str| n.starts_with("kubectl owners drift");
    let _ = writeln!(out, "## 12. `kubectl owners drift -A` vs `kubectl get --show-managed-fields` and a script\n");
    let _ = writeln!(
        out,
        "{}. `scripts/bench drift` on a private local cluster. Objects loaded through the API by `bench_load` \
         (tools crate; each size adds to the previous one): of every 100, 85 ConfigMaps, 10 Secrets, 5 \
         Deployments over 10 namespaces, made as `kubectl create` and `kubectl apply` make them. The policy \
         was learned once (`kubectl owners drift -A --learn`) at the first size, before any human write; then \
         at each size a human wrote: `kubectl label` of every ConfigMap labelled `app=a3` (one in 50; a new \
         label key at each size), `kubectl scale` of 3 new Deployments, `kubectl edit` of 2 new ConfigMaps. \
         Both sides check every object of the {} listable types against that policy: `kubectl owners drift -A \
         --policy FILE -o json`, and a loop running `kubectl get <type> -A -o json --show-managed-fields` \
         piped into `tools/bench/drift_check.py` (the same check in Python: the policy's semantics of \
         docs/ownership-policy.md) for each type. Runs alternate; wall time and the peak RSS of the largest \
         process (GNU `time -v`); medians, min-max in brackets. The plugin exits 3 when it finds violations, \
         its documented status.\n",
        run_line(run),
        raw["types"],
    );
    let _ = writeln!(
        out,
        "| objects | command | runs | wall (median) | peak RSS (median) | violations | objects with violations | objects checked | exit codes |\n|---:|---|---:|---:|---:|---:|---:|---:|---|"
    );
    let mut summary = Vec::new();
    let mut all_equal = true;
    for size in distinct(&rows, "size") {
        let at: Vec<&&Value> = rows.iter().filter(|r| r["size"] == *size).collect();
        let ours: Vec<&&Value> = at.iter().copied().filter(|r| r["name"].as_str().is_some_and(ours_name)).collect();
        let theirs: Vec<&&Value> = at.iter().copied().filter(|r| !r["name"].as_str().is_some_and(ours_name)).collect();
        // Run k of each side counts the same cluster: the counts must be equal, run by run.
        let equal = ours.len() == theirs.len()
            && ours.iter().zip(&theirs).all(|(a, b)| a["violations"] == b["violations"] && !a["violations"].is_null());
        all_equal &= equal;
        let mut walls = Vec::new();
        let mut rsses = Vec::new();
        for side in [&ours, &theirs] {
            let Some(first) = side.first() else { continue };
            let mut wall = numbers(side, "wall_seconds");
            let w = median(&mut wall).unwrap_or(f64::NAN);
            let r = median(&mut numbers(side, "max_rss_kb")).unwrap_or(f64::NAN);
            let (lo, hi) = (wall.first().copied().unwrap_or(f64::NAN), wall.last().copied().unwrap_or(f64::NAN));
            let mut codes: Vec<i64> = side.iter().filter_map(|r| r["exit_code"].as_i64()).collect();
            codes.sort_unstable();
            codes.dedup();
            let _ = writeln!(
                out,
                "| {size} | `{}` | {} | {w:.2} s [{lo:.2}-{hi:.2}] | {} | {} | {} | {} | {} |",
                first["name"].as_str().unwrap_or("?").replace('|', "\\|"),
                side.len(),
                mb(r),
                first["violations"],
                first["objectsWithViolations"],
                first["objects"],
                codes.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
            );
            walls.push(w);
            rsses.push(r);
        }
        if let ([ours_wall, theirs_wall], [ours_rss, theirs_rss]) = (walls.as_slice(), rsses.as_slice()) {
            summary.push(json!({"size": size, "wall_s": ours_wall, "script_wall_s": theirs_wall,
                "speedup": theirs_wall / ours_wall, "max_rss_kb": ours_rss, "script_max_rss_kb": theirs_rss,
                "violations": ours.first().map(|r| r["violations"].clone()), "counts_equal": equal}));
        }
    }
    let _ = writeln!(out, "\n| objects | speed-up (script / plugin, medians) | plugin peak RSS | script's peak RSS |\n|---:|---:|---:|---:|");
    for s in &summary {
        let f = |k: &str| s[k].as_f64().unwrap_or(f64::NAN);
        let _ = writeln!(
            out,
            "| {} | **{:.1}x** | {} | {} |",
            s["size"],
            f("speedup"),
            mb(f("max_rss_kb")),
            mb(f("script_max_rss_kb"))
        );
    }
    let mut verdict = Value::Null;
    if let (Some(first), Some(last)) = (summary.first(), summary.last()) {
        let f = |s: &Value, k: &str| s[k].as_f64().unwrap_or(f64::NAN);
        let speedup = f(last, "speedup");
        let growth = f(last, "max_rss_kb") / f(first, "max_rss_kb");
        let script_growth = f(last, "script_max_rss_kb") / f(first, "script_max_rss_kb");
        let (fast, flat) = (speedup >= DRIFT_SPEEDUP, growth <= FLAT_GROWTH);
        let _ = writeln!(
            out,
            "\nBoth sides counted the same violations in every run: **{}**. Targets at {} objects: at least \
             {DRIFT_SPEEDUP}x faster: **{}** ({speedup:.1}x); memory flat in the number of objects (peak RSS at \
             {} objects at most {FLAT_GROWTH}x that at {}): **{}** ({growth:.2}x; the script's: {script_growth:.2}x).\n",
            if all_equal { "yes" } else { "no" },
            last["size"],
            if fast { "met" } else { "not met" },
            last["size"],
            first["size"],
            if flat { "met" } else { "not met" },
        );
        // The growth between the two largest sizes: whether memory has reached its bound.
        if let [.., before, last] = summary.as_slice() {
            let _ = writeln!(
                out,
                "The plugin's peak RSS from {} to {} objects: {:.2}x; the script's: {:.2}x.\n",
                before["size"],
                last["size"],
                f(last, "max_rss_kb") / f(before, "max_rss_kb"),
                f(last, "script_max_rss_kb") / f(before, "script_max_rss_kb"),
            );
        }
        verdict = json!({"counts_equal": all_equal, "speedup": speedup, "speedup_met": fast,
            "rss_growth": growth, "flat_met": flat});
    }
    json!({"run": run, "raw": raw, "summary": summary, "verdict": verdict})
}

/// Every change reported, and 95% of them within this many milliseconds: keeping up.
const KEEP_UP_P95_MS: f64 = 2000.0;

/// `watch.json`: per size and watcher, the GNU time figures, the writer's summary (made,
/// rate) and watch_score.py's score (reported, attributed, lag).
pub fn watch_section(raw: &Value, run: &Value, out: &mut String) -> Value {
    let rows: Vec<&Value> = raw["rows"].as_array().into_iter().flatten().collect();
    let _ = writeln!(
        out,
        "## 13. `kubectl owners watch` at {} changes a second vs `kubectl get -w` and a script\n",
        raw["rate"]
    );
    let _ = writeln!(
        out,
        "{}. `scripts/bench watch` on a private local cluster, objects loaded by `bench_load` as for drift. Each \
         watcher watches every Deployment and ConfigMap (`deploy,cm -A`); once it has listed them, `bench_write` \
         (tools crate) changes `data.v` of the ConfigMaps one after the other at {} changes a second for {} s \
         (up to 64 requests in flight), alternating two field managers so each change moves one managedFields \
         entry, and logs each change with the time it was sent. The watchers: `kubectl owners \
         watch deploy,cm -A --for ... -o json`, and `kubectl get TYPE -A -w -o json --show-managed-fields \
         --output-watch-events` for each type piped into `tools/bench/watch_blame.py` (the same attribution \
         in Python: the managedFields entry that moved), each running 30 s past the writer. \
         `tools/bench/watch_score.py` matches each watcher's change records of `.data.v` with the writer's log: \
         changes reported, the manager named, lag (the record's time minus the time the write was sent). Peak RSS: the \
         largest process (GNU `time -v`). The plugin exits 3 when it has seen a fight (two managers flipping \
         a field, as here).\n",
        run_line(run),
        raw["rate"],
        raw["seconds"],
    );
    let _ = writeln!(
        out,
        "| objects watched | command | changes made (rate) | reported | right manager | wrong | unattributed | twice | lag median | lag p95 | lag max | peak RSS | keeps up | exit |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"
    );
    let mut summary = Vec::new();
    for r in &rows {
        let s = &r["score"];
        let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
        let made = f(&s["made"]);
        let keeps_up = s["missed"].as_u64() == Some(0) && made > 0.0 && f(&s["lag_ms_p95"]) <= KEEP_UP_P95_MS;
        let _ = writeln!(
            out,
            "| {} | `{}` | {} ({:.0}/s) | {} | {} | {} | {} | {} | {:.0} ms | {:.0} ms | {:.0} ms | {} | {} | {} |",
            r["watched"],
            r["name"].as_str().unwrap_or("?").replace('|', "\\|"),
            s["made"],
            f(&r["writer"]["rate"]),
            s["reported"],
            s["attributed_right"],
            s["attributed_wrong"],
            s["unattributed"],
            s["reported_twice"],
            f(&s["lag_ms_median"]),
            f(&s["lag_ms_p95"]),
            f(&s["lag_ms_max"]),
            mb(f(&r["max_rss_kb"])),
            if keeps_up { "yes" } else { "**no**" },
            r["exit_code"],
        );
        summary.push(json!({"name": r["name"], "watched": r["watched"], "made": s["made"], "reported": s["reported"],
            "attributed_right": s["attributed_right"], "lag_ms_p95": s["lag_ms_p95"], "max_rss_kb": r["max_rss_kb"],
            "keeps_up": keeps_up}));
    }
    // Memory per object watched: the growth of peak RSS from the smallest size to the largest.
    let _ = writeln!(out, "\n| command | peak RSS growth per object watched |\n|---|---:|");
    let mut per_object = Vec::new();
    for name in distinct(&rows, "name") {
        let mine: Vec<&&Value> = rows.iter().filter(|r| r["name"] == *name).collect();
        let (Some(first), Some(last)) = (mine.first(), mine.last()) else { continue };
        let f = |r: &Value, k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        let kb = (f(last, "max_rss_kb") - f(first, "max_rss_kb")) / (f(last, "watched") - f(first, "watched"));
        let _ = writeln!(out, "| `{}` | {:.1} KB |", name.as_str().unwrap_or("?").replace('|', "\\|"), kb);
        per_object.push(json!({"name": name, "kb_per_object": kb}));
    }
    let ours: Vec<&Value> =
        summary.iter().filter(|s| s["name"].as_str().is_some_and(|n| n.starts_with("kubectl owners"))).collect();
    let kept_up = !ours.is_empty() && ours.iter().all(|s| s["keeps_up"] == true);
    let kb = |i: usize| per_object.get(i).and_then(|p| p["kb_per_object"].as_f64()).unwrap_or(f64::NAN);
    let lighter = kb(0) <= kb(1);
    let _ = writeln!(
        out,
        "\nKeeping up: every change reported, 95% within {:.0} s. Targets: the plugin keeps up at every size: \
         **{}**; its memory per object watched at most the script's: **{}** ({:.1} KB vs {:.1} KB).\n",
        KEEP_UP_P95_MS / 1000.0,
        if kept_up { "met" } else { "not met" },
        if lighter { "met" } else { "not met" },
        kb(0),
        kb(1),
    );
    json!({"run": run, "raw": raw, "summary": summary, "per_object": per_object,
        "verdict": {"keeps_up": kept_up, "memory_per_object_met": lighter}})
}
