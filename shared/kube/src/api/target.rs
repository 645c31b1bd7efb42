//! Positional resource arguments, as kubectl takes them: `TYPE/NAME ...` or
//! `TYPE NAME ...`, before discovery.
//!
//! Plugins build references through [`crate::api::reference::ObjectRef`], which resolves
//! these against discovery and also reads them from manifests; this module only parses.

use crate::error::{Error, Result};

/// What the user asked for, before discovery: a type and zero or more names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetArgs {
    /// `(type as typed, name)` pairs; the name is empty when only a type was given.
    pub items: Vec<(String, String)>,
}

impl TargetArgs {
    /// Parses positional arguments. `deploy/a deploy/b` and `deploy a b` are
    /// both fine; mixing the two forms is an error, as in kubectl. A lone type
    /// (`deploy`) gives one item with an empty name, for list-style commands.
    pub fn parse(args: &[String]) -> Result<Self> {
        let Some(first) = args.first() else {
            return Ok(TargetArgs { items: vec![] });
        };
        if first.contains('/') {
            let mut items = Vec::new();
            for arg in args {
                let Some((kind, name)) = arg.split_once('/') else {
                    return Err(Error::usage(format!(
                        "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (got {arg:?} after {first:?})"
                    )));
                };
                if kind.is_empty() || name.is_empty() || name.contains('/') {
                    return Err(Error::usage(format!(
                        "arguments in resource/name form must have a single resource and name (got {arg:?})"
                    )));
                }
                items.push((kind.to_string(), name.to_string()));
            }
            return Ok(TargetArgs { items });
        }
        if args.len() == 1 {
            return Ok(TargetArgs { items: vec![(first.clone(), String::new())] });
        }
        let mut items = Vec::new();
        for name in &args[1..] {
            if name.contains('/') {
                return Err(Error::usage(format!(
                    "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (got {name:?} after type {first:?})"
                )));
            }
            items.push((first.clone(), name.clone()));
        }
        Ok(TargetArgs { items })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn both_forms() {
        let slash = TargetArgs::parse(&args(&["deploy/a", "pod/b"])).unwrap();
        assert_eq!(slash.items, vec![("deploy".into(), "a".into()), ("pod".into(), "b".into())]);
        let spaced = TargetArgs::parse(&args(&["deploy", "a", "b"])).unwrap();
        assert_eq!(spaced.items, vec![("deploy".into(), "a".into()), ("deploy".into(), "b".into())]);
        let lone = TargetArgs::parse(&args(&["deploy"])).unwrap();
        assert_eq!(lone.items, vec![("deploy".into(), String::new())]);
    }

    #[test]
    fn mixed_and_malformed_forms_are_errors() {
        for bad in [&["deploy/a", "b"][..], &["deploy", "pod/b"], &["/a"], &["deploy/"], &["a/b/c"]] {
            let err = TargetArgs::parse(&args(bad)).unwrap_err().printed();
            assert!(err.starts_with("error: "), "{bad:?}: {err}");
        }
    }
}
