//! The scan report, written as the findings arrive: a table for people, `-o json|yaml` for
//! machines (still one valid document, streamed), `--json-lines` for pipelines (the shapes
//! are documented in docs/last-applied-output.md).
//!
//! The documents are written item by item, so nothing of them grows with the number of
//! findings; only the skipped types (at most one per type) wait for the end. The table is for
//! people and is aligned as a whole, as `kubectl get` aligns its own: its rows (a few short
//! strings per finding) wait for the end of the scan, up to [`TABLE_BLOCK`] of them; a larger
//! table goes on in blocks of that many, whose columns may only widen.

use std::io::Write;

use fieldwise_core::yaml;
use fieldwise_kube::api::unread::Unreadable;
use fieldwise_kube::error::Result;
use fieldwise_kube::output::stdout;
use serde_json::{json, Value};

use crate::flagged::{Flagged, Skipped};
use fieldwise_kube::output::listing_progress::ListingProgress;

/// Table rows aligned together before they are written: the whole table of any scan a person
/// reads, while the memory it holds stays bounded (some megabytes).
pub const TABLE_BLOCK: usize = 10_000;

/// The report's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// KIND, NAMESPACE, NAME, FINDING, DETAIL; skipped types on stderr.
    Table,
    /// One JSON document (`LastAppliedScan`).
    Json,
    /// The same document as YAML.
    Yaml,
    /// One finding per line; skipped types on stderr.
    JsonLines,
    /// `kind.group/name` of each object with findings, once (`-o name`, as kubectl prints
    /// names); skipped types on stderr.
    Name,
}

/// Writes one scan's report as it goes (to stdout in `scan`).
pub struct ReportWriter<'a, W: Write> {
    sink: W,
    format: Format,
    namespace: Option<String>,
    progress: &'a ListingProgress,
    findings: usize,
    objects: usize,
    types: usize,
    /// Objects left out as a controller's copy of their owner's annotation.
    controller_copies: usize,
    skipped: Vec<Skipped>,
    /// Table rows not yet written, and the column widths so far.
    rows: Vec<[String; 5]>,
    widths: [usize; 4],
    header_written: bool,
}

impl<'a, W: Write> ReportWriter<'a, W> {
    /// A report of a scan of `namespace` (`None`: all) written to `sink`.
    pub fn new(sink: W, format: Format, namespace: Option<String>, progress: &'a ListingProgress) -> Self {
        ReportWriter {
            sink,
            format,
            namespace,
            progress,
            findings: 0,
            objects: 0,
            types: 0,
            controller_copies: 0,
            skipped: Vec::new(),
            rows: Vec::new(),
            widths: ["KIND".len(), "NAMESPACE".len(), "NAME".len(), "FINDING".len()],
            header_written: false,
        }
    }

    /// Writes what comes before the findings.
    pub fn begin(&mut self) -> Result<()> {
        match self.format {
            Format::Json => self.out(&format!("{}\"findings\": [", json_head(&self.namespace))),
            Format::Yaml => self.out(&yaml_head(&self.namespace)?),
            Format::Table | Format::JsonLines | Format::Name => Ok(()),
        }
    }

    /// Writes an object's findings.
    pub fn flagged(&mut self, f: &Flagged) -> Result<()> {
        if self.format == Format::Name {
            self.findings += f.findings.len();
            return self.out(&format!("{}\n", f.target.display()));
        }
        for (index, value) in finding_values(f).enumerate() {
            let text = match self.format {
                Format::Json => {
                    let separator = if self.findings + index == 0 { "\n" } else { ",\n" };
                    format!("{separator}{}", indent(&serde_json::to_string_pretty(&value)?, "    ", true))
                }
                Format::Yaml => {
                    let list = yaml::to_yaml(&Value::Array(vec![value.clone()]));
                    if self.findings + index == 0 {
                        format!("findings:\n{list}")
                    } else {
                        list
                    }
                }
                Format::JsonLines => format!("{}\n", serde_json::to_string(&value)?),
                Format::Table | Format::Name => String::new(),
            };
            self.out(&text)?;
        }
        if self.format == Format::Table {
            for x in &f.findings {
                self.rows.push([
                    f.target.resource.kind.clone(),
                    f.target.namespace.clone().unwrap_or_default(),
                    f.target.name.clone(),
                    x.kind.as_str().to_string(),
                    x.brief().to_string(),
                ]);
            }
            if self.rows.len() >= TABLE_BLOCK {
                self.flush_rows()?;
            }
        }
        self.findings += f.findings.len();
        Ok(())
    }

    /// Notes a type that could not be listed: on stderr at once for the table and JSON Lines,
    /// in the document's `skipped` list otherwise.
    /// JSON Lines also get a record of it on stdout (`{"skipped": {...}}`), so a pipeline
    /// that reads only stdout sees what was not scanned.
    pub fn skipped(&mut self, s: Skipped) -> Result<()> {
        if matches!(self.format, Format::Table | Format::JsonLines | Format::Name) {
            let line = format!("skipped {}: {}", s.resource.plural_group(), s.reason);
            self.progress.suspend(|| eprintln!("{line}"));
        }
        if self.format == Format::JsonLines {
            let record = json!({"skipped": skipped_value(&s)});
            self.out(&format!("{}\n", serde_json::to_string(&record)?))?;
        }
        self.skipped.push(s);
        Ok(())
    }

    /// Notes a type listed to the end, with its object count.
    pub fn type_done(&mut self, objects: usize) {
        self.types += 1;
        self.objects += objects;
    }

    /// Notes objects left out as a controller's copy of their owner's annotation
    /// ([`fieldwise_core::last_applied::controller_copy`]).
    pub fn controller_copies(&mut self, count: usize) {
        self.controller_copies += count;
    }

    /// Writes what comes after the findings; returns how many findings were reported. The
    /// table ends with what the scan could not read (`unread`, the gate's) and never calls
    /// such a scan clean.
    pub fn finish(mut self, unread: &Unreadable) -> Result<usize> {
        self.flush_rows()?;
        let skipped: Vec<Value> = self.skipped.iter().map(skipped_value).collect();
        let scanned = json!({"types": self.types, "objects": self.objects, "controllerCopies": self.controller_copies});
        let tail = json!({"skipped": skipped, "scanned": scanned});
        let text = match self.format {
            Format::Table if !unread.is_empty() => {
                let line = unread.text_line().unwrap_or_default();
                let found = match self.findings {
                    0 => "No last-applied problems".to_string(),
                    n => format!("{n} finding{}", if n == 1 { "" } else { "s" }),
                };
                format!(
                    "{line}\n{found} in the {} objects of {} types read; {} not read.\n",
                    self.objects,
                    self.types,
                    unread.count_text()
                )
            }
            Format::Table if self.findings == 0 => {
                let copies = match self.controller_copies {
                    0 => String::new(),
                    n => format!(" ({n} left out: made by a controller, with a copy of its owner's annotation)"),
                };
                format!("No last-applied problems in {} objects of {} types{copies}.\n", self.objects, self.types)
            }
            Format::Table | Format::JsonLines | Format::Name => String::new(),
            Format::Json => {
                let close = if self.findings == 0 { "],\n" } else { "\n  ],\n" };
                let body = serde_json::to_string_pretty(&tail)?;
                // The tail's members, without its braces, continue the open document.
                let members = body.trim_start_matches('{').trim_end_matches('}').trim_matches('\n');
                format!("{close}{members}\n}}\n")
            }
            Format::Yaml => {
                let none = if self.findings == 0 { "findings: []\n" } else { "" };
                format!("{none}{}", yaml::to_yaml(&tail))
            }
        };
        self.out(&text)?;
        Ok(self.findings)
    }

    /// Writes the buffered table rows, aligned with the widths seen so far (the header first).
    fn flush_rows(&mut self) -> Result<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let header = !self.header_written;
        self.header_written = true;
        for row in &self.rows {
            for (width, cell) in self.widths.iter_mut().zip(row) {
                *width = (*width).max(cell.len());
            }
        }
        let mut text = String::new();
        let header_row = ["KIND", "NAMESPACE", "NAME", "FINDING", "DETAIL"].map(String::from);
        for row in header.then_some(&header_row).into_iter().chain(&self.rows) {
            for (i, width) in self.widths.iter().enumerate() {
                text.push_str(&format!("{:<w$}   ", row[i], w = width));
            }
            text.push_str(&row[4]);
            text.push('\n');
        }
        self.rows.clear();
        self.out(&text)
    }

    /// Writes and flushes, so each piece reaches the reader as it is found; a closed pipe
    /// becomes [`fieldwise_kube::error::Error::StdoutClosed`] and stops the scan.
    fn out(&mut self, text: &str) -> Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        let sink = &mut self.sink;
        self.progress.suspend(|| sink.write_all(text.as_bytes()).and_then(|()| sink.flush())).map_err(stdout::from_io)
    }
}

/// A skipped type as the document's `skipped` list and a JSON Lines record hold it.
fn skipped_value(s: &Skipped) -> Value {
    json!({"apiVersion": s.resource.api_version(), "resource": s.resource.plural_group(), "reason": s.reason})
}

/// One document per finding of `f` (one object may have several).
pub fn finding_values(f: &Flagged) -> impl Iterator<Item = Value> + '_ {
    f.findings.iter().map(move |x| {
        json!({
            "apiVersion": f.target.resource.api_version(),
            "kind": f.target.resource.kind,
            "resource": f.target.resource.plural_group(),
            "namespace": f.target.namespace,
            "name": f.target.name,
            "finding": x.kind.as_str(),
            "detail": x.detail,
        })
    })
}

/// The document's opening members, up to where `"findings"` starts.
fn json_head(namespace: &Option<String>) -> String {
    let namespace = serde_json::to_string(namespace).unwrap_or_else(|_| "null".into());
    format!("{{\n  \"apiVersion\": \"fieldwise.dev/v1alpha1\",\n  \"kind\": \"LastAppliedScan\",\n  \"namespace\": {namespace},\n  ")
}

fn yaml_head(namespace: &Option<String>) -> Result<String> {
    let head = json!({"apiVersion": "fieldwise.dev/v1alpha1", "kind": "LastAppliedScan", "namespace": namespace});
    Ok(yaml::to_yaml(&head))
}

/// `text` with every line indented by `prefix` (the first too when `first`).
fn indent(text: &str, prefix: &str, first: bool) -> String {
    let body = text.replace('\n', &format!("\n{prefix}"));
    if first {
        format!("{prefix}{body}")
    } else {
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldwise_core::last_applied::{Finding, FindingKind};
    use fieldwise_kube::api::discovery::ResourceType;
    use fieldwise_kube::api::reference::ObjectRef;

    fn configmaps() -> ResourceType {
        ResourceType {
            group: String::new(),
            version: "v1".into(),
            plural: "configmaps".into(),
            singular: "configmap".into(),
            kind: "ConfigMap".into(),
            short_names: vec!["cm".into()],
            namespaced: true,
            verbs: vec!["get".into(), "list".into()],
            subresources: Vec::new(),
            preferred: true,
        }
    }

    fn flagged(name: &str, kinds: &[FindingKind]) -> Flagged {
        Flagged {
            target: ObjectRef { resource: configmaps(), namespace: Some("prod".into()), name: name.into() },
            findings: kinds.iter().map(|&kind| Finding::new(kind, format!("{} detail", kind.as_str()))).collect(),
            live: None,
        }
    }

    /// The report written by a ReportWriter fed `objects` (one type, 7 objects).
    fn streamed(objects: &[Flagged], format: Format) -> String {
        let progress = ListingProgress::new(1);
        let mut sink = Vec::new();
        let mut writer = ReportWriter::new(&mut sink, format, Some("prod".into()), &progress);
        writer.begin().unwrap();
        for f in objects {
            writer.flagged(f).unwrap();
        }
        writer.type_done(7);
        writer.finish(&Unreadable::default()).unwrap();
        String::from_utf8(sink).unwrap()
    }

    /// The same report as one document, rendered whole.
    fn whole(objects: &[Flagged], format: Format) -> String {
        let findings: Vec<Value> = objects.iter().flat_map(finding_values).collect();
        let doc = json!({
            "apiVersion": "fieldwise.dev/v1alpha1", "kind": "LastAppliedScan", "namespace": "prod",
            "findings": findings, "skipped": [], "scanned": {"types": 1, "objects": 7, "controllerCopies": 0},
        });
        match format {
            Format::Json => serde_json::to_string_pretty(&doc).unwrap() + "\n",
            _ => yaml::to_yaml(&doc),
        }
    }

    #[test]
    fn streamed_documents_equal_the_whole_document_byte_for_byte() {
        let many = [flagged("a", &[FindingKind::Missing, FindingKind::Oversized]), flagged("b", &[FindingKind::Stale])];
        for format in [Format::Json, Format::Yaml] {
            for objects in [&many[..], &many[..1], &[]] {
                assert_eq!(streamed(objects, format), whole(objects, format), "{format:?}, {} objects", objects.len());
            }
        }
    }

    #[test]
    fn json_lines_and_table() {
        let many =
            [flagged("a", &[FindingKind::Missing, FindingKind::Oversized]), flagged("bb", &[FindingKind::Stale])];
        let lines = streamed(&many, Format::JsonLines);
        let parsed: Vec<Value> = lines.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(parsed.len(), 3);
        assert_eq!((parsed[1]["name"].as_str(), parsed[1]["finding"].as_str()), (Some("a"), Some("oversized")));
        let table = streamed(&many, Format::Table);
        let rows: Vec<&str> = table.lines().collect();
        assert_eq!(rows.len(), 4, "{table}");
        assert!(rows[0].starts_with("KIND        NAMESPACE   NAME   FINDING     DETAIL"), "{table}");
        assert!(rows[3].starts_with("ConfigMap   prod        bb     stale       stale detail"), "{table}");
        assert_eq!(streamed(&[], Format::Table), "No last-applied problems in 7 objects of 1 types.\n");
    }

    /// Where each column of a table line starts: after a run of 3 spaces.
    fn column_starts(line: &str) -> Vec<usize> {
        let mut starts = vec![0];
        let bytes = line.as_bytes();
        for i in 3..bytes.len() {
            if bytes[i] != b' ' && bytes[i - 3..i] == *b"   " && starts.len() < 5 {
                starts.push(i);
            }
        }
        starts
    }

    #[test]
    fn every_row_of_the_table_lines_up_with_the_header_whatever_its_type() {
        let progress = ListingProgress::new(2);
        let mut sink = Vec::new();
        let mut writer = ReportWriter::new(&mut sink, Format::Table, None, &progress);
        writer.begin().unwrap();
        // One short row in the first type, wider ones in the next: the rows stream in type by type.
        writer.flagged(&flagged("a", &[FindingKind::Missing])).unwrap();
        writer.type_done(1);
        let mut wide = flagged("a-much-longer-name", &[FindingKind::Stale, FindingKind::Oversized]);
        wide.target.resource.kind = "ControllerRevision".into();
        wide.target.namespace = Some("kube-system-and-more".into());
        writer.flagged(&wide).unwrap();
        writer.type_done(3);
        writer.finish(&Unreadable::default()).unwrap();
        let table = String::from_utf8(sink).unwrap();
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4, "{table}");
        let header = column_starts(lines[0]);
        assert_eq!(header.len(), 5, "{table}");
        for line in &lines[1..] {
            assert_eq!(column_starts(line), header, "{table}");
        }
    }

    #[test]
    fn objects_left_out_as_controller_copies_are_counted_in_the_summaries() {
        let progress = ListingProgress::new(1);
        let report = |format: Format| {
            let mut sink = Vec::new();
            let mut writer = ReportWriter::new(&mut sink, format, None, &progress);
            writer.begin().unwrap();
            writer.controller_copies(2);
            writer.type_done(5);
            writer.finish(&Unreadable::default()).unwrap();
            String::from_utf8(sink).unwrap()
        };
        assert_eq!(
            report(Format::Table),
            "No last-applied problems in 5 objects of 1 types (2 left out: made by a controller, with a copy of its owner's annotation).\n"
        );
        let doc: Value = serde_json::from_str(&report(Format::Json)).unwrap();
        assert_eq!(doc["scanned"], json!({"types": 1, "objects": 5, "controllerCopies": 2}));
    }

    #[test]
    fn documents_carry_the_whole_detail_and_the_table_the_brief_one() {
        let mut f = flagged("a", &[FindingKind::Stale]);
        f.findings[0].short = Some("the brief one".into());
        f.findings[0].detail = "the whole one".into();
        assert!(streamed(std::slice::from_ref(&f), Format::Table).contains("stale     the brief one\n"));
        let doc: Value = serde_json::from_str(&streamed(std::slice::from_ref(&f), Format::Json)).unwrap();
        assert_eq!(doc["findings"][0]["detail"], "the whole one");
    }

    #[test]
    fn a_scan_with_a_type_not_read_says_so_in_the_table_and_in_json_lines() {
        let progress = ListingProgress::new(2);
        let secrets = Skipped {
            resource: ResourceType { plural: "secrets".into(), kind: "Secret".into(), ..configmaps() },
            reason: "Forbidden: secrets is forbidden".into(),
            gone: false,
        };
        let mut unread = Unreadable::new(false);
        unread.add(secrets.unread(Some("prod")));
        let report = |format: Format| {
            let mut sink = Vec::new();
            let mut writer = ReportWriter::new(&mut sink, format, Some("prod".into()), &progress);
            writer.begin().unwrap();
            writer.type_done(4);
            writer.skipped(secrets.clone()).unwrap();
            writer.finish(&unread).unwrap();
            String::from_utf8(sink).unwrap()
        };
        assert_eq!(
            report(Format::Table),
            "Not read (1 type): secrets (Forbidden); the check is incomplete.\nNo last-applied problems in the 4 objects of 1 types read; 1 type not read.\n"
        );
        let lines = report(Format::JsonLines);
        let record: Value = serde_json::from_str(lines.trim_end()).unwrap();
        assert_eq!(
            record,
            json!({"skipped": {"apiVersion": "v1", "resource": "secrets", "reason": "Forbidden: secrets is forbidden"}})
        );
        let doc: Value = serde_json::from_str(&report(Format::Json)).unwrap();
        assert_eq!(doc["skipped"][0]["resource"], "secrets");
    }
}
