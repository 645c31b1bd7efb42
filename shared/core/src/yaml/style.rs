//! How a string is written in YAML so that every reader reads back that same
//! string: plain where nothing could take it for something else, quoted where
//! YAML 1.1 (kubectl's go-yaml v2) or YAML 1.2 would read a number, a boolean,
//! a null, a date or syntax.
//!
//! Why conservative: the output is applied with `kubectl apply -f`, pasted into
//! Helm values, and read by Python's YAML 1.1 loaders. `on`, `y`, `0777`,
//! `1e3`, `12:30` (base 60 in YAML 1.1) and `2001-12-14` are all strings that
//! some reader turns into something else when they are left plain.

use super::resolve::{resolve_plain, Scalar};

/// The style a string is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    Plain,
    /// `'...'`: printable text on one line that plain style cannot carry.
    SingleQuoted,
    /// `"..."` with escapes: anything.
    DoubleQuoted,
    /// `|`: multi-line printable text, one source line per line.
    Literal,
}

/// The style for `s`; `block_allowed` is false where a literal block cannot
/// go (keys, and a document that is a lone string).
pub(super) fn style_for(s: &str, block_allowed: bool) -> Style {
    if s.contains('\n') {
        return if block_allowed && literal_ok(s) { Style::Literal } else { Style::DoubleQuoted };
    }
    if !s.chars().all(printable_inline) {
        return Style::DoubleQuoted;
    }
    if reads_as_other_than_string(s) {
        // The way kubectl itself quotes `"yes"` and `"0777"`.
        return Style::DoubleQuoted;
    }
    if plain_syntax_ok(s) {
        Style::Plain
    } else {
        Style::SingleQuoted
    }
}

/// A character that may stand unescaped in a one-line scalar: YAML's
/// printable set without tabs, line breaks (NEL, LS, PS) and the BOM.
fn printable_inline(c: char) -> bool {
    matches!(c, ' '..='~' | '\u{A0}'..='\u{2027}' | '\u{202A}'..='\u{D7FF}' | '\u{E000}'..='\u{FEFE}' | '\u{FF00}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Whether some YAML reader would take the plain text `s` for anything but
/// the string `s`.
fn reads_as_other_than_string(s: &str) -> bool {
    // go-yaml v2, kubectl's reader: booleans, nulls, numbers, special floats.
    if resolve_plain(s) != Scalar::Str(s.to_string()) {
        return true;
    }
    // The merge key, and YAML 1.1's value key.
    if s == "<<" || s == "=" {
        return true;
    }
    looks_numeric(s) || starts_with_date(s)
}

/// Number-like text in any YAML version: a digit or `.` after an optional
/// sign, then only digits, radix letters, `_`, `.`, `:` (YAML 1.1's base 60),
/// exponents and signs. `1.2.3` and `1-2` are quoted too, harmlessly.
fn looks_numeric(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let Some(first) = body.chars().next() else { return false };
    let second = body.chars().nth(1);
    (first.is_ascii_digit() || first == '.' && second.is_some_and(|c| c.is_ascii_digit()))
        && body
            .chars()
            .all(|c| c.is_ascii_hexdigit() || matches!(c, 'x' | 'X' | 'o' | 'O' | '_' | '.' | ':' | '+' | '-'))
}

/// YAML 1.1's timestamps start with `YYYY-M-D`.
fn starts_with_date(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |from: usize, to: usize| b.get(from..to).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    digits(0, 4) && b.get(4) == Some(&b'-') && b.get(5).is_some_and(u8::is_ascii_digit)
}

/// Whether `s` (printable, one line, not number-like) can be a plain scalar in
/// block context for libyaml and go-yaml alike.
fn plain_syntax_ok(s: &str) -> bool {
    let Some(first) = s.chars().next() else { return false };
    if s.starts_with(' ') || s.ends_with(' ') || s.ends_with(':') {
        return false;
    }
    if s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    let second = s.chars().nth(1);
    let starts_ok = match first {
        // `-x` is plain (`--port=80`); `-` alone or `- x` is a sequence entry.
        '-' => second.is_some_and(|c| c != ' '),
        '?' | ':' | ',' | '[' | ']' | '{' | '}' | '#' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%' | '@' | '`' => {
            false
        }
        _ => true,
    };
    starts_ok && !s.contains(": ") && !s.contains(" #")
}

/// Whether a multi-line string survives a literal block unchanged: printable
/// (tabs allowed), no carriage returns or other line breaks, a first line that
/// does not start with blanks (it sets the indentation), and no line made only
/// of blanks.
fn literal_ok(s: &str) -> bool {
    if !s.chars().all(|c| c == '\n' || c == '\t' || printable_inline(c)) {
        return false;
    }
    let mut lines = s.split('\n');
    let Some(first) = lines.clone().find(|l| !l.is_empty()) else { return false };
    if first.starts_with([' ', '\t']) {
        return false;
    }
    !lines.any(|l| !l.is_empty() && l.trim_matches([' ', '\t']).is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_some_reader_changes_are_double_quoted() {
        for s in [
            "yes",
            "on",
            "no",
            "y",
            "N",
            "off",
            "true",
            "null",
            "~",
            "",
            "0777",
            "1e3",
            "0x1F",
            "0o17",
            "1_000",
            ".5",
            "+1",
            "-1",
            ".inf",
            ".NaN",
            "12:30",
            "190:20:30.15",
            "2001-12-14",
            "2001-12-14T21:59:43Z",
            "<<",
            "=",
            "08",
            "1.2.3",
        ] {
            assert_ne!(style_for(s, true), Style::Plain, "{s:?}");
        }
        assert_eq!(style_for("yes", true), Style::DoubleQuoted);
    }

    #[test]
    fn ordinary_words_stay_plain() {
        for s in [
            "nginx:1.25",
            "web",
            "100m",
            "1Gi",
            "v1.2.3",
            "--port=8080",
            "-Xmx1g",
            "http://x.y/z?a=b#c",
            "a#b",
            "yES",
            "app.kubernetes.io/name",
            "Yes!",
            "e5",
            "x[y]",
            "a, b",
            "deadbeef",
        ] {
            assert_eq!(style_for(s, true), Style::Plain, "{s:?}");
        }
    }

    #[test]
    fn syntax_is_single_quoted_and_control_characters_double_quoted() {
        for s in [
            "- x", "-", "a: b", "a #b", " lead", "trail ", "key:", "#x", "*a", "&a", "!t", "|", ">", "'q", "\"q", "%d",
            "@x", "`x", "---", "...x", "{a}", "? x",
        ] {
            assert_eq!(style_for(s, true), Style::SingleQuoted, "{s:?}");
        }
        for s in ["tab\there", "bell\u{7}", "nel\u{85}", "ls\u{2028}", "bom\u{FEFF}", "\u{9F}"] {
            assert_eq!(style_for(s, true), Style::DoubleQuoted, "{s:?}");
        }
    }

    #[test]
    fn multi_line_text_is_a_literal_block_when_it_survives_one() {
        assert_eq!(style_for("a\n  b\n", true), Style::Literal);
        assert_eq!(style_for("a\n\n\tb", true), Style::Literal);
        assert_eq!(style_for("a\nb", false), Style::DoubleQuoted);
        for s in ["  a\nb", "\n", "a\n  \nb", "a\r\nb", "a\n\u{7}"] {
            assert_eq!(style_for(s, true), Style::DoubleQuoted, "{s:?}");
        }
    }
}
