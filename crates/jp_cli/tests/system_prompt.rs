//! The system prompt through the real `jp`: the default one the model gets,
//! what the user's config adds to it, and instruction files kept inside the
//! workspace. Requests go to the test server, which records their bodies.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::Workspace;
use common::providers::{Item, ollama};
use common::query::{initialized, query};
use jp_test_server::{Reply, Split, TestServer};
use serde_json::Value;

/// The default system prompt for a workspace at `root`, on the test's
/// day (`TEST_NOW_MS`, 2026-11-30).
fn default_prompt(root: &std::path::Path) -> String {
    let today = "2026-11-30";
    format!(
        "You are jp, a coding assistant working in the user's workspace.\n\n\
         - Workspace root: {}\n\
         - Operating system: {} ({})\n\
         - Today's date: {today} (UTC)\n\n\
         You reach the workspace's files only through your tools; a path you give a tool is \
         relative to the workspace root. The user sees each tool call and may decline it: a \
         declined call is the user's decision, not an error, so do not retry it unchanged; ask \
         what they want, or take another way.",
        root.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
    )
}

/// The system message of the one request `server` got.
fn sent_system(server: &TestServer) -> Value {
    let requests = server.wait_for(1, Duration::from_secs(5));
    assert_eq!(requests.len(), 1);
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    body["messages"][0].clone()
}

fn answer() -> TestServer {
    TestServer::start(vec![
        Reply::sse(ollama(&[Item::Text("Hi.")])).split(Split::Random { seed: 3, max: 9 }),
    ])
}

#[test]
fn the_model_is_told_where_it_is() {
    let ws = initialized();
    let server = answer();
    let run = query(&ws, &server, "ollama/qwen3", &[], "hello");
    assert_eq!(run.code, 0, "{run:?}");
    let root = ws.project().canonicalize().unwrap();
    assert_eq!(
        sent_system(&server),
        serde_json::json!({"role": "system", "content": default_prompt(&root)})
    );
}

#[test]
fn instructions_and_instruction_files_follow_the_default() {
    let ws = initialized();
    ws.write("project/AGENTS.md", "Run cargo test before you finish.\n");
    ws.write(
        "project/.jp/config.toml",
        &format!(
            "{}\n[assistant]\ninstructions = [\"Be brief.\"]\ninstruction_files = [\"AGENTS.md\"]\n",
            ws.read("project/.jp/config.toml")
        ),
    );
    let server = answer();
    let run = query(&ws, &server, "ollama/qwen3", &[], "hello");
    assert_eq!(run.code, 0, "{run:?}");
    let root = ws.project().canonicalize().unwrap();
    let expected = format!(
        "{}\n\nBe brief.\n\nRun cargo test before you finish.",
        default_prompt(&root)
    );
    assert_eq!(
        sent_system(&server)["content"],
        Value::from(expected.clone())
    );
    // `--print-system-prompt` prints what was sent, and sends nothing.
    let printed = ws.jp(&["query", "--print-system-prompt"]);
    assert_eq!(printed.code, 0, "{printed:?}");
    // (A run's output names the temporary directory `<tmp>`.)
    let shown = expected.replace(&ws.root().display().to_string(), "<tmp>");
    assert_eq!(printed.stdout, format!("{shown}\n"));
}

#[test]
fn a_system_prompt_replaces_the_default_and_is_sent_as_written() {
    let ws = initialized();
    let server = answer();
    let run = query(
        &ws,
        &server,
        "ollama/qwen3",
        &[
            "--cfg",
            "assistant.system_prompt=Today is {{date}}; $(whoami).",
        ],
        "hello",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        sent_system(&server),
        serde_json::json!({"role": "system", "content": "Today is {{date}}; $(whoami)."})
    );
}

#[test]
fn an_instruction_file_that_leads_out_of_the_workspace_sends_nothing() {
    let ws: Workspace = initialized();
    ws.write("secret.txt", "api-token-123");
    #[cfg(unix)]
    std::os::unix::fs::symlink(ws.root().join("secret.txt"), ws.project().join("notes.md"))
        .unwrap();
    let server = answer();
    let run = query(
        &ws,
        &server,
        "ollama/qwen3",
        &["--cfg", "assistant.instruction_files=[\"notes.md\"]"],
        "hello",
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: assistant.instruction_files[0] (notes.md): it is outside the workspace; name a file in it, relative to its root\n"
    );
    std::thread::sleep(Duration::from_millis(100));
    assert!(server.requests().is_empty(), "nothing was sent");
}

/// `AGENTS.md` at the root is read without being listed; a listed file
/// that is missing is a warning, and the query goes on.
#[test]
fn agents_md_is_read_by_default_and_a_missing_listed_file_is_a_warning() {
    let ws = initialized();
    ws.write("project/AGENTS.md", "Use tabs.\n");
    let server = answer();
    let run = query(
        &ws,
        &server,
        "ollama/qwen3",
        &["--cfg", "assistant.instruction_files=[\"CLAUDE.md\"]"],
        "hello",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        "warning: assistant.instruction_files[0] (CLAUDE.md): there is no such file; it is left out\n\
         ── jp (ollama/qwen3) ──\n\
         tokens: 10 in · 5 out\n"
    );
    let root = ws.project().canonicalize().unwrap();
    assert_eq!(
        sent_system(&server)["content"],
        Value::from(format!("{}\n\nUse tabs.", default_prompt(&root)))
    );
    let off = ws.jp(&[
        "query",
        "--print-system-prompt",
        "--cfg",
        "assistant.agents_md=false",
    ]);
    assert_eq!(off.code, 0, "{off:?}");
    assert!(!off.stdout.contains("Use tabs."), "{}", off.stdout);
}

/// In a git repository the default prompt says the branch, whether the
/// tree has changes and the last commit's subject, as `--print-system-prompt`
/// shows; `assistant.repository_state = false` leaves it out.
#[test]
fn the_repository_state_is_in_the_default_prompt() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
        || jp_llm::tool::enforceable().is_err()
    {
        eprintln!("git or the kernel sandbox is missing: skipping");
        return;
    }
    let ws = initialized();
    let project = ws.project();
    common::git(&project, &["init", "-q", "-b", "work"]).unwrap();
    common::git(&project, &["add", "."]).unwrap();
    common::git(&project, &["commit", "-q", "-m", "Start \"here\"\n\nbody"]).unwrap();
    ws.write("project/new.txt", "n");
    let printed = ws.jp(&["query", "--print-system-prompt"]);
    assert_eq!(printed.code, 0, "{printed:?}");
    let expected = format!(
        "{}\n\nThe workspace is a git repository. When this session started:\n\
         - Branch: \"work\"\n\
         - Working tree: 1 path changed or untracked\n\
         - Last commit: \"Start \\\"here\\\"\"\n",
        default_prompt(&std::path::PathBuf::from("<tmp>/project"))
    );
    assert_eq!(printed.stdout, expected);
    let off = ws.jp(&[
        "query",
        "--print-system-prompt",
        "--cfg",
        "assistant.repository_state=false",
    ]);
    assert_eq!(
        off.stdout,
        format!(
            "{}\n",
            default_prompt(&std::path::PathBuf::from("<tmp>/project"))
        )
    );
}

/// `jp init --agents-md` creates `AGENTS.md` (with the build commands of
/// the build files it finds), which the next query sends; an existing one
/// is never replaced, and `jp init` says it is read.
#[test]
fn jp_init_creates_agents_md_and_never_replaces_one() {
    let ws = Workspace::new();
    std::fs::remove_dir_all(ws.project().join(".jp")).unwrap();
    ws.write("project/Cargo.toml", "[package]\nname = \"x\"\n");
    let init = ws.jp(&["init", "--yes", "--agents-md"]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(
        init.stdout.contains(
            "  instructions: AGENTS.md created; say there how to build and test this project (jp reads it into every query)\n"
        ),
        "{}",
        init.stdout
    );
    let written = ws.read("project/AGENTS.md");
    assert_eq!(
        written,
        "# AGENTS.md\n\
         \n\
         Instructions for coding agents working in this project. jp sends this file\n\
         with every query (`jp query --print-system-prompt` shows it); other agents\n\
         read it too. Keep it short: what an agent cannot find out by itself.\n\
         \n\
         ## Build and test\n\
         \n\
         - Build with `cargo build`; test with `cargo test` (Cargo.toml).\n\
         \n\
         ## Conventions\n\
         \n\
         - (Code style, naming, what to keep out of commits.)\n"
    );
    let printed = ws.jp(&["query", "--print-system-prompt"]);
    assert!(
        printed
            .stdout
            .ends_with(&format!("\n\n{}\n", written.trim_end())),
        "{}",
        printed.stdout
    );

    let again = Workspace::new();
    std::fs::remove_dir_all(again.project().join(".jp")).unwrap();
    again.write("project/AGENTS.md", "Mine.\n");
    let init = again.jp(&["init", "--yes", "--agents-md"]);
    assert_eq!(init.code, 0, "{init:?}");
    assert_eq!(again.read("project/AGENTS.md"), "Mine.\n");
    assert!(
        init.stdout
            .contains("  instructions: AGENTS.md (jp reads it into every query)\n"),
        "{}",
        init.stdout
    );
}
