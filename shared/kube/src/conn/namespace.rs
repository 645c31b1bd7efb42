//! Which namespaces can be sent at all, checked before any request names one: client-go
//! refuses a namespace that is not a valid path segment (`invalid namespace "a/b": [may not
//! contain '/']`), and the apiserver only ever creates namespaces that are DNS labels.
//!
//! Why here: a namespace with a `/` is otherwise sent as two path segments, the server
//! answers 404 for a path it does not serve, and that answer reads like a stale discovery
//! cache. Refusing it first says what is wrong instead.

use crate::conn::error::{ConnError, ConnResult as Result};

/// The longest namespace name (a DNS label).
const MAX_LENGTH: usize = 63;

/// apimachinery's `IsValidPathSegmentName`: what client-go refuses in a namespace
/// before sending (its messages, in its order).
fn path_segment_problems(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"].iter().filter(|bad| name.contains(*bad)).map(|bad| format!("may not contain '{bad}'")).collect()
}

/// apimachinery's `IsDNS1123Label`: what a namespace name must be for the server to have one.
fn dns_label_problems(name: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if name.len() > MAX_LENGTH {
        problems.push(format!("must be no more than {MAX_LENGTH} characters"));
    }
    let bytes = name.as_bytes();
    let alphanumeric = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let valid = bytes.first().is_some_and(alphanumeric)
        && bytes.last().is_some_and(alphanumeric)
        && bytes.iter().all(|b| alphanumeric(b) || *b == b'-');
    if !valid {
        problems.push(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start \
             and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
                .to_string(),
        );
    }
    problems
}

/// Refuses a namespace no request can name: first what client-go refuses (its message), then
/// what is not a DNS label (the apiserver's). `origin` says where it came from when that is
/// not `-n` (`the namespace of context "dev" in the kubeconfig`), so the user knows what to fix.
pub fn check(namespace: &str, origin: Option<&str>) -> Result<()> {
    let mut problems = path_segment_problems(namespace);
    if problems.is_empty() {
        problems = dns_label_problems(namespace);
    }
    if problems.is_empty() {
        return Ok(());
    }
    let from = origin.map(|o| format!(" ({o})")).unwrap_or_default();
    Err(ConnError::usage(format!("invalid namespace {namespace:?}{from}: [{}]", problems.join(" "))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(namespace: &str) -> String {
        check(namespace, None).unwrap_err().to_string()
    }

    #[test]
    fn client_gos_path_segment_refusals_in_its_words() {
        assert_eq!(refused("a/b"), "invalid namespace \"a/b\": [may not contain '/']");
        assert_eq!(refused("a%2fb"), "invalid namespace \"a%2fb\": [may not contain '%']");
        assert_eq!(refused("a/%"), "invalid namespace \"a/%\": [may not contain '/' may not contain '%']");
        assert_eq!(refused("."), "invalid namespace \".\": [may not be '.']");
        assert_eq!(refused(".."), "invalid namespace \"..\": [may not be '..']");
    }

    #[test]
    fn names_that_are_not_dns_labels_are_refused_and_labels_pass() {
        for bad in ["Shop", "shop.", "-shop", "shop-", "a b", "shop\n", "ä"] {
            assert!(refused(bad).contains("a lowercase RFC 1123 label must consist of"), "{bad}");
        }
        assert!(refused(&"a".repeat(64)).contains("must be no more than 63 characters"));
        for good in ["default", "kube-system", "a", "0", &"a".repeat(63)] {
            assert!(check(good, None).is_ok(), "{good}");
        }
        let from_context = check("a/b", Some("the namespace of context \"dev\" in the kubeconfig")).unwrap_err();
        assert_eq!(
            from_context.to_string(),
            "invalid namespace \"a/b\" (the namespace of context \"dev\" in the kubeconfig): [may not contain '/']"
        );
    }
}
