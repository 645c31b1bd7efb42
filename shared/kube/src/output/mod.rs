//! The output layer: everything a plugin prints, so every plugin prints alike.
//!
//! - [`output_format`]: the `-o/--output` formats.
//! - [`printer`]: kubectl's result lines (`deployment.apps/web patched`) and `-o` rendering.
//! - [`diff`]: the one human diff (server noise stripped, Secrets hidden, unified, colored).
//! - [`values`]: values on one line for table cells (map keys sorted; two values side by side
//!   with their common part elided around the difference).
//! - [`junit`]: JUnit XML reports (one test case per object) for CI.
//! - [`sarif`]: SARIF 2.1.0 logs (one result per finding) for code scanning.
//! - [`color`]: color only on a terminal and never with `NO_COLOR`.
//! - [`stdout`]: writes that end quietly on a closed pipe (`| head`).
//! - [`progress`]: a progress bar by objects for commands that act on many, only on a terminal.
//! - [`listing_progress`]: the progress line of a listing across many types (pages, objects, types).
//!
//! Secret values pass [`crate::redact`] before anything here prints them.

pub mod color;
pub mod diff;
pub mod junit;
pub mod listing_progress;
pub mod output_format;
pub mod printer;
pub mod progress;
pub mod sarif;
pub mod stdout;
pub mod values;

pub use output_format::OutputFormat;
