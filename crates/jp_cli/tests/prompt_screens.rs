//! What the prompts leave on a real terminal (tmux) through the real
//! binary (issue 25 part 3): a result asked about with `policy.result =
//! "ask"` is printed once, and a prompt opened while the call's arguments
//! stream shows the call's real summary once they are complete.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::providers::{Item, anthropic, text_reply};
use common::query::{initialized, responses, stored};
use common::tmux::{Tmux, from_line, query_line};
use std::time::Duration;

use jp_test_server::{Reply, Split, TestServer};

#[test]
fn a_result_asked_about_and_sent_is_printed_once() {
    let ws = initialized();
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/outcome.json",
        r#"{"type":"success","content":"SECRET=hunter2\nline 2"}"#,
    );
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{config}\n[conversation.tools.secret]\n\
             command = [\"sh\", \"-c\", \"cat >/dev/null; cat .jp/outcome.json\"]\n\
             policy.run = \"unattended\"\npolicy.result = \"ask\"\n"
        ),
    );
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[Item::Tool("toolu_1", "secret", "{}")],
            "tool_use",
            false,
        )),
        text_reply("Got it."),
    ]);
    let Some(tmux) = Tmux::start_sized(&ws, &query_line(&ws, &server, "read the secret"), 120)
    else {
        return;
    };
    tmux.wait_for("Send the result of secret to the model? [y,n,?]");
    tmux.send(&["y"]);
    let screen = tmux.wait_for("EXIT=");
    assert_eq!(
        from_line(&screen, "Calling tool secret"),
        "Calling tool secret\n\
         \x20 unattended (policy.run is \"unattended\")\n\
         secret returned:\n\
         \x20 SECRET=hunter2\n\
         \x20 line 2\n\
         Send the result of secret to the model? [y,n,?] y\n\
         \x20 secret success: sent to the model as shown above\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         Got it.\n\
         tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n\
         EXIT=0"
    );
    assert_eq!(
        responses(&stored(&ws)),
        [("success".to_owned(), "SECRET=hunter2\nline 2".to_owned())]
    );
}

#[test]
fn a_prompt_opened_while_the_arguments_stream_names_the_whole_call_once_complete() {
    let ws = initialized();
    let create = serde_json::json!({"path": "notes.txt", "content": "one\ntwo\nthree\n"});
    let body = anthropic(
        &[Item::Tool("toolu_1", "fs_create_file", &create.to_string())],
        "tool_use",
        false,
    );
    // Slow enough that the prompt is up while the content arrives.
    let server = TestServer::start(vec![
        Reply::sse(body)
            .split(Split::Every(40))
            .pace(Duration::from_millis(60)),
        text_reply("Written."),
    ]);
    let line = query_line(&ws, &server, "write notes").replace(
        " query ",
        " query --cfg conversation.tools.fs_create_file.policy.run=ask ",
    );
    let Some(tmux) = Tmux::start_sized(&ws, &line, 120) else {
        return;
    };
    // `run = "ask"` asks as the call starts, before any argument.
    let streaming = tmux.wait_for("Run fs_create_file(<streaming>)? [y,a,n,e,v,?]");
    assert!(!streaming.contains("three"), "{streaming}");
    let screen = tmux.wait_for("Run fs_create_file(path: ");
    // Only the prompt line was drawn again: the arguments above it, once,
    // and no line left of the prompt as it was.
    assert_eq!(
        from_line(&screen, "Calling tool"),
        "Calling tool fs_create_file\n\
         \x20 path: \"notes.txt\"\n\
         \x20 content:\n\
         \x20 │ one\n\
         \x20 │ two\n\
         \x20 │ three\n\
         Run fs_create_file(path: \"notes.txt\", content: \"one\\ntwo\\nthree\\n\")? [y,a,n,e,v,?]"
    );
    tmux.send(&["y"]);
    let screen = tmux.wait_for("EXIT=");
    assert_eq!(
        from_line(&screen, "Run fs_create_file("),
        "Run fs_create_file(path: \"notes.txt\", content: \"one\\ntwo\\nthree\\n\")? [y,a,n,e,v,?] y\n\
         \x20 approved (ask: policy.run is \"ask\")\n\
         \x20 fs_create_file success: created notes.txt (3 lines)\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         Written.\n\
         tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n\
         EXIT=0"
    );
    assert_eq!(ws.read("project/notes.txt"), "one\ntwo\nthree\n");
}

#[test]
fn a_second_change_to_a_file_is_diffed_against_the_first() {
    let ws = initialized();
    ws.write("project/src/lib.rs", "pub fn main() {}\n");
    // The second call's `old` is what the first one writes.
    let server = TestServer::start(vec![
        Reply::sse(anthropic(
            &[
                Item::Tool(
                    "toolu_1",
                    "fs_modify_file",
                    r#"{"path": "src/lib.rs", "patterns": [{"old": "main", "new": "hello"}]}"#,
                ),
                Item::Tool(
                    "toolu_2",
                    "fs_modify_file",
                    r#"{"path": "src/lib.rs", "patterns": [{"old": "fn hello() {}", "new": "fn hello() -> u8 { 1 }"}]}"#,
                ),
            ],
            "tool_use",
            false,
        )),
        text_reply("Both."),
    ]);
    let line = query_line(&ws, &server, "change it twice").replace(
        " query ",
        " query --cfg conversation.tools.fs_modify_file.policy.run=unattended ",
    );
    let Some(tmux) = Tmux::start_sized(&ws, &line, 120) else {
        return;
    };
    let screen = tmux.wait_for("EXIT=");
    assert_eq!(
        from_line(&screen, "Calling tool fs_modify_file"),
        "Calling tool fs_modify_file\n\
         \x20 path: \"src/lib.rs\"\n\
         \x20 patterns[0].old: \"main\"\n\
         \x20 patterns[0].new: \"hello\"\n\
         \x20 --- src/lib.rs\n\
         \x20 +++ src/lib.rs (after fs_modify_file)\n\
         \x20 @@ -1,1 +1,1 @@\n\
         \x20 1   - pub fn main() {}\n\
         \x20   1 + pub fn hello() {}\n\
         \x20 unattended (policy.run is \"unattended\")\n\
         Calling tool fs_modify_file\n\
         \x20 path: \"src/lib.rs\"\n\
         \x20 patterns[0].old: \"fn hello() {}\"\n\
         \x20 patterns[0].new: \"fn hello() -> u8 { 1 }\"\n\
         \x20 against src/lib.rs as the calls before this one leave it\n\
         \x20 --- src/lib.rs\n\
         \x20 +++ src/lib.rs (after fs_modify_file)\n\
         \x20 @@ -1,1 +1,1 @@\n\
         \x20 1   - pub fn hello() {}\n\
         \x20   1 + pub fn hello() -> u8 { 1 }\n\
         \x20 unattended (policy.run is \"unattended\")\n\
         \x20 fs_modify_file success: 1 change in src/lib.rs\n\
         \x20 fs_modify_file success: 1 change in src/lib.rs\n\
         ── jp (anthropic/claude-haiku-4-5) ──\n\
         Both.\n\
         tokens: 2 responses · 20 in · 84 out · $0.0004 · context 1% of 200k\n\
         EXIT=0"
    );
    assert_eq!(
        ws.read("project/src/lib.rs"),
        "pub fn hello() -> u8 { 1 }\n"
    );
}
