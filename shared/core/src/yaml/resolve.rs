//! What a scalar's text means, by go-yaml v2's rules (`resolve.go`): the YAML
//! 1.1 reading kubectl gives every unquoted word.
//!
//! Why by hand: YAML 1.2 parsers read `yes`, `on`, `y`, `0777` and `1_000` as
//! strings or decimal numbers; kubectl reads them as `true`, `true`, `true`,
//! 511 and 1000. The rules here are go-yaml v2's, case by case, including its
//! quirks (`08` is the float 8, `1e400` stays a string, a date is a string).

use super::timestamp;

/// The long tags go-yaml v2 compares against (libyaml expands `!!x` to these).
pub(super) mod tag {
    pub const STR: &str = "tag:yaml.org,2002:str";
    pub const BOOL: &str = "tag:yaml.org,2002:bool";
    pub const INT: &str = "tag:yaml.org,2002:int";
    pub const FLOAT: &str = "tag:yaml.org,2002:float";
    pub const NULL: &str = "tag:yaml.org,2002:null";
    pub const TIMESTAMP: &str = "tag:yaml.org,2002:timestamp";
    pub const BINARY: &str = "tag:yaml.org,2002:binary";
    pub const MERGE: &str = "tag:yaml.org,2002:merge";
}

/// A scalar's value as go-yaml v2 decodes it into `interface{}`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Scalar {
    Null,
    Bool(bool),
    /// Go `int` (64-bit).
    Int(i64),
    /// Go `uint64`: integers above `i64::MAX`.
    Uint(u64),
    Float(f64),
    /// A string, a timestamp (kept as its text), or the bytes of `!!binary`.
    Str(String),
}

/// What go-yaml v2 resolved a text to: the value and the tag it stands for.
struct Resolved {
    tag: Kind,
    value: Scalar,
}

/// The resolved tag, as far as the checks of an explicit tag need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Str,
    Bool,
    Int,
    Float,
    Null,
    Timestamp,
}

impl Kind {
    fn short(self) -> &'static str {
        match self {
            Kind::Str => "!!str",
            Kind::Bool => "!!bool",
            Kind::Int => "!!int",
            Kind::Float => "!!float",
            Kind::Null => "!!null",
            Kind::Timestamp => "!!timestamp",
        }
    }
}

/// Decodes one scalar as go-yaml v2's `decoder.scalar` does for an
/// `interface{}` target.
///
/// `tag` is the event's resolved tag (`None` when the scalar has none) and
/// `plain_implicit` whether libyaml marked it plain and untagged (or tagged
/// `!`). Errors are go-yaml's words, e.g. "cannot decode !!str `abc` as a !!int".
pub(super) fn decode_scalar(tag: Option<&str>, plain_implicit: bool, text: &str) -> Result<Scalar, String> {
    let tag = tag.unwrap_or("");
    if tag.is_empty() && !plain_implicit {
        // Quoted and block scalars without a tag are strings, whatever they say.
        return Ok(Scalar::Str(text.to_string()));
    }
    if tag == tag::BINARY {
        return decode_binary(text).map(Scalar::Str);
    }
    if !resolvable(tag) {
        // `!`, `!custom`, `!!merge`, `!!seq` on a scalar: the text as a string.
        return Ok(Scalar::Str(text.to_string()));
    }
    let resolved = resolve(tag, text);
    let wanted = match tag {
        "" | tag::STR => return Ok(finish(resolved, text)),
        tag::BOOL => Kind::Bool,
        tag::INT => Kind::Int,
        tag::FLOAT => Kind::Float,
        tag::NULL => Kind::Null,
        _ => Kind::Timestamp,
    };
    if resolved.tag == wanted {
        return Ok(finish(resolved, text));
    }
    if wanted == Kind::Float {
        // go-yaml turns an integer into the float an explicit !!float asks for.
        // A uint64 is not converted: go-yaml's switch only knows int and int64.
        if let Scalar::Int(i) = resolved.value {
            return Ok(Scalar::Float(i as f64));
        }
    }
    Err(format!("cannot decode {} `{}` as a {}", resolved.tag.short(), text, wanted.short()))
}

/// A resolved timestamp decodes as its text; everything else as its value.
fn finish(resolved: Resolved, text: &str) -> Scalar {
    match resolved.tag {
        Kind::Timestamp => Scalar::Str(text.to_string()),
        _ => resolved.value,
    }
}

/// The tags go-yaml v2 resolves a text against (`resolvableTag`).
fn resolvable(tag: &str) -> bool {
    matches!(tag, "" | tag::STR | tag::BOOL | tag::INT | tag::FLOAT | tag::NULL | tag::TIMESTAMP)
}

/// How go-yaml v2 reads a plain, untagged scalar: the value kubectl sees.
pub(super) fn resolve_plain(text: &str) -> Scalar {
    finish(resolve("", text), text)
}

/// go-yaml v2's `resolve(tag, in)` for a resolvable tag, before the tag check.
fn resolve(tag: &str, text: &str) -> Resolved {
    let string = || Resolved { tag: Kind::Str, value: Scalar::Str(text.to_string()) };
    if tag == tag::STR {
        return string();
    }
    let Some(hint) = hint(text) else { return string() };
    if let Some(known) = well_known(text) {
        return known;
    }
    match hint {
        Hint::Word => string(),
        Hint::Dot => match parse_go_decimal_float(text) {
            Some(f) => Resolved { tag: Kind::Float, value: Scalar::Float(f) },
            None => string(),
        },
        Hint::Number => {
            if (tag.is_empty() || tag == tag::TIMESTAMP) && timestamp::is_timestamp(text) {
                return Resolved { tag: Kind::Timestamp, value: Scalar::Str(text.to_string()) };
            }
            let plain: String = text.chars().filter(|&c| c != '_').collect();
            if let Some(i) = parse_go_int(&plain) {
                return Resolved { tag: Kind::Int, value: Scalar::Int(i) };
            }
            if let Some(u) = parse_go_uint(&plain) {
                return Resolved { tag: Kind::Int, value: Scalar::Uint(u) };
            }
            if is_yaml_style_float(&plain) {
                if let Some(f) = finite(&plain) {
                    return Resolved { tag: Kind::Float, value: Scalar::Float(f) };
                }
            }
            string()
        }
    }
}

/// go-yaml v2's first-character hint (`resolveTable`); `None` means "a string".
#[derive(Clone, Copy)]
enum Hint {
    /// `y n t f o ~` in either case: only the words of the table.
    Word,
    /// `.`: a word of the table or a float.
    Dot,
    /// A digit or a sign: a word, a timestamp, an integer or a float.
    Number,
}

fn hint(text: &str) -> Option<Hint> {
    match text.as_bytes().first() {
        None => Some(Hint::Word), // the empty scalar: null
        Some(b'+' | b'-' | b'0'..=b'9') => Some(Hint::Number),
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => Some(Hint::Word),
        Some(b'.') => Some(Hint::Dot),
        Some(_) => None,
    }
}

/// go-yaml v2's `resolveMap`: the YAML 1.1 booleans, nulls and special floats.
fn well_known(text: &str) -> Option<Resolved> {
    let (tag, value) = match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            (Kind::Bool, Scalar::Bool(true))
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            (Kind::Bool, Scalar::Bool(false))
        }
        "" | "~" | "null" | "Null" | "NULL" => (Kind::Null, Scalar::Null),
        ".nan" | ".NaN" | ".NAN" => (Kind::Float, Scalar::Float(f64::NAN)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => (Kind::Float, Scalar::Float(f64::INFINITY)),
        "-.inf" | "-.Inf" | "-.INF" => (Kind::Float, Scalar::Float(f64::NEG_INFINITY)),
        _ => return None,
    };
    Some(Resolved { tag, value })
}

/// Go's `strconv.ParseInt(s, 0, 64)` (underscores already removed): an
/// optional sign, then `0x`, `0o`, `0b` or a leading `0` for octal.
pub(super) fn parse_go_int(s: &str) -> Option<i64> {
    let (negative, digits) = match s.as_bytes().first()? {
        b'+' => (false, &s[1..]),
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    let magnitude = parse_go_uint(digits)?;
    if negative {
        if magnitude <= i64::MAX as u64 {
            Some(-(magnitude as i64))
        } else if magnitude == i64::MAX as u64 + 1 {
            Some(i64::MIN)
        } else {
            None
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go's `strconv.ParseUint(s, 0, 64)`: no sign, base from the prefix.
pub(super) fn parse_go_uint(s: &str) -> Option<u64> {
    let bytes = s.as_bytes();
    if bytes.is_empty() {
        return None;
    }
    let (radix, digits) = if bytes[0] == b'0' {
        match bytes.get(1).map(u8::to_ascii_lowercase) {
            Some(b'b') if bytes.len() >= 3 => (2, &s[2..]),
            Some(b'o') if bytes.len() >= 3 => (8, &s[2..]),
            Some(b'x') if bytes.len() >= 3 => (16, &s[2..]),
            _ => (8, &s[1..]),
        }
    } else {
        (10, s)
    };
    if digits.is_empty() {
        return Some(0); // "0" itself
    }
    if !digits.bytes().all(|b| (b as char).is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// go-yaml v2's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
pub(super) fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` for a text that starts with `.`: decimal
/// digits, an optional exponent, underscores only between digits; out of
/// range is a failure (Go answers ±Inf with an error).
fn parse_go_decimal_float(s: &str) -> Option<f64> {
    if s.contains('_') && !go_underscores_ok(s) {
        return None;
    }
    let plain: String = s.chars().filter(|&c| c != '_').collect();
    if !is_yaml_style_float(&plain) {
        return None;
    }
    finite(&plain)
}

/// A decimal float text's value, unless it overflows.
fn finite(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Go's `underscoreOK`: every `_` sits between two digits (or after a base prefix).
fn go_underscores_ok(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let b = s.as_bytes();
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = b[1].eq_ignore_ascii_case(&b'x');
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || hex && c.is_ascii_hexdigit() {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else if saw == b'_' {
            return false;
        } else {
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

/// `!!binary`: Go's `base64.StdEncoding.DecodeString` (padding required, line
/// breaks skipped), then the bytes as a Go string, which `encoding/json`
/// writes with each invalid byte as U+FFFD.
fn decode_binary(text: &str) -> Result<String, String> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    use base64::Engine as _;
    const GO_STD: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
    );
    let compact: String = text.chars().filter(|&c| c != '\r' && c != '\n').collect();
    let bytes = GO_STD.decode(compact).map_err(|_| "!!binary value contains invalid base64 data".to_string())?;
    Ok(go_string_from_bytes(&bytes))
}

/// Bytes as Go's `encoding/json` writes a string: valid UTF-8 kept, every
/// byte of an invalid sequence replaced by its own U+FFFD.
fn go_string_from_bytes(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(valid) => {
                out.push_str(valid);
                return out;
            }
            Err(e) => {
                let (valid, rest) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                out.push(char::REPLACEMENT_CHARACTER);
                bytes = &rest[1..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_1_1_words_are_booleans_and_nulls() {
        for word in ["y", "Y", "yes", "on", "ON", "True"] {
            assert_eq!(resolve_plain(word), Scalar::Bool(true), "{word}");
        }
        for word in ["n", "NO", "off", "false"] {
            assert_eq!(resolve_plain(word), Scalar::Bool(false), "{word}");
        }
        for word in ["", "~", "null", "NULL"] {
            assert_eq!(resolve_plain(word), Scalar::Null, "{word:?}");
        }
        for word in ["yES", "oN", "nULL", "Yes!", "tru"] {
            assert_eq!(resolve_plain(word), Scalar::Str(word.into()), "{word}");
        }
    }

    #[test]
    fn numbers_follow_go_strconv() {
        assert_eq!(resolve_plain("0777"), Scalar::Int(511));
        assert_eq!(resolve_plain("0x1F"), Scalar::Int(31));
        assert_eq!(resolve_plain("0o17"), Scalar::Int(15));
        assert_eq!(resolve_plain("-0b11"), Scalar::Int(-3));
        assert_eq!(resolve_plain("1_000"), Scalar::Int(1000));
        assert_eq!(resolve_plain("08"), Scalar::Float(8.0));
        assert_eq!(resolve_plain("1e3"), Scalar::Float(1000.0));
        assert_eq!(resolve_plain("1e400"), Scalar::Str("1e400".into()));
        assert_eq!(resolve_plain(".5_5"), Scalar::Float(0.55));
        assert_eq!(resolve_plain(".5_"), Scalar::Str(".5_".into()));
        assert_eq!(resolve_plain("18446744073709551615"), Scalar::Uint(u64::MAX));
        assert_eq!(resolve_plain("-9223372036854775808"), Scalar::Int(i64::MIN));
        assert_eq!(resolve_plain("+18446744073709551615"), Scalar::Float(18446744073709551615.0));
        assert_eq!(resolve_plain("0x"), Scalar::Str("0x".into()));
        assert_eq!(resolve_plain("_1"), Scalar::Str("_1".into()));
        assert_eq!(resolve_plain("1.2.3"), Scalar::Str("1.2.3".into()));
    }

    #[test]
    fn dates_and_merge_words_stay_strings() {
        assert_eq!(resolve_plain("2001-12-14"), Scalar::Str("2001-12-14".into()));
        assert_eq!(resolve_plain("<<"), Scalar::Str("<<".into()));
        assert!(matches!(resolve_plain(".inf"), Scalar::Float(f) if f == f64::INFINITY));
    }

    #[test]
    fn explicit_tags_are_checked() {
        assert_eq!(decode_scalar(Some(tag::STR), false, "123"), Ok(Scalar::Str("123".into())));
        assert_eq!(decode_scalar(Some(tag::INT), false, "12"), Ok(Scalar::Int(12)));
        assert_eq!(decode_scalar(Some(tag::FLOAT), false, "3"), Ok(Scalar::Float(3.0)));
        assert_eq!(decode_scalar(Some("!custom"), false, "yes"), Ok(Scalar::Str("yes".into())));
        assert_eq!(decode_scalar(None, false, "yes"), Ok(Scalar::Str("yes".into())));
        assert_eq!(decode_scalar(Some(tag::BINARY), false, "aGVsbG8="), Ok(Scalar::Str("hello".into())));
        assert_eq!(decode_scalar(Some(tag::BINARY), false, "/w=="), Ok(Scalar::Str("\u{FFFD}".into())));
        assert_eq!(
            decode_scalar(Some(tag::INT), false, "abc"),
            Err("cannot decode !!str `abc` as a !!int".to_string())
        );
        assert!(decode_scalar(Some(tag::BINARY), false, "aGVsbG8").is_err());
        assert_eq!(decode_scalar(Some(tag::TIMESTAMP), false, "2001-12-14"), Ok(Scalar::Str("2001-12-14".into())));
        assert!(decode_scalar(Some(tag::TIMESTAMP), false, "2001-13-14").is_err());
    }
}
