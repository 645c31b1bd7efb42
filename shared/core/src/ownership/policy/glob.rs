//! Shell-style patterns for the names a policy matches: object names, namespaces, kinds,
//! manager names and field paths. `*` stands for any run of characters (dots and slashes
//! included, so `.metadata.labels.*` covers `app.kubernetes.io/name`), `?` for one; every
//! other character stands for itself.

//!
//! A pattern is compiled once, when it is read ([`Glob::new`]): cut at its stars into pieces
//! of fixed length. A text matches when the first piece starts it, the last ends it, and
//! the ones between are found in order, each at its leftmost place after the one before
//! (leftmost is always right: it leaves the most room to the rest). A piece of plain
//! characters is found with Knuth-Morris-Pratt, so a match costs time linear in the text
//! and the pattern, never the product of the two that backtracking costs on patterns such
//! as `*a*a*a*...b`; a pattern needing more characters than the text has fails at once.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A pattern as written in the policy, compiled.
#[derive(Clone)]
pub struct Glob {
    text: String,
    matcher: Matcher,
}

/// How a [`Glob`] matches.
#[derive(Clone)]
enum Matcher {
    /// No `*` and no `?`: the text itself.
    Literal,
    /// Only `*`: pieces of bytes (a piece of valid UTF-8 found in valid UTF-8 starts and
    /// ends on character boundaries, so bytes give the same answer as characters).
    Bytes(Arc<Pieces<u8>>),
    /// With `?`, which stands for one character: pieces of characters.
    Chars(Arc<Pieces<char>>),
}

/// A pattern cut at its stars.
struct Pieces<T> {
    /// Before the first star (all of it when there is none): the start of the text.
    head: Piece<T>,
    /// Between stars, in order.
    middle: Vec<Piece<T>>,
    /// After the last star: the end of the text; `None` when the pattern has no star.
    tail: Option<Piece<T>>,
    /// How many units (bytes or characters) a text needs at least.
    min_len: usize,
}

/// A run of the pattern without stars: each unit is itself or (`None`) any one.
struct Piece<T> {
    units: Vec<Option<T>>,
    /// Knuth-Morris-Pratt's table, when every unit is itself.
    table: Option<Vec<usize>>,
}

impl<T: Copy + Eq> Piece<T> {
    fn new(units: Vec<Option<T>>) -> Self {
        let table = units.iter().all(Option::is_some).then(|| kmp_table(&units));
        Piece { units, table }
    }

    fn len(&self) -> usize {
        self.units.len()
    }

    /// Whether the piece is at `text[at..]`.
    fn is_at(&self, text: &[T], at: usize, steps: &mut usize) -> bool {
        *steps += self.units.len();
        text.get(at..at + self.units.len())
            .is_some_and(|here| here.iter().zip(&self.units).all(|(t, u)| u.is_none_or(|u| u == *t)))
    }

    /// Where the piece first is in `text`.
    fn find(&self, text: &[T], steps: &mut usize) -> Option<usize> {
        let n = self.units.len();
        if n > text.len() {
            return None;
        }
        match &self.table {
            Some(table) => {
                // Knuth-Morris-Pratt: each step moves the text or falls back in the table,
                // which moves at most as often as the text did: under 2 x text length.
                let mut k = 0;
                for (i, t) in text.iter().enumerate() {
                    *steps += 1;
                    while k > 0 && self.units[k] != Some(*t) {
                        *steps += 1;
                        k = table[k - 1];
                    }
                    if self.units[k] == Some(*t) {
                        k += 1;
                    }
                    if k == n {
                        return Some(i + 1 - n);
                    }
                }
                None
            }
            // A `?` in a piece between stars: each place tried (the piece is no longer than
            // the text, see `min_len`).
            None => (0..=text.len() - n).find(|&at| self.is_at(text, at, steps)),
        }
    }
}

/// The table of the longest proper prefix of `units[..=i]` that is also its suffix.
fn kmp_table<T: Eq>(units: &[Option<T>]) -> Vec<usize> {
    let mut table = vec![0; units.len()];
    let mut k = 0;
    for i in 1..units.len() {
        while k > 0 && units[i] != units[k] {
            k = table[k - 1];
        }
        if units[i] == units[k] {
            k += 1;
        }
        table[i] = k;
    }
    table
}

impl<T: Copy + Eq> Pieces<T> {
    /// Cuts `units` (`None` for a star, `Some(None)` for `?`) at its stars; runs of stars are one.
    fn new(units: impl Iterator<Item = Option<Option<T>>>) -> Self {
        let mut pieces: Vec<Vec<Option<T>>> = vec![Vec::new()];
        for unit in units {
            match unit {
                Some(unit) => pieces.last_mut().expect("never empty").push(unit),
                None => pieces.push(Vec::new()),
            }
        }
        let min_len = pieces.iter().map(Vec::len).sum();
        let mut pieces = pieces.into_iter();
        let head = Piece::new(pieces.next().unwrap_or_default());
        let mut rest: Vec<Piece<T>> = pieces.map(Piece::new).collect();
        let tail = rest.pop();
        // Stars side by side leave empty pieces between them: they match anywhere.
        rest.retain(|piece| piece.len() > 0);
        Pieces { head, middle: rest, tail, min_len }
    }

    /// Whether `text` matches; `steps` counts the units compared.
    fn matches(&self, text: &[T], steps: &mut usize) -> bool {
        if text.len() < self.min_len || !self.head.is_at(text, 0, steps) {
            return false;
        }
        let Some(tail) = &self.tail else { return text.len() == self.head.len() };
        let end = text.len() - tail.len();
        if !tail.is_at(text, end, steps) {
            return false;
        }
        let mut at = self.head.len();
        for piece in &self.middle {
            match piece.find(&text[at..end], steps) {
                Some(found) => at += found + piece.len(),
                None => return false,
            }
        }
        true
    }
}

impl Glob {
    /// The pattern `text`, compiled (once: every match uses it).
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        let unit = |c: char| match c {
            '*' => None,
            '?' => Some(None),
            c => Some(Some(c)),
        };
        let matcher = if !text.contains(['*', '?']) {
            Matcher::Literal
        } else if text.contains('?') {
            Matcher::Chars(Arc::new(Pieces::new(text.chars().map(unit))))
        } else {
            let bytes = text.bytes().map(|b| if b == b'*' { None } else { Some(Some(b)) });
            Matcher::Bytes(Arc::new(Pieces::new(bytes)))
        };
        Glob { text, matcher }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the pattern has no `*` or `?`: it names exactly one thing.
    pub fn is_literal(&self) -> bool {
        matches!(self.matcher, Matcher::Literal)
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
        self.matches_counting(text, &mut 0)
    }

    /// [`Glob::matches`], adding to `steps` the characters (or bytes) compared: the work done.
    fn matches_counting(&self, text: &str, steps: &mut usize) -> bool {
        match &self.matcher {
            Matcher::Literal => self.text == text,
            Matcher::Bytes(pieces) => pieces.matches(text.as_bytes(), steps),
            Matcher::Chars(pieces) => {
                // Too short in bytes is too short in characters: no need to decode it.
                if text.len() < pieces.min_len {
                    return false;
                }
                pieces.matches(&text.chars().collect::<Vec<char>>(), steps)
            }
        }
    }
}

// A glob is its text: two globs written alike are the same glob.
impl PartialEq for Glob {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for Glob {}

impl Hash for Glob {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.text.hash(state);
    }
}

impl PartialOrd for Glob {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Glob {
    fn cmp(&self, other: &Self) -> Ordering {
        self.text.cmp(&other.text)
    }
}

impl fmt::Debug for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Glob").field(&self.text).finish()
    }
}

impl fmt::Display for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
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

    /// The matcher of before, kept as the oracle: greedy, one backtracking point.
    fn backtracking(pattern: &str, text: &str) -> bool {
        let pattern: Vec<char> = pattern.chars().collect();
        let text: Vec<char> = text.chars().collect();
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

    proptest::proptest! {
        #[test]
        fn compiled_globs_match_as_the_backtracking_matcher_did(
            pattern in "[ab*?é]{0,12}",
            text in "[abé]{0,16}",
        ) {
            proptest::prop_assert_eq!(Glob::new(&pattern).matches(&text), backtracking(&pattern, &text));
        }
    }

    #[test]
    fn matching_is_linear_in_the_text_and_the_pattern() {
        // Backtracking tries every start of `aaa...b` after the star: text x pattern steps.
        let (n, k) = (20_000, 2_000);
        let text = "a".repeat(n);
        for pattern in
            [format!("*{}b", "a".repeat(k)), format!("*{}b*", "a".repeat(k)), format!("x*{}*", "a".repeat(k))]
        {
            let mut steps = 0;
            let found = Glob::new(&pattern).matches_counting(&text, &mut steps);
            assert_eq!(found, backtracking(&pattern, &text), "{pattern}");
            assert!(steps <= 3 * (n + k), "{steps} steps for a text of {n} and a pattern of {k}");
        }
        // More pieces than the text has characters: refused without reading it.
        let many = format!("{}b", "a*".repeat(2_000_000));
        let mut steps = 0;
        assert!(!Glob::new(&many).matches_counting(".spec.template.spec.containers", &mut steps));
        assert_eq!(steps, 0);
        // Pieces found one after the other: each part of the text is read once.
        let pattern = format!("*{}", "ab*".repeat(1000));
        let text = "ab".repeat(5000);
        let mut steps = 0;
        assert!(Glob::new(&pattern).matches_counting(&text, &mut steps));
        assert!(steps <= 3 * (text.len() + pattern.len()), "{steps}");
    }
}
