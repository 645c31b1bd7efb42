//! `scan`: every listable type (or the chosen ones) listed as metadata only, in
//! parallel; full objects fetched only for the candidates that need values
//! (missing annotations, to size the one kubectl would write; possibly stale ones).

use std::collections::{BTreeMap, HashSet};
use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Args;
use fieldwise_core::last_applied::{annotation_of, check, encode, rebuild, Finding};
use fieldwise_core::schema::{Gvk, Schema};
use fieldwise_kube::client::{self, Connection};
use fieldwise_kube::discovery::{ResourceCatalog, ResourceType};
use fieldwise_kube::error::{Error, Result};
use fieldwise_kube::flags::{KubeFlags, OutputFormat};
use fieldwise_kube::metadata_list::list_metadata;
use fieldwise_kube::objects::{self, ListOptions};
use fieldwise_kube::openapi::Schemas;
use fieldwise_kube::target::ObjectRef;
use futures::stream::{self, StreamExt};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;

use crate::{report, ScopeArgs};

/// Exit code when the scan found problems.
pub const EXIT_FINDINGS: u8 = 2;
/// Page size for lists.
const PAGE: u32 = 500;
/// Above this many candidates in one type, one full list beats a GET each.
const GET_EACH_UP_TO: usize = 10;

/// `scan`'s flags.
#[derive(Debug, Args)]
pub struct ScanArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,

    /// Print the report as json or yaml (shape: docs/last-applied-output.md; details never quote a value), or
    /// name (kind.group/name of each object with findings).
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<OutputFormat>,
}

/// One object with problems, and the full object when the scan fetched it.
#[derive(Debug, Clone)]
pub struct Flagged {
    /// The object.
    pub target: ObjectRef,
    /// What is wrong.
    pub findings: Vec<Finding>,
    /// The full object, when fetched (missing and stale candidates).
    pub live: Option<Value>,
}

/// A type the scan could not list, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// The type.
    pub resource: ResourceType,
    /// The server's answer.
    pub reason: String,
}

/// Everything a scan learned.
#[derive(Debug, Default)]
pub struct ScanResult {
    /// Objects with findings, sorted by type, namespace and name.
    pub flagged: Vec<Flagged>,
    /// Types that could not be listed.
    pub skipped: Vec<Skipped>,
    /// How many types were listed.
    pub types: usize,
    /// How many objects were looked at.
    pub objects: usize,
    /// The namespace scanned, `None` for all.
    pub namespace: Option<String>,
}

/// Runs `kubectl last-applied scan`.
pub async fn run(kube: KubeFlags, args: ScanArgs) -> Result<ExitCode> {
    let conn = client::connect(&kube).await?;
    let catalog = ResourceCatalog::fetch(&conn).await?;
    let result = scan(&conn, &catalog, &args.scope).await?;
    report::print(&result, args.output)?;
    Ok(if result.flagged.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(EXIT_FINDINGS) })
}

/// The types to scan: the ones named, else every preferred type that can be listed and read
/// (one per kind and plural: `events` and `events.events.k8s.io` are the same objects).
pub fn types_to_scan(catalog: &ResourceCatalog, scope: &ScopeArgs) -> Result<Vec<ResourceType>> {
    if !scope.kinds.is_empty() {
        let mut out: Vec<ResourceType> = Vec::new();
        for name in scope.kinds.iter().map(|k| k.trim()).filter(|k| !k.is_empty()) {
            let t = catalog.resolve(name)?;
            if !t.supports("list") {
                return Err(Error::usage(format!(
                    "{} cannot be listed (the server does not allow it)",
                    t.plural_group()
                )));
            }
            if !out.contains(t) {
                out.push(t.clone());
            }
        }
        return Ok(out);
    }
    let mut seen = HashSet::new();
    Ok(catalog
        .types()
        .iter()
        .filter(|t| t.preferred && t.supports("list") && t.supports("get"))
        .filter(|t| scope.all_namespaces || t.namespaced)
        .filter(|t| seen.insert((t.plural.clone(), t.kind.clone())))
        .cloned()
        .collect())
}

/// Scans the types the scope names (see the module docs).
pub async fn scan(conn: &Connection, catalog: &ResourceCatalog, scope: &ScopeArgs) -> Result<ScanResult> {
    let types = types_to_scan(catalog, scope)?;
    let namespace = (!scope.all_namespaces).then(|| conn.namespace.clone());
    let progress = progress_bar(types.len());
    // One reader of the server's schemas for every type: each group-version is read once.
    let schemas = tokio::sync::Mutex::new(Schemas::connected(conn));
    let outcomes: Vec<(ResourceType, TypeOutcome)> = stream::iter(types)
        .map(|t| {
            let (namespace, progress, schemas) = (namespace.clone(), progress.clone(), &schemas);
            async move {
                progress.set_message(t.plural_group());
                let outcome = scan_type(conn, &t, namespace.as_deref(), scope, schemas).await;
                progress.inc(1);
                (t, outcome)
            }
        })
        .buffer_unordered(usize::from(scope.concurrency))
        .collect()
        .await;
    progress.finish_and_clear();
    let mut result = ScanResult { namespace, ..Default::default() };
    for (resource, outcome) in outcomes {
        match outcome {
            Ok((count, flagged)) => {
                result.types += 1;
                result.objects += count;
                result.flagged.extend(flagged);
            }
            // Not allowed, or not really listable: report it and go on with the rest.
            Err(Error::Api { code: 403..=406, reason, message, .. }) => {
                result.skipped.push(Skipped { resource, reason: format!("{reason}: {message}") })
            }
            Err(e) => return Err(e),
        }
    }
    let key = |f: &Flagged| (f.target.resource.plural_group(), f.target.namespace.clone(), f.target.name.clone());
    result.flagged.sort_by_key(key);
    result.skipped.sort_by_key(|s| s.resource.plural_group());
    Ok(result)
}

fn progress_bar(len: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len as u64);
    if let Ok(style) = ProgressStyle::with_template("scanning {bar:30} {pos}/{len} types {msg}") {
        bar.set_style(style);
    }
    bar
}

/// Lists one type's metadata, decides what it can from it, and fetches full objects for the rest.
/// The type's schema (from the server: types newer than the embedded schema too) is read only
/// when an object of the type carries an annotation to compare.
async fn scan_type(
    conn: &Connection,
    resource: &ResourceType,
    namespace: Option<&str>,
    scope: &ScopeArgs,
    schemas: &tokio::sync::Mutex<Schemas>,
) -> Result<(usize, Vec<Flagged>)> {
    let options = ListOptions { label_selector: scope.selector.clone(), field_selector: None, limit: Some(PAGE) };
    let ns = if resource.namespaced { namespace } else { None };
    let items = list_metadata(conn, resource, ns, &options).await?;
    // Compared as `kubectl apply` merges the kind: by key for built-in types, whole lists for
    // custom resources (see `TypeSchema::for_client_side_apply`).
    let typed = if items.iter().any(|item| annotation_of(item).is_some()) {
        let gvk = Gvk::new(&resource.group, &resource.version, &resource.kind);
        Some(schemas.lock().await.for_gvk(&gvk).await?)
    } else {
        None
    };
    let untyped = Schema::new();
    let schema: &Schema = typed.as_ref().map_or(&untyped, |t| t.for_client_side_apply().0);
    let mut flagged = Vec::new();
    let mut wanted = Vec::new();
    for item in &items {
        let mut findings = Vec::new();
        findings.extend(check::missing(item));
        findings.extend(check::leaking(item));
        let missing = !findings.is_empty() && findings[0].kind == fieldwise_core::last_applied::FindingKind::Missing;
        if !missing {
            findings.extend(check::oversized(item, None));
        }
        let need_full = missing || check::stale_candidate(item, schema);
        let target = ObjectRef {
            resource: resource.clone(),
            namespace: item.pointer("/metadata/namespace").and_then(Value::as_str).map(String::from),
            name: item.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string(),
        };
        if need_full {
            wanted.push(flagged.len());
        }
        flagged.push(Flagged { target, findings, live: None });
    }
    if !wanted.is_empty() {
        let full = fetch_full(conn, resource, ns, &options, &flagged, &wanted).await?;
        for index in wanted {
            let f = &mut flagged[index];
            let Some(live) = full.get(&(f.target.namespace.clone(), f.target.name.clone())) else { continue };
            if f.findings.iter().any(|x| x.kind == fieldwise_core::last_applied::FindingKind::Missing) {
                let would_write = rebuild(live).ok().map(|config| encode(&config, f.target.namespace.as_deref()));
                f.findings.extend(check::oversized(live, would_write.as_deref()));
            } else {
                f.findings.extend(check::stale(live, schema));
            }
            f.live = Some(live.clone());
        }
    }
    let count = items.len();
    flagged.retain(|f| !f.findings.is_empty());
    for f in &mut flagged {
        f.findings.sort_by_key(|x| x.kind);
    }
    Ok((count, flagged))
}

/// One type's scan: how many objects, and those with findings.
type TypeOutcome = Result<(usize, Vec<Flagged>)>;

type ByName = BTreeMap<(Option<String>, String), Value>;

/// Full objects for the candidates: a GET each when few, else one (paginated) list.
async fn fetch_full(
    conn: &Connection,
    resource: &ResourceType,
    namespace: Option<&str>,
    options: &ListOptions,
    flagged: &[Flagged],
    wanted: &[usize],
) -> Result<ByName> {
    let key = |v: &Value| {
        let ns = v.pointer("/metadata/namespace").and_then(Value::as_str).map(String::from);
        (ns, v.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string())
    };
    let mut out = ByName::new();
    if wanted.len() > GET_EACH_UP_TO {
        for object in objects::list(conn, resource, namespace, options).await? {
            out.insert(key(&object), object);
        }
        return Ok(out);
    }
    for &index in wanted {
        match objects::get(conn, &flagged[index].target, None).await {
            Ok(object) => {
                out.insert(key(&object), object);
            }
            Err(e) if e.is_not_found() => {} // deleted since the list
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}
