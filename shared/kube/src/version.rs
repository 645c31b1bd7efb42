//! The version string every plugin prints, with the commit it was built from.

/// `0.1.0 (commit abc1234)`: the crate version and the git commit of the build.
pub const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("FIELDWISE_COMMIT"), ")");
