//! The flags that choose objects, declared once for every command that selects them, so each
//! takes them with kubectl's names, letters and rules ([`crate::api::selection`]): the query
//! flags (`-l`, `--field-selector`, `--all`, `-A`) and the whole selection around them
//! (`TYPE/NAME...`, `-f`, `-R`, `-k`).

use clap::Args;

use crate::api::selection::Selection;

/// `-l`, `--field-selector` and `-A`: the query of a listing, flattened into a command's flags
/// (alone by `kubectl last-applied scan`, which lists every object of its types anyway; inside
/// [`SelectionFlags`] everywhere else).
#[derive(Debug, Clone, Default, Args)]
pub struct QueryFlags {
    /// The objects of TYPE that match this label selector (e.g. -l app=web,tier!=db).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,

    /// The objects of TYPE that match this field selector (e.g. --field-selector metadata.name=web).
    #[arg(long, value_name = "SELECTOR")]
    pub field_selector: Option<String>,

    /// Select in every namespace, not just -n's.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
}

/// The one selection every command that picks objects takes, flattened into its flags: the
/// objects named (`TYPE/NAME`, `TYPE NAME...`), `TYPE[,TYPE...]` with a query, `-f FILE|DIR`
/// (`-R`), `-k DIR` and the query flags. Declared once, so every command takes the same words
/// with the same help and kubectl's rules ([`crate::api::selection`]); a command whose `-f`
/// means more (a configuration to apply) says so with `mut_arg` on its own command.
#[derive(Debug, Clone, Default, Args)]
pub struct SelectionFlags {
    /// The objects: TYPE/NAME, TYPE NAME..., or TYPE[,TYPE...] (every object of it where the
    /// command only reads; else with -l, --field-selector or --all; -A in every namespace).
    #[arg(value_name = "TYPE/NAME")]
    pub targets: Vec<String>,

    /// Files or directories of YAML/JSON objects naming the objects ("-" for stdin); repeatable.
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub filenames: Vec<String>,

    /// Read directories given with -f recursively.
    #[arg(short = 'R', long)]
    pub recursive: bool,

    /// A kustomization directory: the objects `kubectl kustomize DIR` builds.
    #[arg(short = 'k', long = "kustomize", value_name = "DIR")]
    pub kustomize: Option<String>,

    /// Every object of TYPE in the namespace (or in every namespace with -A).
    #[arg(long)]
    pub all: bool,

    /// -l, --field-selector, -A.
    #[command(flatten)]
    pub query: QueryFlags,
}

impl SelectionFlags {
    /// The selection of a command that only reads: a TYPE alone lists every object of it, as
    /// `kubectl get` does.
    pub fn for_reading(&self) -> Selection<'_> {
        Selection { type_alone_lists: true, ..self.for_writing() }
    }

    /// The selection of a command that writes: a TYPE needs a query (`-l`, `--field-selector`,
    /// `--all`), as `kubectl label` does, so a forgotten selector never writes everything.
    pub fn for_writing(&self) -> Selection<'_> {
        Selection {
            args: &self.targets,
            files: &self.filenames,
            recursive: self.recursive,
            kustomize: self.kustomize.as_deref(),
            label_selector: self.query.selector.as_deref(),
            field_selector: self.query.field_selector.as_deref(),
            all: self.all,
            all_namespaces: self.query.all_namespaces,
            type_alone_lists: false,
            limit: None,
        }
    }

    /// Whether objects are named (TYPE arguments, `-f` files or `-k`), rather than left to the
    /// query alone.
    pub fn names_objects(&self) -> bool {
        !self.targets.is_empty() || !self.filenames.is_empty() || self.kustomize.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Selecting {
        #[command(flatten)]
        selection: SelectionFlags,
    }

    #[test]
    fn kubectls_letters_and_names_make_the_selection() {
        let cli = Selecting::parse_from(["x", "deploy", "-l", "app=web", "--field-selector", "metadata.name!=a", "-A"]);
        let selection = cli.selection.for_writing();
        assert_eq!(selection.args, ["deploy"]);
        assert_eq!((selection.label_selector, selection.field_selector), (Some("app=web"), Some("metadata.name!=a")));
        assert!(selection.all_namespaces && !selection.all && selection.is_query());
        assert!(Selecting::parse_from(["x", "cm", "--all"]).selection.for_writing().all);
    }

    #[test]
    fn the_whole_selection_reads_and_writes_with_kubectls_letters() {
        let cli = Selecting::parse_from(["x", "-k", "overlays/prod"]);
        let (reading, writing) = (cli.selection.for_reading(), cli.selection.for_writing());
        assert_eq!((reading.kustomize, writing.kustomize), (Some("overlays/prod"), Some("overlays/prod")));
        assert!(reading.type_alone_lists && !writing.type_alone_lists && cli.selection.names_objects());
        let cli = Selecting::parse_from(["x", "-f", "a.yaml", "-R", "-l", "app=web", "-A"]);
        let selection = cli.selection.for_reading();
        assert_eq!((selection.files, selection.recursive), (&["a.yaml".to_string()][..], true));
        assert_eq!((selection.label_selector, selection.all_namespaces), (Some("app=web"), true));
        assert!(!Selecting::parse_from(["x", "-l", "a=b"]).selection.names_objects());
    }
}
