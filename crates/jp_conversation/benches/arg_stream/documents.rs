//! The benchmark's tool-call argument documents, generated from a fixed seed
//! so every run (and every machine) parses the same bytes.

use serde_json::{Map, Value};

/// One tool call's arguments as the provider would stream them.
pub struct Document {
    pub name: &'static str,
    pub text: String,
}

/// Every document the benchmark measures, in table order.
pub fn all() -> Vec<Document> {
    vec![
        Document {
            name: "create_200k",
            text: create(200_000),
        },
        Document {
            name: "modify_200k",
            text: modify(200_000),
        },
        Document {
            name: "prose_200k",
            text: prose(200_000),
        },
        Document {
            name: "small",
            text: small(),
        },
        Document {
            name: "create_400k",
            text: create(400_000),
        },
        Document {
            name: "modify_400k",
            text: modify(400_000),
        },
    ]
}

/// A `create_file` call: `{"path": ..., "content": <escape-dense source>}`
/// of about `size` bytes.
pub fn create(size: usize) -> String {
    let mut rng = Rng(0x6A70_2D63_7265_6174);
    let path = "src/generated.rs";
    let overhead = object(&[("path", path.into()), ("content", "".into())]).len();
    let content = source_text(&mut rng, size.saturating_sub(overhead));
    object(&[("path", path.into()), ("content", content.into())])
}

/// A `modify_file` call: `{"path": ..., "patterns": [{"old", "new"} x 40]}`
/// of about `size` bytes, old and new being source text of similar length.
pub fn modify(size: usize) -> String {
    const PATTERNS: usize = 40;
    let mut rng = Rng(0x6A70_2D6D_6F64_6966);
    // `{"path":"src/lib.rs","patterns":[]}` plus `{"old":"","new":""},` each.
    let overhead = 36 + PATTERNS * 21;
    let per_string = size.saturating_sub(overhead) / (2 * PATTERNS);
    let patterns = (0..PATTERNS)
        .map(|_| {
            let old = source_lines(&mut rng, per_string);
            // The replacement keeps most lines and rewrites some, as an edit
            // would; it is topped up to the same length.
            let mut new: Vec<String> = old
                .iter()
                .map(|line| {
                    if rng.below(4) == 0 {
                        source_line(&mut rng)
                    } else {
                        line.clone()
                    }
                })
                .collect();
            let mut new_len: usize = new.iter().map(|line| escaped_len(line)).sum();
            while new_len < per_string {
                let line = source_line(&mut rng);
                new_len += escaped_len(&line);
                new.push(line);
            }
            let entry = [("old", old.concat().into()), ("new", new.concat().into())];
            Value::Object(entries(&entry))
        })
        .collect::<Vec<_>>();
    object(&[("path", "src/lib.rs".into()), ("patterns", patterns.into())])
}

/// A `create_file` call whose content is clean ASCII prose: no escapes, no
/// multibyte characters, the parser's fastest path.
pub fn prose(size: usize) -> String {
    const WORDS: &[&str] = &[
        "the",
        "parser",
        "streams",
        "arguments",
        "while",
        "a",
        "provider",
        "sends",
        "tokens",
        "and",
        "every",
        "chunk",
        "may",
        "split",
        "any",
        "value",
        "at",
        "an",
        "arbitrary",
        "offset",
        "so",
        "state",
        "must",
        "survive",
        "between",
        "calls",
        "without",
        "growing",
        "with",
        "length",
        "of",
        "string",
        "content",
        "which",
        "is",
        "why",
        "decoded",
        "text",
        "leaves",
        "as",
        "soon",
        "it",
        "arrives",
        "tool",
        "policy",
        "can",
        "decide",
        "early",
        "when",
        "path",
        "known",
        "user",
        "sees",
        "progress",
        "instead",
        "waiting",
        "for",
        "whole",
        "call",
        "to",
        "finish",
        "large",
        "files",
        "take",
        "long",
        "time",
        "write",
    ];
    let mut rng = Rng(0x6A70_2D70_726F_7365);
    let path = "docs/streaming.md";
    let overhead = object(&[("path", path.into()), ("content", "".into())]).len();
    let target = size.saturating_sub(overhead);
    let mut content = String::with_capacity(target + 128);
    while content.len() < target {
        let words = 6 + rng.below(12);
        for index in 0..words {
            let word = rng.pick(WORDS);
            if index == 0 {
                let mut chars = word.chars();
                if let Some(first) = chars.next() {
                    content.push(first.to_ascii_uppercase());
                    content.push_str(chars.as_str());
                }
            } else {
                content.push(' ');
                content.push_str(word);
            }
            if index + 1 < words && rng.below(9) == 0 {
                content.push(',');
            }
        }
        content.push_str(". ");
    }
    object(&[("path", path.into()), ("content", content.into())])
}

/// A typical small call: a few flags, about 80 bytes.
pub fn small() -> String {
    r#"{"path":"src/main.rs","pattern":"*.rs","recursive":true,"dry_run":false,"depth":3}"#
        .to_owned()
}

pub use jp_test_server::documents::{ADVERSARIAL_DEPTH, adversarial};

/// Serializes `pairs` as a JSON object, keys in the given order.
fn object(pairs: &[(&str, Value)]) -> String {
    Value::Object(entries(pairs)).to_string()
}

fn entries(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(key, value)| ((*key).to_owned(), value.clone()))
        .collect()
}

/// Source text whose JSON-escaped form is at least `target` bytes.
fn source_text(rng: &mut Rng, target: usize) -> String {
    source_lines(rng, target).concat()
}

fn source_lines(rng: &mut Rng, target: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut len = 0;
    while len < target {
        let line = source_line(rng);
        len += escaped_len(&line);
        lines.push(line);
    }
    lines
}

/// One line of Rust-like source, newline included: tabs, quotes,
/// backslashes, control characters that JSON writes as `\u00XX`, accented
/// letters, CJK and emoji.
fn source_line(rng: &mut Rng) -> String {
    const IDENTS: &[&str] = &[
        "path", "buffer", "config", "entry", "line", "offset", "tokens", "root_dir", "parser",
        "chunk", "value", "key",
    ];
    let a = rng.pick(IDENTS);
    let b = rng.pick(IDENTS);
    let n = rng.below(1000);
    let body = match rng.below(12) {
        0 => format!("let {a} = \"C:\\\\Users\\\\{b}\\\\{a}.rs\";"),
        1 => format!("println!(\"{{}}: \\\"{a}\\\" café {{:?}}\", {b}, {a});"),
        2 => format!("// 日本語のコメント: {a} → {b} 🦀 (naïve résumé)"),
        3 => format!("if {a}.ends_with('\\n') || {b} == '\\t' {{"),
        4 => format!("const ESC_{n}: &str = \"\u{1b}[1m{a}\u{1b}[0m\u{7}\";"),
        5 => format!("let re = Regex::new(r#\"^\\s*(\\w+)\\s*=\\s*\"([^\"]*)\"$\"#)?; // {n}"),
        6 => "}".to_owned(),
        7 => format!("assert_eq!({a}, \"émoji 😀 and “quotes” ✓ {n}\");"),
        8 => String::new(),
        9 => format!(
            "match {a} {{ Some(x) => x, None => return Err(Error::new(\"missing \\\"{b}\\\"\")) }}"
        ),
        10 => format!("{a}.map(|c| c.replace('\\\\', \"\\\\\\\\\").replace('\"', \"\\\\\\\"\"))"),
        _ => format!("{a}.push_str(&format!(\"{{:>{n}}}\\t{{}}\\n\", {b}, \"日本\"));"),
    };
    let mut line = "\t".repeat(rng.below(4));
    line.push_str(&body);
    line.push('\n');
    line
}

/// Length of `text` once written as the contents of a JSON string by
/// serde_json.
fn escaped_len(text: &str) -> usize {
    text.chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\t' | '\r' | '\u{8}' | '\u{c}' => 2,
            c if u32::from(c) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum()
}

/// splitmix64: tiny, fast and good enough to vary generated text.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`; `n` must not be 0.
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items.get(self.below(items.len())).copied().unwrap_or("")
    }
}
