//! Every `jp` command that shows config, conversation or policy text, run
//! on a real terminal (tmux) against a hostile config and conversation:
//! keys, values, tool names, paths and events full of escape sequences,
//! C1 controls, bidirectional overrides and invisible characters. What the
//! terminal received, byte for byte (`tmux pipe-pane`, not the screen,
//! which tmux has already interpreted), must hold none of them raw.
//!
//! tmux is not part of the Rust toolchain, so without it this test says so
//! and passes, unless `JP_REQUIRE_TMUX` is set (CI sets it and installs
//! tmux).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::Workspace;
use common::query::initialized;
use serde_json::json;

/// Retitles the window, turns text red, clears the screen with a C1 CSI,
/// reverses the line, deletes, and hides a zero-width space, a soft hyphen,
/// a byte-order mark and a tag character; then default-ignorable format
/// characters a hand list missed (issue 34): a deprecated format
/// character, a Mongolian variation selector, an interlinear annotation
/// anchor, a shorthand format control, a musical symbol format character
/// and a default-ignorable code point not assigned yet.
const HOSTILE: &str = "\u{1b}]0;pwned\u{7}\u{1b}[31m\u{9b}2J\u{202e}x\u{7f}\u{200b}\u{ad}\u{feff}\u{e0041}\u{206a}\u{180b}\u{fff9}\u{1bca0}\u{1d173}\u{2065}\r";

/// The configured tool: config allows only plain names for tools (which a
/// conversation's calls need not have), so its parameter, summary and
/// policy are hostile instead.
const TOOL: &str = "hostile_tool";

/// A tool name a model may write, in the conversation.
fn called_tool() -> String {
    format!("t{HOSTILE}")
}

/// The configured tool's parameter.
fn param() -> String {
    format!("p{HOSTILE}")
}

/// `text` as a TOML basic string.
fn toml_str(text: &str) -> String {
    let mut out = String::from('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            c if u32::from(c) <= 0xffff => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push_str(&format!("\\U{:08x}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

/// `text` quoted for `sh`.
fn sh(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Whether a terminal would act on `c` or hide it: what jp must escape.
/// Read from Unicode's data as the regex crate holds it (not the tables jp
/// uses), as the test's independent oracle: controls, format characters,
/// line and paragraph separators and every default-ignorable code point,
/// but newline, tab, the joiners and the emoji variation selectors.
fn unsafe_char(c: char) -> bool {
    static UNSAFE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let unsafe_ = UNSAFE.get_or_init(|| {
        regex::Regex::new(r"^[\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}\p{Zl}\p{Zp}]$").unwrap()
    });
    !matches!(
        c,
        '\n' | '\t' | '\u{200c}' | '\u{200d}' | '\u{fe00}'..='\u{fe0f}'
    ) && unsafe_.is_match(c.encode_utf8(&mut [0; 4]))
}

/// The raw characters in `output` a terminal would act on, with where they
/// are. The terminal itself writes `\r` before each `\n` (`onlcr`); that
/// one is fine.
fn raw_controls(output: &str) -> Vec<(usize, char)> {
    let chars: Vec<char> = output.chars().collect();
    chars
        .iter()
        .enumerate()
        .filter(|&(i, &c)| unsafe_char(c) && !(c == '\r' && chars.get(i + 1) == Some(&'\n')))
        .map(|(i, &c)| (i, c))
        .collect()
}

/// The hostile workspace config: a tool-written alias key, string values,
/// a tool with its parameter, policy and a stateful policy, all hostile.
fn hostile_config(ws: &Workspace) {
    let h = toml_str(HOSTILE);
    let pointer = toml_str(&format!("/{}", param()));
    let param = toml_str(&param());
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n\
             [providers.llm.aliases]\n\
             {h} = \"anthropic/claude-haiku-4-5\"\n\n\
             [assistant]\n\
             system_prompt = {h}\n\
             instructions = [{h}]\n\n\
             [conversation.tools.{TOOL}]\n\
             command = {h}\n\
             summary = {h}\n\
             parameters.{param} = {{ type = \"string\", required = true, summary = {h} }}\n\
             policy.run = [{{ arg = {pointer}, prefix = {h}, mode = \"unattended\" }}, {{ mode = \"ask\" }}]\n\
             policy.result = [{{ arg = {pointer}, const = {h}, mode = \"unattended\" }}, {{ mode = \"ask\" }}]\n\n\
             [[conversation.policies]]\n\
             kind = \"sequential\"\n\
             tool = \"{TOOL}\"\n\
             dependencies = [\"fs_read_file\"]\n"
        ),
    );
    // A config that does not load, for the diagnostics of `validate`.
    ws.write(
        "project/bad.toml",
        &format!("[providers.llm.aliases]\n{h} = 5\n"),
    );
    // A config file whose name is hostile.
    ws.write(&format!("project/c{HOSTILE}.toml"), "");
    // What the default tool and the argument parser will read.
    ws.write("project/hostile.txt", &format!("{HOSTILE}\n"));
    ws.write(
        "project/args.json",
        &json!({ self::param(): HOSTILE, "q": [HOSTILE] }).to_string(),
    );
    let request = json!({
        "tool": { "name": "fs_read_file", "arguments": { "path": "hostile.txt" } },
        "context": { "root": ".", "action": "run" },
    });
    ws.write("project/request.json", &request.to_string());
}

/// The active conversation: every kind of event, hostile.
fn hostile_conversation(ws: &Workspace) {
    let id = "1795350600000";
    let t = 1_795_350_600_000_u64;
    let tool = called_tool();
    let header = json!({
        "format": "jp-conversation-log", "version": 2, "id": id,
        "created_ms": t, "title": HOSTILE,
    });
    let events = [
        json!({ "at_ms": t + 1, "type": "turn_start" }),
        json!({ "at_ms": t + 2, "type": "chat_request", "content": HOSTILE }),
        json!({ "at_ms": t + 3, "type": "assistant_reasoning", "content": HOSTILE }),
        json!({ "at_ms": t + 4, "type": "assistant_message", "content": HOSTILE }),
        json!({ "at_ms": t + 5, "type": "tool_call_request", "id": HOSTILE, "name": tool,
                "arguments": { param(): HOSTILE } }),
        json!({ "at_ms": t + 6, "type": "policy_denied", "id": HOSTILE, "policy": HOSTILE,
                "tool": tool, "reason": HOSTILE, "metadata": { HOSTILE: HOSTILE } }),
        json!({ "at_ms": t + 7, "type": "tool_call_response", "id": HOSTILE,
                "status": "error", "content": HOSTILE }),
        json!({ "at_ms": t + 8, "type": "stream_stopped", "call_id": HOSTILE,
                "tool": tool, "bytes": 9 }),
        json!({ "at_ms": t + 9, "type": "config_delta",
                "delta": { "providers": { "llm": { "aliases": { HOSTILE: "anthropic/claude-haiku-4-5" } } } },
                "tools": [tool] }),
    ];
    let mut log = format!("{header}\n");
    for event in events {
        log.push_str(&format!("{event}\n"));
    }
    ws.write(
        &format!("project/.jp/conversations/{id}/events.jsonl"),
        &log,
    );
    ws.write("project/.jp/conversations/active", &format!("{id}\n"));
    // Chosen by the user: a conversation from elsewhere is otherwise not
    // the active one (issue 34, item 4).
    let chosen = ws.jp(&["conversation", "use", id]);
    assert_eq!(chosen.code, 0, "{chosen:?}");
}

/// Each command run on the terminal: a name, and its `sh` line (run in the
/// workspace, `jp` first on `PATH`).
fn commands() -> Vec<(&'static str, String)> {
    let tool = TOOL;
    let args = sh(&json!({ param(): format!("x{HOSTILE}") }).to_string());
    let bad_args = sh(&json!({ param(): 5, HOSTILE: 1 }).to_string());
    let dir = sh(&format!("d{HOSTILE}"));
    vec![
        ("config show", "jp config show".into()),
        ("config show json", "jp config show --format json".into()),
        (
            "config get string",
            "jp config get assistant.system_prompt".into(),
        ),
        (
            "config get list",
            "jp config get assistant.instructions".into(),
        ),
        (
            "config get json",
            "jp config get providers.llm.aliases".into(),
        ),
        (
            "config get tool",
            format!(
                "jp config get {}",
                sh(&format!(
                    "conversation.tools.{TOOL}.parameters.'{}'",
                    param()
                ))
            ),
        ),
        (
            "config get missing",
            format!("jp config get {}", sh(&format!("a.'{HOSTILE}'"))),
        ),
        (
            "config validate",
            format!(
                "jp --cfg @{} config validate",
                sh(&format!("c{HOSTILE}.toml"))
            ),
        ),
        (
            "config validate bad",
            "jp --cfg @bad.toml config validate".into(),
        ),
        (
            "config set",
            format!(
                "jp config set --user {}",
                sh(&format!(
                    "providers.llm.aliases.'{HOSTILE}'=anthropic/claude-haiku-4-5"
                ))
            ),
        ),
        (
            "config schema",
            "jp config schema | head -c 300; echo".into(),
        ),
        ("policy check", format!("jp policy check {tool}")),
        (
            "policy check json",
            format!("jp policy check {tool} --format json"),
        ),
        (
            "policy check result",
            format!("jp policy check {tool} --result"),
        ),
        (
            "policy check args",
            format!("jp policy check {tool} --args {args}"),
        ),
        (
            "policy check args json",
            format!("jp policy check {tool} --args {args} --format json"),
        ),
        (
            "policy check result args",
            format!("jp policy check {tool} --result --args {args}"),
        ),
        (
            "policy check bad args",
            format!("jp policy check {tool} --args {bad_args}"),
        ),
        (
            "policy check unknown",
            format!("jp policy check {}", sh(&called_tool())),
        ),
        ("conversation ls", "jp conversation ls".into()),
        ("conversation show", "jp conversation show".into()),
        (
            "conversation show json",
            "jp conversation show --format json".into(),
        ),
        (
            "conversation use",
            format!("jp conversation use {}", sh(HOSTILE)),
        ),
        (
            "debug stream-args",
            format!(
                "jp debug stream-args --chunk-size 7 --tool {} args.json",
                sh(&called_tool())
            ),
        ),
        ("tool", "jp tool fs_read_file < request.json".into()),
        (
            "init",
            format!("mkdir {dir} && cd {dir} && jp init --yes && jp init --yes"),
        ),
    ]
}

/// The sections of the raw terminal output, by command.
fn sections(raw: &str) -> Vec<(String, String)> {
    raw.split("\r\n== ")
        .skip(1)
        .filter_map(|part| {
            let (name, body) = part.split_once("\r\n")?;
            Some((name.to_owned(), body.to_owned()))
        })
        .collect()
}

/// A tmux server of our own, killed on drop.
struct Tmux {
    socket: String,
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

/// Runs the shell command `run` on a tmux terminal in `dir`; returns every
/// byte the terminal received, or `None` without tmux (unless it is
/// required).
fn on_terminal(dir: &Path, run: &str) -> Option<Vec<u8>> {
    if Command::new("tmux").arg("-V").output().is_err() {
        assert!(
            std::env::var_os("JP_REQUIRE_TMUX").is_none(),
            "tmux is required (JP_REQUIRE_TMUX is set) but not installed"
        );
        eprintln!("tmux is not installed: skipping the terminal test");
        return None;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let tmux = Tmux {
        socket: format!("jp-escapes-{}-{nanos}", std::process::id()),
    };
    let go = dir.join("go");
    let raw = dir.join("raw.bin");
    // The script waits for the capture to start.
    let command = format!(
        "while [ ! -e '{go}' ]; do sleep 0.05; done; {run}; sleep 60",
        go = go.display(),
    );
    let status = Command::new("tmux")
        .args([
            "-L",
            &tmux.socket,
            "new-session",
            "-d",
            "-x",
            "200",
            "-y",
            "50",
        ])
        .arg("-c")
        .arg(dir)
        .arg(command)
        .status()
        .unwrap();
    assert!(status.success());
    let status = Command::new("tmux")
        .args(["-L", &tmux.socket, "pipe-pane", "-O"])
        .arg(format!("cat > '{}'", raw.display()))
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::write(&go, "").unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let bytes = std::fs::read(&raw).unwrap_or_default();
        if bytes.windows(9).any(|w| w == b"ALL-DONE\r") {
            return Some(bytes);
        }
        assert!(
            Instant::now() < deadline,
            "the commands did not finish; the terminal received:\n{}",
            String::from_utf8_lossy(&bytes)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn no_command_writes_a_raw_control_character_to_the_terminal() {
    let ws = initialized();
    hostile_config(&ws);
    hostile_conversation(&ws);
    let bin = Path::new(env!("CARGO_BIN_EXE_jp")).parent().unwrap();
    let mut script = String::new();
    let commands = commands();
    for (name, line) in &commands {
        script.push_str(&format!(
            "echo; echo '== {name}'; ( {line} ); echo \"-- exit $?\"\n"
        ));
    }
    script.push_str("echo; echo ALL-DONE\n");
    let script_path = ws.root().join("run.sh");
    std::fs::write(&script_path, script).unwrap();
    // A clean environment: nothing of the test's (`NO_COLOR`, `JP_CFG_*`)
    // reaches jp.
    let run = format!(
        "env -i PATH='{bin}':'{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/xdg' JP_TRUST_WORKSPACE=1 TERM=xterm sh '{script}'",
        bin = bin.display(),
        path = std::env::var("PATH").unwrap_or_default(),
        home = ws.root().display(),
        script = script_path.display(),
    );
    let Some(raw) = on_terminal(&ws.project(), &run) else {
        return;
    };
    let raw = String::from_utf8(raw).expect("the terminal received UTF-8");
    let sections = sections(&raw);
    assert_eq!(
        sections.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        commands.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        "{raw}"
    );
    let mut failures = Vec::new();
    for (name, output) in &sections {
        let found = raw_controls(output);
        if !found.is_empty() {
            failures.push(format!(
                "`{name}` wrote {:?} raw:\n{}",
                found.iter().map(|(_, c)| *c).collect::<String>(),
                output.escape_debug()
            ));
        }
        // The hostile text reached the terminal (escaped), so the command
        // really showed it; the schema is jp's own.
        if *name != "config schema" && !output.contains("pwned") {
            failures.push(format!(
                "`{name}` did not show the hostile text:\n{}",
                output.escape_debug()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // What the user sees, line by line (the terminal ends lines in `\r\n`).
    let lines = |name: &str| -> Vec<String> {
        let (_, output) = sections.iter().find(|(n, _)| n == name).unwrap();
        output.split("\r\n").map(str::to_owned).collect()
    };
    assert!(lines("config get string").contains(&SHOWN.to_owned()));
    let alias = format!(
        "providers.llm.aliases.'{SHOWN}' = \"anthropic/claude-haiku-4-5\"  # .jp/config.toml"
    );
    assert!(lines("config show").contains(&alias));
    assert!(lines("conversation show").contains(&format!("you: {SHOWN}")));
}

/// [`HOSTILE`] as jp shows it: each character a terminal would act on or
/// hide written as `\u{..}`.
const SHOWN: &str = "\\u{1b}]0;pwned\\u{7}\\u{1b}[31m\\u{9b}2J\\u{202e}x\\u{7f}\\u{200b}\\u{ad}\\u{feff}\\u{e0041}\\u{206a}\\u{180b}\\u{fff9}\\u{1bca0}\\u{1d173}\\u{2065}\\u{d}";

#[test]
fn piped_config_get_prints_a_string_byte_for_byte_and_json_escaped() {
    let ws = initialized();
    hostile_config(&ws);
    let value = ws.jp(&["config", "get", "assistant.system_prompt"]);
    assert_eq!(
        (value.code, value.stdout.as_str(), value.stderr.as_str()),
        (0, format!("{HOSTILE}\n").as_str(), "")
    );
    // JSON is written with the same characters as JSON escapes: it means
    // the same to a parser and stays off a terminal that shows it.
    let list = ws.jp(&["config", "get", "assistant.instructions"]);
    assert_eq!(list.code, 0, "{list:?}");
    assert_eq!(
        list.stdout,
        "[\n  \"\\u001b]0;pwned\\u0007\\u001b[31m\\u009b2J\\u202ex\\u007f\\u200b\\u00ad\\ufeff\\udb40\\udc41\\u206a\\u180b\\ufff9\\ud82f\\udca0\\ud834\\udd73\\u2065\\r\"\n]\n"
    );
    let parsed: serde_json::Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(parsed, json!([HOSTILE]));
}

#[test]
fn config_show_validate_and_policy_check_show_hostile_text_escaped() {
    let ws = initialized();
    hostile_config(&ws);
    let show = ws.jp(&["config", "show"]);
    assert_eq!(show.code, 0, "{show:?}");
    let alias = format!(
        "providers.llm.aliases.'{SHOWN}' = \"anthropic/claude-haiku-4-5\"  # .jp/config.toml"
    );
    assert!(show.stdout.lines().any(|l| l == alias), "{}", show.stdout);
    let prompt = "assistant.system_prompt = \"\\u001b]0;pwned\\u0007\\u001b[31m\\u{9b}2J\\u{202e}x\\u{7f}\\u{200b}\\u{ad}\\u{feff}\\u{e0041}\\u{206a}\\u{180b}\\u{fff9}\\u{1bca0}\\u{1d173}\\u{2065}\\r\"  # .jp/config.toml";
    assert!(show.stdout.lines().any(|l| l == prompt), "{}", show.stdout);

    let file = format!("c{HOSTILE}.toml");
    let valid = ws.jp(&["--cfg", &format!("@{file}"), "config", "validate"]);
    assert_eq!(
        (valid.code, valid.stdout.as_str(), valid.stderr.as_str()),
        (
            0,
            // The hostile tool's program is not found: the warning shows
            // its name escaped too.
            format!(
                "warning: .jp/config.toml: conversation.tools.hostile_tool.command: the program `{}` is not found on PATH, so the tool fails when it is called\n\
                 config is valid (default, .jp/config.toml, c{SHOWN}.toml)\n",
                SHOWN.trim_end_matches("\\u{d}")
            )
            .as_str(),
            ""
        )
    );
    let invalid = ws.jp(&["--cfg", "@bad.toml", "config", "validate"]);
    assert_eq!(
        (invalid.code, invalid.stdout.as_str()),
        (
            1,
            format!(
                "error: bad.toml:2: providers.llm.aliases.'{SHOWN}': expected a string, found the number 5\n"
            )
            .as_str()
        )
    );

    let args = json!({ param(): "src" }).to_string();
    let check = ws.jp(&["policy", "check", TOOL, "--args", &args]);
    assert_eq!(check.code, 0, "{check:?}");
    let prefix = "\"\\u001b]0;pwned\\u0007\\u001b[31m\\u{9b}2J\\u{202e}x\\u{7f}\\u{200b}\\u{ad}\\u{feff}\\u{e0041}\\u{206a}\\u{180b}\\u{fff9}\\u{1bca0}\\u{1d173}\\u{2065}\\r\"";
    assert_eq!(
        check.stdout,
        format!(
            "hostile_tool policy.run: ask\n  \
             policy.run[0] prefix {prefix} on /p{SHOWN}: no match: \"src\" does not start with {prefix}\n  \
             policy.run[1] catch-all: matches\n  \
             while streaming: decided once `p{SHOWN}` is complete\n  \
             policy: conversation.tools.hostile_tool.policy.run (.jp/config.toml)\n  \
             stateful policies: sequential denies hostile_tool in a new conversation: `hostile_tool` can run only after `fs_read_file` succeeded in this conversation; run `fs_read_file` first, then call `hostile_tool` again.\n"
        )
    );
}

/// Found in review: clap's errors quote the arguments, which were written
/// raw, and a panic's message too.
#[test]
fn an_argument_error_quotes_the_argument_escaped() {
    let ws = Workspace::new();
    let run = ws.jp(&["\u{9b}31mred\u{202e}x"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .starts_with("error: unrecognized subcommand '\\u{9b}31mred\\u{202e}x'\n"),
        "{}",
        run.stderr
    );
    assert!(raw_controls(&run.stderr).is_empty(), "{}", run.stderr);
}
