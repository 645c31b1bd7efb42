//! `kubectl owners drift`: every field of the selected objects owned by a manager an
//! ownership policy does not expect there, with the manager's class and the fix; or
//! (`--learn`) the smallest policy today's owners satisfy. Thin: the policy, its check and
//! its learning are `fieldwise_core::ownership::policy`'s; the objects come from the one
//! selection and listing engine; the printers are the glue's. This module parses, calls
//! and prints.

mod report;

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use fieldwise_core::ownership::managed_fields_of;
use fieldwise_core::ownership::policy::{parse_policy, Learner, Policy, PolicyChecker};
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::listing::{
    listable_types, AsListed, ListOptions, Lister, Representation, Scope, Selectors, TypeEvent,
};
use fieldwise_kube::api::selection;
use fieldwise_kube::api::unread::{self, Unread, Unreadable};
use fieldwise_kube::cli::gate_flags::GateFlags;
use fieldwise_kube::cli::selection_flags::SelectionFlags;
use fieldwise_kube::conn::client::{self, Connection};
use fieldwise_kube::conn::duration::{self, Units};
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::exit_code;
use fieldwise_kube::local::input;
use fieldwise_kube::output::{color, stdout};
use fieldwise_kube::{Error, Result};
use futures::StreamExt;
use jiff::Timestamp;
use serde_json::Value;

use self::report::{DriftReport, ObjectReport};
use crate::age::TimeStyle;

const EXAMPLES: &str = "Exit codes: 0 no violation; 3 violations found; 1 error (a policy that cannot be read,
objects that cannot be listed, or types and objects the account may not read or that do not exist,
unless --allow-unreadable: every output format names them either way).

Examples:
  # Learn a policy from today's owners, then gate on it in CI
  kubectl owners drift -A --learn > policy.yaml
  kubectl owners drift -A --policy policy.yaml

  # The Deployments of one namespace, labelled app=web
  kubectl owners drift deploy -l app=web -n prod --policy policy.yaml

  # Only what changed in the last hour, or since a time
  kubectl owners drift deploy,cm --policy policy.yaml --since 1h
  kubectl owners drift -f manifests/ -R --policy policy.yaml --since 2026-11-27T09:00:00Z

  # The same allowed fields for Argo CD (an Application's spec) or Flux (a HelmRelease's spec)
  kubectl owners drift --policy policy.yaml --emit argocd

  # For CI: JSON (shape: docs/ownership-policy.md), JUnit, or SARIF for code scanning
  kubectl owners drift -A --policy policy.yaml -o junit > drift.xml
  kubectl owners drift -A --policy policy.yaml -o sarif > drift.sarif";

/// Output formats of drift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DriftOutput {
    /// The report (or with --learn, the policy) as JSON.
    Json,
    /// The report (or with --learn, the policy) as YAML.
    Yaml,
    /// A JUnit report: one test case per object, failed when it has violations.
    Junit,
    /// A SARIF 2.1.0 log: one result per violation, the policy's rule as ruleId.
    Sarif,
}

/// The GitOps tools `--emit` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GitOpsTool {
    /// Argo CD: `ignoreDifferences` of an Application's spec.
    Argocd,
    /// Flux: `driftDetection` of a HelmRelease's spec.
    Flux,
}

/// Fields owned against an ownership policy (docs/ownership-policy.md): the field, its
/// manager, operation, subresource, time, class, value, and the fix.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct DriftArgs {
    /// The objects (TYPE/NAME, TYPE, -f, -l, -A, ...); with no TYPE and no file, every type.
    #[command(flatten)]
    pub selection: SelectionFlags,

    /// The OwnershipPolicy to check against (YAML; schema: docs/ownership-policy.md).
    #[arg(long, value_name = "FILE", required_unless_present = "learn", conflicts_with = "learn")]
    pub policy: Option<String>,

    /// Print a policy today's owners satisfy (grouped by kind, as small as possible) instead of checking.
    #[arg(long)]
    pub learn: bool,

    /// Print the policy's allowed and ignored fields as Argo CD ignoreDifferences entries or Flux
    /// (HelmRelease) drift-ignore rules instead of checking; what they cannot express is noted.
    #[arg(long, value_enum, value_name = "TOOL", requires = "policy", conflicts_with_all = ["since", "targets", "filenames", "kustomize"])]
    pub emit: Option<GitOpsTool>,

    /// Only violations whose manager wrote after this: a duration ago (30m, 2h, 7d) or an RFC 3339
    /// time. Entries without a time (writes through /scale record none) are always shown.
    #[arg(long, value_name = "DURATION|TIME", conflicts_with = "learn")]
    pub since: Option<String>,

    /// How to show when managers wrote, in the table.
    #[arg(long, value_enum, default_value_t = TimeStyle::Relative)]
    pub time: TimeStyle,

    /// Show Secret values (hidden as *** by default).
    #[arg(long = "show-secrets")]
    pub show_secrets: bool,

    /// Machine output: json or yaml (shape: docs/ownership-policy.md), junit, or sarif.
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<DriftOutput>,

    /// --allow-unreadable.
    #[command(flatten)]
    pub gate: GateFlags,
}

/// Runs `kubectl owners drift`.
pub async fn run(kube: &KubeFlags, args: &DriftArgs) -> Result<ExitCode> {
    if args.output.is_none() {
        color::init();
    } else {
        colored::control::set_override(false);
    }
    fieldwise_kube::redact::set_show_secrets(args.show_secrets);
    if (args.learn || args.emit.is_some()) && matches!(args.output, Some(DriftOutput::Junit | DriftOutput::Sarif)) {
        return Err(Error::usage("--learn and --emit print YAML (or -o json), not junit or sarif"));
    }
    let policy = match &args.policy {
        Some(path) => Some(read_policy(path)?),
        None => None,
    };
    if let (Some(tool), Some(policy)) = (args.emit, &policy) {
        stdout::write(&report::emitted(policy, tool, args.output)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let since = args.since.as_deref().map(parse_since).transpose()?;
    let conn = client::connect(kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let mut sink = Sink {
        policy: policy.as_ref().map(PolicyChecker::new),
        since,
        learner: Learner::default(),
        report: DriftReport::default(),
    };
    let mut unread = args.gate.gate();
    each_object(&conn, &catalog, args, &mut unread, |object| sink.add(object)).await?;
    match &policy {
        None => {
            // A policy learned without some types is not today's owners: the same gate.
            if let Some(line) = unread.text_line() {
                eprintln!("note: {line}");
            }
            let policy = sink.learner.policy();
            stdout::write(&report::learned(&policy, args.output)?)?;
            unread.end(exit_code::DONE)
        }
        Some(policy) => {
            let path = args.policy.as_deref().unwrap_or_default();
            let report = sink.report;
            stdout::write(&report.render(args.output, policy, path, &unread, args.time, Timestamp::now())?)?;
            let found = report.summary.violations > 0;
            unread.end(if found { exit_code::FOUND } else { exit_code::DONE })
        }
    }
}

/// Reads and validates the policy file, naming it and the line in any error.
fn read_policy(path: &str) -> Result<Policy> {
    let text = if path == "-" {
        input::read_text(std::io::stdin(), "the policy (stdin)")?
    } else {
        input::read_file(std::path::Path::new(path), path)?
    };
    parse_policy(&text).map_err(|e| Error::usage(format!("{path}: {e}")))
}

/// `--since`: a duration before now, or a time.
fn parse_since(text: &str) -> Result<Timestamp> {
    if let Ok(ago) = duration::parse(text, Units::GoAndDays) {
        let ago = jiff::SignedDuration::try_from(ago).map_err(|_| Error::usage(format!("--since {text}: too long")))?;
        return Timestamp::now()
            .checked_sub(ago)
            .map_err(|_| Error::usage(format!("--since {text}: before the earliest time there is")));
    }
    text.parse::<Timestamp>().map_err(|_| {
        Error::usage(format!(
            "--since {text:?}: expected a duration (30m, 2h, 7d) or an RFC 3339 time (2026-11-27T09:00:00Z)"
        ))
    })
}

/// Where each object goes: the check (with `--since`; its rules indexed once for the run)
/// or the learner.
struct Sink<'p> {
    policy: Option<PolicyChecker<'p>>,
    since: Option<Timestamp>,
    learner: Learner,
    report: DriftReport,
}

impl Sink<'_> {
    fn add(&mut self, object: Value) -> Result<()> {
        let display = fieldwise_kube::api::reference::display_name(&object);
        let entries = managed_fields_of(&object).map_err(|e| Error::semantics(display.clone(), e))?;
        let Some(policy) = &self.policy else {
            self.learner.add(&object, &entries);
            return Ok(());
        };
        let mut check = policy.check(&object, &entries);
        if let Some(since) = self.since {
            // An entry without a time (the apiserver records none for writes through
            // /scale) may be recent: it is kept, never hidden.
            check.violations.retain(|v| match entries[v.entry].time.as_deref() {
                Some(time) => time.parse::<Timestamp>().map_or(true, |t| t >= since),
                None => true,
            });
        }
        self.report.add(ObjectReport::new(display, &object, &entries, check));
        Ok(())
    }
}

/// Calls `add` with every selected object: the named or `-f` objects of the one selection,
/// or the objects of its types (every listable type with no TYPE and no file), streamed page
/// by page through the listing engine, so memory stays flat however many there are. What the
/// server declines to show (forbidden, not found) goes into `unread`, for the report and the
/// gate; a type removed since discovery, of every type, has nothing left to read and is only
/// noted. Any other failure ends the check.
async fn each_object(
    conn: &Connection,
    catalog: &ResourceCatalog,
    args: &DriftArgs,
    unread: &mut Unreadable,
    mut add: impl FnMut(Value) -> Result<()>,
) -> Result<()> {
    let query = &args.selection.query;
    let scope = Scope::of(conn, query.all_namespaces);
    let named_types = args.selection.names_objects();
    let types = if named_types {
        let selected = args.selection.for_reading();
        match selection::listed_types(catalog, &selected)? {
            Some(types) => types,
            None => {
                for (target, live) in selection::read_each(conn, catalog, &selected).await? {
                    match live {
                        Ok(live) => add(live)?,
                        Err(e) if unread::is_refusal_to_read(&e) => unread.add(Unread::of_object(&target, &e)),
                        Err(e) => return Err(e),
                    }
                }
                return Ok(());
            }
        }
    } else if args.selection.recursive {
        return Err(Error::usage("-R reads the subdirectories of -f directories: give -f DIR with it"));
    } else {
        listable_types(catalog, &scope)
    };
    let selectors = Selectors { label: query.selector.clone(), field: query.field_selector.clone() };
    let lister = Lister::new(conn, scope, selectors, ListOptions::default());
    let mut events = std::pin::pin!(lister.check_types(types, |_| AsListed(Representation::Full)));
    while let Some(event) = events.next().await {
        match event {
            TypeEvent::Page(items) => items.into_iter().try_for_each(&mut add)?,
            TypeEvent::Done { .. } => {}
            TypeEvent::Skipped { resource, error } if !named_types && unread::is_gone(&error) => {
                eprintln!("note: {} skipped: {error}", resource.plural)
            }
            TypeEvent::Skipped { resource, error } => {
                let namespace = lister.scope().namespace_for(&resource).map(String::from);
                unread.add(Unread::of_type(&resource, namespace.as_deref(), &error));
            }
            TypeEvent::Failed { error, .. } => return Err(error),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_durations_and_times() {
        let hour_ago = parse_since("1h").unwrap();
        let delta = Timestamp::now().as_second() - hour_ago.as_second();
        assert!((3599..=3601).contains(&delta), "{delta}");
        assert_eq!(parse_since("2026-11-27T09:00:00Z").unwrap().to_string(), "2026-11-27T09:00:00Z");
        let err = parse_since("yesterday").unwrap_err().to_string();
        assert!(err.contains("expected a duration (30m, 2h, 7d) or an RFC 3339 time"), "{err}");
    }
}
