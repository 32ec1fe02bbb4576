//! Real processes: the parent-death signal and the thread that forks, the
//! sentinel, and the sweep by marker. They look at processes through
//! `/proc`, so they run on Linux only.

#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::time::{Duration, Instant};

use super::*;

/// `sh -c script` in `dir`.
fn sh(dir: &Path, script: &str) -> Command {
    let mut command = Command::new("sh");
    command.args(["-c", script]).current_dir(dir);
    command
}

/// Whether process `pid` is running (exists and is not a zombie).
fn running(pid: u32) -> bool {
    sweep::stat(pid).is_some_and(|stat| !stat.zombie)
}

/// Whether process `pid` stops running within `within`.
async fn stops_within(pid: u32, within: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < within {
        if !running(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

/// The pid a script wrote to `dir/name` (waits up to 5 s for it).
async fn pid_in(dir: &Path, name: &str) -> u32 {
    let started = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(dir.join(name))
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        assert!(started.elapsed() < Duration::from_secs(5), "no {name} file");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits (up to 5 s) until process `pid` runs `sleep`: a `setsid sleep`
/// or `setsid env -i sleep` has then left its group and set its
/// environment.
async fn until_sleeping(pid: u32) {
    let started = Instant::now();
    while std::fs::read_to_string(format!("/proc/{pid}/comm")).map_or(true, |c| c != "sleep\n") {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{pid} never ran sleep"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Kills group `pgid` at the end of a test that left it running.
fn cleanup(pgid: u32) {
    kill_process_group(pgid);
}

#[tokio::test(flavor = "multi_thread")]
async fn forking_on_a_thread_that_then_exits_kills_the_tool() {
    // What the spawner thread is for: the parent-death signal fires when the
    // thread that forked exits, although jp lives on.
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Handle::current();
    let root = dir.path().to_path_buf();
    let mut child = std::thread::spawn(move || {
        let _in_runtime = runtime.enter();
        let mut command = sh(&root, "sleep 5");
        command.kill_on_drop(true);
        die_with_jp(&mut command);
        command.spawn()
    })
    .join()
    .unwrap()
    .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(3), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.signal(), Some(9), "{status:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_outlives_the_thread_that_started_its_run() {
    // The run is started on a thread that exits at once (as a blocking-pool
    // thread does after 10 s idle); the tool, forked on the spawner thread,
    // runs to its end.
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Handle::current();
    let command = sh(dir.path(), "sleep 0.3; exit 7");
    let (mut child, containment) = std::thread::spawn(move || runtime.block_on(spawn(command)))
        .join()
        .unwrap()
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(3), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(7), "{status:?}");
    containment.release().await;
}

#[tokio::test]
async fn the_tool_runs_with_its_run_id_in_its_environment() {
    let dir = tempfile::tempdir().unwrap();
    let command = sh(dir.path(), "printf '%s' \"$JP_TOOL_RUN_ID\" > id");
    let (mut child, containment) = spawn(command).await.unwrap();
    assert!(child.wait().await.unwrap().success());
    let id = std::fs::read_to_string(dir.path().join("id")).unwrap();
    assert_eq!(id, containment.run_id);
    let (pid, n) = id.split_once('.').unwrap();
    assert_eq!(pid, std::process::id().to_string());
    assert!(n.split_once('.').is_some(), "{id}");
    containment.release().await;
}

#[tokio::test]
async fn a_sentinel_kills_the_group_when_jp_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = sh(dir.path(), "sleep 30 & echo $! > pid; wait");
    command.process_group(0).kill_on_drop(true);
    let mut tool = command.spawn().unwrap();
    let pgid = tool.id().unwrap();
    let sentinel = Sentinel::start(pgid, "", 0).unwrap();
    let grandchild = pid_in(dir.path(), "pid").await;

    // As when jp dies: its end of the pipe closes without a line.
    let Sentinel { line, mut process } = sentinel;
    drop(line);
    let status = tokio::time::timeout(Duration::from_secs(3), tool.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.signal(), Some(9), "{status:?}");
    assert!(stops_within(grandchild, Duration::from_secs(1)).await);
    assert!(process.wait().await.unwrap().success());
}

#[tokio::test]
async fn a_sentinel_kills_the_marked_processes_when_jp_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    // A process with another run's id, started after the tool: it must
    // survive.
    let mut bystander = sh(dir.path(), "sleep 30");
    bystander
        .env(RUN_ID_VAR, "another run")
        .process_group(0)
        .kill_on_drop(true);
    let command = sh(dir.path(), "setsid sleep 30 & echo $! > daemon; sleep 30");
    let (mut tool, mut containment) = spawn(command).await.unwrap();
    let mut bystander = bystander.spawn().unwrap();
    let daemon = pid_in(dir.path(), "daemon").await;
    until_sleeping(daemon).await;

    // As when jp dies: its end of the pipe closes without a line.
    let Sentinel { line, mut process } = containment.sentinel.take().unwrap();
    drop(line);
    assert!(process.wait().await.unwrap().success());
    let status = tokio::time::timeout(Duration::from_secs(3), tool.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.signal(), Some(9), "{status:?}");
    containment.tool_reaped();
    assert!(stops_within(daemon, Duration::from_secs(1)).await);
    assert!(
        bystander.try_wait().unwrap().is_none(),
        "the bystander was killed"
    );
    containment.release().await;
    bystander.start_kill().unwrap();
    bystander.wait().await.unwrap();
}

#[tokio::test]
async fn a_sentinel_that_was_stood_down_kills_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = sh(dir.path(), "sleep 30 & echo $! > pid; wait");
    command.process_group(0).kill_on_drop(true);
    let mut tool = command.spawn().unwrap();
    let pgid = tool.id().unwrap();
    let grandchild = pid_in(dir.path(), "pid").await;
    Sentinel::start(pgid, "", 0).unwrap().stand_down().await;

    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(tool.try_wait().unwrap().is_none(), "the tool was killed");
    assert!(running(grandchild), "the tool's child was killed");
    cleanup(pgid);
}

#[tokio::test]
async fn killing_a_run_kills_what_left_its_group_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    // A process with another run's id: it must survive.
    let mut bystander = sh(dir.path(), "sleep 30");
    bystander
        .env(RUN_ID_VAR, "another run")
        .process_group(0)
        .kill_on_drop(true);
    let mut bystander = bystander.spawn().unwrap();

    // A daemon in a session of its own, and one that also cleared its
    // environment (found through its parent, the tool).
    let command = sh(
        dir.path(),
        "setsid sleep 30 & echo $! > daemon\n\
         setsid env -i sleep 30 & echo $! > scrubbed\n\
         sleep 30",
    );
    let (mut tool, mut containment) = spawn(command).await.unwrap();
    let daemon = pid_in(dir.path(), "daemon").await;
    let scrubbed = pid_in(dir.path(), "scrubbed").await;
    until_sleeping(daemon).await;
    until_sleeping(scrubbed).await;
    assert_eq!(
        std::fs::read(format!("/proc/{scrubbed}/environ")).unwrap(),
        b""
    );

    containment.kill_all();
    let status = tokio::time::timeout(Duration::from_secs(3), tool.wait())
        .await
        .unwrap()
        .unwrap();
    // Killed, or (the sweep signals one process after another) exited on
    // seeing its `sleep` killed just before its own SIGKILL arrived.
    assert!(
        status.signal() == Some(9) || status.code() == Some(128 + 9),
        "{status:?}"
    );
    containment.tool_reaped();
    assert!(stops_within(daemon, Duration::from_secs(1)).await);
    assert!(stops_within(scrubbed, Duration::from_secs(1)).await);
    assert!(
        bystander.try_wait().unwrap().is_none(),
        "the bystander was killed"
    );
    containment.release().await;
    bystander.start_kill().unwrap();
    bystander.wait().await.unwrap();
}

#[tokio::test]
async fn releasing_a_run_kills_a_daemon_its_tool_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    let command = sh(
        dir.path(),
        "setsid sleep 30 >/dev/null 2>&1 & echo $! > daemon",
    );
    let (mut tool, mut containment) = spawn(command).await.unwrap();
    assert!(tool.wait().await.unwrap().success());
    containment.tool_reaped();
    let daemon = pid_in(dir.path(), "daemon").await;
    until_sleeping(daemon).await;
    containment.release().await;
    assert!(stops_within(daemon, Duration::from_secs(1)).await);
}

/// The same as `a_tool_outlives_the_thread_that_started_its_run`, the way it
/// happens in a runtime: the spawn is asked for from a blocking-pool thread,
/// which tokio ends after 10 s idle while the tool still runs. Ignored by
/// default because it takes 12 s; run with `--ignored`.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "takes 12 s"]
async fn a_tool_outlives_the_blocking_thread_that_started_it() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Handle::current();
    let command = sh(dir.path(), "sleep 12; exit 7");
    let (mut child, containment) =
        tokio::task::spawn_blocking(move || runtime.block_on(spawn(command)))
            .await
            .unwrap()
            .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(7), "{status:?}");
    containment.release().await;
}
