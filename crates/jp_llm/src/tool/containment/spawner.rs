//! The one long-lived thread that forks every tool (see
//! [`die_with_jp`](super::die_with_jp)).

use std::sync::OnceLock;
use std::sync::mpsc;

use tokio::process::{Child, Command};

/// A spawn to run on the thread.
type Job = Box<dyn FnOnce() + Send>;

/// The thread's queue; `None` if the thread could not be started.
static SPAWNER: OnceLock<Option<Spawner>> = OnceLock::new();

pub(super) struct Spawner {
    jobs: mpsc::Sender<Job>,
}

/// The spawner, started on first use.
pub(super) fn get() -> Option<&'static Spawner> {
    SPAWNER.get_or_init(start).as_ref()
}

fn start() -> Option<Spawner> {
    let (jobs, queue) = mpsc::channel::<Job>();
    let thread = std::thread::Builder::new()
        .name("jp-tool-spawner".into())
        .spawn(move || {
            // The sender lives in a static, so this loop never ends and
            // the thread lives as long as jp. A job that panicked must
            // not end it either: that would kill every running tool.
            for job in queue {
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).is_err() {
                    tracing::error!("starting a tool panicked");
                }
            }
        });
    match thread {
        Ok(_) => Some(Spawner { jobs }),
        Err(e) => {
            tracing::warn!("cannot start the thread that starts tools: {e}");
            None
        }
    }
}

impl Spawner {
    /// Spawns `command` on the spawner thread, registered with the
    /// caller's tokio runtime.
    pub(super) async fn spawn(&self, mut command: Command) -> std::io::Result<Child> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|e| std::io::Error::other(format!("cannot start a tool here: {e}")))?;
        let (reply, spawned) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _in_runtime = runtime.enter();
            // If the run was dropped meanwhile, this drops the tool.
            drop(reply.send(command.spawn().map(Unclaimed::new)));
        });
        self.jobs
            .send(job)
            .map_err(|_| std::io::Error::other("the thread that starts tools has stopped"))?;
        let spawned = spawned
            .await
            .map_err(|_| std::io::Error::other("the thread that starts tools has stopped"))??;
        spawned.claim()
    }
}

/// A tool started for a run that may have been dropped while it waited:
/// the reply then never reaches it, or sits in the channel it dropped.
/// Unless claimed, it kills the tool's whole group, which it can do
/// because the tool is not reaped yet (`kill_on_drop` alone would kill
/// only the tool's first process).
struct Unclaimed(Option<Child>);

impl Unclaimed {
    fn new(child: Child) -> Self {
        Self(Some(child))
    }

    fn claim(mut self) -> std::io::Result<Child> {
        self.0
            .take()
            .ok_or_else(|| std::io::Error::other("a started tool was lost"))
    }
}

impl Drop for Unclaimed {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.as_ref().and_then(Child::id) {
            super::process::kill_process_group(pgid);
        }
    }
}
