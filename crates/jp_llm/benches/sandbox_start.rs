//! What the sandbox costs a process jp starts (issue 36): `true` started
//! and waited for, 200 times, with the sandbox jp sets on a tool's
//! command ([`Sandbox::apply`]) and without it, alternating so the
//! machine's noise falls on both alike. Prints milliseconds per start and
//! the ratio to the plain start measured in the same run.
//!
//! ```text
//! cargo bench -p jp_llm --bench sandbox_start
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use jp_llm::tool::Sandbox;
use tokio::process::Command;

const STARTS: usize = 200;

async fn start(sandbox: Option<&Sandbox>) -> Duration {
    let began = Instant::now();
    let mut command = Command::new("true");
    if let Some(sandbox) = sandbox {
        sandbox.apply(&mut command);
    }
    let status = command.status().await.expect("`true` starts");
    assert!(status.success());
    began.elapsed()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let sandbox = Sandbox {
        env: vec!["CARGO_HOME".into()],
    };
    let (mut plain, mut sandboxed) = (Duration::ZERO, Duration::ZERO);
    runtime.block_on(async {
        // Warm the page cache and the runtime.
        start(None).await;
        start(Some(&sandbox)).await;
        for _ in 0..STARTS {
            plain += start(None).await;
            sandboxed += start(Some(&sandbox)).await;
        }
    });
    let per = |total: Duration| total.as_secs_f64() * 1000.0 / STARTS as f64;
    println!("| start of `true` | ms per start | ratio to plain |");
    println!("| --- | --- | --- |");
    println!("| plain | {:.3} | 1.00 |", per(plain));
    println!(
        "| sandboxed (environment) | {:.3} | {:.2} |",
        per(sandboxed),
        sandboxed.as_secs_f64() / plain.as_secs_f64()
    );
}
