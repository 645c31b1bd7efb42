//! Shell-style patterns for the names a policy matches: object names, namespaces, kinds,
//! manager names and field paths. `*` stands for any run of characters (dots and slashes
//! included, so `.metadata.labels.*` covers `app.kubernetes.io/name`), `?` for one; every
//! other character stands for itself.

use std::fmt;

/// A pattern as written in the policy.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Glob(String);

impl Glob {
    /// The pattern `text`.
    pub fn new(text: impl Into<String>) -> Self {
        Glob(text.into())
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the pattern has no `*` or `?`: it names exactly one thing.
    pub fn is_literal(&self) -> bool {
        !self.0.contains(['*', '?'])
    }

    /// Whether `text` matches the whole pattern.
    ///
    /// ```
    /// use fieldwise_core::ownership::policy::Glob;
    /// assert!(Glob::new("web-*").matches("web-1"));
    /// assert!(Glob::new(".metadata.labels.*").matches(".metadata.labels.app.kubernetes.io/name"));
    /// assert!(!Glob::new("web-?").matches("web-10"));
    /// ```
    pub fn matches(&self, text: &str) -> bool {
        if self.is_literal() {
            return self.0 == text;
        }
        let pattern: Vec<char> = self.0.chars().collect();
        let text: Vec<char> = text.chars().collect();
        // Greedy with one backtracking point (the last `*`): linear in practice, and never
        // exponential, whatever the pattern.
        let (mut p, mut t) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            match pattern.get(p) {
                Some('*') => {
                    star = Some((p, t));
                    p += 1;
                }
                Some(&c) if c == '?' || c == text[t] => {
                    p += 1;
                    t += 1;
                }
                _ => match star {
                    Some((sp, st)) => {
                        p = sp + 1;
                        t = st + 1;
                        star = Some((sp, st + 1));
                    }
                    None => return false,
                },
            }
        }
        pattern[p..].iter().all(|&c| c == '*')
    }
}

impl fmt::Display for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_questions_and_literals() {
        for (pattern, text, expected) in [
            ("*", "", true),
            ("*", "anything/at.all", true),
            ("web", "web", true),
            ("web", "web2", false),
            ("web-*", "web-", true),
            ("*-controller", "cert-manager-controller", true),
            ("*-controller", "controller", false),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("?", "é", true),
            (".spec.*.image", ".spec.template.spec.containers[name=\"a\"].image", true),
        ] {
            assert_eq!(Glob::new(pattern).matches(text), expected, "{pattern} ~ {text}");
        }
        assert!(Glob::new("ci").is_literal() && !Glob::new("ci-*").is_literal());
    }
}
