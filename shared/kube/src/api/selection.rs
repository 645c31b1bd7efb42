//! Which objects a command acts on, chosen the way kubectl chooses them: `TYPE/NAME ...`
//! or `TYPE NAME ...`; `TYPE[,TYPE...]` with `-l SELECTOR`, `--field-selector SELECTOR`
//! or `--all`, in the command's namespace or every namespace (`-A`); or the objects of
//! `-f FILE|DIR` (repeatable, `-R` for subdirectories); or the objects a kustomization
//! builds (`-k DIR`, with `kubectl kustomize`).
//!
//! Every combination kubectl refuses is refused here with what to do (names with a
//! selector, names across all namespaces, a type alone); the objects come back once
//! each, in the order given or listed.
//!
//! A command that takes at most so many objects (safe-patch's `--max-objects`) says so in
//! the selection ([`SelectionLimit`]): the selection is refused as soon as it passes the
//! limit, before the rest of the files are parsed or the rest of the types listed, so a
//! file of a million documents costs no more than one of the limit's size.
//!
//! The listing is the engine's ([`crate::api::listing`]): its [`Scope`] and [`Selectors`],
//! its paging, and its rule of which types can be listed ([`listing::require_listable`]).

use std::collections::HashSet;

use futures::StreamExt;
use serde_json::Value;

use crate::api::discovery::{ResourceCatalog, ResourceType};
use crate::api::listing::{self, ListOptions, Lister, Representation, Scope, Selectors};
use crate::api::manifests::{self, Manifest};
use crate::api::objects;
use crate::api::reference::{NamespaceScope, ObjectRef};
use crate::api::target::TargetArgs;
use crate::conn::client::Connection;
use crate::error::{Error, Result};

/// What the command line asked for.
#[derive(Debug, Clone, Copy, Default)]
pub struct Selection<'a> {
    /// Positional arguments: `TYPE/NAME ...`, `TYPE NAME ...` or `TYPE[,TYPE...]`.
    pub args: &'a [String],
    /// `-f` files, directories or `-`.
    pub files: &'a [String],
    /// `-R`: read `-f` directories' subdirectories too.
    pub recursive: bool,
    /// `-k`: the kustomization directory whose objects are selected.
    pub kustomize: Option<&'a str>,
    /// `-l`.
    pub label_selector: Option<&'a str>,
    /// `--field-selector`.
    pub field_selector: Option<&'a str>,
    /// `--all`: every object of the types.
    pub all: bool,
    /// `-A`: in every namespace.
    pub all_namespaces: bool,
    /// A TYPE alone lists every object of it, as `kubectl get` does: for commands that only
    /// read. Commands that write want a query (`-l`, `--field-selector`, `--all`), as
    /// `kubectl label` does, so that a forgotten selector never writes everything.
    pub type_alone_lists: bool,
    /// The most objects the command takes, if it has such a limit: more are refused
    /// ([`Error::OverLimit`]) as soon as the selection passes it.
    pub limit: Option<SelectionLimit>,
}

/// The most objects a command takes from one selection, and the flag that sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectionLimit {
    /// The most objects.
    pub max: usize,
    /// The flag that raises it (`--max-objects`), for the refusal.
    pub flag: &'static str,
}

impl Selection<'_> {
    /// Whether documents name the objects (`-f` or `-k`), rather than arguments or a query.
    pub fn names_by_documents(&self) -> bool {
        !self.files.is_empty() || self.kustomize.is_some()
    }

    /// Whether the objects are chosen by a query (`-l`, `--field-selector`, `--all`, `-A`)
    /// rather than named: the command then acts on however many there are.
    pub fn is_query(&self) -> bool {
        self.label_selector.is_some() || self.field_selector.is_some() || self.all || self.all_namespaces
    }
}

/// The objects `selection` names, each once, resolved against the cluster's types (not read:
/// a selection listed by query is listed as metadata only).
pub async fn select(conn: &Connection, catalog: &ResourceCatalog, selection: &Selection<'_>) -> Result<Vec<ObjectRef>> {
    let found = find(conn, catalog, selection, Representation::Metadata).await?;
    Ok(found.into_iter().map(Found::into_target).collect())
}

/// One selected object, read whole, with the manifest that named it when it came from `-f`.
#[derive(Debug, Clone)]
pub struct SelectedObject {
    /// Where it is.
    pub target: ObjectRef,
    /// The object as read now.
    pub live: Value,
    /// The `-f` document that named it.
    pub manifest: Option<Manifest>,
}

/// How many objects named one by one (`TYPE/NAME`, `-f`) are read at once.
const READ_CONCURRENCY: usize = 8;

/// The objects `selection` names, each once and read whole now, for a command that shows
/// them all before it writes any: a query's objects come from their list (a request per page,
/// not per object); named objects and files' objects are read by GET, a few at once. Every
/// argument and file is resolved before anything is read, so a bad one fails first.
pub async fn read_selected(
    conn: &Connection,
    catalog: &ResourceCatalog,
    selection: &Selection<'_>,
) -> Result<Vec<SelectedObject>> {
    let found = find(conn, catalog, selection, Representation::Full).await?;
    let read = listing::map_concurrently(found, READ_CONCURRENCY, |found| async move {
        Ok(match found {
            Found::Listed(target, live) => SelectedObject { target, live, manifest: None },
            Found::Named(target) => {
                SelectedObject { live: objects::get(conn, &target, None).await?, target, manifest: None }
            }
            Found::Described(target, manifest) => {
                SelectedObject { live: objects::get(conn, &target, None).await?, target, manifest: Some(manifest) }
            }
        })
    })
    .await;
    read.into_iter().collect()
}

/// The objects `selection` names, as [`read_selected`] reads them, each read's answer kept
/// apart: for a check that goes on without the objects it may not read and names them
/// ([`crate::api::unread`]). Choosing the objects (a bad argument or file, a query's list)
/// still fails first.
pub async fn read_each(
    conn: &Connection,
    catalog: &ResourceCatalog,
    selection: &Selection<'_>,
) -> Result<Vec<(ObjectRef, Result<Value>)>> {
    let found = find(conn, catalog, selection, Representation::Full).await?;
    Ok(listing::map_concurrently(found, READ_CONCURRENCY, |found| async move {
        match found {
            Found::Listed(target, live) => (target, Ok(live)),
            Found::Named(target) | Found::Described(target, _) => {
                let live = objects::get(conn, &target, None).await;
                (target, live)
            }
        }
    })
    .await)
}

/// An object of the selection, as far as choosing it went.
#[derive(Debug)]
pub(crate) enum Found {
    /// Named on the command line.
    Named(ObjectRef),
    /// Named by a `-f` document.
    Described(ObjectRef, Manifest),
    /// Listed by a query, in the representation asked for.
    Listed(ObjectRef, Value),
}

impl Found {
    fn target(&self) -> &ObjectRef {
        match self {
            Found::Named(target) | Found::Described(target, _) | Found::Listed(target, _) => target,
        }
    }

    pub(crate) fn into_target(self) -> ObjectRef {
        match self {
            Found::Named(target) | Found::Described(target, _) | Found::Listed(target, _) => target,
        }
    }
}

/// The objects `selection` names, each once (the first time), in the order given or listed;
/// a query's items listed in `representation`. Refused when over the selection's limit.
async fn find(
    conn: &Connection,
    catalog: &ResourceCatalog,
    selection: &Selection<'_>,
    representation: Representation,
) -> Result<Vec<Found>> {
    let scope = NamespaceScope::of(conn);
    let mut chosen = Chosen::new(selection.limit);
    if selection.names_by_documents() {
        documents_into(catalog, &scope, selection, &mut chosen)?;
        return Ok(chosen.items);
    }
    let parsed = parse_args(selection)?;
    if parsed.items.iter().any(|(_, name)| !name.is_empty()) {
        for target in named(catalog, &scope, selection)? {
            chosen.add(Found::Named(target));
        }
        if chosen.over() {
            return Err(chosen.refusal(true));
        }
        return Ok(chosen.items);
    }
    let lister = Lister::new(
        conn,
        Scope::of(conn, selection.all_namespaces),
        Selectors {
            label: selection.label_selector.map(String::from),
            field: selection.field_selector.map(String::from),
        },
        ListOptions::default(),
    );
    let texts: Vec<&str> =
        parsed.items.iter().flat_map(|(types, _)| types.split(',')).filter(|t| !t.is_empty()).collect();
    for (i, text) in texts.iter().enumerate() {
        let last = i + 1 == texts.len();
        listed(&lister, catalog.resolve(text)?, selection, representation, &mut chosen, last).await?;
    }
    Ok(chosen.items)
}

/// The objects of a selection so far, each once (the first time it is named), kept within
/// the command's limit. Whether an object was seen is a hash lookup, so a selection of
/// many objects costs time in proportion to their number.
pub(crate) struct Chosen {
    items: Vec<Found>,
    seen: HashSet<ObjectRef>,
    limit: Option<SelectionLimit>,
}

impl Chosen {
    fn new(limit: Option<SelectionLimit>) -> Self {
        Chosen { items: Vec::new(), seen: HashSet::new(), limit }
    }

    /// Adds `found` unless its object is chosen already; whether the selection is now over
    /// its limit.
    fn add(&mut self, found: Found) -> bool {
        if !self.seen.contains(found.target()) {
            self.seen.insert(found.target().clone());
            self.items.push(found);
        }
        self.over()
    }

    fn over(&self) -> bool {
        self.limit.is_some_and(|limit| self.items.len() > limit.max)
    }

    /// The refusal of a selection over its limit; `complete` when every object was counted
    /// (else the count is only where the reading stopped).
    fn refusal(&self, complete: bool) -> Error {
        let limit = self.limit.unwrap_or(SelectionLimit { max: 0, flag: "" });
        Error::OverLimit { found: self.items.len(), complete, limit: limit.max, flag: limit.flag }
    }
}

/// The types a selection lists (`TYPE[,TYPE...]`, with or without a query), each once in the
/// order given; `None` when it names objects (`TYPE/NAME`, `-f`, `-k`). For a command that
/// streams what it reads page by page through the listing engine ([`Lister::check_types`])
/// instead of holding every object, as [`read_selected`] does: the same types, refused for
/// the same reasons.
pub fn listed_types(catalog: &ResourceCatalog, selection: &Selection<'_>) -> Result<Option<Vec<ResourceType>>> {
    if selection.names_by_documents() {
        return Ok(None);
    }
    let parsed = parse_args(selection)?;
    if parsed.items.iter().any(|(_, name)| !name.is_empty()) {
        return Ok(None);
    }
    let mut types: Vec<ResourceType> = Vec::new();
    for (text, _) in &parsed.items {
        for name in text.split(',').filter(|t| !t.is_empty()) {
            let resource = catalog.resolve(name)?;
            require_query(resource, selection)?;
            if !types.contains(resource) {
                types.push(resource.clone());
            }
        }
    }
    Ok(Some(types))
}

/// The positional arguments of a selection without `-f`: refused when empty, or with `-R`.
pub(crate) fn parse_args(selection: &Selection<'_>) -> Result<TargetArgs> {
    if selection.recursive {
        return Err(Error::usage("-R reads the subdirectories of -f directories: give -f DIR with it"));
    }
    let parsed = TargetArgs::parse(selection.args)?;
    if parsed.items.is_empty() {
        let forms = if selection.type_alone_lists {
            "TYPE, TYPE/NAME, TYPE NAME, TYPE -l SELECTOR or -f FILE"
        } else {
            "TYPE/NAME, TYPE NAME, TYPE -l SELECTOR, TYPE --all or -f FILE"
        };
        return Err(Error::usage(format!("an object is required: {forms} (see --help)")));
    }
    Ok(parsed)
}

/// The documents of `-f` (with `-R`) or of the `-k` kustomization, for the commands that read
/// documents rather than objects (a configuration to apply, `--local` objects): either one,
/// never both, and `-R` only with `-f`.
pub fn documents(selection: &Selection<'_>) -> Result<Vec<Manifest>> {
    let mut out = Vec::new();
    documents_each(selection, &mut |manifest| {
        out.push(manifest);
        Ok(())
    })?;
    Ok(out)
}

/// [`documents`], each handed to `take` as soon as it is parsed; the first error (`take`'s
/// own too) stops the reading ([`manifests::read_each`]).
pub fn documents_each(selection: &Selection<'_>, take: &mut dyn FnMut(Manifest) -> Result<()>) -> Result<()> {
    match selection.kustomize {
        Some(_) if !selection.files.is_empty() => Err(Error::usage("give either -f FILE or -k DIR, not both")),
        Some(_) if selection.recursive => {
            Err(Error::usage("-R reads the subdirectories of -f directories; -k DIR builds the kustomization whole"))
        }
        Some(dir) => manifests::kustomize_each(dir, take),
        None => manifests::read_each(selection.files, selection.recursive, take),
    }
}

/// The objects of the `-f` manifests or of the `-k` kustomization, each once; selectors do
/// not combine with them, nor names, nor the two with each other (as in kubectl).
pub(crate) fn from_documents(
    catalog: &ResourceCatalog,
    scope: &NamespaceScope,
    selection: &Selection<'_>,
) -> Result<Vec<Found>> {
    let mut chosen = Chosen::new(selection.limit);
    documents_into(catalog, scope, selection, &mut chosen)?;
    Ok(chosen.items)
}

/// [`from_documents`] into `chosen`: each document resolved as soon as it is parsed, and the
/// reading stopped at the first object over the limit.
fn documents_into(
    catalog: &ResourceCatalog,
    scope: &NamespaceScope,
    selection: &Selection<'_>,
    chosen: &mut Chosen,
) -> Result<()> {
    let flag = if selection.kustomize.is_some() { "-k DIR" } else { "-f FILE" };
    if !selection.args.is_empty() {
        return Err(Error::usage(format!("give either {flag} or TYPE/NAME, not both")));
    }
    if selection.is_query() {
        return Err(Error::usage(format!(
            "-l, --field-selector, --all and -A select objects of a TYPE; they cannot be combined with {flag} (its documents name the objects)"
        )));
    }
    documents_each(selection, &mut |manifest| {
        let target = ObjectRef::from_manifest(&manifest.value, &manifest.source, catalog, scope)?;
        match chosen.add(Found::Described(target, manifest)) {
            true => Err(chosen.refusal(false)),
            false => Ok(()),
        }
    })
}

/// Named objects: no selector, no `-A`, as in kubectl.
pub(crate) fn named(
    catalog: &ResourceCatalog,
    scope: &NamespaceScope,
    selection: &Selection<'_>,
) -> Result<Vec<ObjectRef>> {
    if selection.label_selector.is_some() || selection.field_selector.is_some() || selection.all {
        return Err(Error::usage(
            "names cannot be combined with -l, --field-selector or --all: name the objects (TYPE/NAME), or select them (TYPE -l SELECTOR)",
        ));
    }
    if selection.all_namespaces {
        return Err(Error::usage(
            "a resource cannot be retrieved by name across all namespaces: drop -A, and give the namespace with -n",
        ));
    }
    ObjectRef::named_from_args(selection.args, catalog, scope)
}

/// The objects of one type the query selects, page by page, in `representation` (metadata
/// when only names are needed: each object is then read whole when its turn comes), into
/// `chosen`; no further page is listed once it is over its limit (the count is complete
/// when this was the `last` type and its last page).
async fn listed(
    lister: &Lister<'_>,
    resource: &ResourceType,
    selection: &Selection<'_>,
    representation: Representation,
    chosen: &mut Chosen,
    last: bool,
) -> Result<()> {
    require_query(resource, selection)?;
    let mut pages = std::pin::pin!(lister.pages(resource, representation));
    while let Some(page) = pages.next().await {
        for item in page? {
            chosen.add(Found::Listed(ObjectRef::of_object(resource, &item), item));
        }
        if chosen.over() {
            let complete = last && pages.next().await.is_none();
            return Err(chosen.refusal(complete));
        }
    }
    Ok(())
}

/// A TYPE without names is listed only when the command lists a type alone or a query
/// (`-l`, `--field-selector`, `--all`) selects from it, and only when the server lists it.
pub(crate) fn require_query(resource: &ResourceType, selection: &Selection<'_>) -> Result<()> {
    if !(selection.type_alone_lists
        || selection.label_selector.is_some()
        || selection.field_selector.is_some()
        || selection.all)
    {
        return Err(Error::usage(format!(
            "a name is required: {}/NAME, or select objects with -l SELECTOR, --field-selector SELECTOR or --all",
            resource.display_name()
        )));
    }
    listing::require_listable(resource)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> ResourceCatalog {
        let cm = ResourceType {
            group: String::new(),
            version: "v1".into(),
            plural: "configmaps".into(),
            singular: "configmap".into(),
            kind: "ConfigMap".into(),
            short_names: vec!["cm".into()],
            namespaced: true,
            verbs: vec!["get".into(), "list".into(), "patch".into()],
            subresources: vec![],
            preferred: true,
        };
        ResourceCatalog::from_types(vec![cm])
    }

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn kubectls_refusals_are_clear_errors() {
        let (c, scope) = (catalog(), NamespaceScope { namespace: "dev".into(), explicit: false });
        let names = args(&["cm/a", "cm/b"]);
        let with_selector = Selection { args: &names, label_selector: Some("app=x"), ..Default::default() };
        let err = named(&c, &scope, &with_selector).unwrap_err().to_string();
        assert!(err.contains("names cannot be combined with -l"), "{err}");
        let across = Selection { args: &names, all_namespaces: true, ..Default::default() };
        let err = named(&c, &scope, &across).unwrap_err().to_string();
        assert!(err.contains("across all namespaces"), "{err}");
        let plain = Selection { args: &names, ..Default::default() };
        let refs = named(&c, &scope, &plain).unwrap();
        assert_eq!(refs.iter().map(ObjectRef::display).collect::<Vec<_>>(), ["configmap/a", "configmap/b"]);
        let files = args(&["x.yaml"]);
        let both = Selection { args: &names, files: &files, ..Default::default() };
        assert!(from_documents(&c, &scope, &both).unwrap_err().to_string().contains("not both"));
        let query = Selection { files: &files, all: true, ..Default::default() };
        assert!(from_documents(&c, &scope, &query).unwrap_err().to_string().contains("cannot be combined with -f"));
        assert!(query.is_query() && !plain.is_query());
        let kustomized = Selection { kustomize: Some("base"), files: &files, ..Default::default() };
        let err = from_documents(&c, &scope, &kustomized).unwrap_err().to_string();
        assert!(err.contains("either -f FILE or -k DIR, not both"), "{err}");
        let recursive = Selection { kustomize: Some("base"), recursive: true, ..Default::default() };
        assert!(from_documents(&c, &scope, &recursive)
            .unwrap_err()
            .to_string()
            .contains("builds the kustomization whole"));
        let named_too = Selection { kustomize: Some("base"), args: &names, ..Default::default() };
        assert!(from_documents(&c, &scope, &named_too).unwrap_err().to_string().contains("either -k DIR or TYPE/NAME"));
        assert!(kustomized.names_by_documents() && !plain.names_by_documents());
    }

    /// A file of `count` ConfigMaps (the `dup`-th names the first again), then a document
    /// that cannot be parsed: whoever parses it fails.
    fn file_then_garbage(name: &str, count: usize, dup: Option<usize>) -> (std::path::PathBuf, Vec<String>) {
        let dir = std::env::temp_dir().join(format!("fw-selection-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("many.yaml");
        let mut text = String::new();
        for i in 0..count {
            let n = if Some(i) == dup { 0 } else { i };
            text.push_str(&format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{n}}}\n---\n"));
        }
        text.push_str("metadata: {name: [\n");
        std::fs::write(&file, text).unwrap();
        let files = vec![file.display().to_string()];
        (dir, files)
    }

    fn limited(files: &[String], max: usize) -> Selection<'_> {
        Selection { files, limit: Some(SelectionLimit { max, flag: "--max-objects" }), ..Default::default() }
    }

    #[test]
    fn a_selection_stops_reading_at_the_first_object_over_its_limit() {
        let (c, scope) = (catalog(), NamespaceScope { namespace: "dev".into(), explicit: false });
        let (dir, files) = file_then_garbage("limit", 4, None);
        // The garbage after the fourth object is never parsed: the limit refuses first.
        let err = from_documents(&c, &scope, &limited(&files, 3)).unwrap_err();
        assert!(matches!(err, Error::OverLimit { found: 4, complete: false, limit: 3, .. }), "{err}");
        assert_eq!(err.exit_code(), crate::exit_code::REFUSED);
        let printed = err.printed();
        assert!(printed.starts_with("error: the selection holds more than --max-objects (3) objects"), "{printed}");
        assert!(printed.contains("nothing was written") && printed.contains("--max-objects N"), "{printed}");
        // Within the limit (or without one) the whole file is read, and the garbage refused.
        for selection in [limited(&files, 4), Selection { files: &files, ..Default::default() }] {
            let err = from_documents(&c, &scope, &selection).unwrap_err().to_string();
            assert!(err.contains("cannot parse") && err.contains("document 5"), "{err}");
        }
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn an_object_named_twice_counts_once_against_the_limit() {
        let (c, scope) = (catalog(), NamespaceScope { namespace: "dev".into(), explicit: false });
        let (dir, files) = file_then_garbage("twice", 4, Some(3));
        // cm-0, cm-1, cm-2, cm-0 again: three objects, so a limit of 2 stops at cm-2 and a
        // limit of 3 reads on to the garbage.
        let err = from_documents(&c, &scope, &limited(&files, 2)).unwrap_err();
        assert!(matches!(err, Error::OverLimit { found: 3, .. }), "{err}");
        assert!(from_documents(&c, &scope, &limited(&files, 3)).unwrap_err().to_string().contains("cannot parse"));
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn the_count_of_a_selection_read_whole_is_exact() {
        let names = args(&["cm/a", "cm/b", "cm/a", "cm/c"]);
        let (c, scope) = (catalog(), NamespaceScope { namespace: "dev".into(), explicit: false });
        let mut chosen = Chosen::new(Some(SelectionLimit { max: 2, flag: "--max-objects" }));
        let over: Vec<bool> = named(&c, &scope, &Selection { args: &names, ..Default::default() })
            .unwrap()
            .into_iter()
            .map(|target| chosen.add(Found::Named(target)))
            .collect();
        assert_eq!(over, [false, false, false, true], "cm/a again is no new object");
        let printed = chosen.refusal(true).printed();
        assert_eq!(
            printed,
            "error: the selection holds 3 objects, more than --max-objects (2); nothing was written. \
             Narrow it (-l, --field-selector, -n), or raise the limit: --max-objects 3"
        );
    }
}
