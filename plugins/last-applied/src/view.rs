//! `view`: an object's annotation as YAML (Secret values hidden unless
//! `--show-secrets`), or with `--diff` how the live object drifted from it,
//! restricted to the fields the annotation sets.

use std::process::ExitCode;

use clap::Args;
use fieldwise_core::last_applied::{annotation_of, drift};
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::objects;
use fieldwise_kube::api::openapi::Schemas;
use fieldwise_kube::conn::client;
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::exit_code;
use fieldwise_kube::output::diff;
use fieldwise_kube::output::printer;
use fieldwise_kube::output::OutputFormat;
use fieldwise_kube::redact;
use serde_json::Value;

use fieldwise_kube::api::selection;
use fieldwise_kube::cli::selection_flags::SelectionFlags;

/// `view`'s flags.
#[derive(Debug, Args)]
pub struct ViewArgs {
    /// The objects: TYPE/NAME, TYPE NAME..., TYPE (every object of it, or those -l,
    /// --field-selector select; -A in every namespace), -f or -k (the one selection).
    #[command(flatten)]
    pub selection: SelectionFlags,

    /// Show how the live object differs from the annotation (exit 3 when it does).
    #[arg(long)]
    pub diff: bool,

    /// Print the annotation as json or yaml (default yaml; Secret values as *** unless --show-secrets), or
    /// the object's name (kind.group/name).
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<OutputFormat>,

    /// Show Secret values (hidden by default).
    #[arg(long)]
    pub show_secrets: bool,
}

/// Runs `kubectl last-applied view`.
pub async fn run(kube: KubeFlags, args: ViewArgs) -> Result<ExitCode> {
    let conn = client::connect(&kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let mut schemas = Schemas::connected(&conn);
    let mut code = ExitCode::SUCCESS;
    let targets = selection::select(&conn, &catalog, &args.selection.for_reading()).await?;
    if targets.is_empty() {
        eprintln!("No resources found.");
    }
    let several = targets.len() > 1;
    for target in targets {
        let live = objects::get(&conn, &target, None).await?;
        let Some(text) = annotation_of(&live) else {
            // One object asked for: its missing annotation is the answer (an error). Among
            // several, it is one line, and the others are still shown.
            if several {
                eprintln!("{} has no last-applied annotation (see `kubectl last-applied repair`)", target.display());
                continue;
            }
            return Err(Error::Missing {
                object: target.display(),
                what: "last-applied annotation".into(),
                hint: " (see `kubectl last-applied repair`)".into(),
            });
        };
        let applied: Value = serde_json::from_str(text)
            .map_err(|e| Error::malformed(format!("the last-applied annotation of {}", target.display()), e))?;
        if args.output == Some(OutputFormat::Name) && !args.diff {
            println!("{}", target.display());
            continue;
        }
        if !args.diff {
            let mut shown = applied;
            if !args.show_secrets {
                redact::redact(&mut shown);
            }
            printer::print_object(&shown, args.output.unwrap_or(OutputFormat::Yaml))?;
            continue;
        }
        // The scan's own verdict (core `drift`), so view --diff and scan never disagree.
        let typed = schemas.for_object(&live).await?;
        let (schema, root) = typed.for_client_side_apply();
        let Some(drift) = drift(&live, schema, root) else {
            return Err(Error::malformed(
                format!("the last-applied annotation of {}", target.display()),
                std::io::Error::other("not a JSON object"),
            ));
        };
        let name = target.display();
        let shown = diff::human(
            &format!("{name} (last-applied)"),
            &format!("{name} (live)"),
            &sorted(&drift.applied),
            &sorted(&drift.live),
            args.show_secrets,
        );
        match (drift.finding, shown) {
            (Some(finding), shown) => {
                if let Some(d) = shown {
                    print!("{d}");
                }
                eprintln!("{name}: stale: {}", finding.detail);
                code = exit_code::exit(exit_code::FOUND);
            }
            (None, _) => eprintln!("{name}: the live object matches the annotation"),
        }
    }
    Ok(code)
}

/// `value` with object keys in order, so the diff shows changes, not key order.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&map[k.as_str()]))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}
