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
