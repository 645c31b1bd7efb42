//! Times the core of `kubectl owners` on the 1 MB owned Deployment (issue #4: under 50 ms),
//! phase by phase, without the whole `bench_engine run`.
//!
//! `bench_annotate DIR [RUNS] [PHASE]` reads `DIR/owned-1m.json` (written by `bench_engine gen DIR`)
//! and prints, for each phase, the median and the fastest of RUNS runs and the allocations of one:
//! `walk` (finding the owned values, nothing recorded), `read` (decoding managedFields), `index`
//! (`owners_by_value`), `annotate` (both, what `bench_engine` measures as `owners-annotate`) and
//! `locate` (every owned path with its value). PHASE runs only that one, for a profiler.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fieldwise_core::fieldpath::{for_each_located, locate};
use fieldwise_core::ownership::{managed_fields_of, owners_by_value};
use serde_json::Value;

/// The system allocator, counting allocations (`bench_engine` counts bytes the same way,
/// so timings here include the same per-allocation cost).
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; only a counter is updated.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// How many allocations (and reallocations) one run of `op` makes.
fn allocations<R>(op: impl FnOnce() -> R) -> usize {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    drop(black_box(op()));
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

/// The median and the fastest of `runs` timings of `op`, after one warm-up run.
fn timings<R>(runs: usize, mut op: impl FnMut() -> R) -> (Duration, Duration) {
    drop(black_box(op()));
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            drop(black_box(op()));
            t.elapsed()
        })
        .collect();
    times.sort();
    (times[times.len() / 2], times[0])
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: bench_annotate DIR [RUNS] [walk|read|index|annotate|locate]");
        std::process::exit(2)
    };
    let runs = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(31);
    let only = args.get(2).map(String::as_str);
    let path = std::path::Path::new(dir).join("owned-1m.json");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let object: Value = serde_json::from_slice(&bytes).expect("JSON");
    let mut shown = object.clone();
    shown["metadata"].as_object_mut().expect("metadata").remove("managedFields");
    let entries = managed_fields_of(&object).expect("managedFields");

    let phases: [(&str, &dyn Fn() -> usize); 5] = [
        ("walk", &|| {
            let mut found = 0;
            for e in &entries {
                for_each_located(&shown, &e.fields, |_| found += 1);
            }
            found
        }),
        ("read", &|| managed_fields_of(&object).expect("managedFields").len()),
        ("index", &|| owners_by_value(&shown, &entries).len()),
        ("annotate", &|| owners_by_value(&shown, &managed_fields_of(&object).expect("managedFields")).len()),
        ("locate", &|| entries.iter().map(|e| locate(&shown, &e.fields).len()).sum()),
    ];
    for (name, op) in phases {
        if only.is_none_or(|o| o == name) {
            let (median, fastest) = timings(runs, op);
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            let (results, allocated) = (op(), allocations(op));
            println!(
                "{name:<9} median {:>7.2} ms, fastest {:>7.2} ms, {allocated:>7} allocations ({results} results)",
                ms(median),
                ms(fastest)
            );
        }
    }
}
