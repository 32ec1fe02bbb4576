//! What the parts of containment share: the variable that marks a run's
//! processes, and killing a process group.

/// The environment variable that marks a tool's processes with its run.
pub const RUN_ID_VAR: &str = "JP_TOOL_RUN_ID";

/// Sends SIGKILL to process group `pgid` (the tool and every process in its
/// group).
#[cfg(unix)]
pub(super) fn kill_process_group(pgid: u32) {
    let group = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw);
    let Some(group) = group else {
        tracing::warn!("cannot kill process group {pgid}: not a process id");
        return;
    };
    // ESRCH (the group is already gone) is the common, harmless case.
    if let Err(e) = rustix::process::kill_process_group(group, rustix::process::Signal::KILL)
        && e != rustix::io::Errno::SRCH
    {
        tracing::warn!("cannot kill process group {pgid}: {e}");
    }
}

#[cfg(not(unix))]
pub(super) fn kill_process_group(_pgid: u32) {}
