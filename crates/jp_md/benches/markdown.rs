//! What drawing the assistant's text as markdown costs while it streams
//! (issue 25): the time per chunk and per line drawn of the markdown
//! renderer against the plain path (escaping each chunk, what jp did
//! before), measured in the same run.
//!
//! ```text
//! cargo bench -p jp_md --bench markdown
//! JP_BENCH_QUICK=1 cargo bench -p jp_md --bench markdown   # smoke run
//! ```
//!
//! A made-up response of the kind a coding model writes (headings,
//! paragraphs with code spans and emphasis, nested and numbered lists,
//! Rust and Python code blocks, a table, a quote; about 40 KB) is fed in
//! chunks of the sizes providers send (Anthropic's text deltas are a few
//! tokens: 16 bytes; larger for others: 64), 80 columns wide, with colour
//! (256 colours) and without. Timed without writing to a terminal, which
//! both paths do alike.
//!
//! - per chunk / per line: a whole pass's median time over the chunks fed
//!   and over the lines drawn;
//! - a line's wait: the time of a `push` that draws a line, which is how
//!   long that line waits for the renderer: the median, the 99th
//!   percentile and the worst of all the warm passes', by the clock: on a
//!   busy machine the worst is the time other processes had the CPU more
//!   than jp's own;
//! - first code block: a fresh process's first highlighted line, which
//!   loads the syntaxes and the theme once (jp loads them on a thread of
//!   its own while it waits for the model);
//! - slow lines: the lines that take longest by themselves.
//!
//! Started without `--bench` (as `cargo test --all-targets` does), it only
//! checks that every chunking draws the same screen. It fails only then.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use jp_md::{Ink, Markdown, MarkdownOptions};
use jp_term::printer::sanitize;

const WIDTH: usize = 80;

/// One section of the response; `n` makes each one's text its own.
fn section(n: usize) -> String {
    format!(
        "## Step {n}: the `parser_{n}` module\n\
         \n\
         The parser in `src/parser_{n}.rs` reads the input **once** and keeps only the \
         current token, so memory stays flat however large the file is. It returns a \
         `Result<Ast, Error>`, and *every* error names the line and column where it \
         happened, which is what the tests below check.\n\
         \n\
         What changes:\n\
         \n\
         - `Parser::new` takes a reader instead of a string\n\
         - errors carry a position:\n  \
           - the line, counted from 1\n  \
           - the column, in characters\n\
         - the old `parse_str` stays, as a wrapper\n\
         \n\
         1. Add the reader type\n\
         2. Move the tokenizer over to it\n\
         3. Run `cargo test -p parser_{n}`\n\
         \n\
         ```rust\n\
         pub struct Parser<R: Read> {{\n    \
             reader: R,\n    \
             line: usize,\n    \
             column: usize,\n\
         }}\n\
         \n\
         impl<R: Read> Parser<R> {{\n    \
             pub fn new(reader: R) -> Self {{\n        \
                 Self {{ reader, line: 1, column: 1 }}\n    \
             }}\n\
         \n    \
             /// The next token, or `None` at the end.\n    \
             pub fn next_token(&mut self) -> Result<Option<Token>, Error> {{\n        \
                 let mut buffer = [0u8; {n}];\n        \
                 let read = self.reader.read(&mut buffer)?;\n        \
                 if read == 0 {{\n            \
                     return Ok(None);\n        \
                 }}\n        \
                 self.column += read;\n        \
                 Ok(Some(Token::from_bytes(&buffer[..read])))\n    \
             }}\n\
         }}\n\
         ```\n\
         \n\
         A quick check from Python:\n\
         \n\
         ```python\n\
         import subprocess\n\
         \n\
         def check(path: str) -> bool:\n    \
             \"\"\"Runs the parser on `path`.\"\"\"\n    \
             result = subprocess.run([\"parse\", path], capture_output=True)\n    \
             return result.returncode == {n}\n\
         ```\n\
         \n\
         | Case | Before | After |\n\
         | --- | ---: | ---: |\n\
         | 1 KB file | 0.2 ms | 0.2 ms |\n\
         | 100 MB file | 1.9 s | 1.1 s |\n\
         | error position | none | line and column |\n\
         \n\
         > Note: `parse_str` allocates the whole string first; prefer the reader for \
         anything large.\n\
         \n"
    )
}

fn response() -> String {
    (1..=25).map(section).collect()
}

/// `text` in chunks of `size` bytes, cut at char boundaries.
fn chunks(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = size.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        out.push(&rest[..end]);
        rest = &rest[end..];
    }
    out
}

fn ink(color: bool) -> Ink {
    Ink {
        color,
        truecolor: false,
        hyperlinks: false,
    }
}

/// The screen of one pass, and the time of each push that drew a line
/// (the time that line waited for the renderer).
fn markdown_pass(chunks: &[&str], color: bool) -> (String, Vec<Duration>) {
    let mut markdown = Markdown::new(MarkdownOptions {
        width: WIDTH,
        ink: ink(color),
    });
    let mut screen = String::new();
    let mut waits = Vec::new();
    for chunk in chunks {
        let start = Instant::now();
        let drawn = markdown.push(black_box(chunk));
        let took = start.elapsed();
        if drawn.contains('\n') {
            waits.push(took);
        }
        screen.push_str(&drawn);
    }
    screen.push_str(&markdown.finish());
    (screen, waits)
}

/// What jp does without markdown: each chunk escaped and written.
fn plain_pass(chunks: &[&str]) -> String {
    let mut screen = String::new();
    for chunk in chunks {
        screen.push_str(&sanitize(black_box(chunk)));
    }
    screen
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// The median, 99th percentile and worst of `times`.
fn quantiles(mut times: Vec<Duration>) -> String {
    if times.is_empty() {
        return "n/a".to_owned();
    }
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    format!(
        "{}, {}, {}",
        micros(at(0.5)),
        micros(at(0.99)),
        micros(at(1.0))
    )
}

fn micros(d: Duration) -> String {
    format!("{:.2} µs", d.as_secs_f64() * 1e6)
}

/// The five lines of `text` that take longest to draw, with colour, fed
/// one line at a time (the median of nine passes): what a line costs the
/// renderer itself, apart from the machine's scheduling.
fn slowest_lines(text: &str) {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut times = vec![Vec::new(); lines.len()];
    for _ in 0..9 {
        let mut markdown = Markdown::new(MarkdownOptions {
            width: WIDTH,
            ink: ink(true),
        });
        for (i, line) in lines.iter().enumerate() {
            let start = Instant::now();
            black_box(markdown.push(line));
            times[i].push(start.elapsed());
        }
    }
    let mut medians: Vec<(Duration, &str)> = times
        .into_iter()
        .zip(&lines)
        .map(|(t, line)| (median(t), *line))
        .collect();
    medians.sort_by_key(|&(time, _)| std::cmp::Reverse(time));
    let mut seen = std::collections::HashSet::new();
    medians.retain(|(_, line)| seen.insert(*line));
    for (time, line) in medians.iter().take(5) {
        println!("slow line: {} {:?}", micros(*time), line.trim_end());
    }
}

fn main() -> ExitCode {
    let benching = std::env::args().any(|a| a == "--bench");
    // The first highlighted line of the process: syntaxes and theme load.
    let start = Instant::now();
    let (first, _) = markdown_pass(&["```rust\nfn main() {}\n```\n"], true);
    let cold = start.elapsed();
    let text = response();
    let whole = markdown_pass(&[text.as_str()], true).0;
    for size in [1, 16, 64] {
        if markdown_pass(&chunks(&text, size), true).0 != whole {
            eprintln!("FAIL: {size}-byte chunks draw another screen");
            return ExitCode::FAILURE;
        }
    }
    if !benching {
        println!("markdown: the same screen for every chunking ({first:?} drawn first)");
        return ExitCode::SUCCESS;
    }
    let passes = if std::env::var_os("JP_BENCH_QUICK").is_some() {
        5
    } else {
        41
    };
    slowest_lines(&text);
    println!(
        "response: {} bytes, {} source lines; first code block of the process: {}",
        text.len(),
        text.lines().count(),
        micros(cold)
    );
    println!(
        "| chunk | path | per pass | per chunk | per line drawn | ratio to plain | a line's wait: median, p99, worst |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for size in [16, 64] {
        let pieces = chunks(&text, size);
        let plain: Vec<Duration> = (0..passes)
            .map(|_| {
                let start = Instant::now();
                black_box(plain_pass(&pieces));
                start.elapsed()
            })
            .collect();
        let plain = median(plain);
        let plain_lines = plain_pass(&pieces).lines().count();
        let row = |path: &str, time: Duration, lines: usize, waits: Option<String>| {
            println!(
                "| {size} B | {path} | {} | {} | {} | {:.1} | {} |",
                micros(time),
                micros(time / u32::try_from(pieces.len()).unwrap_or(u32::MAX)),
                micros(time / u32::try_from(lines).unwrap_or(u32::MAX)),
                time.as_secs_f64() / plain.as_secs_f64(),
                waits.unwrap_or_else(|| "n/a".to_owned()),
            );
        };
        row("plain (escaped)", plain, plain_lines, None);
        for color in [false, true] {
            let mut times = Vec::new();
            let mut waits = Vec::new();
            let mut lines = 0;
            for _ in 0..passes {
                let start = Instant::now();
                let (screen, pass) = markdown_pass(&pieces, color);
                times.push(start.elapsed());
                waits.extend(pass);
                lines = screen.lines().count();
            }
            let waits = quantiles(waits);
            let path = if color {
                "markdown, colour"
            } else {
                "markdown, no colour"
            };
            row(path, median(times), lines, Some(waits));
        }
    }
    ExitCode::SUCCESS
}
