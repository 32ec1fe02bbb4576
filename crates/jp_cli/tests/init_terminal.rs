//! `jp init` on a terminal (tmux), through the real binary: the model it
//! asks for must name a model, and Ctrl+C creates nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Workspace;
use common::tmux::{Tmux, from_line};

/// `jp init` in the workspace's project, then its exit code.
fn init_line(ws: &Workspace) -> String {
    format!(
        "env -i PATH='{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/xdg' TERM=xterm '{jp}' init; \
         echo EXIT=$?; sleep 60",
        path = std::env::var("PATH").unwrap_or_default(),
        home = ws.root().display(),
        jp = env!("CARGO_BIN_EXE_jp"),
    )
}

const QUESTION: &str =
    "Model for this workspace (provider/name or alias) [anthropic/claude-sonnet-4-5]:";

#[test]
fn a_model_that_names_no_model_is_asked_again() {
    let ws = Workspace::new();
    let Some(tmux) = Tmux::start_sized(&ws, &init_line(&ws), 120) else {
        return;
    };
    tmux.wait_for(QUESTION);
    tmux.send(&["-l", "bogus"]);
    tmux.send(&["Enter"]);
    tmux.wait_for("try again");
    tmux.send(&["-l", "haiku"]);
    tmux.send(&["Enter"]);
    tmux.wait_for(SANDBOXED);
    tmux.send(&["Enter"]);
    tmux.wait_for(AGENTS);
    tmux.send(&["Enter"]);
    let screen = tmux.wait_for("EXIT=");
    assert_eq!(
        from_line(&screen, "Model for"),
        format!(
            "{QUESTION} bogus\n\
             \x20 `bogus` is neither `provider/name` nor an alias (aliases: haiku, sonnet, opus); try again\n\
             {QUESTION} haiku\n\
             {SANDBOXED} n\n\
             {AGENTS} n\n\
             Initialized a jp workspace: .jp/config.toml\n\
             \x20 model: haiku (change it with `jp config set assistant.model.id=PROVIDER/NAME`)\n\
             \x20 tools: fs_read_file, fs_list_files, fs_grep, fs_glob, fs_create_file, fs_modify_file, fs_delete_file, run_command\n\
             Try it offline: jp query --model scripted/demo \"add a hello() to src/lib.rs\"\n\
             EXIT=0"
        )
    );
    assert!(
        ws.read("project/.jp/config.toml")
            .contains("id = \"haiku\"")
    );
    assert!(!ws.project().join("AGENTS.md").exists());
}

const AGENTS: &str =
    "Create AGENTS.md for this project's instructions (jp reads it into every query)? [y,N,?]";

const SANDBOXED: &str =
    "Run commands without asking, sandboxed (no network, writes only here)? [y,N,?]";

/// `y` at the second question writes the sandboxed commands' policy, and
/// at the third an `AGENTS.md`.
#[test]
fn yes_to_sandboxed_commands_lets_run_command_run_unattended() {
    let ws = Workspace::new();
    let Some(tmux) = Tmux::start_sized(&ws, &init_line(&ws), 200) else {
        return;
    };
    tmux.wait_for(QUESTION);
    tmux.send(&["Enter"]);
    tmux.wait_for(SANDBOXED);
    tmux.send(&["y"]);
    tmux.wait_for(AGENTS);
    tmux.send(&["y"]);
    let screen = tmux.wait_for("EXIT=");
    assert_eq!(
        from_line(&screen, "Run commands"),
        format!(
            "{SANDBOXED} y\n\
             {AGENTS} y\n\
             Initialized a jp workspace: .jp/config.toml\n\
             \x20 model: anthropic/claude-sonnet-4-5 (change it with `jp config set assistant.model.id=PROVIDER/NAME`)\n\
             \x20 tools: fs_read_file, fs_list_files, fs_grep, fs_glob, fs_create_file, fs_modify_file, fs_delete_file, run_command, run_command_online\n\
             \x20 commands: run_command runs them without asking, in its sandbox (no network, writes only here); run_command_online (with network) asks\n\
             \x20 instructions: AGENTS.md created; say there how to build and test this project (jp reads it into every query)\n\
             Try it offline: jp query --model scripted/demo \"add a hello() to src/lib.rs\"\n\
             EXIT=0"
        )
    );
    let config = ws.read("project/.jp/config.toml");
    assert!(config.contains("[conversation.tools.run_command.policy]\nrun = \"unattended\"\n"));
    assert!(config.contains("[conversation.tools.run_command_online.sandbox]\nnetwork = true\n"));
    assert!(ws.read("project/AGENTS.md").starts_with("# AGENTS.md\n"));
}

#[test]
fn ctrl_c_at_the_question_creates_nothing() {
    let ws = Workspace::new();
    let Some(tmux) = Tmux::start_sized(&ws, &init_line(&ws), 120) else {
        return;
    };
    tmux.wait_for(QUESTION);
    tmux.send(&["C-c"]);
    let screen = tmux.wait_for("EXIT=");
    assert_eq!(
        from_line(&screen, "Model for"),
        format!("{QUESTION} ^C\ninterrupted; nothing was created\nEXIT=130")
    );
    assert!(!ws.project().join(".jp/config.toml").exists());
    assert!(!ws.project().join(".jp/.gitignore").exists());
}
