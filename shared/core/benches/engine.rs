//! `cargo bench -p fieldwise-core`: the patch engines on the benchmark corpus
//! (`support/corpus.rs`), one criterion group per operation, one benchmark per case.
//!
//! This is the Rust-only view with criterion's statistics; the side-by-side
//! comparison with apimachinery is `scripts/bench engine`, which runs
//! `tools/src/bin/bench_engine.rs` and the Go oracle's bench mode on the same files.

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use fieldwise_core::fieldpath::{field_set_lossy, locate};
use fieldwise_core::ownership::managed_fields_of;
use fieldwise_core::schema::builtin;
use fieldwise_core::{merge_patch, strategic};
use serde_json::{json, Value};

mod support {
    pub mod corpus;
}
use support::corpus;

fn size(value: &Value) -> u64 {
    serde_json::to_vec(value).map(|b| b.len() as u64).unwrap_or(0)
}

fn engines(c: &mut Criterion) {
    let schema = builtin();
    let cases = corpus::cases();
    let mut group = c.benchmark_group("strategic-apply");
    group.sample_size(10).measurement_time(Duration::from_secs(3));
    for case in &cases {
        let ty = strategic::root_type(schema, &case.live).expect("built-in kind");
        group.throughput(Throughput::Bytes(size(&case.live)));
        group.bench_with_input(BenchmarkId::from_parameter(case.name), case, |b, case| {
            b.iter(|| strategic::apply(black_box(&case.live), &case.strategic_patch, schema, ty).expect("apply"))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("strategic-three-way");
    group.sample_size(10).measurement_time(Duration::from_secs(3));
    for case in &cases {
        let ty = strategic::root_type(schema, &case.live).expect("built-in kind");
        group.throughput(Throughput::Bytes(size(&case.live)));
        group.bench_with_input(BenchmarkId::from_parameter(case.name), case, |b, case| {
            b.iter(|| {
                strategic::create_three_way(black_box(&case.original), &case.modified, &case.live, schema, ty, true)
                    .expect("three-way")
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("merge-apply");
    group.sample_size(10).measurement_time(Duration::from_secs(3));
    for case in &cases {
        group.throughput(Throughput::Bytes(size(&case.live)));
        group.bench_with_input(BenchmarkId::from_parameter(case.name), case, |b, case| {
            b.iter(|| merge_patch::apply(black_box(&case.live), &case.merge_patch))
        });
    }
    group.finish();
}

/// The core half of `kubectl owners`: managedFields read, every owned path located.
fn owners(c: &mut Criterion) {
    let schema = builtin();
    let object = corpus::owned_deployment_1m(|live| {
        let ty = strategic::root_type(schema, live).ok();
        let (set, _) = field_set_lossy(live, schema, ty);
        vec![json!({"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "apps/v1",
            "fieldsType": "FieldsV1", "fieldsV1": set.to_fields_v1()})]
    });
    let mut shown = object.clone();
    shown["metadata"].as_object_mut().expect("metadata").remove("managedFields");
    let mut group = c.benchmark_group("owners-annotate");
    group.sample_size(10).measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Bytes(size(&object)));
    group.bench_function("owned-1m", |b| {
        b.iter(|| {
            let entries = managed_fields_of(black_box(&object)).expect("managedFields");
            let mut owners: HashMap<*const Value, Vec<usize>> = HashMap::new();
            for (index, entry) in entries.iter().enumerate() {
                for (_, found) in locate(&shown, &entry.fields) {
                    if let Some(value) = found {
                        owners.entry(value as *const Value).or_default().push(index);
                    }
                }
            }
            owners.len()
        })
    });
    group.finish();
}

criterion_group!(benches, engines, owners);
criterion_main!(benches);
