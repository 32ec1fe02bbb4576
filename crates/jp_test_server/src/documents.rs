//! Generated tool-call arguments that tests and benchmarks share.

/// Nesting depth of [`adversarial`]: close to the parser's limit of 128.
pub const ADVERSARIAL_DEPTH: usize = 120;

/// The tiny values [`adversarial`] repeats: every kind of JSON value in
/// two to eight bytes.
pub const TINY_VALUES: [&str; 9] = [
    "0",
    "1",
    "true",
    "false",
    "null",
    "\"a\"",
    "\"bc\"",
    "{\"k\":1}",
    "[2]",
];

/// Hostile arguments (issue 14): about `size` bytes of tiny values (`0`,
/// `true`, `"a"`, `{"k":1}`, ...) in one array nested
/// [`ADVERSARIAL_DEPTH`] containers deep, so that every value is a
/// fragment or two whose path has 120 levels. Meant to be pushed whole, as
/// Ollama sends arguments.
pub fn adversarial(size: usize) -> String {
    let mut text = String::from("{\"args\":");
    let mut close = String::from("}");
    // The root object is level 1, the innermost array level 120.
    for level in 2..ADVERSARIAL_DEPTH {
        if level % 2 == 0 {
            text.push('[');
            close.push(']');
        } else {
            text.push_str("{\"k\":");
            close.push('}');
        }
    }
    text.push('[');
    close.push(']');
    let close: String = close.chars().rev().collect();
    let mut item = 0;
    while text.len() + close.len() + 8 < size {
        if item > 0 {
            text.push(',');
        }
        text.push_str(TINY_VALUES[item % TINY_VALUES.len()]);
        item += 1;
    }
    text.push_str(&close);
    text
}
