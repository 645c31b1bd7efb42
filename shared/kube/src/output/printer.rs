//! Machine output (`-o json`, `-o yaml`, `-o name`) printed the same way by every plugin.
//!
//! What each mode shows (the README states the same):
//! - `-o json|yaml` of an object: as `kubectl patch -o json|yaml` prints it, without
//!   `metadata.managedFields`; ConfigMaps and every other kind in clear; a Secret's
//!   `data`/`stringData` values (and their copy in its last-applied annotation) as
//!   `*** (N bytes)` unless `--show-secrets` ([`shown_object`]).
//! - `-o name`: `kind.group/name` per object, as `kubectl get -o name` ([`name_of`]).
//! - Several objects with `-o yaml`: one YAML document each, `---` before every one
//!   after the first, as kubectl's YAML printer separates them ([`print_object`]);
//!   without it, `kubectl apply -f` would read them as one object (the last key wins).

use std::sync::Mutex;

use serde_json::Value;

use crate::api::reference::ObjectRef;
use crate::error::{Error, Result};
use crate::output::OutputFormat;

/// Renders `value` as pretty JSON or YAML, or its name (`-o name`, see [`name_of`]),
/// ending with a newline.
pub fn render(value: &Value, format: OutputFormat) -> Result<String> {
    match format {
        OutputFormat::Json => {
            let mut text = serde_json::to_string_pretty(value)?;
            text.push('\n');
            Ok(text)
        }
        OutputFormat::Yaml => yaml(value),
        OutputFormat::Name => match name_of(value) {
            Some(name) => Ok(format!("{name}\n")),
            None => Err(Error::usage("-o name needs an object with kind and metadata.name; use -o json or -o yaml")),
        },
    }
}

/// An object's name as `kubectl get -o name` prints it: `deployment.apps/web`,
/// `secret/db`. Reads `apiVersion`, `kind` and `metadata.name` (or a bare `name`, as
/// in an object reference).
pub fn name_of(object: &Value) -> Option<String> {
    let kind = object.get("kind").and_then(Value::as_str).filter(|k| !k.is_empty());
    let name = object.pointer("/metadata/name").or_else(|| object.get("name")).and_then(Value::as_str);
    kind.and(name.filter(|n| !n.is_empty()))?;
    Some(match object.pointer("/metadata/name") {
        Some(_) => crate::api::reference::display_name(object),
        None => crate::api::reference::owner_display_name(object),
    })
}

/// A value as a YAML document that `kubectl apply -f` reads back to the same
/// value: strings YAML 1.1 would read as something else (`yes`, `on`, `0777`,
/// dates) are quoted ([`fieldwise_core::yaml::to_yaml`]).
pub fn yaml(value: &Value) -> Result<String> {
    Ok(fieldwise_core::yaml::to_yaml(value))
}

/// An object as `-o json|yaml` shows it, the way `kubectl patch -o json|yaml` does:
/// without `metadata.managedFields` (unless `show_managed_fields`), ConfigMaps and every
/// other kind as they are, a Secret's values redacted ([`crate::redact::redact`]) unless
/// `show_secrets`.
pub fn shown_object(object: &Value, show_secrets: bool, show_managed_fields: bool) -> Value {
    let mut shown = object.clone();
    if !show_managed_fields {
        if let Some(Value::Object(meta)) = shown.get_mut("metadata") {
            meta.remove("managedFields");
        }
    }
    if !show_secrets {
        crate::redact::redact(&mut shown);
    }
    shown
}

/// Prints the outcome of a write the kubectl way: `deployment.apps/x patched` by
/// default, the name (`deployment.apps/x`) with `-o name`, or the object with
/// `-o json|yaml` as [`shown_object`] shows it. A closed stdout is
/// [`Error::StdoutClosed`], so a bulk command stops at once (see [`crate::output::stdout`]).
pub fn print_outcome(
    display: &str,
    object: &Value,
    verb: &str,
    output: Option<OutputFormat>,
    show_secrets: bool,
) -> Result<()> {
    match output {
        None => crate::output::stdout::write(&format!("{display} {verb}\n")),
        Some(OutputFormat::Name) => crate::output::stdout::write(&format!("{display}\n")),
        Some(format) => print_object(&shown_object(object, show_secrets, false), format),
    }
}

/// Prints the outcome of one object's write in a run over many objects (a bulk patch, the
/// undo of a run, a transfer, `repair` and `migrate` of many): as [`print_outcome`], with the
/// namespace of a namespaced object after the verb, so that objects of one name in several
/// namespaces do not read as one written twice:
/// `rolebinding.rbac.authorization.k8s.io/view patched in namespace shop`. Every command that
/// writes many objects prints its result lines here.
pub fn print_run_outcome(
    target: &ObjectRef,
    object: &Value,
    verb: &str,
    output: Option<OutputFormat>,
    show_secrets: bool,
) -> Result<()> {
    let verb = run_verb(verb, target.namespace.as_deref());
    print_outcome(&target.display(), object, &verb, output, show_secrets)
}

/// A run's result verb: `patched in namespace shop`, or `patched` for a cluster-scoped object.
fn run_verb(verb: &str, namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) => format!("{verb} in namespace {ns}"),
        None => verb.to_string(),
    }
}

/// Whether this process has printed a YAML document to stdout yet. One command is one
/// process, as one command is one printer in kubectl, whose YAML printer counts the same way.
static YAML_DOCUMENT_PRINTED: Mutex<bool> = Mutex::new(false);

/// Prints `value` to stdout as [`render`] renders it; a YAML document after the first one
/// this process printed starts with `---`, so several objects stay a stream that
/// `kubectl apply -f` reads object by object. The lock is held through the write, so
/// concurrent printers (bulk writes) never interleave a separator and a document.
pub fn print_object(value: &Value, format: OutputFormat) -> Result<()> {
    let text = render(value, format)?;
    if format != OutputFormat::Yaml {
        return crate::output::stdout::write(&text);
    }
    let mut printed = YAML_DOCUMENT_PRINTED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    crate::output::stdout::write(&yaml_document(&text, *printed))?;
    *printed = true;
    Ok(())
}

/// A rendered YAML document as it goes into a stream: `---` first unless it is the first.
fn yaml_document(text: &str, after_another: bool) -> String {
    if after_another {
        format!("---\n{text}")
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yaml_documents_after_the_first_are_separated_and_read_back_one_by_one() {
        let objects = [json!({"kind": "A", "on": "yes"}), json!({"kind": "B", "y": "n"})];
        let stream: String = objects
            .iter()
            .enumerate()
            .map(|(i, o)| yaml_document(&render(o, OutputFormat::Yaml).unwrap(), i > 0))
            .collect();
        assert_eq!(stream, "kind: A\n\"on\": \"yes\"\n---\nkind: B\n\"y\": \"n\"\n");
        let read: Vec<Value> =
            fieldwise_core::yaml::read_stream(&stream).unwrap().into_iter().map(|d| d.value).collect();
        assert_eq!(read, objects);
    }

    #[test]
    fn a_runs_result_lines_name_the_namespace_of_namespaced_objects() {
        assert_eq!(run_verb("repaired", Some("shop")), "repaired in namespace shop");
        assert_eq!(run_verb("transferred to flux (Apply)", Some("a")), "transferred to flux (Apply) in namespace a");
        assert_eq!(run_verb("patched", None), "patched");
    }

    #[test]
    fn json_and_yaml() {
        let v = json!({"b": 1, "a": ["x"]});
        assert_eq!(render(&v, OutputFormat::Json).unwrap(), "{\n  \"b\": 1,\n  \"a\": [\n    \"x\"\n  ]\n}\n");
        assert_eq!(render(&v, OutputFormat::Yaml).unwrap(), "b: 1\na:\n- x\n");
        assert!(render(&v, OutputFormat::Name).is_err());
        let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}});
        assert_eq!(render(&deploy, OutputFormat::Name).unwrap(), "deployment.apps/web\n");
        assert_eq!(name_of(&json!({"apiVersion": "v1", "kind": "Secret", "name": "db"})).as_deref(), Some("secret/db"));
    }

    #[test]
    fn objects_are_shown_like_kubectl_patch_shows_them() {
        let managed = json!([{"manager": "m"}]);
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"managedFields": managed}, "data": {"c": "5"}});
        assert_eq!(
            shown_object(&cm, false, false),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}, "data": {"c": "5"}})
        );
        assert_eq!(shown_object(&cm, false, true), cm);
        let secret = json!({"apiVersion": "v1", "kind": "Secret", "data": {"pw": "aHVudGVyMg=="}});
        assert_eq!(shown_object(&secret, false, false)["data"]["pw"], "*** (7 bytes)");
        assert_eq!(shown_object(&secret, true, false), secret);
    }
}
