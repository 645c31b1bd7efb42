//! Listing a large type namespace by namespace.
//!
//! A list across all namespaces is one chain of pages: each page waits for the one before
//! (its `continue` token), so however many requests may run at once, one type of 100,000
//! objects is 200 requests in a row. Listed namespace by namespace, its namespaces are read
//! in parallel, and the server and the client work at the same time.
//!
//! The switch happens at a page boundary, once a type proves large: the server counts what
//! is left (`remainingItemCount`, absent when a selector filters) or, uncounted, enough
//! objects were read already. What was read is kept up to the namespace of the page's last
//! object; that namespace and every later one (in the server's order) are then listed one by
//! one. (When earlier pages already gave part of that namespace, the chain goes on until a
//! page ends in another one.) Objects come out in the same order as one list would give them: by namespace, in the
//! order the server keys them (`/namespace/name`, so `a-b` comes before `a`), then by name.
//! Each namespace is its own snapshot, and a namespace created after the namespaces were
//! read is not listed: what `kubectl get` in a loop over namespaces would see.

use serde_json::Value;

/// A type with more objects than this left after a page, by the server's count, is listed
/// namespace by namespace from there.
pub(crate) const SPLIT_OVER_COUNTED: u64 = 5_000;
/// Without the server's count (a selector filters the list): a type of which this many
/// objects were read and more follow is listed namespace by namespace from there.
pub(crate) const SPLIT_AFTER_UNCOUNTED: usize = 1_000;

/// Whether a type listed across namespaces, after a page, should go on namespace by
/// namespace: `read` objects so far, `remaining` the server's count, `more` whether pages follow.
pub(crate) fn worth_splitting(read: usize, remaining: Option<u64>, more: bool) -> bool {
    more && match remaining {
        Some(left) => left > SPLIT_OVER_COUNTED,
        None => read >= SPLIT_AFTER_UNCOUNTED,
    }
}

/// The order the server lists namespaces' objects in: by the key `namespace/`.
pub(crate) fn key_order(namespaces: &mut [String]) {
    namespaces.sort_by(|a, b| a.bytes().chain([b'/']).cmp(b.bytes().chain([b'/'])));
}

/// An object's namespace.
pub(crate) fn namespace_of(object: &Value) -> Option<&str> {
    object.pointer("/metadata/namespace").and_then(Value::as_str)
}

/// Splits a page at the namespace of its last object: the objects of the namespaces before
/// it (complete: the list went past them), and the namespaces to list one by one, that one
/// and every later one of `namespaces` (in [`key_order`]), in the server's order.
pub(crate) fn partition(mut page: Vec<Value>, namespaces: &[String]) -> (Vec<Value>, Vec<String>) {
    let Some(last) = page.last().and_then(namespace_of).map(str::to_string) else {
        return (page, Vec::new());
    };
    let first_of_last = page.iter().position(|o| namespace_of(o) == Some(&last)).unwrap_or(page.len());
    page.truncate(first_of_last);
    let after = |ns: &String| ns.bytes().chain([b'/']).gt(last.bytes().chain([b'/']));
    let mut rest = vec![last.clone()];
    rest.extend(namespaces.iter().filter(|ns| after(ns)).cloned());
    (page, rest)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(ns: &str, name: &str) -> Value {
        json!({"metadata": {"namespace": ns, "name": name}})
    }

    #[test]
    fn namespaces_in_the_servers_key_order() {
        let mut ns: Vec<String> = ["a", "b", "a-b", "a0", "ab"].iter().map(|s| s.to_string()).collect();
        key_order(&mut ns);
        // '-' < '/' < '0' < 'b' in bytes: "a-b/" < "a/" < "a0/" < "ab/" < "b/".
        assert_eq!(ns, ["a-b", "a", "a0", "ab", "b"]);
    }

    #[test]
    fn a_page_keeps_the_namespaces_it_completed() {
        let namespaces: Vec<String> = ["a-b", "a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let page = vec![obj("a-b", "x"), obj("a", "x"), obj("a", "y"), obj("b", "x"), obj("b", "y")];
        let (kept, rest) = partition(page, &namespaces);
        let kept: Vec<(&str, &str)> =
            kept.iter().map(|o| (namespace_of(o).unwrap(), o["metadata"]["name"].as_str().unwrap())).collect();
        assert_eq!(kept, [("a-b", "x"), ("a", "x"), ("a", "y")]);
        assert_eq!(rest, ["b", "c"]);
    }

    #[test]
    fn a_page_in_one_namespace_keeps_nothing_and_a_new_namespace_is_still_listed() {
        let namespaces: Vec<String> = ["a", "c"].iter().map(|s| s.to_string()).collect();
        let (kept, rest) = partition(vec![obj("b", "x"), obj("b", "y")], &namespaces);
        assert!(kept.is_empty());
        assert_eq!(rest, ["b", "c"], "the page's namespace even if the namespace list missed it");
    }

    #[test]
    fn large_types_split_small_ones_do_not() {
        assert!(worth_splitting(20, Some(SPLIT_OVER_COUNTED + 1), true));
        assert!(!worth_splitting(20, Some(SPLIT_OVER_COUNTED), true));
        assert!(!worth_splitting(5_000, Some(10_000), false), "nothing follows");
        assert!(worth_splitting(SPLIT_AFTER_UNCOUNTED, None, true));
        assert!(!worth_splitting(SPLIT_AFTER_UNCOUNTED - 1, None, true));
    }
}
