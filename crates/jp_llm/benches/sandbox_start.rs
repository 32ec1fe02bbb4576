//! What the sandbox costs a process jp starts (issue 36): `true` started
//! and waited for, 200 times, plain, with the sandbox's environment only
//! ([`Sandbox::apply_env`]), and with the whole sandbox jp sets on a tool's
//! command ([`Sandbox::apply`]: the environment, a private `TMPDIR` made
//! and removed per start, and on Linux the Landlock ruleset (writes, the
//! reads of the default secret places, TCP, scopes) and the seccomp
//! filters, built before the fork and applied after it), alternating so
//! the machine's noise falls on all alike. Prints milliseconds per start
//! and the ratio to the plain start measured in the same run.
//!
//! ```text
//! cargo bench -p jp_llm --bench sandbox_start
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use jp_llm::tool::Sandbox;
use tokio::process::Command;

const STARTS: usize = 200;

#[derive(Clone, Copy)]
enum How {
    Plain,
    Env,
    Whole,
}

async fn start(sandbox: &Sandbox, root: &Path, how: How) -> Duration {
    let began = Instant::now();
    let mut command = Command::new("true");
    let confinement = match how {
        How::Plain => None,
        How::Env => {
            sandbox.apply_env(&mut command);
            None
        }
        How::Whole => Some(sandbox.apply(&mut command, root).expect("sandboxed")),
    };
    let status = command.status().await.expect("`true` starts");
    assert!(status.success());
    drop(confinement);
    began.elapsed()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // As a tool gets it: the default secret places denied (the read
    // rules walk to each), no network.
    let sandbox = Sandbox::from_config(&jp_config::sandbox::SandboxConfig {
        env: vec!["CARGO_HOME".into()],
        ..jp_config::sandbox::SandboxConfig::default()
    });
    let root = std::env::current_dir().unwrap();
    let hows = [How::Plain, How::Env, How::Whole];
    let mut totals = [Duration::ZERO; 3];
    runtime.block_on(async {
        // Warm the page cache and the runtime.
        for how in hows {
            start(&sandbox, &root, how).await;
        }
        for _ in 0..STARTS {
            for (i, how) in hows.into_iter().enumerate() {
                totals[i] += start(&sandbox, &root, how).await;
            }
        }
    });
    let per = |total: Duration| total.as_secs_f64() * 1000.0 / STARTS as f64;
    println!("| start of `true` | ms per start | ratio to plain |");
    println!("| --- | --- | --- |");
    let names = [
        "plain",
        "sandboxed (environment)",
        "sandboxed (environment, TMPDIR, Landlock, seccomp)",
    ];
    for (name, total) in names.into_iter().zip(totals) {
        println!(
            "| {name} | {:.3} | {:.2} |",
            per(total),
            total.as_secs_f64() / totals[0].as_secs_f64()
        );
    }
}
