//! What `kubectl owners watch` prints: a line per changed field on a terminal, or JSON Lines
//! (`change`, `fight`, `churn`, `deleted`, `summary`; docs/owners-output.md). Every value
//! goes through the redaction boundary ([`fieldwise_kube::redact::value_at_path`]).

use std::collections::HashSet;
use std::time::Duration;

use colored::Colorize;
use fieldwise_core::fieldpath::Path;
use fieldwise_core::ownership::blame::{Attribution, FieldChange, Writer};
use fieldwise_core::ownership::fights::{Churn, Fight, FoughtObject};
use fieldwise_kube::api::reference::display_name;
use fieldwise_kube::api::unread::Unreadable;
use fieldwise_kube::output::{stdout, values};
use fieldwise_kube::redact;
use fieldwise_kube::Result;
use jiff::{Timestamp, Unit};
use serde_json::{json, Value};

/// One changed field of one event.
#[derive(Debug, Clone)]
pub struct Change {
    /// When the event was received.
    pub time: Timestamp,
    kind: String,
    namespace: Option<String>,
    name: String,
    /// The object, as fights are counted and ignore rules select it.
    pub subject: FoughtObject,
    path: Path,
    /// The field in kubectl's notation (`.data.x`).
    pub field: String,
    secret: bool,
    before: Option<Value>,
    /// The value after (not redacted: fights compare values).
    pub after: Option<Value>,
    /// Who made it.
    pub attribution: Attribution,
}

impl Change {
    /// The change `change` of `object` (the version after it), received at `time`.
    pub fn new(time: Timestamp, object: &Value, change: FieldChange, attribution: Attribution) -> Change {
        let meta = &object["metadata"];
        let display = display_name(object);
        let unique = match meta["namespace"].as_str() {
            Some(ns) => format!("{ns}/{display}"),
            None => display,
        };
        Change {
            subject: FoughtObject::of(object, unique),
            time,
            kind: object["kind"].as_str().unwrap_or_default().to_string(),
            namespace: meta["namespace"].as_str().map(String::from),
            name: meta["name"].as_str().unwrap_or_default().to_string(),
            field: change.path.to_string(),
            path: change.path,
            secret: redact::is_secret(object),
            before: change.before,
            after: change.after,
            attribution,
        }
    }

    /// The object, unique across namespaces: what fights are counted per.
    pub fn object_display(&self) -> String {
        self.subject.display.clone()
    }

    fn shown(&self, value: &Option<Value>) -> Value {
        value.as_ref().map_or(Value::Null, |v| redact::value_at_path(self.secret, &self.path, v))
    }

    fn object_json(&self) -> serde_json::Map<String, Value> {
        let mut map = serde_json::Map::new();
        map.insert("kind".into(), json!(self.kind));
        map.insert("namespace".into(), json!(self.namespace));
        map.insert("name".into(), json!(self.name));
        map
    }
}

/// How the watch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// `--for` ran out.
    Duration,
    /// SIGINT or SIGTERM.
    Signal,
    /// `--until-fight` saw one.
    Fight,
    /// Every watch ended (nothing left to watch).
    Closed,
    /// An answer that will not change by asking again (403, 404...): the error follows.
    Error,
}

impl Ending {
    fn word(self) -> &'static str {
        match self {
            Ending::Duration => "duration",
            Ending::Signal => "signal",
            Ending::Fight => "fight",
            Ending::Closed => "closed",
            Ending::Error => "error",
        }
    }
}

/// The counts of the `summary` record.
#[derive(Debug, Default)]
pub struct Summary {
    changes: usize,
    unattributed: usize,
    objects: HashSet<String>,
    deleted: usize,
    /// Fights seen.
    pub fights: usize,
    churn: usize,
    /// How long the watch ran.
    pub seconds: f64,
    /// How it ended.
    pub ending: Option<Ending>,
    /// Connection outages (each reported once, however many watches it hit).
    pub outages: usize,
    /// Whether it ended during an outage: changes since the connection was lost are unknown.
    pub disconnected: bool,
}

/// Prints records as they come, counting them for the summary.
#[derive(Debug)]
pub struct Printer {
    /// JSON Lines rather than text.
    pub json: bool,
    /// The counts so far.
    pub summary: Summary,
}

/// `manager`, `operation`, `subresource` of a writer.
fn writer_json(writer: &Writer) -> Value {
    json!({"manager": writer.manager, "operation": writer.operation.as_str(), "subresource": writer.subresource})
}

fn line(record: Value) -> Result<()> {
    stdout::write(&format!("{record}\n"))
}

fn seconds(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

impl Printer {
    /// One changed field.
    pub fn change(&mut self, change: &Change) -> Result<()> {
        self.summary.changes += 1;
        self.summary.objects.insert(change.object_display());
        let (before, after) = (change.shown(&change.before), change.shown(&change.after));
        if self.json {
            let mut record = serde_json::Map::new();
            record.insert("type".into(), json!("change"));
            record.insert("time".into(), json!(millis(change.time)));
            record.extend(change.object_json());
            record.insert("field".into(), json!(change.field));
            record.insert("before".into(), before);
            record.insert("after".into(), after);
            match &change.attribution {
                Attribution::Writer(writer) => {
                    let Value::Object(writer) = writer_json(writer) else { unreachable!("an object") };
                    record.extend(writer);
                }
                unattributed => {
                    self.summary.unattributed += 1;
                    for key in ["manager", "operation", "subresource"] {
                        record.insert(key.into(), Value::Null);
                    }
                    record.insert("unattributed".into(), json!(unattributed.unattributed_reason()));
                }
            }
            return line(Value::Object(record));
        }
        let who = match &change.attribution {
            Attribution::Writer(writer) => writer.display().bold().to_string(),
            unattributed => {
                self.summary.unattributed += 1;
                format!("unattributed ({})", unattributed.unattributed_reason().unwrap_or_default())
                    .yellow()
                    .to_string()
            }
        };
        let text = |v: &Value| if v.is_null() { "<none>".to_string() } else { values::one_line(v) };
        stdout::write(&format!(
            "{}  {}  {}  {} -> {}  by {who}\n",
            change.time.strftime("%H:%M:%S"),
            change.object_display(),
            change.field.cyan(),
            text(&before),
            text(&after),
        ))
    }

    /// A fight over the field of `change` (the change that completed it).
    pub fn fight(&mut self, fight: &Fight, change: &Change) -> Result<()> {
        self.summary.fights += 1;
        let shown: Vec<Value> = fight.values.iter().map(|v| change.shown(v)).collect();
        if self.json {
            let mut record = serde_json::Map::new();
            record.insert("type".into(), json!("fight"));
            record.extend(change.object_json());
            record.insert("field".into(), json!(fight.field));
            record.insert("managers".into(), fight.managers.iter().map(writer_json).collect());
            record.insert("flips".into(), json!(fight.flips));
            record.insert("period".into(), json!(seconds(fight.period_ms)));
            record.insert("values".into(), Value::Array(shown));
            record.insert("fix".into(), json!(fight.fix));
            if let Some(rule) = &fight.ignore {
                record.insert("ignore".into(), json!({"tool": rule.tool.word(), "snippet": rule.snippet}));
            }
            return line(Value::Object(record));
        }
        let managers: Vec<String> = fight.managers.iter().map(Writer::display).collect();
        let values: Vec<String> = shown.iter().map(values::one_line).collect();
        stdout::write(&format!(
            "{} {} {}: {} flipped it {} times in {:.1}s (values {})\n  fix: {}\n",
            "FIGHT".red().bold(),
            change.object_display(),
            fight.field.cyan(),
            managers.join(" and "),
            fight.flips,
            seconds(fight.period_ms),
            values.join(", "),
            // The snippet of an ignore rule, under the fix's first line.
            fight.fix.replace('\n', "\n    ")
        ))
    }

    /// One manager's churn of a field.
    pub fn churn(&mut self, churn: &Churn, change: &Change) -> Result<()> {
        self.summary.churn += 1;
        if self.json {
            let mut record = serde_json::Map::new();
            record.insert("type".into(), json!("churn"));
            record.extend(change.object_json());
            record.insert("field".into(), json!(churn.field));
            record.insert("manager".into(), writer_json(&churn.manager));
            record.insert("changes".into(), json!(churn.changes));
            record.insert("period".into(), json!(seconds(churn.period_ms)));
            return line(Value::Object(record));
        }
        stdout::write(&format!(
            "{} {} {}: {} changed it {} times in {:.1}s, alone (not a fight)\n",
            "CHURN".yellow().bold(),
            change.object_display(),
            churn.field.cyan(),
            churn.manager.display(),
            churn.changes,
            seconds(churn.period_ms)
        ))
    }

    /// An object deleted (or gone from the selection).
    pub fn deleted(&mut self, time: Timestamp, object: &Value) -> Result<()> {
        self.summary.deleted += 1;
        let meta = &object["metadata"];
        if self.json {
            return line(json!({"type": "deleted", "time": millis(time), "kind": object["kind"],
                               "namespace": meta["namespace"], "name": meta["name"]}));
        }
        stdout::write(&format!("{}  {}  deleted\n", time.strftime("%H:%M:%S"), display_name(object)))
    }

    /// The summary record or line, naming what was not watched (`unread`, allowed by `--allow-unreadable`).
    pub fn finish(&mut self, unread: &Unreadable) -> Result<()> {
        let s = &self.summary;
        let ended = s.ending.map_or("closed", Ending::word);
        if self.json {
            let mut record = json!({"type": "summary", "changes": s.changes, "objects": s.objects.len(),
                               "unattributed": s.unattributed, "deleted": s.deleted, "fights": s.fights,
                               "churn": s.churn, "seconds": (s.seconds * 10.0).round() / 10.0, "ended": ended,
                               "outages": s.outages, "disconnected": s.disconnected});
            if !unread.is_empty() {
                record["unread"] = unread.to_json();
            }
            return line(record);
        }
        if let Some(unread) = unread.text_line() {
            stdout::write(&format!("{unread}\n"))?;
        }
        let mut outages = String::new();
        if s.outages > 0 {
            outages = format!("; {} connection outage(s)", s.outages);
        }
        if s.disconnected {
            outages.push_str(", ended disconnected");
        }
        stdout::write(&format!(
            "Watched {:.1}s (ended by {ended}): {} change(s) to {} object(s), {} unattributed, {} deleted; \
             {} fight(s), {} churn{outages}.\n",
            s.seconds,
            s.changes,
            s.objects.len(),
            s.unattributed,
            s.deleted,
            s.fights,
            s.churn
        ))
    }
}

/// RFC 3339 with milliseconds, UTC.
fn millis(time: Timestamp) -> String {
    time.round(Unit::Millisecond).map_or_else(|_| time.to_string(), |t| t.to_string())
}

/// How the watch will end, for the line that says it started.
pub fn stop_hint(limit: Option<Duration>, until_fight: bool) -> String {
    let mut ends = Vec::new();
    if let Some(limit) = limit {
        ends.push(format!("for {:.0?}", limit));
    }
    if until_fight {
        ends.push("until the first fight".into());
    }
    ends.push("Ctrl-C stops with a summary".into());
    ends.join(", ")
}
