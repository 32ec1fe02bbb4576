//! Attachments through the real `jp`: files, `@path` and a command's output
//! sent as blocks of the user message, recorded in the conversation with
//! their hashes; refusals said before anything is sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::providers::{Item, ollama};
use common::query::{initialized, query};
use jp_test_server::{Reply, Split, TestServer};
use serde_json::Value;
use sha2::Digest as _;

fn answer() -> TestServer {
    TestServer::start(vec![
        Reply::sse(ollama(&[Item::Text("Seen.")])).split(Split::Random { seed: 5, max: 7 }),
    ])
}

#[test]
fn files_mentions_and_a_command_s_output_are_sent_and_recorded() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("git is not installed: skipping");
        return;
    }
    let ws = initialized();
    let project = ws.project();
    ws.write("project/src/main.rs", "fn main() {}\n");
    ws.write("project/notes.md", "# Notes\n");
    common::git(&project, &["init", "-q"]).unwrap();
    common::git(&project, &["add", "src/main.rs"]).unwrap();
    common::git(&project, &["commit", "-q", "-m", "start"]).unwrap();
    ws.write("project/src/main.rs", "fn main() { run(); }\n");
    let server = answer();
    let run = query(
        &ws,
        &server,
        "ollama/qwen3",
        &["-a", "src/main.rs", "-a", "cmd:git diff --stat"],
        "what changed? see @notes.md.",
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr.lines().next(),
        Some(
            "attached: src/main.rs (21 bytes), cmd:git diff --stat (146 bytes), notes.md (8 bytes)"
        )
    );
    let requests = server.wait_for(1, Duration::from_secs(5));
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    let diff = " src/main.rs | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)";
    // The hashes of the files' text, as `sha256sum` gives them; the
    // command's, of its report. Each block is marked with the start of
    // its text's hash.
    let report = format!(
        "`git diff --stat` exited with status 0\noutput (stdout and stderr interleaved):\n{diff}\n"
    );
    let report_hash: String = sha2::Sha256::digest(report.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let (main, notes) = ("ea05169315eab826", "365d0b84ae63c2af");
    let cmd = &report_hash[..16];
    assert_eq!(
        body["messages"][1],
        serde_json::json!({
            "role": "user",
            "content": format!(
                "<attachment-{main} source=\"src/main.rs\">\nfn main() {{ run(); }}\n</attachment-{main}>\n\n\
                 <attachment-{cmd} source=\"cmd:git diff --stat\">\n{}\n</attachment-{cmd}>\n\n\
                 <attachment-{notes} source=\"notes.md\">\n# Notes\n</attachment-{notes}>\n\n\
                 what changed? see @notes.md.",
                report.trim_end()
            ),
        })
    );
    let shown = ws.jp(&["conversation", "show"]);
    let lines: Vec<&str> = shown.stdout.lines().collect();
    let attached: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("attached: ") || l.starts_with("you: "))
        .collect();
    assert_eq!(
        attached,
        [
            "attached: src/main.rs (21 bytes, sha256 ea05169315eab826b6921653c2d15804c604271bc03d8073e69bc1018a9c8578)",
            &format!(
                "attached: cmd:git diff --stat ({} bytes, sha256 {report_hash})",
                report.len()
            ),
            "attached: notes.md (8 bytes, sha256 365d0b84ae63c2afc293dedd2b00bdf0dc8d6ef70c9297d90f9e5682ab0d72ee)",
            "you: what changed? see @notes.md.",
        ]
    );
}

#[test]
fn a_refused_attachment_sends_and_records_nothing() {
    let ws = initialized();
    ws.write("project/.env", "TOKEN=secret\n");
    let server = answer();
    let run = query(&ws, &server, "ollama/qwen3", &["-a", ".env"], "hi");
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: -a .env: refused: it looks like it holds secrets (keys, credentials, .env)\n"
    );
    let run = query(
        &ws,
        &server,
        "ollama/qwen3",
        &["-a", "cmd:rm -rf src"],
        "hi",
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .starts_with("error: -a cmd:rm -rf src: run_command's policy asks (")
            && run
                .stderr
                .ends_with("and there is no terminal to answer; nothing was sent\n"),
        "{}",
        run.stderr
    );
    std::thread::sleep(Duration::from_millis(100));
    assert!(server.requests().is_empty(), "nothing was sent");
    assert!(
        !ws.project().join(".jp/conversations/active").exists(),
        "no conversation was made"
    );
}

/// On a terminal, a command whose policy asks is asked about, and its
/// output attached once the user says yes.
#[test]
fn a_command_whose_policy_asks_is_asked_on_the_terminal() {
    use common::tmux::{Tmux, query_line};
    let ws = initialized();
    ws.write("project/src/a.txt", "a\n");
    let server = TestServer::start(vec![Reply::sse(common::providers::anthropic(
        &[Item::Text("Seen.")],
        "end_turn",
        false,
    ))]);
    let line = query_line(&ws, &server, "go").replace(" 'go';", " -a 'cmd:ls src' 'go';");
    let Some(tmux) = Tmux::start(&ws, &line) else {
        return;
    };
    let question = "Run `ls src` to attach its output? (run_command asks) [y,N,?]";
    tmux.wait_for(question);
    tmux.send(&["y"]);
    let screen = tmux.wait_for("EXIT=");
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(
        screen.contains(&format!("{question} y\nattached: cmd:ls src (")),
        "{screen}"
    );
    let requests = server.requests();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["messages"][0]["content"][0]["text"], {
        let report =
            "`ls src` exited with status 0\noutput (stdout and stderr interleaved):\na.txt\n";
        let mark: String = sha2::Sha256::digest(report.as_bytes())
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect();
        format!(
            "<attachment-{mark} source=\"cmd:ls src\">\n{}\n</attachment-{mark}>\n\ngo",
            report.trim_end()
        )
    });
}
