//! Counting the SQL statements a request sends: every statement the store builds goes
//! through the backend's `q`/`qa`/`qs` helpers, which add one to the counter of the task
//! that runs it. A request (or a test) measures its statements with [`measure`]; a write
//! job runs in the writer's task, measures itself there and hands its count back with
//! its answer. Transaction control (BEGIN, SAVEPOINT, COMMIT) is not counted here: the
//! writer reports it with its batches.

use std::cell::Cell;
use std::future::Future;

tokio::task_local! {
    static STATEMENTS: Cell<u64>;
}

/// Adds `n` statements to the current measure, if any.
pub fn add(n: u64) {
    let _ = STATEMENTS.try_with(|c| c.set(c.get() + n));
}

/// Runs `f` and counts the statements it sends (including those of the write jobs it
/// waits for).
pub async fn measure<F: Future>(f: F) -> (F::Output, u64) {
    STATEMENTS
        .scope(Cell::new(0), async move {
            let out = f.await;
            let n = STATEMENTS.try_with(Cell::get).unwrap_or(0);
            (out, n)
        })
        .await
}
