//! YAML texts and JSON values for the YAML differential tests: a corpus of
//! the cases where YAML 1.1 (kubectl) and YAML 1.2 differ, and generators of
//! random documents and values built from the same tricky pieces.

use crate::rng::Rng;
use serde_json::{Map, Number, Value};

/// Hand-picked texts: the YAML 1.1 / 1.2 differences and kubectl's framing.
pub const CORPUS: &[&str] = &[
    // The cases of the issue.
    "y: 2\n",
    "a: yes\nb: on\nc: off\nd: no\ne: y\nf: n\ng: Y\nh: N\ni: YES\nj: On\nk: oFF\n",
    "mode: 0777\nhex: 0x1F\nHEX: 0X1f\noct: 0o17\nbin: 0b101\nnbin: -0b11\nsep: 1_000\nsepx: 0x_1F\n",
    "a: .inf\n",
    "a: -.inf\n",
    "a: .nan\n",
    ".inf: a\n-.Inf: b\n.NaN: c\n",
    "a: ~\nb: null\nc: Null\nd: NULL\ne:\nf: nULL\n",
    "t: 2001-12-14\nu: 2001-12-14t21:59:43.10-05:00\nv: 2001-12-14 21:59:43.10\nw: 2001-12-14 21:59:43.10 -5\n",
    "e1: 1e3\ne2: 1E3\ne3: 1.5e-3\ne4: .5\ne5: -.5\ne6: +.5\ne7: 1.\ne8: 1e400\ne9: -1e400\ne10: 1e-400\n",
    "i1: 08\ni2: 09.5\ni3: 00\ni4: 007\ni5: -0\ni6: +0\ni7: -0.0\n",
    "big: 9223372036854775807\nbigger: 9223372036854775808\nu64: 18446744073709551615\nover: 18446744073709551616\n",
    "neg: -9223372036854775808\nnegover: -9223372036854775809\nhuge: 123456789012345678901234567890\nplus: +18446744073709551615\n",
    "f1: 0.1\nf2: 3.14159265358979\nf3: 1e21\nf4: 1e20\nf5: 1e-7\nf6: 123456789.123456789\n",
    "s1: 12:30\ns2: 190:20:30\ns3: 190:20:30.15\ns4: =\ns5: <<\n",
    "u1: 1__0\nu2: 1_0.5\nu3: .5_5\nu4: ._5\nu5: _1\nu6: 1_\nu7: .5_\n",
    "w1: +\nw2: -\nw3: .\nw4: .e5\nw5: 1e\nw6: 0x\nw7: 0b\nw8: 0o\nw9: 0o8\nw10: 0b2\nw11: 0xG\n",
    "x1: infinity\nx2: Infinity\nx3: nan\nx4: NaN\nx5: .Inf\nx6: +.INF\n",
    // Keys that are not strings.
    "1: a\n2.5: b\ntrue: c\n0x10: d\n-0.0: f\n1000000.0: g\n3.14159265358979: h\n0.0: i\n",
    "~: a\n",
    "18446744073709551615: a\n",
    "[a]: b\n",
    "{a: 1}: b\n",
    "? |\n  block key\n: v\n",
    "2001-12-14: date key\n",
    // Quoting and tags.
    "a: 'yes'\nb: \"on\"\nc: '0777'\nd: \"1e3\"\ne: 'it''s'\nf: \"\\x41\\u00e9\\t\\N\\_\\L\\P\\e\\a\\0\"\n",
    "a: !!str 123\nb: !!int \"12\"\nc: !!int 0x1F\nd: !!float 3\ne: !!float \"1e3\"\nf: !!bool yes\ng: !!null ~\nh: !!null \"\"\n",
    "a: !!int abc\n",
    "a: !!bool 1\n",
    "a: !!float 18446744073709551615\n",
    "a: !!timestamp 2001-12-14\n",
    "a: !!timestamp 12\n",
    "a: !!timestamp 2001-02-29\n",
    "a: !!binary aGVsbG8=\nb: !!binary |\n  aGVs\n  bG8=\nc: !!binary /w==\n",
    "a: !!binary aGVsbG8\n",
    "a: !custom yes\nb: ! 12\nc: !!merge <<\nd: !!seq x\ne: !!map {x: 1}\n",
    "%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n",
    "a: \"it\\'s\"\n",
    // Merges and anchors.
    "base: &b {x: 1, p: 2}\nother: &o {x: 9, z: 3}\nm:\n  x: 0\n  <<: [*b, *o]\n  z: 4\n",
    "b: &b {k: 1}\nm:\n  <<: *b\n  k: 2\n",
    "b: &b {k: 1}\nm:\n  k: 2\n  <<: *b\n",
    "m:\n  <<: {a: 1}\n  '<<': {b: 2}\n  !!merge <<: {c: 3}\n",
    "a: &a 1\nm:\n  <<: *a\n",
    "m:\n  <<: [{a: 1}, 2]\n",
    "m:\n  <<: ~\n",
    "a: &x [1, {b: 2}]\nc: *x\nd: &x 3\ne: *x\n",
    "a: &x [*x]\n",
    "a: *nope\n",
    "a: &x {b: *x}\n",
    // Duplicates.
    "a: 1\nb: 2\na: 3\n",
    "y: 1\nyes: 2\non: 3\n",
    // Streams.
    "---\n---\n# c\n---\nnull\n--- \na: 1\n",
    "a: 1\n--- # comment\nb: 2\n---\t\nc: 3\n",
    "a: 1\n--- b: 2\n",
    "a: 1\n---b\n",
    "a: 1\n----\nb: 2\n",
    "a: 1\n...\nb: 2\n---\nc: 3\n",
    "---\n\n...\n---\ntrue: []\n",
    "x: 1\n---\n\n...\n---\ntrue: []\n",
    "{}\n1e400\n",
    "{\"a\": [1e400]}\n",
    "a: 1\r\n---\r\nb: 2\r\n",
    "a: |\r\n  x\r\n  y\r\n",
    "- a\n- b\n---\nscalar\n---\n[1, 2]\n",
    "# only comments\n",
    "",
    "\n\n\n",
    "{\"a\": 1.0, \"b\": [1e3, -0, 1.5]}\n{\"c\": null}\nnull\n",
    "{\"a\": 1}\n---\nb: yes\n",
    "{\"a\": 1} b: yes\n",
    "{\"a\": 1}{\"b\": 2} c: 3\n",
    "{a: on, b: 0x10}\n",
    "{\"a\": 1,}\n",
    "{\"a\": 1\n",
    "   \n  {\"a\": \"x\"}",
    "{\"a\": 1} 123abc\n",
    "{\"a\": 1}\n[1]\n\"s\"\ntrue\n",
    "{}\nn\n",
    "{}\nno\n",
    "{}   \nyes\n",
    "{}  \u{FFFD}: 1\n",
    // Block scalars and folding.
    "a: |\n  one\n  two\n\nb: |-\n  x\nc: |+\n  y\n\nd: >\n  folded\n  text\n\n  more\ne: >-\n  z\n",
    "a: |2\n   lead\n  x\n",
    "a: plain\n  continued\n  lines\nb: 'single\n  folded'\nc: \"double\\\n  escaped\"\n",
    // Syntax errors.
    "a: b: c\n",
    "a: [1, 2\n",
    "a:\n\t- tab\n",
    "- a\nb: c\n",
    "a: 'unterminated\n",
    "a: \"x\\/y\"\n",
    "a: \"\\q\"\n",
    "@a: b\n",
    "a: `b`\n",
    // Flow context edge cases, where go-yaml v2 and libyaml differ.
    "a: [b?c, d]\n",
    "a: {b?c: d}\n",
    "a: [b:, c]\n",
    "a: [b:c]\n",
    "a: {b:c}\n",
    "a: [b :c]\n",
    "a: [?b]\n",
    // Tabs and indentation.
    "a:\tb\n",
    "a: b\t# c\n",
    "- a\n -b\n",
    "a:\n  - b\n  -\tc\n",
    // Unicode.
    "ключ: значение\nemoji: \"😀\"\nnel: \"a\\Nb\"\n",
    "\u{feff}a: 1\n",
    // The end of the text without a line break (a `--patch` as typed): go-yaml reads on
    // as if at a NUL; block scalars keep no final break, a final `\` in quotes is an error.
    "a: |\n  x",
    "a: |+\n  x",
    "a: |-\n  x",
    "a: >\n  x\n  y",
    "a: |\n  x\n  ",
    "a: |+\n  x\n  ",
    "a: |+\n  x\n\n  ",
    "a: |\n  x\n     ",
    "a: |2\n    x",
    "- |\n  x\n- >+\n  y",
    "a: |\n  x\u{2028}",
    "a: \"x\\",
    "a: \"x\\\\",
    "\"\\",
    "a: 'x\\",
    "a: x\\",
    "a: [b",
    "a: \"b",
    "a: b # c",
];

/// Plain scalars with a meaning of their own in some YAML version.
const PLAIN_SCALARS: &[&str] = &[
    "yes",
    "no",
    "y",
    "n",
    "on",
    "off",
    "true",
    "True",
    "TRUE",
    "False",
    "null",
    "Null",
    "~",
    "",
    "0777",
    "0o17",
    "0x1F",
    "0b101",
    "-0b11",
    "+0x10",
    "1_000",
    "1e3",
    "1.5e-3",
    ".5",
    "-.5",
    "1.",
    "08",
    "09.5",
    "0",
    "-0",
    "00",
    "1e400",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775809",
    ".inf",
    "-.inf",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "12:30",
    "<<",
    "=",
    "hello",
    "nginx:1.25",
    "1.2.3",
    "0.1",
    "3.14159",
    "-0.0",
    "1e21",
    "1e-7",
    "100m",
    "1Gi",
    ".5_5",
    "_1",
    "+",
    "-x",
    ".",
    "0x",
    "infinity",
    "NaN",
    "yES",
    "Yes",
    "NO",
    "oN",
    "ON",
    "Off",
    "tRUE",
    "a b",
    "http://x.y/z",
];

/// Scalars that are quoted, tagged or block, or plain with syntax in them.
const OTHER_SCALARS: &[&str] = &[
    "'yes'",
    "\"no\"",
    "'0777'",
    "\"\\x41\\u00e9\\t\"",
    "\"\\N\\_\\L\\P\"",
    "'it''s'",
    "\"\"",
    "''",
    "!!str 123",
    "!!int \"12\"",
    "!!int 0x1F",
    "!!float 3",
    "!!bool yes",
    "!!null ~",
    "!!timestamp 2001-12-14",
    "!!binary aGVsbG8=",
    "!custom yes",
    "! 12",
    "\"a # not a comment\"",
    "a #comment",
    "'x: y'",
];

/// Scalars that make a document an error (rarely used).
const BAD_SCALARS: &[&str] = &["!!int abc", ".nan", "!!binary aGVsbG8", "\"\\q\"", "*nowhere", "!!timestamp 12"];

/// Map keys whose Go string forms never collide unless they are the same Go key.
const KEYS: &[&str] = &[
    "a",
    "b",
    "name",
    "x_y",
    "y",
    "n",
    "yes",
    "No",
    "on",
    "OFF",
    "true",
    "False",
    "1",
    "0x2",
    "010",
    "1.5",
    "2e3",
    "-1",
    "'k'",
    "\"q r\"",
    "'yes'",
    "'0x2'",
    "2001-12-14",
    ".inf",
    "ключ",
];

/// Scalars for flow collections: ordinary ones, and `?` and a final `:`, where
/// go-yaml v2 and libyaml differ.
const FLOW_SCALARS: &[&str] = &[
    "yes",
    "no",
    "y",
    "on",
    "off",
    "null",
    "~",
    "0777",
    "0x1F",
    "1_000",
    "1e3",
    ".5",
    "08",
    "1e400",
    ".inf",
    "2001-12-14",
    "hello",
    "'q'",
    "\"d\"",
    "100m",
    "-x",
    "a?b",
    "b:",
    "x:y",
    "!!str b:",
    "&f c:",
];

/// Builds random YAML texts.
pub struct TextGen<'r> {
    rng: &'r mut Rng,
    anchors: Vec<(String, bool)>,
}

impl<'r> TextGen<'r> {
    pub fn new(rng: &'r mut Rng) -> Self {
        TextGen { rng, anchors: Vec::new() }
    }

    /// A whole text: one to three documents, maybe JSON, maybe CRLF.
    pub fn text(&mut self) -> String {
        let mut text = String::new();
        if self.rng.percent(15) {
            text.push_str(&self.json_prefix());
        }
        if self.rng.percent(20) {
            text.push_str("---\n");
        }
        let documents = self.rng.between(1, 3);
        for i in 0..documents {
            if i > 0 {
                let separators = ["---\n", "--- # next\n", "---   \n", "\n---\n", "...\n---\n"];
                text.push_str(self.rng.pick(&separators).copied().unwrap_or("---\n"));
            }
            self.anchors.clear();
            text.push_str(&self.document());
        }
        if self.rng.percent(10) {
            text = text.replace('\n', "\r\n");
        }
        if self.rng.percent(10) {
            text = text.trim_end_matches('\n').to_string();
        }
        text
    }

    /// One or two JSON values, then (the caller's) YAML.
    fn json_prefix(&mut self) -> String {
        let two = self.rng.percent(40);
        let mut values = ValueGen::new(self.rng);
        let first = Value::Object(values.object(2));
        let mut text = serde_json::to_string(&first).unwrap_or_default();
        if two {
            text.push(' ');
            text.push_str(&serde_json::to_string(&values.value(2)).unwrap_or_default());
        }
        text.push('\n');
        if self.rng.percent(60) {
            text.push_str("---\n");
        }
        text
    }

    fn document(&mut self) -> String {
        match self.rng.below(10) {
            0 => format!("{}\n", self.scalar()),
            1 => format!("{}\n", self.flow(2)),
            2..=3 => self.sequence(0, 3),
            _ => self.mapping(0, 3),
        }
    }

    fn scalar(&mut self) -> String {
        let pool = match self.rng.below(100) {
            0..=2 => BAD_SCALARS,
            3..=24 => OTHER_SCALARS,
            _ => PLAIN_SCALARS,
        };
        self.rng.pick(pool).map(|s| s.to_string()).unwrap_or_default()
    }

    fn key(&mut self) -> String {
        self.rng.pick(KEYS).map(|s| s.to_string()).unwrap_or_default()
    }

    fn anchor(&mut self, is_map: bool) -> String {
        if !self.rng.percent(15) {
            return String::new();
        }
        let name = format!("a{}", self.anchors.len());
        self.anchors.push((name.clone(), is_map));
        format!("&{name} ")
    }

    fn alias(&mut self, want_map: bool) -> Option<String> {
        let candidates: Vec<String> =
            self.anchors.iter().filter(|(_, is_map)| *is_map || !want_map).map(|(n, _)| n.clone()).collect();
        if candidates.is_empty() {
            return None;
        }
        Some(format!("*{}", candidates[self.rng.below(candidates.len())]))
    }

    fn flow(&mut self, depth: usize) -> String {
        let count = self.rng.below(4);
        let items: Vec<String> = (0..count)
            .map(|_| {
                if depth > 0 && self.rng.percent(25) {
                    self.flow(depth - 1)
                } else {
                    self.rng.pick(FLOW_SCALARS).map(|s| s.to_string()).unwrap_or_default()
                }
            })
            .collect();
        if self.rng.percent(50) {
            format!("[{}]", items.join(", "))
        } else {
            let entries: Vec<String> = items
                .iter()
                .map(|v| format!("{}: {v}", self.rng.pick(&["a", "b", "y", "1", "on"]).copied().unwrap_or("a")))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
    }

    /// The value after `key:` or `- ` at `indent`: inline text or a newline and a block.
    fn value(&mut self, indent: usize, depth: usize) -> String {
        let roll = self.rng.below(100);
        if depth > 0 && roll < 20 {
            let anchor = self.anchor(true);
            return format!(" {anchor}\n{}", self.mapping(indent + 2, depth - 1)).replace(" \n", "\n");
        }
        if depth > 0 && roll < 32 {
            let anchor = self.anchor(false);
            return format!(" {anchor}\n{}", self.sequence(indent, depth - 1)).replace(" \n", "\n");
        }
        if roll < 40 {
            return format!(" {}\n", self.flow(1));
        }
        if roll < 46 {
            if let Some(alias) = self.alias(false) {
                return format!(" {alias}\n");
            }
        }
        if roll < 52 {
            let header = self.rng.pick(&["|", "|-", "|+", ">", ">-"]).copied().unwrap_or("|");
            let pad = " ".repeat(indent + 2);
            let first = self.scalar().replace(['\'', '"'], "");
            return format!(" {header}\n{pad}{first}\n{pad}  more\n\n");
        }
        let anchor = self.anchor(false);
        let scalar = self.scalar();
        format!(" {anchor}{scalar}\n").replace(" \n", "\n")
    }

    fn mapping(&mut self, indent: usize, depth: usize) -> String {
        let pad = " ".repeat(indent);
        let mut text = String::new();
        for _ in 0..self.rng.between(1, 4) {
            if self.rng.percent(8) {
                text.push_str(&format!("{pad}# a comment\n"));
            }
            if self.rng.percent(10) {
                let target = if self.rng.percent(70) {
                    self.alias(true)
                } else {
                    let a = self.alias(true);
                    let b = self.alias(true);
                    a.zip(b).map(|(a, b)| format!("[{a}, {b}]"))
                };
                if let Some(target) = target {
                    text.push_str(&format!("{pad}<<: {target}\n"));
                    continue;
                }
            }
            let key = self.key();
            let value = self.value(indent, depth);
            text.push_str(&format!("{pad}{key}:{value}"));
        }
        text
    }

    fn sequence(&mut self, indent: usize, depth: usize) -> String {
        let pad = " ".repeat(indent);
        let mut text = String::new();
        for _ in 0..self.rng.between(1, 4) {
            let value = self.value(indent + 2, depth.saturating_sub(1));
            let value = value.strip_prefix(' ').map(str::to_string).unwrap_or(value);
            if let Some(block) = value.strip_prefix('\n') {
                // A nested block goes on the lines after `-`.
                text.push_str(&format!("{pad}-\n{block}"));
            } else {
                text.push_str(&format!("{pad}- {value}"));
            }
        }
        text
    }
}

/// Strings that some YAML reader takes for something else, or that need quoting.
const TRICKY_STRINGS: &[&str] = &[
    "yes",
    "on",
    "no",
    "y",
    "n",
    "off",
    "true",
    "True",
    "null",
    "~",
    "",
    "2001-12-14",
    "2001-12-14T21:59:43Z",
    "0777",
    "1e3",
    "0x1F",
    "0o17",
    "1_000",
    ".5",
    "+1",
    "-1",
    "12:30",
    ".inf",
    "-.inf",
    ".NaN",
    "<<",
    "=",
    "- x",
    "a: b",
    "a #b",
    "#c",
    "'q'",
    "\"d\"",
    "  lead",
    "trail  ",
    "key:",
    "---",
    "...",
    "--- x",
    "*a",
    "&a",
    "!t",
    "|",
    ">",
    "%p",
    "@x",
    "`x",
    "{a: 1}",
    "[1]",
    "line1\nline2",
    "line\n",
    "two\n\n",
    "\n",
    "  indented\nx",
    "a\r\nb",
    "tab\tx",
    "\u{1}\u{7f}",
    "é ✓",
    "\u{85}",
    "\u{2028}",
    "\u{FEFF}",
    "nginx:1.25",
    "100m",
    "--port=8080",
];

/// Builds random JSON values with tricky strings and numbers.
pub struct ValueGen<'r> {
    rng: &'r mut Rng,
}

impl<'r> ValueGen<'r> {
    pub fn new(rng: &'r mut Rng) -> Self {
        ValueGen { rng }
    }

    pub fn string(&mut self) -> String {
        match self.rng.below(10) {
            0..=5 => self.rng.pick(TRICKY_STRINGS).map(|s| s.to_string()).unwrap_or_default(),
            6 => {
                let a = self.string();
                let b = self.string();
                format!("{a}{b}")
            }
            7 => (0..self.rng.below(6)).map(|_| char::from_u32(self.rng.below(0x3000) as u32).unwrap_or('?')).collect(),
            8 => format!("{}\n{}", self.string(), self.string()),
            _ => match self.rng.below(5) {
                0 => "web".into(),
                1 => "app.kubernetes.io/name".into(),
                2 => "v1".into(),
                3 => "ConfigMap".into(),
                _ => "k".repeat(1100),
            },
        }
    }

    pub fn number(&mut self) -> Number {
        match self.rng.below(8) {
            0 => Number::from(self.rng.next_u64()),
            1 => Number::from(self.rng.next_u64() as i64),
            2 => Number::from(self.rng.below(1000) as i64 - 500),
            3 => Number::from_f64(self.rng.below(100_000) as f64 / 64.0 - 500.0).unwrap_or(Number::from(0)),
            4 => Number::from_f64(f64::from_bits(self.rng.next_u64())).unwrap_or(Number::from(7)),
            5 => Number::from_f64([0.0, -0.0, 1e300, -2.5e-10, 1e21, 1e20, 0.1, 1e-7][self.rng.below(8)])
                .unwrap_or(Number::from(0)),
            _ => Number::from(self.rng.below(100)),
        }
    }

    pub fn value(&mut self, depth: usize) -> Value {
        match self.rng.below(if depth == 0 { 6 } else { 9 }) {
            0 => Value::Null,
            1 => Value::Bool(self.rng.percent(50)),
            2 => Value::Number(self.number()),
            3..=5 => Value::String(self.string()),
            6 | 7 => Value::Object(self.object(depth - 1)),
            _ => Value::Array((0..self.rng.below(4)).map(|_| self.value(depth - 1)).collect()),
        }
    }

    pub fn object(&mut self, depth: usize) -> Map<String, Value> {
        (0..self.rng.below(5)).map(|_| (self.string(), self.value(depth))).collect()
    }
}

/// What kubectl's YAML path makes of a JSON value's numbers: a float that Go
/// writes without a point or exponent (integral, under 1e21) becomes an integer.
pub fn kubectl_normalized(value: &Value) -> Value {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or_default();
            if f.fract() == 0.0 && f.abs() < 1e21 {
                serde_json::from_str(&format!("{f}")).unwrap_or_else(|_| value.clone())
            } else {
                value.clone()
            }
        }
        Value::Array(items) => Value::Array(items.iter().map(kubectl_normalized).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), kubectl_normalized(v))).collect()),
        other => other.clone(),
    }
}
