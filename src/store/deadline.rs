//! One deadline for what a request waits for in PostgreSQL: a connection from a pool,
//! the revocation stamp's shared read, and the statements of a short read or of a
//! verdict-class write all end by it, [`DATABASE_WAIT`] after the request arrived. A
//! request that arrives while a stuck read of the stamp runs waits for what is left of
//! its own deadline, not for that read and then its own; a frozen database (a stopped
//! host, a silent partition: the kernel still accepts and acknowledges, nothing answers)
//! is a 503 at the deadline, and the connection that waited is closed, not reused.
//!
//! The web layer sets the deadline for every route whose work is short
//! (`web::app`); an import or an archive, which may take minutes, and everything
//! outside a request (commands, background work) get [`DATABASE_WAIT`] for each wait
//! instead. Reads that walk a campaign (`read_tx!(.., long, ..)`) and structural writes
//! are bounded by their route's time limit only: their statements may take long.

use crate::error::{Error, Result};
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

/// How long a request may wait for the database in all before it is answered 503.
pub const DATABASE_WAIT: Duration = Duration::from_secs(10);

tokio::task_local! {
    static DEADLINE: Instant;
}

/// Runs `request` with its deadline: [`DATABASE_WAIT`] from now.
pub async fn within<F: Future>(request: F) -> F::Output {
    DEADLINE
        .scope(Instant::now() + DATABASE_WAIT, request)
        .await
}

/// The running request's deadline, or [`DATABASE_WAIT`] from now outside a request.
pub(crate) fn at() -> Instant {
    DEADLINE
        .try_with(|d| *d)
        .unwrap_or_else(|_| Instant::now() + DATABASE_WAIT)
}

/// What a request that ran out of time is told.
pub(crate) fn late() -> Error {
    tracing::error!("the database did not answer within the request's deadline");
    Error::Unavailable(
        "the database did not answer in time; what was sent may not be stored: try again shortly"
            .into(),
    )
}

/// `work`'s answer, or [`late`] at the deadline (`work` is dropped there).
pub(super) async fn bounded<T>(work: impl Future<Output = Result<T>>) -> Result<T> {
    tokio::time::timeout_at(at(), work)
        .await
        .unwrap_or_else(|_| Err(late()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waits_of_one_request_share_its_deadline() {
        let started = Instant::now();
        let r: Result<()> = DEADLINE
            .scope(started + Duration::from_millis(300), async {
                tokio::time::sleep(Duration::from_millis(200)).await;
                // A second wait has what is left, not a time of its own.
                bounded(async {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    Ok(())
                })
                .await
            })
            .await;
        assert!(matches!(r, Err(Error::Unavailable(_))), "{r:?}");
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_secs(5),
            "{took:?}"
        );
        // Outside a request each wait has its own.
        let outside = at().saturating_duration_since(Instant::now());
        assert!(outside > DATABASE_WAIT - Duration::from_secs(1) && outside <= DATABASE_WAIT);
        assert_eq!(bounded(async { Ok(7) }).await.ok(), Some(7));
    }
}
