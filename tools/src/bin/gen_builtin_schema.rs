//! Writes the compact built-in schema (`shared/core/data/builtin-schema.json`)
//! from OpenAPI v3 documents saved as files, one per group-version.
//!
//! Usage: `cargo run -p fieldwise-tools --bin gen_builtin_schema -- OUT.json DOC.json...`
//! (`scripts/gen-builtin-schema` fetches the documents from a cluster and runs this).

use std::process::ExitCode;

use fieldwise_core::schema::{compact, openapi};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(out) = args.next() else {
        eprintln!("usage: gen_builtin_schema OUT.json DOC.json...");
        return ExitCode::from(2);
    };
    let mut documents = Vec::new();
    for path in args {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("gen_builtin_schema: {path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        match serde_json::from_str::<serde_json::Value>(&text) {
            // Documents without types (e.g. `.well-known/openid-configuration`) are skipped.
            Ok(doc) if doc.pointer("/components/schemas").is_some() => documents.push(doc),
            Ok(_) => eprintln!("gen_builtin_schema: {path}: no components.schemas, skipped"),
            Err(e) => {
                eprintln!("gen_builtin_schema: {path}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let schema = match openapi::from_v3_documents(documents.iter()) {
        Ok(schema) => schema,
        Err(e) => {
            eprintln!("gen_builtin_schema: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut text = match serde_json::to_string(&compact::encode(&schema)) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("gen_builtin_schema: {e}");
            return ExitCode::FAILURE;
        }
    };
    text.push('\n');
    if let Err(e) = std::fs::write(&out, text) {
        eprintln!("gen_builtin_schema: {out}: {e}");
        return ExitCode::FAILURE;
    }
    eprintln!("gen_builtin_schema: {} types, {} kinds -> {out}", schema.len(), schema.kinds().count());
    ExitCode::SUCCESS
}
