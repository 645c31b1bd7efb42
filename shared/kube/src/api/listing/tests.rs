//! The engine against an apiserver kept in memory: what it asks for (pages, sizes,
//! representations, GETs), how much at once, and what comes out.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::time::Duration;

use futures::future::LocalBoxFuture;
use futures::StreamExt;
use serde_json::{json, Value};

use super::engine::{FIRST_PAGE, REREAD_OVER};
use super::source::{page_of, Page, PageRequest, Source};
use super::*;
use crate::api::discovery::ResourceType;
use crate::api::reference::ObjectRef;
use crate::conn::error::ConnError;
use crate::error::{Error, Result};

fn rt(plural: &str, kind: &str, namespaced: bool) -> ResourceType {
    ResourceType::core_v1(plural, kind, namespaced)
}

/// One request the fake server answered.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Asked {
    plural: String,
    namespace: Option<String>,
    limit: Option<u32>,
    continued: bool,
    representation: Representation,
}

/// An apiserver in memory: objects by type and key (`namespace/name`, the server's order),
/// a request log, and how many requests were in flight at once.
#[derive(Default)]
struct FakeServer {
    objects: BTreeMap<String, BTreeMap<String, Value>>,
    forbidden: BTreeSet<String>,
    /// Types no longer served, each with whether the run's discovery came from the disk
    /// cache (as [`crate::conn::client::Connection::error`] tells the two apart).
    removed: BTreeMap<String, bool>,
    log: RefCell<Vec<Asked>>,
    gets: Cell<usize>,
    now: Cell<usize>,
    most: Cell<usize>,
}

impl FakeServer {
    fn add(&mut self, plural: &str, namespace: Option<&str>, name: &str, labels: Value) {
        let mut metadata = json!({"name": name, "labels": labels, "uid": format!("{plural}/{name}")});
        if let Some(ns) = namespace {
            metadata["namespace"] = json!(ns);
        }
        let key = match namespace {
            Some(ns) => format!("{ns}/{name}"),
            None => name.to_string(),
        };
        let object = json!({"metadata": metadata, "data": {"body": format!("{key} body")}});
        self.objects.entry(plural.to_string()).or_default().insert(key, object);
        if let Some(ns) = namespace {
            let ns_object = json!({"metadata": {"name": ns}});
            self.objects.entry("namespaces".into()).or_default().insert(ns.to_string(), ns_object);
        }
    }

    /// Adds `count` objects spread over `namespaces`, named `o-NNNNN`, the label `pick=yes`
    /// on every `pick_every`th of each namespace (when not 0).
    fn fill(&mut self, plural: &str, namespaces: &[&str], count: usize, pick_every: usize) {
        for i in 0..count {
            let ns = namespaces[i % namespaces.len()];
            let picked = pick_every != 0 && (i / namespaces.len()).is_multiple_of(pick_every);
            let labels = if picked { json!({"pick": "yes"}) } else { json!({}) };
            self.add(plural, Some(ns), &format!("o-{i:05}"), labels);
        }
    }

    fn asked(&self) -> Vec<Asked> {
        self.log.borrow().clone()
    }

    fn lists_of(&self, plural: &str) -> Vec<Asked> {
        self.asked().into_iter().filter(|a| a.plural == plural).collect()
    }

    /// Every object of a type in the server's key order, as `namespace/name`.
    fn keys(&self, plural: &str, label: Option<&str>) -> Vec<String> {
        let all = self.objects.get(plural).into_iter().flatten();
        all.filter(|(_, o)| selected(o, label)).map(|(k, _)| k.clone()).collect()
    }

    async fn in_flight<R>(&self, work: impl Future<Output = R>) -> R {
        self.now.set(self.now.get() + 1);
        self.most.set(self.most.get().max(self.now.get()));
        tokio::time::sleep(Duration::from_millis(2)).await;
        let r = work.await;
        self.now.set(self.now.get() - 1);
        r
    }

    fn answer(&self, request: &PageRequest<'_>) -> Result<Page> {
        let plural = &request.resource.plural;
        if self.forbidden.contains(plural) {
            return Err(Error::Conn(ConnError::Api {
                code: 403,
                reason: "Forbidden".into(),
                message: format!("{plural} is forbidden"),
                causes: vec![],
            }));
        }
        if let Some(cached) = self.removed.get(plural) {
            let answer = ConnError::Api {
                code: 404,
                reason: "NotFound".into(),
                message: "the server could not find the requested resource".into(),
                causes: vec![],
            };
            return Err(Error::Conn(match cached {
                true => ConnError::NoLongerServed { answer: Box::new(answer), cache_cleared: true },
                false => answer,
            }));
        }
        let label = request.selectors.label.as_deref();
        let prefix = request.namespace.map(|ns| format!("{ns}/"));
        let matching: Vec<(&String, &Value)> = self
            .objects
            .get(plural.as_str())
            .into_iter()
            .flatten()
            .filter(|(k, _)| prefix.as_ref().is_none_or(|p| k.starts_with(p)))
            .filter(|(k, _)| request.token.is_none_or(|t| k.as_str() > t))
            .filter(|(_, o)| selected(o, label))
            .collect();
        let limit = request.limit.map_or(usize::MAX, |l| l as usize);
        let page: Vec<&(&String, &Value)> = matching.iter().take(limit).collect();
        let more = matching.len() > page.len();
        let items: Vec<Value> = page
            .iter()
            .map(|(_, o)| match request.representation {
                Representation::Full => (*o).clone(),
                Representation::Metadata => json!({"metadata": o["metadata"]}),
            })
            .collect();
        let mut metadata = json!({});
        if more {
            metadata["continue"] = json!(page.last().map(|(k, _)| k.as_str()));
            if request.selectors.is_empty() {
                metadata["remainingItemCount"] = json!(matching.len() - page.len());
            }
        }
        Ok(page_of(json!({"items": items, "metadata": metadata}), request.resource))
    }
}

fn selected(object: &Value, label: Option<&str>) -> bool {
    label.is_none_or(|l| {
        l.split(',').all(|term| match term.split_once('=') {
            Some((k, v)) => object["metadata"]["labels"][k] == v,
            None => true,
        })
    })
}

impl Source for FakeServer {
    fn page<'a>(&'a self, request: PageRequest<'a>) -> LocalBoxFuture<'a, Result<Page>> {
        self.log.borrow_mut().push(Asked {
            plural: request.resource.plural.clone(),
            namespace: request.namespace.map(str::to_string),
            limit: request.limit,
            continued: request.token.is_some(),
            representation: request.representation,
        });
        Box::pin(self.in_flight(async move { self.answer(&request) }))
    }

    fn get<'a>(&'a self, target: &'a ObjectRef) -> LocalBoxFuture<'a, Result<Value>> {
        self.gets.set(self.gets.get() + 1);
        Box::pin(self.in_flight(async move {
            let key = match &target.namespace {
                Some(ns) => format!("{ns}/{}", target.name),
                None => target.name.clone(),
            };
            self.objects.get(&target.resource.plural).and_then(|m| m.get(&key)).cloned().ok_or_else(|| {
                Error::Conn(ConnError::Api {
                    code: 404,
                    reason: "NotFound".into(),
                    message: format!("{key} not found"),
                    causes: vec![],
                })
            })
        }))
    }
}

fn key_of(object: &Value) -> String {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    match object["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_string(),
    }
}

fn lister(server: &FakeServer, scope: Scope, selectors: Selectors, concurrency: usize) -> Lister<'_> {
    Lister::over(server, scope, selectors, ListOptions::with_concurrency(concurrency))
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn pages_of_five_hundred_in_the_servers_order() {
    let mut server = FakeServer::default();
    server.fill("configmaps", &["prod"], 1234, 0);
    let cms = rt("configmaps", "ConfigMap", true);
    let objects = lister(&server, Scope::Namespace("prod".into()), Selectors::default(), 4).list(&cms).await.unwrap();
    assert_eq!(objects.iter().map(key_of).collect::<Vec<_>>(), server.keys("configmaps", None));
    assert!(objects.iter().all(|o| o["apiVersion"] == "v1" && o["kind"] == "ConfigMap" && o["data"].is_object()));
    let asked = server.lists_of("configmaps");
    assert_eq!(asked.len(), 3, "{asked:#?}");
    assert!(asked.iter().all(|a| a.limit == Some(500) && a.namespace.as_deref() == Some("prod")));
    assert_eq!(asked.iter().map(|a| a.continued).collect::<Vec<_>>(), [false, true, true]);
    assert!(asked.iter().all(|a| a.representation == Representation::Full));
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn many_types_at_once_never_more_requests_than_the_bound() {
    let mut server = FakeServer::default();
    let types: Vec<ResourceType> = (0..10).map(|i| rt(&format!("things{i}"), &format!("Thing{i}"), true)).collect();
    for t in &types {
        server.fill(&t.plural, &["a", "b"], 1200, 0);
    }
    let listed = lister(&server, Scope::Namespace("a".into()), Selectors::default(), 3).list_each(types.clone()).await;
    assert_eq!(server.most.get(), 3, "three requests at once, never more");
    let names: Vec<&str> = listed.iter().map(|(t, _)| t.plural.as_str()).collect();
    assert_eq!(names, types.iter().map(|t| t.plural.as_str()).collect::<Vec<_>>(), "in the order given");
    for (t, objects) in &listed {
        let keys: Vec<String> = objects.as_ref().unwrap().iter().map(key_of).collect();
        let expected: Vec<String> = server.keys(&t.plural, None).into_iter().filter(|k| k.starts_with("a/")).collect();
        assert_eq!(keys, expected, "{}", t.plural);
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_large_type_across_namespaces_is_listed_namespace_by_namespace() {
    let mut server = FakeServer::default();
    // "a-b" sorts before "a" in the server's keys: the split must keep that order.
    server.fill("configmaps", &["a", "a-b", "b", "c", "d"], 12_000, 0);
    let cms = rt("configmaps", "ConfigMap", true);
    let objects = lister(&server, Scope::AllNamespaces, Selectors::default(), 4).list(&cms).await.unwrap();
    let keys: Vec<String> = objects.iter().map(key_of).collect();
    assert_eq!(keys, server.keys("configmaps", None), "every object once, in the order one list gives");
    let asked = server.lists_of("configmaps");
    assert_eq!(asked[0].namespace, None, "the first page across all namespaces");
    let per_namespace: BTreeSet<Option<String>> = asked[1..].iter().map(|a| a.namespace.clone()).collect();
    let expected: BTreeSet<Option<String>> = ["a", "a-b", "b", "c", "d"].iter().map(|n| Some(n.to_string())).collect();
    assert_eq!(per_namespace, expected, "then namespace by namespace: {asked:#?}");
    assert_eq!(server.lists_of("namespaces").len(), 1, "namespaces read once");
    assert_eq!(server.most.get(), 4, "namespaces listed in parallel, within the bound");
    // Each namespace reads pages of the page size shared by the namespaces in flight (500 / 4):
    // together they hold about what one type listed alone holds, however large the type.
    assert!(asked[1..].iter().all(|a| a.limit == Some(125)), "{asked:#?}");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_selected_listing_across_namespaces_gets_exactly_the_selected_objects() {
    let mut server = FakeServer::default();
    // 1,500 of 4,500 selected: more than the uncounted threshold, so the listing splits.
    server.fill("configmaps", &["x1", "x2", "x3"], 4_500, 3);
    let cms = rt("configmaps", "ConfigMap", true);
    let selectors = Selectors::label(Some("pick=yes"));
    let objects = lister(&server, Scope::AllNamespaces, selectors, 8).list(&cms).await.unwrap();
    let keys: Vec<String> = objects.iter().map(key_of).collect();
    assert_eq!(keys.len(), 1_500);
    assert_eq!(keys, server.keys("configmaps", Some("pick=yes")));
    assert!(server.lists_of("configmaps").iter().any(|a| a.namespace.is_some()), "split after 1,000 uncounted objects");

    // 1,200 selected in one namespace, a few in others: the pages read past 1,000 objects are
    // all in that namespace, already partly given: the chain goes on until it leaves it.
    let mut server = FakeServer::default();
    for i in 0..1_200 {
        server.add("configmaps", Some("big"), &format!("o-{i:05}"), json!({"pick": "yes"}));
    }
    server.fill("configmaps", &["a"], 40, 2);
    for ns in ["c", "d", "e"] {
        server.fill("configmaps", &[ns], 400, 2);
    }
    let selectors = Selectors::label(Some("pick=yes"));
    let objects = lister(&server, Scope::AllNamespaces, selectors, 8).list(&cms).await.unwrap();
    let keys: Vec<String> = objects.iter().map(key_of).collect();
    assert_eq!(keys, server.keys("configmaps", Some("pick=yes")), "exactly the selected ones, once");
    let asked = server.lists_of("configmaps");
    assert!(asked.iter().any(|a| a.namespace.as_deref() == Some("e")), "{asked:#?}");
    assert!(!asked.iter().any(|a| a.namespace.as_deref() == Some("big")), "{asked:#?}");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn small_types_and_unreadable_namespaces_are_not_split() {
    let mut server = FakeServer::default();
    server.fill("configmaps", &["a", "b", "c"], 900, 0);
    let cms = rt("configmaps", "ConfigMap", true);
    let objects = lister(&server, Scope::AllNamespaces, Selectors::default(), 8).list(&cms).await.unwrap();
    assert_eq!(objects.len(), 900);
    assert!(server.asked().iter().all(|a| a.namespace.is_none() && a.plural == "configmaps"), "{:#?}", server.asked());

    let mut server = FakeServer::default();
    server.fill("configmaps", &["a", "b", "c"], 12_000, 0);
    server.forbidden.insert("namespaces".into());
    let objects = lister(&server, Scope::AllNamespaces, Selectors::default(), 8).list(&cms).await.unwrap();
    assert_eq!(objects.iter().map(key_of).collect::<Vec<_>>(), server.keys("configmaps", None));
    assert!(server.lists_of("configmaps").iter().all(|a| a.namespace.is_none()), "one chain of pages");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn objects_stream_one_at_a_time_and_metadata_pages_stay_metadata() {
    let mut server = FakeServer::default();
    server.fill("configmaps", &["a"], 700, 0);
    let cms = rt("configmaps", "ConfigMap", true);
    let l = lister(&server, Scope::Namespace("a".into()), Selectors::default(), 2);
    let first_three: Vec<Value> = l.objects(&cms).take(3).map(|o| o.unwrap()).collect().await;
    assert_eq!(first_three.iter().map(key_of).collect::<Vec<_>>(), ["a/o-00000", "a/o-00001", "a/o-00002"]);
    assert!(server.lists_of("configmaps").len() <= 2, "no more than a page read ahead");

    let server2 = {
        let mut s = FakeServer::default();
        s.fill("configmaps", &["a"], 700, 0);
        s
    };
    let l = lister(&server2, Scope::Namespace("a".into()), Selectors::default(), 2);
    let pages: Vec<Vec<Value>> = l.pages(&cms, Representation::Metadata).map(|p| p.unwrap()).collect().await;
    assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [500, 200]);
    assert!(pages.iter().flatten().all(|o| o.get("data").is_none() && o["kind"] == "ConfigMap"));
    assert!(server2.asked().iter().all(|a| a.representation == Representation::Metadata));
    assert_eq!(server2.gets.get(), 0);
}

/// A check that wants the objects `wants` says yes to, and returns the keys of its page
/// with whether each came whole.
struct Wants<F: Fn(&str) -> bool>(F);

impl<F: Fn(&str) -> bool> PageCheck for Wants<F> {
    type Output = Vec<(String, bool)>;

    fn wanted<'a>(&'a self, page: &'a [Value]) -> impl Future<Output = Result<Vec<bool>>> + 'a {
        futures::future::ready(Ok(page.iter().map(|o| (self.0)(&key_of(o))).collect()))
    }

    fn check(&self, page: Vec<Listed>) -> Self::Output {
        page.into_iter().map(|l| (key_of(&l.object), l.full)).collect()
    }
}

fn number(key: &str) -> usize {
    key.rsplit('-').next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn metadata_first_reads_whole_objects_only_where_wanted() {
    let mut server = FakeServer::default();
    server.fill("configmaps", &["a"], 1_520, 0);
    let cms = rt("configmaps", "ConfigMap", true);
    // Sparse at first (one in 50 wanted), then every object from 900 on.
    let wants = |key: &str| number(key).is_multiple_of(50) || number(key) >= 900;
    let l = lister(&server, Scope::Namespace("a".into()), Selectors::default(), 4);
    let events: Vec<TypeEvent<Vec<(String, bool)>>> =
        l.check_types(vec![cms.clone()], |_| Wants(wants)).collect().await;
    let mut seen = Vec::new();
    for event in &events {
        if let TypeEvent::Page(page) = event {
            seen.extend(page.iter().cloned());
        }
    }
    assert!(matches!(events.last(), Some(TypeEvent::Done { objects: 1_520, .. })), "{:?}", events.last());
    let keys: Vec<String> = seen.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(keys, server.keys("configmaps", None), "every object once, in order");
    for (key, full) in &seen {
        if wants(key) {
            assert!(*full, "{key} wanted: whole");
        }
    }
    let asked: Vec<(u32, Representation)> =
        server.lists_of("configmaps").iter().map(|a| (a.limit.unwrap(), a.representation)).collect();
    use Representation::{Full, Metadata};
    // 20 metadata (1 wanted: a GET); 500 metadata (20..520: sparse, 10 GETs); 500 metadata
    // (520..1020: 127 wanted, dense, more than REREAD_OVER: read again whole from its token);
    // then a whole page (1020..1520), the last.
    assert_eq!(asked[..4], [(FIRST_PAGE, Metadata), (500, Metadata), (500, Metadata), (500, Full)], "{asked:?}");
    assert_eq!(asked[4..], [(500, Full)], "{asked:?}");
    const { assert!(20 > REREAD_OVER) };
    assert_eq!(server.gets.get(), 1 + 10, "GETs only for the wanted objects of sparse pages");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_dense_first_page_makes_the_split_namespaces_start_whole() {
    let mut server = FakeServer::default();
    server.fill("configmaps", &["n1", "n2", "n3", "n4"], 8_000, 0);
    let cms = rt("configmaps", "ConfigMap", true);
    let l = lister(&server, Scope::AllNamespaces, Selectors::default(), 6);
    let events: Vec<_> = l.check_types(vec![cms], |_| Wants(|_: &str| true)).collect().await;
    let mut seen = Vec::new();
    for event in events {
        match event {
            TypeEvent::Page(page) => seen.extend(page),
            TypeEvent::Done { objects, .. } => assert_eq!(objects, 8_000),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(seen.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(), server.keys("configmaps", None));
    assert!(seen.iter().all(|(_, full)| *full));
    let asked = server.lists_of("configmaps");
    assert_eq!((asked[0].namespace.as_deref(), asked[0].representation), (None, Representation::Metadata));
    assert!(asked[1..].iter().all(|a| a.namespace.is_some() && a.representation == Representation::Full), "{asked:#?}");
    // The first page's objects (all in n1) are listed again with n1; their GETs were never sent.
    assert_eq!(server.gets.get(), 0);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_forbidden_type_is_skipped_and_the_others_listed() {
    let mut server = FakeServer::default();
    server.fill("configmaps", &["a"], 30, 0);
    server.fill("secrets", &["a"], 30, 0);
    server.fill("pods", &["a"], 30, 0);
    server.forbidden.insert("secrets".into());
    let types = vec![rt("configmaps", "ConfigMap", true), rt("secrets", "Secret", true), rt("pods", "Pod", true)];
    let l = lister(&server, Scope::Namespace("a".into()), Selectors::default(), 2);
    let events: Vec<_> = l.check_types(types, |_| AsListed(Representation::Metadata)).collect().await;
    let ends: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            TypeEvent::Done { resource, objects } => Some(format!("{} {objects}", resource.plural)),
            TypeEvent::Skipped { resource, error } => Some(format!("{} skipped: {error}", resource.plural)),
            TypeEvent::Failed { resource, .. } => Some(format!("{} failed", resource.plural)),
            TypeEvent::Page(_) => None,
        })
        .collect();
    assert_eq!(ends.len(), 3);
    assert_eq!(ends[0], "configmaps 30");
    assert!(ends[1].starts_with("secrets skipped:") && ends[1].contains("forbidden"), "{ends:?}");
    assert_eq!(ends[2], "pods 30");
}

/// Issue 32, problem 5: a CustomResourceDefinition deleted during a scan (or after the
/// cached discovery was written) ends neither the listing nor the scan.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_type_no_longer_served_is_skipped_with_a_note_and_the_others_listed() {
    let mut server = FakeServer::default();
    server.fill("configmaps", &["a"], 30, 0);
    server.fill("pods", &["a"], 30, 0);
    server.removed.insert("gadgets".into(), true);
    server.removed.insert("widgets".into(), false);
    let types = vec![
        rt("configmaps", "ConfigMap", true),
        rt("gadgets", "Gadget", true),
        rt("widgets", "Widget", true),
        rt("pods", "Pod", true),
    ];
    let l = lister(&server, Scope::Namespace("a".into()), Selectors::default(), 2);
    let events: Vec<_> = l.check_types(types, |_| AsListed(Representation::Metadata)).collect().await;
    let ends: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            TypeEvent::Done { resource, objects } => Some(format!("{} {objects}", resource.plural)),
            TypeEvent::Skipped { resource, error } => Some(format!("{} skipped: {error}", resource.plural)),
            TypeEvent::Failed { resource, error } => Some(format!("{} failed: {error}", resource.plural)),
            TypeEvent::Page(_) => None,
        })
        .collect();
    let note = "skipped: the server no longer serves this resource type (404 Not Found): \
                it was removed after discovery was read";
    assert_eq!(
        ends,
        ["configmaps 30".to_string(), format!("gadgets {note}"), format!("widgets {note}"), "pods 30".into()]
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn several_split_types_at_once_never_starve_the_type_being_read() {
    // Types ahead of the consumer wait on their full channels while their namespaces queue
    // for requests: a request slot granted to a namespace nobody polls would never come
    // back, and the type being read would wait for it forever.
    let mut server = FakeServer::default();
    let namespaces = ["n1", "n2", "n3", "n4", "n5", "n6"];
    let types: Vec<ResourceType> = (0..4).map(|i| rt(&format!("big{i}"), &format!("Big{i}"), true)).collect();
    for t in &types {
        server.fill(&t.plural, &namespaces, 9_000, 0);
    }
    let l = lister(&server, Scope::AllNamespaces, Selectors::default(), 2);
    let listed = tokio::time::timeout(Duration::from_secs(3600), l.list_each(types.clone())).await;
    let listed = listed.expect("the listing went on to the end");
    for (t, objects) in &listed {
        let keys: Vec<String> = objects.as_ref().unwrap().iter().map(key_of).collect();
        assert_eq!(keys, server.keys(&t.plural, None), "{}", t.plural);
    }
    assert!(server.asked().iter().any(|a| a.plural == "big3" && a.namespace.is_some()), "split");
    assert!(server.most.get() <= 2);
}
