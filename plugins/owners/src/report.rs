//! Running a command line: load the objects, build each one's section for the
//! chosen mode, and print it for people or (with -o) as one `OwnersReport`
//! document (docs/owners-output.md).

use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;

use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::openapi::Schemas;
use fieldwise_kube::api::reference::{NamespaceScope, ObjectRef};
use fieldwise_kube::api::selection;
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::exit_code;
use fieldwise_kube::output::OutputFormat;
use fieldwise_kube::output::{color, printer};
use fieldwise_kube::write::DryRuns;
use fieldwise_kube::{Error, Result};
use jiff::Timestamp;
use serde_json::{json, Value};

use crate::plan::object::Planner;
use crate::subject::Subject;
use crate::view::ViewOptions;
use crate::{annotate, conflicts, fields, load, manager, summary, tree, tree_view, Cli};

/// The `apiVersion` and `kind` of the machine output.
pub const REPORT_API_VERSION: &str = "fieldwise.dev/v1alpha1";

/// Runs the command.
pub async fn run(cli: Cli) -> Result<ExitCode> {
    if cli.output.is_none() {
        color::init();
    } else {
        colored::control::set_override(false);
    }
    if cli.local {
        return run_local(&cli).await;
    }
    if !cli.selection.names_objects() {
        return Err(Error::usage(
            "you must specify the objects: TYPE/NAME, TYPE -l SELECTOR, -f FILE or -k DIR (see kubectl owners --help)",
        ));
    }
    let conn = client::connect(&cli.kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    if cli.conflicts {
        return run_conflicts(&cli, &conn, &catalog).await;
    }
    let subjects = load::live(&conn, &catalog, &cli).await?;
    if subjects.is_empty() {
        eprintln!("No resources found.");
        return Ok(ExitCode::SUCCESS);
    }
    let mut schemas = Schemas::connected(&conn);
    let mut sections = Vec::new();
    let kinds = tree_view::KindFilter::resolve(&catalog, &cli.kinds)?;
    for subject in &subjects {
        let section = if cli.tree {
            let t = tree::build(&conn, &catalog, subject).await?;
            Section {
                text: tree_view::render(&t, &kinds, Timestamp::now()),
                json: json!({"tree": tree_view::json(&t, &kinds)}),
            }
        } else {
            section(&cli, subject, &mut schemas).await?
        };
        sections.push((subject, section));
    }
    print(&cli, sections)?;
    Ok(ExitCode::SUCCESS)
}

async fn run_local(cli: &Cli) -> Result<ExitCode> {
    let selection = cli.selection.for_reading();
    if !selection.names_by_documents() {
        return Err(Error::usage("--local reads objects from files: give -f FILE (or -f - for stdin) or -k DIR"));
    }
    if !selection.args.is_empty() || cli.tree || cli.conflicts || selection.is_query() {
        return Err(Error::usage(
            "--local works on -f files (or -k) only: TYPE/NAME, -l, --field-selector, --all, -A, --tree and --conflicts need a cluster",
        ));
    }
    let subjects = load::local(selection::documents(&selection)?);
    let mut schemas = Schemas::offline();
    let mut sections = Vec::new();
    for subject in &subjects {
        sections.push((subject, section(cli, subject, &mut schemas).await?));
    }
    print(cli, sections)?;
    Ok(ExitCode::SUCCESS)
}

/// One object's output: text for people, and its mode's sections for the JSON item.
struct Section {
    text: String,
    json: Value,
}

fn view(cli: &Cli) -> ViewOptions {
    ViewOptions { show_status: cli.show_status, show_metadata: cli.show_metadata, show_values: cli.show_values }
}

/// The section of one object for every mode but `--tree` and `--conflicts`; the
/// object's schema is read (from `schemas`) only for a `--field` question.
async fn section(cli: &Cli, subject: &Subject, schemas: &mut Schemas) -> Result<Section> {
    let entries = subject.required_entries()?;
    let now = Timestamp::now();
    let options = view(cli);
    if cli.summary {
        return Ok(Section {
            text: summary::render(&subject.display, &entries, cli.time, now),
            json: json!({"managers": summary::json(&entries)}),
        });
    }
    if let Some(text) = &cli.field {
        // Status and metadata are never hidden from a question about them.
        let all = ViewOptions { show_status: true, show_metadata: true, ..options };
        let (shown, _) = all.prepare(&subject.object);
        let schema = schemas.for_object(&subject.object).await?;
        let answer = fields::query(subject, &entries, &shown, text, &schema)?;
        return Ok(Section {
            text: fields::render(subject, &entries, &answer, cli.time, now),
            json: json!({"field": fields::json(&entries, &answer, text)}),
        });
    }
    if let Some(name) = &cli.manager {
        let (shown, _) = ViewOptions { show_status: true, ..options }.prepare(&subject.object);
        let subtree = manager::subtree(subject, &entries, &shown, name)?;
        return Ok(Section {
            text: printer::yaml(&subtree)?,
            json: json!({"manager": name, "applyConfiguration": subtree}),
        });
    }
    let (shown, hidden) = options.prepare(&subject.object);
    let labels: Vec<String> = entries.iter().map(|e| crate::subject::owner_label(e, cli.time, now)).collect();
    let mut text = format!("# {}\n", subject.display);
    text.push_str(&annotate::render(&shown, &entries, &labels));
    if !hidden.is_empty() {
        text.push_str(&format!("# hidden: {} (--show-status, --show-metadata show them)\n", hidden.join(", ")));
    }
    Ok(Section {
        text,
        json: json!({"managers": summary::json(&entries), "fields": fields::all_json(&shown, &entries, &options)}),
    })
}

/// Prints the sections: text separated as YAML documents, or one report document.
fn print(cli: &Cli, sections: Vec<(&Subject, Section)>) -> Result<()> {
    let Some(format) = cli.output else {
        let separator = if cli.summary || cli.field.is_some() || cli.tree { "\n" } else { "---\n" };
        let texts: Vec<String> = sections.into_iter().map(|(_, s)| s.text).collect();
        print!("{}", texts.join(separator));
        return Ok(());
    };
    if format == OutputFormat::Name {
        for (subject, _) in &sections {
            printer::print_object(&subject.reference(), format)?;
        }
        return Ok(());
    }
    let items: Vec<Value> = sections
        .into_iter()
        .map(|(subject, s)| {
            let mut item = json!({"object": subject.reference()});
            if let Some(source) = &subject.source {
                item["source"] = source.clone().into();
            }
            if let (Value::Object(item), Value::Object(more)) = (&mut item, s.json) {
                item.extend(more);
            }
            item
        })
        .collect();
    let doc = json!({"apiVersion": REPORT_API_VERSION, "kind": "OwnersReport", "items": items});
    printer::print_object(&doc, format)?;
    Ok(())
}

async fn run_conflicts(cli: &Cli, conn: &Connection, catalog: &ResourceCatalog) -> Result<ExitCode> {
    let selection = cli.selection.for_reading();
    if !selection.names_by_documents() || !selection.args.is_empty() || selection.is_query() {
        return Err(Error::usage(
            "--conflicts reads the configurations to apply from -f FILE or -k DIR; do not name or select objects",
        ));
    }
    let configs = selection::documents(&selection)?;
    let scope = NamespaceScope::of(conn);
    // Every file is checked before anything is asked, so a bad one fails fast.
    let targets = configs
        .iter()
        .map(|m| ObjectRef::from_manifest(&m.value, &m.source, catalog, &scope))
        .collect::<Result<Vec<_>>>()?;
    // A view of `owners plan` without force: the same prediction, the same dry run with --verify.
    let planner = Planner {
        conn,
        catalog,
        scope,
        schemas: tokio::sync::Mutex::new(Schemas::connected(conn)),
        field_manager: cli.field_manager.clone(),
        force: false,
        helm_conversion: false,
        dry_runs: if cli.verify { DryRuns::Unforced } else { DryRuns::None },
        namespaces_created: BTreeSet::new(),
        namespaces_absent: tokio::sync::Mutex::new(BTreeMap::new()),
    };
    let mut reports = Vec::new();
    for (m, target) in configs.iter().zip(&targets) {
        let planned = planner.plan_resolved(target, m.value.clone()).await?;
        let report = conflicts::ConflictReport::of(target.display(), &cli.field_manager, planned, cli.verify)?;
        reports.push((m, target, report));
    }
    let any_conflict = reports.iter().any(|(_, _, r)| !r.planned.conflicts.is_empty());
    let mismatch = reports.iter().any(|(_, _, r)| r.verified && !r.matches());
    match cli.output {
        None => {
            for (_, _, r) in &reports {
                print!("{}", conflicts::render(r));
            }
        }
        Some(OutputFormat::Name) => {
            for (m, _, _) in &reports {
                printer::print_object(&crate::subject::reference(&m.value), OutputFormat::Name)?;
            }
        }
        Some(format) => {
            let items: Vec<Value> = reports
                .iter()
                .map(|(m, target, r)| {
                    let mut object = crate::subject::reference(&m.value);
                    // Where the apply would go: the reference's namespace, none for cluster-scoped types.
                    if let Some(namespace) = &target.namespace {
                        object["namespace"] = namespace.clone().into();
                    } else if let Value::Object(map) = &mut object {
                        map.remove("namespace");
                    }
                    json!({"object": object, "source": m.source, "conflicts": conflicts::json(r)})
                })
                .collect();
            let doc = json!({"apiVersion": REPORT_API_VERSION, "kind": "OwnersReport", "items": items});
            printer::print_object(&doc, format)?;
        }
    }
    if mismatch {
        return Err(Error::PredictionDisagrees);
    }
    Ok(exit_code::found_if(any_conflict))
}
