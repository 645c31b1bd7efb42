//! What a scan reads: its types, its query and its namespace scope. `scan` takes them as
//! `TYPE[,TYPE...]` with the one query flags (`-l`, `--field-selector`, `-A`); `repair` and
//! `migrate` take the one selection, whose TYPEs and query become the scan's with
//! `--from-scan`, and whose names and documents are the objects otherwise.

use clap::Args;
use fieldwise_kube::api::selection::Selection;
use fieldwise_kube::cli::selection_flags::{QueryFlags, SelectionFlags};
use fieldwise_kube::error::{Error, Result};

/// The scan's own flags, shared by `scan`, `repair` and `migrate`.
#[derive(Debug, Clone, Args)]
pub struct ScanFlags {
    /// The types to scan, comma-separated (as TYPE; kept for the scripts written before TYPE).
    #[arg(long, value_name = "TYPES", value_delimiter = ',', hide = true)]
    pub kinds: Vec<String>,

    /// How many requests run at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub concurrency: u16,
}

/// What a scan reads.
#[derive(Debug, Clone, Default)]
pub struct ScanScope {
    /// The types named (`deploy`, `cm,secrets.v1.`); none: every listable type of the scope.
    pub types: Vec<String>,
    /// `-l`.
    pub label_selector: Option<String>,
    /// `--field-selector`.
    pub field_selector: Option<String>,
    /// `-A`: every namespace, and the cluster-scoped types.
    pub all_namespaces: bool,
    /// How many requests run at once.
    pub concurrency: usize,
}

impl ScanScope {
    /// `scan TYPE[,TYPE...] -l ... --field-selector ... -A`.
    pub fn of_scan(types: &[String], query: &QueryFlags, flags: &ScanFlags) -> ScanScope {
        ScanScope {
            types: split_types(types.iter().chain(&flags.kinds)),
            label_selector: query.selector.clone(),
            field_selector: query.field_selector.clone(),
            all_namespaces: query.all_namespaces,
            concurrency: usize::from(flags.concurrency),
        }
    }

    /// `--from-scan` of `repair` or `migrate`: the selection's TYPEs (never names, files or a
    /// kustomization: a scan finds the objects) and its query.
    pub fn of_selection(selection: &Selection<'_>, flags: &ScanFlags) -> Result<ScanScope> {
        if selection.names_by_documents() {
            return Err(Error::usage(
                "--from-scan finds the objects itself: drop -f/-k, or drop --from-scan to act on the objects of the files",
            ));
        }
        if let Some(named) = selection.args.iter().find(|a| a.contains('/')) {
            return Err(Error::usage(format!(
                "--from-scan scans types, not named objects (\"{named}\"): give TYPE[,TYPE...], or drop --from-scan"
            )));
        }
        Ok(ScanScope {
            types: split_types(selection.args.iter().chain(&flags.kinds)),
            label_selector: selection.label_selector.map(String::from),
            field_selector: selection.field_selector.map(String::from),
            all_namespaces: selection.all_namespaces,
            concurrency: usize::from(flags.concurrency),
        })
    }
}

/// The selection of `repair` or `migrate`, checked before anything is read: with `--from-scan`
/// a scan's scope ([`ScanScope::of_selection`]); without it, named objects or documents
/// ([`require_named`]).
pub fn check_writer(selection: &SelectionFlags, from_scan: bool, flags: &ScanFlags) -> Result<()> {
    let chosen = selection.for_writing();
    if from_scan {
        ScanScope::of_selection(&chosen, flags).map(drop)
    } else if !selection.names_objects() {
        Err(Error::usage("an object is required: TYPE/NAME, -f FILE, -k DIR or --from-scan (see --help)"))
    } else {
        require_named(&chosen, flags)
    }
}

/// Without `--from-scan`, `repair` and `migrate` act on named objects or documents only: a
/// TYPE alone and the query flags choose what a scan reads, so they ask for `--from-scan`
/// rather than writing every object of a type.
fn require_named(selection: &Selection<'_>, flags: &ScanFlags) -> Result<()> {
    let type_alone =
        !selection.args.is_empty() && !selection.args.iter().any(|a| a.contains('/')) && selection.args.len() == 1;
    if selection.is_query() || type_alone || !flags.kinds.is_empty() {
        return Err(Error::usage(
            "a TYPE without a name, -l, --field-selector, --all and -A choose what a scan reads: add --from-scan (or name the objects: TYPE/NAME)",
        ));
    }
    Ok(())
}

/// `deploy,cm` `secrets.v1.` as one list of type names, in order, each once.
fn split_types<'a>(given: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut types: Vec<String> = Vec::new();
    for name in given.flat_map(|t| t.split(',')).map(str::trim).filter(|t| !t.is_empty()) {
        if !types.iter().any(|t| t == name) {
            types.push(name.to_string());
        }
    }
    types
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(kinds: &[&str]) -> ScanFlags {
        ScanFlags { kinds: kinds.iter().map(|k| k.to_string()).collect(), concurrency: 8 }
    }

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_scan_takes_types_as_arguments_and_the_old_kinds_flag_alike() {
        let query = QueryFlags { selector: Some("app=web".into()), field_selector: None, all_namespaces: true };
        let scope = ScanScope::of_scan(&strings(&["deploy,cm", "cm"]), &query, &flags(&["secrets.v1."]));
        assert_eq!(scope.types, ["deploy", "cm", "secrets.v1."]);
        assert_eq!(
            (scope.label_selector.as_deref(), scope.all_namespaces, scope.concurrency),
            (Some("app=web"), true, 8)
        );
    }

    #[test]
    fn from_scan_reads_types_and_the_query_of_the_one_selection_never_names() {
        let args = strings(&["deploy,cm"]);
        let selection =
            Selection { args: &args, label_selector: Some("a=b"), all_namespaces: true, ..Default::default() };
        let scope = ScanScope::of_selection(&selection, &flags(&[])).unwrap();
        assert_eq!(
            (scope.types.as_slice(), scope.label_selector.as_deref()),
            (&strings(&["deploy", "cm"])[..], Some("a=b"))
        );
        let named = strings(&["deploy/web"]);
        let err = ScanScope::of_selection(&Selection { args: &named, ..Default::default() }, &flags(&[])).unwrap_err();
        assert!(err.to_string().contains("scans types, not named objects (\"deploy/web\")"), "{err}");
        let files = strings(&["a.yaml"]);
        let err = ScanScope::of_selection(&Selection { files: &files, ..Default::default() }, &flags(&[])).unwrap_err();
        assert!(err.to_string().contains("drop -f/-k"), "{err}");
    }

    #[test]
    fn without_from_scan_a_query_or_a_type_alone_asks_for_it() {
        let (types, named) = (strings(&["deploy"]), strings(&["deploy/web"]));
        for selection in [
            Selection { args: &types, ..Default::default() },
            Selection { args: &named, label_selector: Some("a=b"), ..Default::default() },
            Selection { all_namespaces: true, ..Default::default() },
        ] {
            let err = require_named(&selection, &flags(&[])).unwrap_err().to_string();
            assert!(err.contains("add --from-scan"), "{err}");
        }
        assert!(require_named(&Selection { args: &named, ..Default::default() }, &flags(&[])).is_ok());
        let pair = strings(&["deploy", "web"]);
        assert!(require_named(&Selection { args: &pair, ..Default::default() }, &flags(&[])).is_ok());
        assert!(require_named(&Selection { args: &named, ..Default::default() }, &flags(&["cm"])).is_err());
    }
}
