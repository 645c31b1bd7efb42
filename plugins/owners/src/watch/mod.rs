//! `kubectl owners watch`: live blame. Lists the selection, then follows every change and
//! prints, field by field, the value before and after and the manager whose managedFields
//! entry moved with it; fights between managers over a field are named, with the fix.
//!
//! Thin: the list-then-watch (resume, relist on 410 Gone) is the glue's
//! ([`fieldwise_kube::api::watch`]); what changed and who changed it is the core's
//! ([`fieldwise_core::ownership::blame`]), and so is what a fight is
//! ([`fieldwise_core::ownership::fights`]). This module keeps each object's last version,
//! filters `--field`, and prints ([`records`]).

mod records;

use std::collections::{HashMap, HashSet};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use fieldwise_core::fieldpath::{parse_field_path, Path};
use fieldwise_core::ownership::blame::{attribute, changed_fields, Attribution};
use fieldwise_core::ownership::fights::{FightRules, FightWatch, Finding};
use fieldwise_core::ownership::{managed_fields_of, ManagedFieldsEntry};
use fieldwise_kube::api::discovery::ResourceCatalog;
use fieldwise_kube::api::unread::{self, Unread, Unreadable};
use fieldwise_kube::api::watch::{self, Event};
use fieldwise_kube::cli::gate_flags::GateFlags;
use fieldwise_kube::cli::selection_flags::SelectionFlags;
use fieldwise_kube::conn::client;
use fieldwise_kube::conn::duration::{self, Units};
use fieldwise_kube::conn::flags::KubeFlags;
use fieldwise_kube::exit_code;
use fieldwise_kube::output::OutputFormat;
use fieldwise_kube::write::interrupt::{self, Summarizing};
use fieldwise_kube::{Error, Result};
use futures::StreamExt;
use jiff::Timestamp;
use serde_json::{json, Value};

use self::records::{Change, Ending, Printer, Summary};

/// `watch`'s flags.
#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct WatchArgs {
    /// The objects to watch (TYPE/NAME, TYPE, -f, -l, -A, ...).
    #[command(flatten)]
    pub selection: SelectionFlags,

    /// Only changes of this field or inside it (repeatable), e.g. spec.replicas or data.x;
    /// a list changed whole is shown when the field is inside it.
    #[arg(long = "field", value_name = "PATH")]
    pub fields: Vec<String>,

    /// Stop after this long (Go duration: 30s, 5m, 1h); without it, until Ctrl-C.
    #[arg(long = "for", value_name = "DURATION")]
    pub duration: Option<String>,

    /// Stop at the first fight.
    #[arg(long)]
    pub until_fight: bool,

    /// How many flips between managers (a field set to another value by another manager)
    /// make a fight; one manager changing a field that often alone is churn.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub fight_flips: u32,

    /// How far back flips count (Go duration).
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub fight_window: String,

    /// Show Secret values (redacted as *** by default).
    #[arg(long = "show-secrets")]
    pub show_secrets: bool,

    /// json: JSON Lines, one record per line (change, fight, churn, deleted, summary; shape:
    /// docs/owners-output.md).
    #[arg(short = 'o', long, value_enum)]
    pub output: Option<OutputFormat>,

    /// --allow-unreadable (here: watch a named object that does not exist yet, and wait for it).
    #[command(flatten)]
    pub gate: GateFlags,
}

const EXAMPLES: &str = "Exit codes: 0 no fight seen; 1 error (a named object that does not exist, or types the
account may not list or watch, unless --allow-unreadable; an answer that will not change, e.g. 403: after the
summary); 3 a fight was seen; 130/143 stopped by SIGINT/SIGTERM (after the summary). A lost connection
never ends the watch: it reconnects with backoff until --for ends, and --request-timeout bounds each
request, not the watch.

Examples:
  # Who changes this Deployment, field by field, until Ctrl-C
  kubectl owners watch deploy/web

  # Only replicas, for ten minutes; exit 3 if managers fight over it
  kubectl owners watch deploy/web --field spec.replicas --for 10m

  # Every ConfigMap labelled app=web in every namespace, as JSON Lines, until the first fight
  kubectl owners watch cm -l app=web -A -o json --until-fight

  # A ConfigMap that does not exist yet: wait for it instead of failing with NotFound
  kubectl owners watch cm/settings --allow-unreadable";

/// What is kept of one object between its versions: the object (for the comparison) and
/// its managedFields entries.
struct Known {
    object: Value,
    entries: Vec<ManagedFieldsEntry>,
}

/// Runs `kubectl owners watch`.
pub async fn run(kube: &KubeFlags, args: &WatchArgs) -> Result<ExitCode> {
    let json = match args.output {
        None => false,
        Some(OutputFormat::Json) => true,
        Some(other) => {
            return Err(Error::usage(format!(
                "-o {}: owners watch prints a stream of records; use -o json (JSON Lines)",
                format!("{other:?}").to_lowercase()
            )))
        }
    };
    if json {
        colored::control::set_override(false);
    } else {
        fieldwise_kube::output::color::init();
    }
    fieldwise_kube::redact::set_show_secrets(args.show_secrets);
    let parse = |flag: &str, text: &str| {
        duration::parse(text, Units::Go).map_err(|e| Error::usage(format!("{flag} {text:?}: {e}")))
    };
    let limit = args.duration.as_deref().map(|text| parse("--for", text)).transpose()?;
    let window = parse("--fight-window", &args.fight_window)?;
    let fields = args.fields.iter().map(|text| field_filter(text)).collect::<Result<Vec<Path>>>()?;
    let rules =
        FightRules { flips: args.fight_flips as usize, window_ms: window.as_millis().min(i64::MAX as u128) as i64 };

    // From here on a first SIGINT or SIGTERM ends the watch with its summary, whatever it
    // is doing (connecting, listing, waiting out an outage): a watch writes nothing.
    let _summarizing = Summarizing::start();
    let started = std::time::Instant::now();
    let mut printer = Printer { json, summary: Summary::default() };
    let setup = async {
        let conn = client::connect(kube).await?;
        let catalog = ResourceCatalog::fetch(&conn).await?;
        let queries = watch::queries(&conn, &catalog, &args.selection.for_reading())?;
        Ok::<_, Error>((conn, queries))
    };
    let (conn, queries) = tokio::select! {
        ready = setup => ready?,
        _ = interrupt::stopped() => {
            printer.summary.seconds = started.elapsed().as_secs_f64();
            printer.summary.ending = Some(Ending::Signal);
            printer.finish(&args.gate.gate())?;
            return Ok(exit_code::exit(exit_code::DONE));
        }
    };

    let mut fights = FightWatch::new(rules);
    let mut known: HashMap<(usize, String), Known> = HashMap::new();
    let mut events = std::pin::pin!(watch::watch_all(&conn, queries.clone()));
    let mut listed = 0;
    let mut unread = args.gate.gate();
    let mut outage = Outage::default();
    let until = match limit {
        Some(limit) => format!("until --for {limit:.0?} ends or Ctrl-C"),
        None => "until Ctrl-C".to_string(),
    };
    let deadline = tokio::time::sleep(limit.unwrap_or(duration::MAX).min(Duration::from_secs(100 * 365 * 86_400)));
    let mut deadline = std::pin::pin!(deadline);
    let mut failure = None;
    let ending = loop {
        let (query, event) = tokio::select! {
            next = events.next() => match next {
                // A query the server will not list or watch: named, and the gate decides
                // once every query has been listed.
                Some((query, Err(e))) if listed < queries.len() && unread::is_refusal_to_read(&e) => {
                    unread.add(Unread::of_type(&queries[query].resource, queries[query].namespace.as_deref(), &e));
                    listed += 1;
                    if listed == queries.len() {
                        started_watching(&unread, known.len(), limit, args.until_fight)?;
                    }
                    continue;
                }
                Some((query, Ok(event))) => (query, event),
                Some((_, Err(err))) => {
                    failure = Some(err);
                    break Ending::Error;
                }
                None => break Ending::Closed,
            },
            () = &mut deadline => break Ending::Duration,
            _ = interrupt::stopped() => break Ending::Signal,
        };
        let now = Timestamp::now();
        let mut seen = Vec::new();
        match event {
            Event::Listed(objects) => {
                if let (true, Some(target)) = (objects.is_empty(), queries[query].target()) {
                    unread.add(Unread::not_found(&target));
                }
                for object in objects {
                    remember(&mut known, query, object);
                }
                listed += 1;
                if listed == queries.len() {
                    started_watching(&unread, known.len(), limit, args.until_fight)?;
                }
            }
            Event::Added(object) | Event::Modified(object) => {
                seen.extend(compare(&mut known, query, object, &fields, now));
            }
            Event::Deleted(object) => {
                known.remove(&(query, uid(&object)));
                printer.deleted(now, &object)?;
            }
            Event::Relisted(objects) => {
                eprintln!("The watch's resourceVersion expired (410 Gone): listed again, changes found by comparing");
                let uids: HashSet<String> = objects.iter().map(uid).collect();
                let gone: Vec<(usize, String)> =
                    known.keys().filter(|(q, u)| *q == query && !uids.contains(u)).cloned().collect();
                for key in gone {
                    if let Some(old) = known.remove(&key) {
                        printer.deleted(now, &old.object)?;
                    }
                }
                for object in objects {
                    seen.extend(compare(&mut known, query, object, &fields, now));
                }
            }
            Event::Resumed { from } => eprintln!("The watch ended and was resumed from resourceVersion {from}"),
            Event::Lost { reason } => {
                if outage.lost(query) {
                    printer.summary.outages += 1;
                    eprintln!(
                        "warning: lost the connection to {} ({reason}); reconnecting with backoff {until}",
                        conn.server
                    );
                }
            }
            Event::Reconnected { down, failed, resumed_from } => {
                if outage.back(query) {
                    let how = match resumed_from {
                        Some(from) => format!("resumed from resourceVersion {from}: no change missed"),
                        None => "listed again: changes found by comparing".to_string(),
                    };
                    eprintln!("Reconnected after {:.1}s ({failed} failed attempt(s)); {how}", down.as_secs_f64());
                }
            }
        }
        let mut fought = false;
        for change in seen {
            printer.change(&change)?;
            if let Attribution::Writer(writer) = &change.attribution {
                let at = change.time.as_millisecond();
                match fights.record(&change.subject, &change.field, at, writer, change.after.clone()) {
                    Some(Finding::Fight(fight)) => {
                        printer.fight(&fight, &change)?;
                        fought = true;
                    }
                    Some(Finding::Churn(churn)) => printer.churn(&churn, &change)?,
                    None => {}
                }
            }
        }
        if fought && args.until_fight {
            break Ending::Fight;
        }
    };
    if outage.is_down() {
        eprintln!("warning: the watch ended while disconnected: changes since the connection was lost are not known");
    }
    printer.summary.disconnected = outage.is_down();
    printer.summary.seconds = started.elapsed().as_secs_f64();
    printer.summary.ending = Some(ending);
    printer.finish(&unread)?;
    if let Some(err) = failure {
        return Err(err);
    }
    Ok(exit_code::found_if(printer.summary.fights > 0))
}

/// Which queries' watches are disconnected: an outage of the connection hits every watch,
/// and is reported once, when the first is lost and when the last is back.
#[derive(Debug, Default)]
struct Outage {
    down: HashSet<usize>,
}

impl Outage {
    /// `query`'s watch lost its connection: whether this starts an outage.
    fn lost(&mut self, query: usize) -> bool {
        let first = self.down.is_empty();
        self.down.insert(query);
        first
    }

    /// `query`'s watch is back: whether this ends the outage.
    fn back(&mut self, query: usize) -> bool {
        self.down.remove(&query) && self.down.is_empty()
    }

    fn is_down(&self) -> bool {
        !self.down.is_empty()
    }
}

/// The line that says the watch started, once every query is listed; or, when something
/// could not be listed (a named object that does not exist, a type the account may not list
/// or watch), the gate's refusal: `kubectl get -w cm/nosuch` fails with NotFound too.
fn started_watching(unread: &Unreadable, objects: usize, limit: Option<Duration>, until_fight: bool) -> Result<()> {
    unread.end(exit_code::DONE)?;
    let waiting = match unread.text_line() {
        Some(line) => format!(" {line}"),
        None => String::new(),
    };
    eprintln!("Watching {objects} object(s); {}{waiting}", records::stop_hint(limit, until_fight));
    Ok(())
}

/// `--field TEXT` as a path: kubectl's or JSONPath's spelling, list items by key
/// (`containers[name=app]`) as typed.
fn field_filter(text: &str) -> Result<Path> {
    parse_field_path(text, &Value::Null, fieldwise_core::schema::builtin(), None)
        .map_err(|e| Error::usage(format!("--field: {e}")))
}

/// An object's identity across its versions.
fn uid(object: &Value) -> String {
    let meta = &object["metadata"];
    match meta["uid"].as_str() {
        Some(uid) => uid.to_string(),
        None => format!("{}/{}", meta["namespace"].as_str().unwrap_or(""), meta["name"].as_str().unwrap_or("")),
    }
}

/// Keeps `object` as the last version seen: its managedFields parsed, not twice.
fn remember(known: &mut HashMap<(usize, String), Known>, query: usize, mut object: Value) -> Option<Known> {
    let entries = managed_fields_of(&object).unwrap_or_default();
    if let Some(Value::Object(meta)) = object.get_mut("metadata") {
        meta.remove("managedFields");
    }
    known.insert((query, uid(&object)), Known { object, entries })
}

/// The changes from the last version of `object` seen (none for a new object: every field)
/// to this one, each attributed to the entry that moved, keeping this version.
fn compare(
    known: &mut HashMap<(usize, String), Known>,
    query: usize,
    object: Value,
    fields: &[Path],
    now: Timestamp,
) -> Vec<Change> {
    let after_entries = managed_fields_of(&object).unwrap_or_default();
    let empty = json!({});
    let previous = known.get(&(query, uid(&object)));
    let (before, before_entries) = match previous {
        Some(k) => (&k.object, k.entries.as_slice()),
        None => (&empty, &[][..]),
    };
    let changes: Vec<Change> = changed_fields(before, &object)
        .into_iter()
        .filter(|c| {
            fields.is_empty()
                || fields.iter().any(|f| c.path.starts_with(f.elements()) || f.starts_with(c.path.elements()))
        })
        .map(|c| {
            let attribution = attribute(before_entries, &after_entries, &c.path);
            Change::new(now, &object, c, attribution)
        })
        .collect();
    remember(known, query, object);
    changes
}
