//! JSON Pointer (RFC 6901), read the way the apiserver's JSON Patch reads it.
//!
//! A pointer names one place in a document: `/spec/containers/0/image`. Each
//! `/`-separated token is unescaped (`~1` is `/`, `~0` is `~`). The apiserver
//! (evanphx/json-patch v4) is more lenient than the RFC, and a preview has to
//! be lenient in the same way, so [`JsonPointer::parse`] never fails:
//! - the text before the first `/` is ignored (`a/b` means `/b`);
//! - a text without any `/` names no member at all (only `""`, the whole
//!   document, is meaningful, and only to `replace` and `test`);
//! - a `~` not followed by `0` or `1` is kept as it is.
//!
//! [`JsonPointer::is_rfc6901`] tells whether a pointer is also valid by the RFC.

use std::fmt;

/// A JSON Pointer: the text as written and its unescaped tokens.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JsonPointer {
    text: String,
    /// `None` when the text has no `/`: the root (`""`) or a name the apiserver cannot resolve.
    tokens: Option<Vec<String>>,
}

impl JsonPointer {
    /// Reads a pointer as the apiserver does; see the module docs for the leniencies.
    pub fn parse(text: &str) -> Self {
        let tokens = text.find('/').map(|first| text[first + 1..].split('/').map(unescape_token).collect());
        JsonPointer { text: text.to_string(), tokens }
    }

    /// The pointer to the whole document (`""`).
    pub fn root() -> Self {
        JsonPointer { text: String::new(), tokens: None }
    }

    /// Builds a pointer from unescaped tokens, escaping `~` and `/` in each.
    ///
    /// ```
    /// use fieldwise_core::json_patch::JsonPointer;
    /// let p = JsonPointer::from_tokens(["metadata", "annotations", "example.com/team"]);
    /// assert_eq!(p.as_str(), "/metadata/annotations/example.com~1team");
    /// assert_eq!(JsonPointer::parse(p.as_str()), p);
    /// ```
    pub fn from_tokens<I, S>(tokens: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let tokens: Vec<String> = tokens.into_iter().map(|t| t.as_ref().to_string()).collect();
        if tokens.is_empty() {
            return Self::root();
        }
        let text = tokens.iter().map(|t| format!("/{}", escape_token(t))).collect();
        JsonPointer { text, tokens: Some(tokens) }
    }

    /// The pointer as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether this is `""`, the whole document.
    pub fn is_root(&self) -> bool {
        self.text.is_empty()
    }

    /// The unescaped tokens; `None` when the text has no `/` (see the module docs).
    pub fn tokens(&self) -> Option<&[String]> {
        self.tokens.as_deref()
    }

    /// The tokens leading to the parent container, and the last token; `None` without a `/`.
    pub fn split_last(&self) -> Option<(&[String], &str)> {
        let (last, parents) = self.tokens.as_deref()?.split_last()?;
        Some((parents, last.as_str()))
    }

    /// Whether the text is also a valid RFC 6901 pointer (starts with `/` or is empty, only `~0` and `~1` escapes).
    pub fn is_rfc6901(&self) -> bool {
        if self.text.is_empty() {
            return true;
        }
        if !self.text.starts_with('/') {
            return false;
        }
        let bytes = self.text.as_bytes();
        bytes.iter().enumerate().all(|(i, b)| *b != b'~' || matches!(bytes.get(i + 1), Some(b'0') | Some(b'1')))
    }
}

impl fmt::Display for JsonPointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Escapes one token for use in a pointer: `~` becomes `~0`, `/` becomes `~1`.
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Unescapes one token, left to right: `~1` is `/`, `~0` is `~`, any other `~` stays.
///
/// Left to right matters: `~01` is `~1`, not `/`.
pub fn unescape_token(token: &str) -> String {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.peek() {
                Some('1') => {
                    chars.next();
                    out.push('/');
                    continue;
                }
                Some('0') => {
                    chars.next();
                    out.push('~');
                    continue;
                }
                _ => {}
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_unescaped_left_to_right() {
        let p = JsonPointer::parse("/a~1b/m~0n/~01/~2");
        assert_eq!(p.tokens().unwrap_or_default(), ["a/b", "m~n", "~1", "~2"]);
        assert!(!p.is_rfc6901());
    }

    #[test]
    fn root_and_slashless_pointers_have_no_tokens() {
        assert!(JsonPointer::parse("").is_root());
        assert_eq!(JsonPointer::parse("").tokens(), None);
        assert_eq!(JsonPointer::parse("foo").tokens(), None);
        assert!(!JsonPointer::parse("foo").is_root());
    }

    #[test]
    fn text_before_the_first_slash_is_ignored() {
        assert_eq!(JsonPointer::parse("x/a/b").tokens(), JsonPointer::parse("/a/b").tokens());
    }

    #[test]
    fn empty_tokens_are_kept() {
        let p = JsonPointer::parse("/");
        assert_eq!(p.split_last(), Some((&[][..], "")));
        assert!(p.is_rfc6901());
    }

    #[test]
    fn from_tokens_round_trips() {
        let p = JsonPointer::from_tokens(["a/b", "~", ""]);
        assert_eq!(p.as_str(), "/a~1b/~0/");
        assert_eq!(JsonPointer::parse(p.as_str()), p);
        assert_eq!(JsonPointer::from_tokens(Vec::<String>::new()), JsonPointer::root());
    }
}
