//! The scan report: a table for people, `-o json|yaml` for machines (the shape is
//! documented in docs/last-applied-output.md).

use fieldwise_kube::error::Result;
use fieldwise_kube::flags::OutputFormat;
use fieldwise_kube::printer;
use serde_json::{json, Value};

use crate::scan::ScanResult;

/// Prints the report to stdout: a table, the document (`-o json|yaml`), or the name of
/// each object with findings, once (`-o name`, `kind.group/name` as kubectl prints it).
pub fn print(result: &ScanResult, format: Option<OutputFormat>) -> Result<()> {
    match format {
        Some(OutputFormat::Name) => {
            for flagged in &result.flagged {
                println!("{}", flagged.target.display());
            }
        }
        Some(format) => print!("{}", printer::render(&to_value(result), format)?),
        None => print!("{}", table(result)),
    }
    Ok(())
}

/// The report as a document.
pub fn to_value(result: &ScanResult) -> Value {
    let findings: Vec<Value> = result
        .flagged
        .iter()
        .flat_map(|f| {
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
        })
        .collect();
    let skipped: Vec<Value> = result
        .skipped
        .iter()
        .map(|s| json!({"apiVersion": s.resource.api_version(), "resource": s.resource.plural_group(), "reason": s.reason}))
        .collect();
    json!({
        "apiVersion": "fieldwise.dev/v1alpha1",
        "kind": "LastAppliedScan",
        "namespace": result.namespace,
        "scanned": {"types": result.types, "objects": result.objects},
        "findings": findings,
        "skipped": skipped,
    })
}

/// KIND, NAMESPACE, NAME, FINDING, DETAIL; then the types that were skipped.
pub fn table(result: &ScanResult) -> String {
    let mut rows = vec![["KIND", "NAMESPACE", "NAME", "FINDING", "DETAIL"].map(String::from)];
    for f in &result.flagged {
        for x in &f.findings {
            rows.push([
                f.target.resource.kind.clone(),
                f.target.namespace.clone().unwrap_or_default(),
                f.target.name.clone(),
                x.kind.as_str().to_string(),
                x.detail.clone(),
            ]);
        }
    }
    let mut out = String::new();
    if rows.len() == 1 {
        out.push_str(&format!("No last-applied problems in {} objects of {} types.\n", result.objects, result.types));
    } else {
        let widths: Vec<usize> = (0..4).map(|i| rows.iter().map(|r| r[i].len()).max().unwrap_or(0)).collect();
        for row in &rows {
            for (i, width) in widths.iter().enumerate() {
                out.push_str(&format!("{:<w$}   ", row[i], w = width));
            }
            out.push_str(&row[4]);
            out.push('\n');
        }
    }
    for s in &result.skipped {
        out.push_str(&format!("skipped {}: {}\n", s.resource.plural_group(), s.reason));
    }
    out
}
