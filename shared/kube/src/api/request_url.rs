//! Every URL the plugins send to the apiserver, built here from typed parts: path segments
//! checked and percent-encoded one by one, and a query of encoded pairs.
//!
//! Why one place: a name pasted into a path reaches another object. `cm/c#q` cut at the `#`
//! patches `configmap/c`; `metadata.name: d/scale` in a file patches the Deployment `d`
//! through its `/scale`; `c?dryRun=All` becomes a query. client-go refuses a name that is not
//! a valid path segment before it builds a URL (`rest.Request.Name`, apimachinery's
//! `IsValidPathSegmentName`: not `.` or `..`, no `/` or `%`) and escapes the rest of the path
//! as Go's `url.URL.EscapedPath` does; this module does both, with client-go's messages
//! (`invalid resource name "d/scale": [may not contain '/']`), so a name the server could
//! never have stored is refused and any other reaches exactly its own object (`c#q` is
//! sent as `c%23q` and the server answers that it is not found, as it answers kubectl).
//! Its property test checks that the path of a generated name, decoded as the server
//! decodes it, has that name alone in its segment.

use std::fmt::Write as _;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC};

use crate::api::discovery::ResourceType;
use crate::error::ReferenceError;

/// What Go leaves unescaped in a path (`shouldEscape` with `encodePath`): the unreserved
/// characters and the sub-delimiters `$&+,;=` with `:` and `@`. Everything else, `/`, `%`,
/// `?`, `#`, spaces, controls and every non-ASCII byte included, is escaped.
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'$')
    .remove(b'&')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b':')
    .remove(b'@');

/// Which part of a path a segment is, as client-go's messages name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentKind {
    /// An object's `metadata.name`.
    Name,
    /// A namespace.
    Namespace,
    /// A resource's plural, group or version, from discovery.
    Resource,
    /// A subresource (`status`, `scale`).
    Subresource,
}

impl SegmentKind {
    /// client-go's word for it in `invalid ... "x": [...]`.
    fn word(self) -> &'static str {
        match self {
            SegmentKind::Name => "resource name",
            SegmentKind::Namespace => "namespace",
            SegmentKind::Resource => "resource",
            SegmentKind::Subresource => "subresource",
        }
    }
}

/// apimachinery's `IsValidPathSegmentName`: why `text` cannot be one path segment (empty
/// when it can), in its messages and order (client-go prints them as Go prints a slice:
/// `[may not contain '/' may not contain '%']`).
pub fn segment_problems(text: &str) -> Vec<String> {
    if text == "." || text == ".." {
        return vec![format!("may not be '{text}'")];
    }
    ["/", "%"].iter().filter(|bad| text.contains(*bad)).map(|bad| format!("may not contain '{bad}'")).collect()
}

/// Checks that `text` can name one path segment of kind `kind`; `origin` says where it came
/// from when that is not an argument (`metadata.name in deploy.yaml`).
pub fn check_segment(kind: SegmentKind, text: &str, origin: Option<&str>) -> Result<(), ReferenceError> {
    let mut problems = segment_problems(text);
    if text.is_empty() {
        problems.push("may not be empty".to_string());
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(ReferenceError::InvalidSegment {
        what: kind.word(),
        text: text.to_string(),
        origin: origin.map(str::to_string),
        problems: problems.join(" "),
    })
}

/// One checked segment, percent-encoded, after a `/`.
fn push_segment(path: &mut String, kind: SegmentKind, text: &str) -> Result<(), ReferenceError> {
    check_segment(kind, text, None)?;
    path.push('/');
    // Writing to a String cannot fail.
    let _ = write!(path, "{}", percent_encoding::utf8_percent_encode(text, PATH_SEGMENT));
    Ok(())
}

/// The path of `resource`'s collection, in `namespace` when the type is namespaced:
/// `/api/v1/namespaces/dev/configmaps`, `/apis/apps/v1/deployments`.
pub fn collection_path(resource: &ResourceType, namespace: Option<&str>) -> Result<String, ReferenceError> {
    let mut path = String::new();
    if resource.group.is_empty() {
        path.push_str("/api");
    } else {
        path.push_str("/apis");
        push_segment(&mut path, SegmentKind::Resource, &resource.group)?;
    }
    push_segment(&mut path, SegmentKind::Resource, &resource.version)?;
    if let (true, Some(ns)) = (resource.namespaced, namespace) {
        path.push_str("/namespaces");
        push_segment(&mut path, SegmentKind::Namespace, ns)?;
    }
    push_segment(&mut path, SegmentKind::Resource, &resource.plural)?;
    Ok(path)
}

/// The path of one object, or of one of its subresources.
pub fn object_path(
    resource: &ResourceType,
    namespace: Option<&str>,
    name: &str,
    subresource: Option<&str>,
) -> Result<String, ReferenceError> {
    let mut path = collection_path(resource, namespace)?;
    push_segment(&mut path, SegmentKind::Name, name)?;
    if let Some(sub) = subresource {
        push_segment(&mut path, SegmentKind::Subresource, sub)?;
    }
    Ok(path)
}

/// A request's query: pairs encoded as `application/x-www-form-urlencoded`, as Go's
/// `url.Values.Encode` does, so a value can hold any character.
#[derive(Debug, Default, Clone)]
pub struct Query {
    pairs: Vec<(&'static str, String)>,
}

impl Query {
    /// An empty query.
    pub fn new() -> Self {
        Query::default()
    }

    /// Adds `key=value`.
    pub fn push(&mut self, key: &'static str, value: impl Into<String>) -> &mut Self {
        self.pairs.push((key, value.into()));
        self
    }

    /// Adds every pair of `other`, after this query's.
    pub fn extend(&mut self, other: Query) -> &mut Self {
        self.pairs.extend(other.pairs);
        self
    }

    /// Whether it has no pair.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// `path` with this query (`path?a=1&b=2`, or `path` alone when there is none).
    pub fn on(&self, path: &str) -> String {
        if self.pairs.is_empty() {
            return path.to_string();
        }
        let mut encoded = form_urlencoded::Serializer::new(String::new());
        for (key, value) in &self.pairs {
            encoded.append_pair(key, value);
        }
        format!("{path}?{}", encoded.finish())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn configmaps() -> ResourceType {
        ResourceType::core_v1("configmaps", "ConfigMap", true)
    }

    fn deployments() -> ResourceType {
        ResourceType { group: "apps".into(), plural: "deployments".into(), kind: "Deployment".into(), ..configmaps() }
    }

    /// The segments of a path as the apiserver reads them: split at `/`, each percent-decoded.
    fn server_segments(path: &str) -> Vec<String> {
        path.split('/')
            .skip(1)
            .map(|s| percent_encoding::percent_decode_str(s).decode_utf8().expect("UTF-8").into_owned())
            .collect()
    }

    #[test]
    fn names_that_would_reach_another_object_are_encoded_or_refused() {
        let cm = configmaps();
        assert_eq!(object_path(&cm, Some("ns"), "c#zzz", None).unwrap(), "/api/v1/namespaces/ns/configmaps/c%23zzz");
        assert_eq!(
            object_path(&cm, Some("ns"), "c?dryRun=All", None).unwrap(),
            "/api/v1/namespaces/ns/configmaps/c%3FdryRun=All"
        );
        assert_eq!(
            object_path(&cm, Some("ns"), "system:role@x", None).unwrap(),
            "/api/v1/namespaces/ns/configmaps/system:role@x",
            "what Go leaves as it is stays readable"
        );
        let err = object_path(&deployments(), Some("ns"), "d/scale", None).unwrap_err();
        assert_eq!(err.to_string(), "invalid resource name \"d/scale\": [may not contain '/']");
        for bad in [".", "..", "a%2Fb", ""] {
            assert!(object_path(&cm, Some("ns"), bad, None).is_err(), "{bad:?}");
        }
        let err = object_path(&cm, Some("a/b"), "x", None).unwrap_err();
        assert_eq!(err.to_string(), "invalid namespace \"a/b\": [may not contain '/']");
        let err = object_path(&deployments(), Some("ns"), "d", Some("scale/x")).unwrap_err();
        assert_eq!(err.to_string(), "invalid subresource \"scale/x\": [may not contain '/']");
    }

    #[test]
    fn the_origin_is_named() {
        let err = check_segment(SegmentKind::Name, "d/scale", Some("metadata.name in d.yaml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid resource name \"d/scale\" (metadata.name in d.yaml): [may not contain '/']"
        );
    }

    #[test]
    fn queries_encode_any_value() {
        let mut query = Query::new();
        query.push("fieldManager", "me & you#1").push("labelSelector", "app in (a,b)");
        assert_eq!(query.on("/p"), "/p?fieldManager=me+%26+you%231&labelSelector=app+in+%28a%2Cb%29");
        assert_eq!(Query::new().on("/p"), "/p");
    }

    proptest! {
        /// Any name is refused, or sent as exactly one segment that decodes to itself, after
        /// the collection it was meant for; nothing of it reaches the query or a fragment.
        #[test]
        fn a_generated_name_names_exactly_its_object(
            name in "[ -~\u{80}-\u{10FFFF}]{0,24}",
            sub in proptest::option::of(prop_oneof![Just("status"), Just("scale")]),
        ) {
            let deploy = deployments();
            match object_path(&deploy, Some("ns"), &name, sub) {
                Err(_) => prop_assert!(name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('%')),
                Ok(path) => {
                    prop_assert!(!path.contains('?') && !path.contains('#'), "{path}");
                    let mut expected = vec!["apis", "apps", "v1", "namespaces", "ns", "deployments", name.as_str()];
                    expected.extend(sub);
                    prop_assert_eq!(server_segments(&path), expected);
                }
            }
        }

        /// A query value of any text comes back whole when the server parses the query.
        #[test]
        fn a_generated_query_value_comes_back_whole(value in "[ -~\u{80}-\u{10FFFF}]{0,24}") {
            let mut query = Query::new();
            query.push("fieldManager", value.clone()).push("dryRun", "All");
            let url = query.on("/p");
            let (_, raw) = url.split_once('?').expect("a query");
            let parsed: Vec<(String, String)> = form_urlencoded::parse(raw.as_bytes()).into_owned().collect();
            prop_assert_eq!(parsed, vec![("fieldManager".to_string(), value), ("dryRun".to_string(), "All".to_string())]);
        }
    }
}
