//! kubectl's flags that choose the objects of a TYPE by query (`-l`, `--field-selector`,
//! `--all`, `-A`), declared once for every command that selects objects, so each takes them
//! with kubectl's names, letters and rules ([`crate::api::selection`]).

use clap::Args;

use crate::api::selection::Selection;

/// `-l`, `--field-selector`, `--all` and `-A`, flattened into a command's flags.
#[derive(Debug, Clone, Default, Args)]
pub struct QueryFlags {
    /// The objects of TYPE that match this label selector (e.g. -l app=web,tier!=db).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,

    /// The objects of TYPE that match this field selector (e.g. --field-selector metadata.name=web).
    #[arg(long, value_name = "SELECTOR")]
    pub field_selector: Option<String>,

    /// Every object of TYPE in the namespace (or in every namespace with -A).
    #[arg(long)]
    pub all: bool,

    /// Select in every namespace, not just -n's (with -l, --field-selector or --all).
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
}

impl QueryFlags {
    /// The selection of these flags with the command's positional `args` (`TYPE/NAME`, `TYPE`)
    /// and `-f` `files` (`-R`: `recursive`).
    pub fn selection<'a>(&'a self, args: &'a [String], files: &'a [String], recursive: bool) -> Selection<'a> {
        Selection {
            args,
            files,
            recursive,
            label_selector: self.selector.as_deref(),
            field_selector: self.field_selector.as_deref(),
            all: self.all,
            all_namespaces: self.all_namespaces,
            type_alone_lists: false,
        }
    }
}

/// The whole selection of a command that only reads (`owners drift`, `owners watch`): the
/// objects named (`TYPE/NAME`, `TYPE NAME...`), a TYPE alone listing every object of it as
/// `kubectl get` does, `-f FILE|DIR` (`-R`) and the query flags. Declared once, so the reading
/// commands take the same words with the same help.
#[derive(Debug, Clone, Default, Args)]
pub struct ReadSelectionArgs {
    /// The objects: TYPE/NAME, TYPE NAME..., or TYPE (every object of it, or those -l,
    /// --field-selector select; -A in every namespace).
    #[arg(value_name = "TYPE/NAME")]
    pub targets: Vec<String>,

    /// Files or directories of YAML/JSON objects naming the objects ("-" for stdin).
    #[arg(short = 'f', long = "filename", value_name = "FILE")]
    pub filenames: Vec<String>,

    /// Read directories given with -f recursively.
    #[arg(short = 'R', long)]
    pub recursive: bool,

    /// -l, --field-selector, --all, -A.
    #[command(flatten)]
    pub query: QueryFlags,
}

impl ReadSelectionArgs {
    /// The selection, a TYPE alone listing every object of it (these commands only read).
    pub fn selection(&self) -> Selection<'_> {
        Selection { type_alone_lists: true, ..self.query.selection(&self.targets, &self.filenames, self.recursive) }
    }

    /// Whether objects are named (TYPE arguments or `-f` files), rather than left to the query alone.
    pub fn names_objects(&self) -> bool {
        !self.targets.is_empty() || !self.filenames.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Command {
        targets: Vec<String>,
        #[command(flatten)]
        query: QueryFlags,
    }

    #[test]
    fn kubectls_letters_and_names_make_the_selection() {
        let cli = Command::parse_from(["x", "deploy", "-l", "app=web", "--field-selector", "metadata.name!=a", "-A"]);
        let selection = cli.query.selection(&cli.targets, &[], false);
        assert_eq!(selection.args, ["deploy"]);
        assert_eq!((selection.label_selector, selection.field_selector), (Some("app=web"), Some("metadata.name!=a")));
        assert!(selection.all_namespaces && !selection.all && selection.is_query());
        let all = Command::parse_from(["x", "cm", "--all"]);
        assert!(all.query.selection(&all.targets, &[], false).all);
    }
}
