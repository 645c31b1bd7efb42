//! [`PatchType`]: which of the four ways to change part of an object a patch is.
//! Pure: the HTTP content type is the glue crate's, the `--type` flag the plugin's.

use std::fmt;
use std::str::FromStr;

/// The four ways to change part of an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PatchType {
    /// Strategic Merge Patch (built-in types only).
    Strategic,
    /// JSON Merge Patch (RFC 7386).
    Merge,
    /// JSON Patch (RFC 6902).
    Json,
    /// Server-Side Apply.
    Apply,
}

impl PatchType {
    /// Every patch type, in the order kubectl's `--type` lists them.
    pub const ALL: [PatchType; 4] = [PatchType::Strategic, PatchType::Merge, PatchType::Json, PatchType::Apply];

    /// The name kubectl's `--type` uses.
    pub fn name(self) -> &'static str {
        match self {
            PatchType::Strategic => "strategic",
            PatchType::Merge => "merge",
            PatchType::Json => "json",
            PatchType::Apply => "apply",
        }
    }

    /// One line saying what it is, for help texts.
    pub fn summary(self) -> &'static str {
        match self {
            PatchType::Strategic => "Strategic Merge Patch (built-in types only)",
            PatchType::Merge => "JSON Merge Patch (RFC 7386)",
            PatchType::Json => "JSON Patch (RFC 6902)",
            PatchType::Apply => "Server-Side Apply",
        }
    }
}

impl fmt::Display for PatchType {
    /// The `--type` name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `--type` value that names no patch type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown patch type {given:?}: use strategic, merge, json or apply")]
pub struct UnknownPatchType {
    /// What was given.
    pub given: String,
}

impl FromStr for PatchType {
    type Err = UnknownPatchType;

    /// Reads a `--type` name (exactly as kubectl spells it).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        PatchType::ALL.into_iter().find(|t| t.name() == text).ok_or_else(|| UnknownPatchType { given: text.into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for t in PatchType::ALL {
            assert_eq!(t.name().parse::<PatchType>(), Ok(t));
            assert_eq!(t.to_string(), t.name());
        }
        let err = "Merge".parse::<PatchType>().unwrap_err();
        assert_eq!(err.to_string(), r#"unknown patch type "Merge": use strategic, merge, json or apply"#);
    }
}
