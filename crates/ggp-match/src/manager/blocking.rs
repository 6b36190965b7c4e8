//! The match's blocking work (reasoning, built-in players) on blocking threads, charged to the
//! match's memory account.

/// Runs the match's blocking `work` (reasoning, a built-in player) on a blocking thread, its
/// allocations charged to the match's memory account.
pub(super) fn spawn_charged<T: Send + 'static>(
    memory: &Option<ggp_memory::Account>,
    work: impl FnOnce() -> T + Send + 'static,
) -> tokio::task::JoinHandle<T> {
    let memory = memory.clone();
    tokio::task::spawn_blocking(move || {
        let done = ggp_memory::run_in(memory.as_ref(), work);
        // What the work needed beyond what the match keeps goes back to the server.
        if let Some(m) = &memory {
            m.trim();
        }
        done
    })
}

/// Work on a blocking thread that panicked (or was cancelled), the manager's reasoner's.
#[derive(Debug, thiserror::Error)]
#[error("the manager's reasoner failed: {0}")]
pub(super) struct ReasonerFailed(#[source] pub(super) tokio::task::JoinError);

/// Runs `work` on `value` on a blocking thread (charged to `memory`), and gives the value back
/// with what the work returned. The value is moved, not borrowed: a match stopped while the
/// work runs drops the future that owns it, and the value goes when the work is done.
pub(super) async fn on_blocking_thread<S, T>(
    memory: &Option<ggp_memory::Account>,
    mut value: Box<S>,
    work: impl FnOnce(&mut S) -> T + Send + 'static,
) -> Result<(Box<S>, T), ReasonerFailed>
where
    S: Send + 'static,
    T: Send + 'static,
{
    spawn_charged(memory, move || {
        let out = work(&mut value);
        (value, out)
    })
    .await
    .map_err(ReasonerFailed)
}
