//! Side-by-side timing of the patch engines, the Rust half (`scripts/bench engine`).
//!
//! `bench_engine gen DIR` writes the corpus (`benches/support/corpus.rs`) as JSON files
//! and a `manifest.json`; `bench_engine run DIR` reads those files back, runs every
//! operation on every case until it has enough samples, and prints one JSON document:
//! nanoseconds per operation (every sample) and the bytes allocated by one operation
//! (total and peak live, from a counting global allocator). The Go half is the oracle's
//! `bench` mode (`tests/oracle/bench.go`), which reads the same files and prints the same
//! shape, so `scripts/bench` can put the two side by side.
//!
//! Operations ending in `-bytes` start from JSON bytes and end with JSON bytes (parse,
//! operate, serialize), as apimachinery's byte APIs do; the others take decoded values.
//! The values a `-bytes` operation decodes on the way are returned with its result, so
//! they are freed outside the timing, as Go's concurrent collector frees its own.

use std::alloc::{GlobalAlloc, Layout};

use mimalloc::MiMalloc;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fieldwise_core::fieldpath::{field_set_lossy, Set};
use fieldwise_core::ownership::managed_fields_of;
use fieldwise_core::schema::{builtin, Schema, TypeId};
use fieldwise_core::{merge_patch, strategic};
use serde_json::{json, Value};

#[path = "../../../shared/core/benches/support/corpus.rs"]
mod corpus;

/// mimalloc (the allocator the plugins ship with), counting, while [`allocation_of`]
/// runs, the bytes in use, their peak and every byte allocated. Timed runs are not
/// counted: the plugins' allocator does not count.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
/// Bytes in use relative to an arbitrary start (frees of older blocks can take it below).
static CURRENT: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
static TOTAL: AtomicUsize = AtomicUsize::new(0);

fn grew(size: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        let now = CURRENT.fetch_add(size as isize, Ordering::Relaxed) + size as isize;
        PEAK.fetch_max(now, Ordering::Relaxed);
        TOTAL.fetch_add(size, Ordering::Relaxed);
    }
}

fn shrank(size: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        CURRENT.fetch_sub(size as isize, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded to `MiMalloc` unchanged; only counters are updated.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        MiMalloc.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        MiMalloc.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        shrank(layout.size());
        grew(new_size);
        MiMalloc.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes allocated while running `op` once on what `setup` made (`setup` is not
/// counted): (total, peak live above what was live before).
fn allocation_of<I, R>(setup: &mut dyn FnMut() -> I, op: &mut dyn FnMut(I) -> R) -> (usize, usize) {
    let input = setup();
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let total = TOTAL.load(Ordering::Relaxed);
    COUNTING.store(true, Ordering::SeqCst);
    let result = black_box(op(input));
    COUNTING.store(false, Ordering::SeqCst);
    drop(result);
    (TOTAL.load(Ordering::Relaxed) - total, (PEAK.load(Ordering::Relaxed) - base).max(0) as usize)
}

/// How long to sample each operation.
struct Budget {
    min_time: Duration,
    /// Past this, stop once there are 3 samples (operations of seconds).
    max_time: Duration,
    min_samples: usize,
    max_samples: usize,
    /// Only the operations whose `case op` contains this text (`--only`).
    only: Option<String>,
}

/// Nanoseconds of each run of `op` on a fresh input from `setup`, after a warm-up.
/// Making the input and dropping the result are outside the timing, as Go's
/// garbage collector frees its results outside its timing.
fn samples<I, R>(budget: &Budget, setup: &mut dyn FnMut() -> I, op: &mut dyn FnMut(I) -> R) -> Vec<u64> {
    let warm = Instant::now();
    for _ in 0..3 {
        drop(black_box(op(setup())));
        if warm.elapsed() > budget.min_time / 4 {
            break;
        }
    }
    let start = Instant::now();
    let mut out = Vec::new();
    while out.len() < budget.max_samples && (out.len() < budget.min_samples || start.elapsed() < budget.min_time) {
        if out.len() >= 3 && start.elapsed() > budget.max_time {
            break;
        }
        let input = setup();
        let t = Instant::now();
        let result = black_box(op(input));
        out.push(t.elapsed().as_nanos() as u64);
        drop(result);
    }
    out
}

/// The inputs of one case, as read back from the corpus files.
struct Inputs {
    live: Vec<u8>,
    strategic_patch: Vec<u8>,
    merge_patch: Vec<u8>,
    original: Vec<u8>,
    modified: Vec<u8>,
}

fn parse(bytes: &[u8]) -> Value {
    fieldwise_core::json::from_slice(bytes).expect("corpus files are JSON")
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.join(name).display()))
}

const FILES: [&str; 5] = ["live", "strategic-patch", "merge-patch", "original", "modified"];

fn generate(dir: &Path) {
    std::fs::create_dir_all(dir).expect("create corpus directory");
    let mut manifest = Vec::new();
    for case in corpus::cases() {
        let values = [&case.live, &case.strategic_patch, &case.merge_patch, &case.original, &case.modified];
        let mut sizes = serde_json::Map::new();
        for (file, value) in FILES.iter().zip(values) {
            let bytes = serde_json::to_vec(value).expect("serialize");
            sizes.insert((*file).into(), json!(bytes.len()));
            std::fs::write(dir.join(format!("{}.{file}.json", case.name)), bytes).expect("write corpus file");
        }
        manifest.push(json!({
            "name": case.name, "description": case.description,
            "apiVersion": case.live["apiVersion"], "kind": case.live["kind"], "bytes": sizes,
        }));
    }
    let owned = corpus::owned_deployment_1m(managed_fields);
    std::fs::write(dir.join("owned-1m.json"), serde_json::to_vec(&owned).expect("serialize")).expect("write");
    let text = serde_json::to_string_pretty(&json!({"cases": manifest})).expect("serialize");
    std::fs::write(dir.join("manifest.json"), text).expect("write manifest");
}

/// managedFields as an apiserver writes them after a client-side apply and a status update.
fn managed_fields(live: &Value) -> Vec<Value> {
    let schema = builtin();
    let ty = strategic::root_type(schema, live).ok();
    let mut spec_side = live.clone();
    spec_side.as_object_mut().expect("object").remove("status");
    let (spec_fields, _) = field_set_lossy(&spec_side, schema, ty);
    let status_only = json!({"status": live["status"]});
    let (status_fields, _) = field_set_lossy(&status_only, schema, ty);
    let entry = |manager: &str, subresource: Option<&str>, set: &Set| {
        let mut e = json!({"manager": manager, "operation": "Update", "apiVersion": "apps/v1",
            "time": "2025-01-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": set.to_fields_v1()});
        if let Some(s) = subresource {
            e["subresource"] = json!(s);
        }
        e
    };
    vec![
        entry("kubectl-client-side-apply", None, &spec_fields),
        entry("kube-controller-manager", Some("status"), &status_fields),
    ]
}

/// One row of output.
fn result(case: &str, op: &str, input_bytes: usize, samples: Vec<u64>, alloc: (usize, usize)) -> Value {
    json!({"case": case, "op": op, "input_bytes": input_bytes, "samples_ns": samples,
        "alloc_total_bytes": alloc.0, "alloc_peak_bytes": alloc.1})
}

fn measure<R>(rows: &mut Vec<Value>, budget: &Budget, case: &str, op: &str, input: usize, mut f: impl FnMut() -> R) {
    measure_on(rows, budget, case, op, input, || (), |()| f());
}

/// [`measure`] of an operation that consumes its input, made by `setup` outside the timing.
fn measure_on<I, R>(
    rows: &mut Vec<Value>,
    budget: &Budget,
    case: &str,
    op: &str,
    input: usize,
    mut setup: impl FnMut() -> I,
    mut f: impl FnMut(I) -> R,
) {
    if budget.only.as_ref().is_some_and(|only| !selected(only, case, op)) {
        return;
    }
    let alloc = allocation_of(&mut setup, &mut f);
    let s = samples(budget, &mut setup, &mut f);
    eprintln!("bench_engine: {case} {op}: {} samples", s.len());
    rows.push(result(case, op, input, s, alloc));
}

/// Whether `--only` selects an operation: `CASE OP` exactly, or any whose `case op` contains a word.
fn selected(only: &str, case: &str, op: &str) -> bool {
    let name = format!("{case} {op}");
    if only.contains(' ') {
        name == only
    } else {
        name.contains(only)
    }
}

/// Bytes the decoded inputs occupy (what parsing them allocates), for the memory column.
fn decoded_size(inputs: &[&[u8]]) -> usize {
    allocation_of(&mut || (), &mut |()| inputs.iter().map(|b| parse(b)).collect::<Vec<_>>()).0
}

fn run_case(rows: &mut Vec<Value>, budget: &Budget, schema: &Schema, name: &str, raw: &Inputs) {
    let live = parse(&raw.live);
    let ty: TypeId = strategic::root_type(schema, &live).expect("built-in kind");
    let (patch, merge, original, modified) =
        (parse(&raw.strategic_patch), parse(&raw.merge_patch), parse(&raw.original), parse(&raw.modified));
    let apply_in = raw.live.len() + raw.strategic_patch.len();
    let merge_in = raw.live.len() + raw.merge_patch.len();
    let three_in = raw.original.len() + raw.modified.len() + raw.live.len();
    rows.push(json!({"case": name, "op": "decoded-size",
        "apply_bytes": decoded_size(&[&raw.live, &raw.strategic_patch]),
        "merge_bytes": decoded_size(&[&raw.live, &raw.merge_patch]),
        "three_way_bytes": decoded_size(&[&raw.original, &raw.modified, &raw.live])}));

    measure_on(
        rows,
        budget,
        name,
        "strategic-apply",
        apply_in,
        || live.clone(),
        |live| strategic::apply_owned(live, &patch, schema, ty).expect("strategic apply"),
    );
    measure(rows, budget, name, "strategic-apply-copy", apply_in, || {
        strategic::apply(&live, &patch, schema, ty).expect("strategic apply")
    });
    measure(rows, budget, name, "strategic-apply-bytes", apply_in, || {
        let patch = parse(&raw.strategic_patch);
        let out = strategic::apply_owned(parse(&raw.live), &patch, schema, ty).expect("apply");
        (serde_json::to_vec(&out).expect("serialize"), out, patch)
    });
    measure(rows, budget, name, "strategic-three-way", three_in, || {
        strategic::create_three_way(&original, &modified, &live, schema, ty, true).expect("three-way")
    });
    measure(rows, budget, name, "strategic-three-way-bytes", three_in, || {
        let (o, m, c) = (parse(&raw.original), parse(&raw.modified), parse(&raw.live));
        let out = strategic::create_three_way(&o, &m, &c, schema, ty, true).expect("three-way");
        (serde_json::to_vec(&out).expect("serialize"), [o, m, c, out])
    });
    measure(rows, budget, name, "parse-three-way-inputs", three_in, || {
        (parse(&raw.original), parse(&raw.modified), parse(&raw.live))
    });
    measure(rows, budget, name, "merge-apply", merge_in, || merge_patch::apply(&live, &merge));
    measure(rows, budget, name, "merge-apply-bytes", merge_in, || {
        let (live, patch) = (parse(&raw.live), parse(&raw.merge_patch));
        let out = merge_patch::apply(&live, &patch);
        (serde_json::to_vec(&out).expect("serialize"), [live, patch, out])
    });
    measure(rows, budget, name, "merge-three-way-bytes", three_in, || {
        let (o, m, c) = (parse(&raw.original), parse(&raw.modified), parse(&raw.live));
        let out = merge_patch::create_three_way(&o, &m, &c).expect("three-way");
        (serde_json::to_vec(&out).expect("serialize"), [o, m, c, out])
    });
}

/// What `kubectl owners` does in the core before printing: read managedFields, then
/// locate every owned path in the shown object and index the owners by value.
fn annotate(object: &Value, shown: &Value) -> usize {
    let entries = managed_fields_of(object).expect("managedFields");
    fieldwise_core::ownership::owners_by_value(shown, &entries).len()
}

fn run(dir: &Path, budget: &Budget) {
    let manifest = parse(&read(dir, "manifest.json"));
    let schema = builtin();
    let mut rows = Vec::new();
    for case in manifest["cases"].as_array().expect("cases") {
        let name = case["name"].as_str().expect("name");
        let file = |f: &str| read(dir, &format!("{name}.{f}.json"));
        let raw = Inputs {
            live: file("live"),
            strategic_patch: file("strategic-patch"),
            merge_patch: file("merge-patch"),
            original: file("original"),
            modified: file("modified"),
        };
        run_case(&mut rows, budget, schema, name, &raw);
    }
    let bytes = read(dir, "owned-1m.json");
    let object = parse(&bytes);
    let mut shown = object.clone();
    shown["metadata"].as_object_mut().expect("metadata").remove("managedFields");
    measure(&mut rows, budget, "owned-1m", "owners-annotate", bytes.len(), || annotate(&object, &shown));
    let out = json!({"engine": "fieldwise-core (Rust)", "cases": manifest["cases"], "results": rows});
    println!("{}", serde_json::to_string(&out).expect("serialize"));
}

fn usage() -> ! {
    eprintln!("usage: bench_engine gen DIR | run DIR [--min-time SECONDS] [--max-time SECONDS] [--min-samples N] [--max-samples N] [--only 'CASE OP']");
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(mode), Some(dir)) = (args.first(), args.get(1)) else { usage() };
    let dir = PathBuf::from(dir);
    let mut budget = Budget {
        min_time: Duration::from_secs(2),
        max_time: Duration::from_secs(15),
        min_samples: 20,
        max_samples: 300,
        only: None,
    };
    let mut rest = args[2..].chunks(2);
    for pair in rest.by_ref() {
        let [flag, value] = pair else { usage() };
        match flag.as_str() {
            "--min-time" => budget.min_time = Duration::from_secs_f64(value.parse().unwrap_or_else(|_| usage())),
            "--max-time" => budget.max_time = Duration::from_secs_f64(value.parse().unwrap_or_else(|_| usage())),
            "--min-samples" => budget.min_samples = value.parse().unwrap_or_else(|_| usage()),
            "--max-samples" => budget.max_samples = value.parse().unwrap_or_else(|_| usage()),
            "--only" => budget.only = Some(value.clone()),
            _ => usage(),
        }
    }
    match mode.as_str() {
        "gen" => generate(&dir),
        "run" => run(&dir, &budget),
        _ => usage(),
    }
}
