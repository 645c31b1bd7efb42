//! The one preview of a run over many objects, on stderr: the objects grouped by
//! identical change (one diff per group, shown on its first object, with every object of
//! the group listed by namespace), the objects the patch leaves as they are, every lint
//! once with the objects it concerns, and a count.

use std::collections::BTreeMap;

use fieldwise_kube::api::reference::ObjectRef;
use fieldwise_kube::output::diff::without_server_noise;

use crate::prepared::Prepared;
use crate::preview::{finding_line, show_diff};

/// What the run does, as the preview words it: (`patch`, `patched`), (`restore`, `restored`).
pub type Verb = (&'static str, &'static str);

/// `1 object`, `3 objects`.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// `2 namespaces`, `namespace shop`, or `the cluster` for cluster-scoped objects only.
pub fn namespaces_phrase<'t>(targets: impl IntoIterator<Item = &'t ObjectRef>) -> String {
    let mut namespaces: Vec<&str> = targets.into_iter().filter_map(|t| t.namespace.as_deref()).collect();
    namespaces.sort_unstable();
    namespaces.dedup();
    match namespaces.as_slice() {
        [] => "the cluster".into(),
        [one] => format!("namespace {one}"),
        many => count(many.len(), "namespace"),
    }
}

/// The objects listed by namespace, one line each: `  namespace shop: configmap/a, configmap/b`.
pub fn by_namespace<'t>(targets: impl IntoIterator<Item = &'t ObjectRef>) -> String {
    let mut lines: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for target in targets {
        let key = match &target.namespace {
            Some(ns) => format!("namespace {ns}"),
            None => "cluster-scoped".to_string(),
        };
        lines.entry(key).or_default().push(target.display());
    }
    lines.into_iter().map(|(place, names)| format!("  {place}: {}\n", names.join(", "))).collect()
}

/// Prints the preview of `prepared` (see the module docs); Secret values only with `show_secrets`.
pub fn print(prepared: &[&Prepared], show_secrets: bool, (verb, done): Verb) {
    let mut groups: Vec<(&str, Vec<&Prepared>)> = Vec::new();
    let mut unchanged: Vec<&ObjectRef> = Vec::new();
    for &p in prepared {
        if p.preview.is_no_change() {
            unchanged.push(&p.target);
            continue;
        }
        match groups.iter_mut().find(|(key, _)| *key == p.change_key) {
            Some((_, members)) => members.push(p),
            None => groups.push((&p.change_key, vec![p])),
        }
    }
    let number = groups.len();
    for (index, (_, members)) in groups.iter().enumerate() {
        let first = members[0];
        eprintln!(
            "Change {} of {number}, on {}, shown on {}:",
            index + 1,
            count(members.len(), "object"),
            first.target.located()
        );
        eprint!("{}", by_namespace(members.iter().map(|p| &p.target)));
        let display = first.target.display();
        let diff = show_diff(
            &format!("{display} (live)"),
            &format!("{display} ({done})"),
            &first.preview.live,
            first.preview.result(),
            show_secrets,
            fieldwise_core::ownership::sets_managed_fields(&first.preview.live, &first.preview.planned.result),
        );
        eprint!("{}", diff.unwrap_or_default());
    }
    if !unchanged.is_empty() {
        eprintln!("No change (already as the {verb} makes them): {}", count(unchanged.len(), "object"));
        eprint!("{}", by_namespace(unchanged.iter().copied()));
    }
    print_findings(prepared);
    let differs = prepared
        .iter()
        .filter(|p| {
            p.preview
                .server_result
                .as_ref()
                .is_some_and(|server| without_server_noise(server) != without_server_noise(&p.preview.planned.result))
        })
        .count();
    if differs > 0 {
        eprintln!(
            "note: on {} the server's dry run differs from the local prediction (defaulting or admission); the diffs show the server's",
            count(differs, "object")
        );
    }
    let changing: usize = groups.iter().map(|(_, members)| members.len()).sum();
    let checked =
        if prepared.iter().any(|p| p.preview.server_result.is_some()) { ", dry-run on the server" } else { "" };
    eprintln!(
        "{} to {verb}{checked}, {} unchanged, in {}.",
        count(changing, "object"),
        unchanged.len(),
        namespaces_phrase(prepared.iter().map(|p| &p.target))
    );
}

/// Every finding once, with the objects it was found on.
fn print_findings(prepared: &[&Prepared]) {
    let mut findings: Vec<(String, Vec<&ObjectRef>)> = Vec::new();
    for &p in prepared {
        for f in &p.findings {
            let line = finding_line(f);
            match findings.iter_mut().find(|(l, _)| *l == line) {
                Some((_, objects)) => objects.push(&p.target),
                None => findings.push((line, vec![&p.target])),
            }
        }
    }
    for (line, objects) in findings {
        eprintln!("{line}\n  on {}:", count(objects.len(), "object"));
        eprint!("{}", by_namespace(objects));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldwise_kube::api::discovery::ResourceType;

    fn cm(namespace: Option<&str>, name: &str) -> ObjectRef {
        let resource = ResourceType {
            group: String::new(),
            version: "v1".into(),
            plural: "configmaps".into(),
            singular: "configmap".into(),
            kind: "ConfigMap".into(),
            short_names: vec![],
            namespaced: namespace.is_some(),
            verbs: vec![],
            subresources: vec![],
            preferred: true,
        };
        ObjectRef { resource, namespace: namespace.map(String::from), name: name.into() }
    }

    #[test]
    fn objects_are_listed_with_their_namespace() {
        let targets = [cm(Some("b"), "x"), cm(Some("a"), "y"), cm(Some("b"), "z"), cm(None, "c")];
        assert_eq!(
            by_namespace(&targets),
            "  cluster-scoped: configmap/c\n  namespace a: configmap/y\n  namespace b: configmap/x, configmap/z\n"
        );
        assert_eq!(targets[0].located(), "configmap/x in namespace b");
        assert_eq!(targets[3].located(), "configmap/c");
        assert_eq!((count(1, "object"), count(2, "object")), ("1 object".to_string(), "2 objects".to_string()));
    }
}
