//! The project's own tooling, kept out of the product's crates: each binary in
//! `src/bin` is run by a script, never by users.
//!
//! - `bench_engine`: the core's patch engines on a generated corpus (`scripts/bench engine`);
//! - `bench_annotate`: one phase of `owners`' annotation at a time, for profiling;
//! - `bench_load`: loads 10,000s of objects into a cluster through the API (`scripts/bench scan`);
//! - `bench_report`: writes `docs/BENCHMARKS.md` and `docs/bench-results.json` from a run's results;
//! - `gen_builtin_schema`: the embedded built-in schema from upstream OpenAPI documents
//!   (`scripts/gen-builtin-schema`).
