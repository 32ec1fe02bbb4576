//! Running `jp query` against a [`TestServer`] and reading what it stored.

#![allow(dead_code)]

use jp_test_server::{Split, TestServer, load_fixtures, shared_fixture};
use serde_json::Value;

use super::{Run, Workspace};

pub const KEY: (&str, &str) = ("ANTHROPIC_API_KEY", "test-key");

/// A workspace made by `jp init --yes`.
pub fn initialized() -> Workspace {
    let ws = Workspace::new();
    let run = ws.jp(&["init", "--yes"]);
    assert_eq!(run.code, 0, "{run:?}");
    ws
}

/// `jp query` against `server` as provider `provider`, with `extra`
/// arguments before the message.
pub fn query(
    ws: &Workspace,
    server: &TestServer,
    model: &str,
    extra: &[&str],
    message: &str,
) -> Run {
    let output = query_command(ws, server, model, extra, message)
        .output()
        .unwrap();
    ws.run_of(output)
}

/// The command [`query`] runs, not started.
pub fn query_command(
    ws: &Workspace,
    server: &TestServer,
    model: &str,
    extra: &[&str],
    message: &str,
) -> std::process::Command {
    let provider = model.split('/').next().unwrap();
    let base = match provider {
        "openrouter" => format!("{}/api/v1", server.url()),
        "llamacpp" | "openai" => format!("{}/v1", server.url()),
        _ => server.url(),
    };
    let base_cfg = format!("providers.llm.{provider}.base_url={base}");
    let mut args = vec!["query", "--cfg", &base_cfg];
    args.extend_from_slice(extra);
    args.push(message);
    // The model through the environment, a config layer below the
    // conversation: `--model` would be recorded in the conversation as the
    // user's change (issue 21, item 4), which is not what these tests are
    // about (tests/conversation_authority.rs is).
    let mut env: Vec<(&str, &str)> = ENV.to_vec();
    env.push(("JP_CFG_ASSISTANT__MODEL__ID", model));
    ws.command(&args, &env)
}

/// API keys for every provider.
pub const ENV: [(&str, &str); 4] = [
    KEY,
    ("OPENROUTER_API_KEY", "test-key"),
    ("OPENAI_API_KEY", "test-key"),
    ("GEMINI_API_KEY", "test-key"),
];

/// `text` with conversation ids replaced by `<id>`.
pub fn hide_ids(text: &str) -> String {
    let re = regex::Regex::new(r"conversation \d+").unwrap();
    re.replace_all(text, "conversation <id>").into_owned()
}

/// The conversation as stored, through `jp conversation show --format json`.
pub fn stored(ws: &Workspace) -> Value {
    let run = ws.jp(&["conversation", "show", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    serde_json::from_str(&run.stdout).unwrap()
}

/// The `type` of every stored event.
pub fn event_types(conversation: &Value) -> Vec<String> {
    conversation["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_owned())
        .collect()
}

/// The stored tool responses as (status, content).
pub fn responses(conversation: &Value) -> Vec<(String, String)> {
    conversation["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "tool_call_response")
        .map(|e| {
            (
                e["status"].as_str().unwrap().to_owned(),
                e["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The config of a local tool `name` that reads its request and answers
/// `content`, unattended.
pub fn echo_tool(name: &str, content: &str) -> String {
    let outcome = serde_json::json!({"type": "success", "content": content}).to_string();
    let script = format!("cat >/dev/null; echo '{outcome}'");
    format!(
        "[conversation.tools.{name}]\ncommand = [\"sh\", \"-c\", {}]\npolicy.run = \"unattended\"\n",
        toml_string(&script)
    )
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

/// A server replaying every exchange of the recording `file` (in
/// `jp_test_server/tests/data/providers`), each body cut by `split`.
pub fn replay(file: &str, split: &Split) -> TestServer {
    let exchanges = load_fixtures(shared_fixture(file)).unwrap();
    TestServer::start(
        exchanges
            .iter()
            .map(|e| e.reply().split(split.clone()))
            .collect(),
    )
}

/// `save`, a tool that writes `content` to `path` through a Python script
/// (`.jp/save.py`, given by each test: how it resolves the path is what the
/// test is about), unattended under `src/` and asked about elsewhere.
pub const SAVE_TOOL: &str = r#"
[conversation.tools.save]
command = ["python3", ".jp/save.py"]
summary = "Save a file."
parameters.path = { type = "path", required = true }
parameters.content = { type = "string", required = true }
policy.run = [{ arg = "/path", prefix = "src/", mode = "unattended" }, { mode = "ask" }]
"#;

/// Adds tools to `ws`'s config: `toml` written to `.jp/NAME` and extended
/// by `.jp/config.toml`, with each `(file, text)` of `scripts` written
/// under `.jp/`.
pub fn add_tools(ws: &Workspace, name: &str, toml: &str, scripts: &[(&str, &str)]) {
    for (file, text) in scripts {
        ws.write(&format!("project/.jp/{file}"), text);
    }
    ws.write(&format!("project/.jp/{name}"), toml);
    let config = ws.read("project/.jp/config.toml");
    ws.write(
        "project/.jp/config.toml",
        &format!("extends = [\"{name}\"]\n{config}"),
    );
}
