//! The delay from Enter to the request leaving, in `jp chat` (issue 39:
//! under 20 ms), against `jp query` started from a shell for each message
//! (a process start, the config and the conversation read anew) as the
//! baseline of the same run.
//!
//! ```text
//! cargo bench -p jp_cli --bench chat_latency
//! JP_BENCH_QUICK=1 cargo bench -p jp_cli --bench chat_latency   # 5 messages each
//! ```
//!
//! Both run the real `jp` in tmux against the test server. For each
//! message the text is typed first; the clock starts just before tmux is
//! told to press Enter and stops when the server has read the whole
//! request (its `received_at`), so the figure includes tmux delivering the
//! key (a client process start, a few ms) and the request's trip over
//! loopback. It needs tmux; without it, it says so and exits.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::providers::text_reply;
use common::query::initialized;
use common::tmux::{Tmux, shown};
use jp_test_server::TestServer;

fn main() {
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        eprintln!("chat_latency: tmux is not installed; nothing measured");
        return;
    }
    let n = if std::env::var_os("JP_BENCH_QUICK").is_some() {
        5
    } else {
        20
    };
    let session = chat_delays(n);
    let query = query_delays(n);
    println!("Enter → request leaves ({n} messages each)");
    println!("{:<28} {:>9} {:>9} {:>9}", "", "min", "median", "p90");
    print_row("jp chat (one session)", &session);
    print_row("jp query (one process each)", &query);
    println!(
        "median ratio chat / query: {:.2}",
        median(&session).as_secs_f64() / median(&query).as_secs_f64()
    );
}

fn print_row(name: &str, delays: &[Duration]) {
    let mut sorted = delays.to_vec();
    sorted.sort();
    let p90 = sorted[(sorted.len() * 9 / 10).min(sorted.len() - 1)];
    println!(
        "{name:<28} {:>9} {:>9} {:>9}",
        ms(sorted[0]),
        ms(median(delays)),
        ms(p90)
    );
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn median(delays: &[Duration]) -> Duration {
    let mut sorted = delays.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

/// The environment both runs share.
fn env_prefix(ws: &common::Workspace) -> String {
    format!(
        "env -i PATH='{path}' HOME='{home}' XDG_CONFIG_HOME='{home}/xdg' JP_TRUST_WORKSPACE=1 TERM=xterm ANTHROPIC_API_KEY=test-key JP_CFG_ASSISTANT__MODEL__ID=anthropic/claude-haiku-4-5",
        path = std::env::var("PATH").unwrap_or_default(),
        home = ws.root().display(),
    )
}

/// Presses Enter and waits for request `index` to arrive; the delay.
fn enter_to_request(tmux: &Tmux, server: &TestServer, index: usize) -> Duration {
    std::thread::sleep(Duration::from_millis(300));
    let start = Instant::now();
    tmux.send(&["Enter"]);
    let requests = server.wait_for(index + 1, Duration::from_secs(20));
    assert!(requests.len() > index, "request {index} never came");
    requests[index].received_at.duration_since(start)
}

fn chat_delays(n: usize) -> Vec<Duration> {
    let ws = initialized();
    let replies = (0..n).map(|i| text_reply(&format!("ANSWER{i}."))).collect();
    let server = TestServer::start(replies);
    let line = format!(
        "{} '{jp}' --cfg providers.llm.anthropic.base_url={url} chat; sleep 60",
        env_prefix(&ws),
        jp = env!("CARGO_BIN_EXE_jp"),
        url = server.url(),
    );
    let tmux = Tmux::start(&ws, &line).unwrap();
    let mut delays = Vec::new();
    for i in 0..n {
        wait_for_prompt(&tmux);
        tmux.send(&["-l", &format!("message {i}")]);
        delays.push(enter_to_request(&tmux, &server, i));
        tmux.wait_for(&format!("ANSWER{i}."));
    }
    delays
}

fn query_delays(n: usize) -> Vec<Duration> {
    let ws = initialized();
    let replies = (0..n).map(|i| text_reply(&format!("ANSWER{i}."))).collect();
    let server = TestServer::start(replies);
    let tmux = Tmux::start(
        &ws,
        "env -i PATH=/usr/bin:/bin TERM=xterm PS1='$ ' bash --norc --noprofile -i",
    )
    .unwrap();
    let mut delays = Vec::new();
    for i in 0..n {
        wait_for_last_line(&tmux, "$");
        tmux.send(&["-l", "clear"]);
        tmux.send(&["Enter"]);
        std::thread::sleep(Duration::from_millis(200));
        tmux.send(&[
            "-l",
            &format!(
                "{} '{jp}' query --cfg providers.llm.anthropic.base_url={url} 'message {i}'",
                env_prefix(&ws),
                jp = env!("CARGO_BIN_EXE_jp"),
                url = server.url(),
            ),
        ]);
        delays.push(enter_to_request(&tmux, &server, i));
        tmux.wait_for(&format!("ANSWER{i}."));
    }
    delays
}

fn wait_for_prompt(tmux: &Tmux) {
    wait_for_last_line(tmux, "›");
}

fn wait_for_last_line(tmux: &Tmux, line: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while shown(&tmux.screen()).lines().last() != Some(line) {
        assert!(Instant::now() < deadline, "no prompt:\n{}", tmux.screen());
        std::thread::sleep(Duration::from_millis(20));
    }
}
