//! The quadratic baseline: what many SDKs do to show tool-call arguments
//! while they stream. On every chunk the whole prefix received so far is
//! closed into valid JSON ([`complete`]) and parsed again from the start, so
//! a document of `n` chunks costs about `n / 2` whole-document parses.

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Closes `prefix` (a prefix of a valid JSON document) into valid JSON text:
/// an open string value is closed, a dangling key, number or literal is
/// dropped together with the entry it would start, and open arrays and
/// objects are closed. `None` while nothing complete can be shown (no
/// container opened yet, or a scalar root still arriving).
/// Where the scanner is inside the innermost open container.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    Key,
    Colon,
    Value,
    Comma,
}

/// Progress through an escape sequence inside a string.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    Backslash,
    Hex { digits: u8, code: u32 },
}

/// Closes `prefix` (a prefix of a valid JSON document) into valid JSON text:
/// an open string value is closed, a dangling key, number or literal is
/// dropped together with the entry it would start, and open arrays and
/// objects are closed. `None` while nothing complete can be shown (no
/// container opened yet, or a scalar root still arriving).
pub fn complete(prefix: &str) -> Option<String> {
    let bytes = prefix.as_bytes();
    // Open containers, outermost first: (is_object, what comes next in it).
    let mut stack: Vec<(bool, Expect)> = Vec::new();
    // `prefix[..safe]` followed by the closers of `stack` is valid JSON. Every
    // push or pop of `stack` moves `safe`, so the two stay in step.
    let mut safe = 0;
    let mut root_done = false;
    let mut in_string = false;
    let mut string_is_key = false;
    // End of the string's text that can be shown: not inside an escape, not
    // after a high surrogate whose low half is still missing.
    let mut string_cut = 0;
    let mut escape = Escape::None;
    let mut in_scalar = false;

    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if in_string {
            match escape {
                Escape::None => match byte {
                    b'"' => {
                        in_string = false;
                        if string_is_key {
                            if let Some(top) = stack.last_mut() {
                                top.1 = Expect::Colon;
                            }
                        } else {
                            value_done(&mut stack, &mut safe, &mut root_done, at + 1);
                        }
                    }
                    b'\\' => escape = Escape::Backslash,
                    _ => string_cut = at + 1,
                },
                Escape::Backslash if byte == b'u' => escape = Escape::Hex { digits: 0, code: 0 },
                Escape::Backslash => {
                    escape = Escape::None;
                    string_cut = at + 1;
                }
                Escape::Hex { digits, code } => {
                    let code = code << 4 | char::from(byte).to_digit(16).unwrap_or(0);
                    if digits < 3 {
                        escape = Escape::Hex {
                            digits: digits + 1,
                            code,
                        };
                    } else {
                        escape = Escape::None;
                        if !(0xD800..=0xDBFF).contains(&code) {
                            string_cut = at + 1;
                        }
                    }
                }
            }
            at += 1;
            continue;
        }
        if in_scalar {
            if matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                in_scalar = false;
                value_done(&mut stack, &mut safe, &mut root_done, at);
                // Look at the delimiter again below.
            } else {
                at += 1;
                continue;
            }
        }
        match byte {
            b'{' | b'[' => {
                let is_object = byte == b'{';
                stack.push((
                    is_object,
                    if is_object {
                        Expect::Key
                    } else {
                        Expect::Value
                    },
                ));
                safe = at + 1;
            }
            b'}' | b']' => {
                stack.pop();
                value_done(&mut stack, &mut safe, &mut root_done, at + 1);
            }
            b',' => {
                if let Some(top) = stack.last_mut() {
                    top.1 = if top.0 { Expect::Key } else { Expect::Value };
                }
            }
            b':' => {
                if let Some(top) = stack.last_mut() {
                    top.1 = Expect::Value;
                }
            }
            b'"' => {
                in_string = true;
                string_is_key = stack.last().is_some_and(|top| top.1 == Expect::Key);
                string_cut = at + 1;
                escape = Escape::None;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => in_scalar = true,
        }
        at += 1;
    }

    let mut text;
    if in_string && !string_is_key {
        text = String::with_capacity(string_cut + 1 + stack.len());
        text.push_str(prefix.get(..string_cut)?);
        text.push('"');
    } else if stack.is_empty() {
        return root_done.then(|| prefix[..safe].to_owned());
    } else {
        text = String::with_capacity(safe + stack.len());
        text.push_str(prefix.get(..safe)?);
    }
    for &(is_object, _) in stack.iter().rev() {
        text.push(if is_object { '}' } else { ']' });
    }
    Some(text)
}

/// A value ended at `end` (exclusive): what follows in its container is
/// `,` or the closer, and the text up to `end` can be shown.
fn value_done(stack: &mut [(bool, Expect)], safe: &mut usize, root_done: &mut bool, end: usize) {
    match stack.last_mut() {
        Some(top) => top.1 = Expect::Comma,
        None => *root_done = true,
    }
    *safe = end;
}

/// Closes `prefix` and parses it, as the SDK does on every chunk.
fn reparse(prefix: &str) -> Result<(), String> {
    if let Some(closed) = complete(prefix) {
        let value: Value = serde_json::from_str(&closed).map_err(|error| {
            format!(
                "closing a {}-byte prefix gave invalid JSON ({error})",
                prefix.len()
            )
        })?;
        black_box(value);
    }
    Ok(())
}

/// Checks [`complete`] on every prefix of `text`: each closed prefix must
/// parse, and the whole text must close into itself.
pub fn self_check(text: &str) -> Result<(), String> {
    for end in (1..=text.len()).filter(|&end| text.is_char_boundary(end)) {
        reparse(&text[..end])?;
    }
    let expected: Value = serde_json::from_str(text).map_err(|error| error.to_string())?;
    let closed = complete(text).ok_or("the whole document closed into nothing")?;
    let got: Value = serde_json::from_str(&closed).map_err(|error| error.to_string())?;
    if got != expected {
        return Err("the whole document closed into a different value".to_owned());
    }
    Ok(())
}

/// The quadratic approach over one stream.
pub struct QuadraticRun {
    /// Time for every prefix, extrapolated when `estimated`.
    pub seconds: f64,
    /// Whether only a sample of the prefixes was parsed.
    pub estimated: bool,
    /// Prefixes parsed.
    pub prefixes_run: usize,
    /// Prefixes in the stream (one per chunk).
    pub prefixes: usize,
}

/// Re-parses the prefix ending at each of `ends` (one per chunk), within
/// about `budget`.
///
/// When parsing them all would take longer (judged from the whole document's
/// cost, as each prefix costs about its length), or when `sample_only`, only
/// every m-th prefix is parsed and the time is scaled by the bytes of all
/// prefixes over the bytes of those parsed. Sampling across the whole stream,
/// rather than stopping when the budget runs out, keeps the long prefixes at
/// the end, which cost the most, in the estimate.
pub fn run(
    text: &str,
    ends: &[usize],
    budget: Duration,
    sample_only: bool,
) -> Result<QuadraticRun, String> {
    let mut whole = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        reparse(text)?;
        whole = whole.min(start.elapsed().as_secs_f64());
    }
    let all_bytes: f64 = ends.iter().map(|&end| end as f64).sum();
    let predicted = whole * all_bytes / text.len().max(1) as f64;
    let stride = if sample_only || predicted > budget.as_secs_f64() {
        ((predicted / budget.as_secs_f64()).ceil() as usize).max(2)
    } else {
        1
    };

    let mut run_bytes = 0.0;
    let mut prefixes_run = 0;
    let start = Instant::now();
    for (index, &end) in ends.iter().enumerate() {
        if !(index + 1).is_multiple_of(stride) {
            continue;
        }
        let prefix = text
            .get(..end)
            .ok_or("a chunk end is not a char boundary")?;
        reparse(prefix)?;
        run_bytes += end as f64;
        prefixes_run += 1;
    }
    let elapsed = start.elapsed().as_secs_f64();
    if prefixes_run == 0 {
        return Err("no prefix was parsed".to_owned());
    }
    Ok(QuadraticRun {
        seconds: elapsed * all_bytes / run_bytes,
        estimated: stride > 1,
        prefixes_run,
        prefixes: ends.len(),
    })
}
