//! The revocation stamp as requests see it (migration 0023). A server trusts its copy of
//! a session or of a token's owner only when the copy was read under the stamp that a
//! read *begun after the request arrived* finds: a disable, a token revocation, a
//! sign-out or a role change committed before the request (by this server, another
//! one, or the CLI) raised the stamp, so the copy is not used.
//!
//! On PostgreSQL, where a read is a round trip, reads are shared: while one read runs,
//! the requests that arrive wait for the next, which starts as soon as the running one
//! ends. A burst of any number of requests costs at most two reads of one row, and a
//! request waits at most two of them. (SQLite reads the row in place, on a connection of
//! its own: `sqlite::StampReader`.)

use crate::error::{Error, Result};
use std::sync::Mutex;
use tokio::sync::watch;

/// What a finished read found: its number and the stamp, or why it failed.
type Found = (u64, std::result::Result<i64, Failure>);

#[derive(Clone)]
enum Failure {
    Unavailable(String),
    Internal(String),
}

impl Failure {
    fn of(e: &Error) -> Failure {
        match e {
            Error::Unavailable(m) => Failure::Unavailable(m.clone()),
            other => Failure::Internal(other.to_string()),
        }
    }

    fn to_error(&self) -> Error {
        match self {
            Failure::Unavailable(m) => Error::Unavailable(m.clone()),
            Failure::Internal(m) => Error::Internal(m.clone()),
        }
    }
}

#[derive(Default)]
struct State {
    /// The number of the newest read begun.
    started: u64,
    /// The number of the newest read some request waits for.
    wanted: u64,
    /// Whether a read runs now.
    running: bool,
}

pub(super) struct StampReads {
    state: Mutex<State>,
    done: watch::Sender<Found>,
}

impl Default for StampReads {
    fn default() -> Self {
        StampReads {
            state: Mutex::new(State::default()),
            done: watch::Sender::new((0, Ok(0))),
        }
    }
}

impl StampReads {
    /// A request arrives: the number of the read it must wait for (the next one to
    /// begin), and whether the caller must begin the reading (none runs now).
    pub(super) fn want(&self) -> (u64, bool) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let needed = s.started + 1;
        s.wanted = s.wanted.max(needed);
        if s.running {
            (needed, false)
        } else {
            s.running = true;
            s.started = needed;
            (needed, true)
        }
    }

    /// A read ended with `found`: publishes it, and says whether another is wanted (then
    /// it is begun: the caller reads again) or the reading stops.
    pub(super) fn finished(&self, found: &Result<i64>) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let number = s.started;
        let found = found.as_ref().map(|v| *v).map_err(Failure::of);
        // The previous value (a read every waiter has seen or no longer needs) goes.
        drop(self.done.send_replace((number, found)));
        if s.wanted > s.started {
            s.started += 1;
            true
        } else {
            s.running = false;
            false
        }
    }

    /// Waits for read `needed` (or a later one) and answers with its stamp.
    pub(super) async fn wait(&self, needed: u64) -> Result<i64> {
        let mut rx = self.done.subscribe();
        let seen = rx
            .wait_for(|(number, _)| *number >= needed)
            .await
            .map_err(|_| Error::Internal("the revocation stamp's reader stopped".into()))?;
        match &seen.1 {
            Ok(stamp) => Ok(*stamp),
            Err(f) => Err(f.to_error()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

    /// A store stand-in whose stamp is a counter; each read takes a little while.
    struct Fake {
        reads: StampReads,
        stamp: AtomicI64,
        count: AtomicU64,
    }

    async fn current(f: &Arc<Fake>) -> Result<i64> {
        let (needed, start) = f.reads.want();
        if start {
            let f2 = f.clone();
            tokio::spawn(async move {
                loop {
                    // The stamp as it is when the read begins.
                    let v = f2.stamp.load(Ordering::SeqCst);
                    f2.count.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                    if !f2.reads.finished(&Ok(v)) {
                        break;
                    }
                }
            });
        }
        f.reads.wait(needed).await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_request_never_sees_a_stamp_older_than_its_arrival_and_a_burst_shares_reads() {
        let f = Arc::new(Fake {
            reads: StampReads::default(),
            stamp: AtomicI64::new(0),
            count: AtomicU64::new(0),
        });
        for round in 1..=20i64 {
            // A change commits; every request that arrives afterwards sees it.
            f.stamp.store(round, Ordering::SeqCst);
            let mut tasks = Vec::new();
            for _ in 0..50 {
                let f = f.clone();
                tasks.push(tokio::spawn(async move { current(&f).await }));
            }
            for t in tasks {
                assert!(t.await.unwrap().unwrap() >= round);
            }
        }
        // 1,000 requests, in bursts of 50: far fewer reads than requests.
        let reads = f.count.load(Ordering::SeqCst);
        assert!(reads <= 20 * 3, "{reads} reads");
    }

    #[tokio::test]
    async fn a_failed_read_fails_the_requests_that_waited_for_it_and_the_next_one_reads_again() {
        let r = StampReads::default();
        let (n, start) = r.want();
        assert!(start);
        let (m, start2) = r.want();
        assert!(!start2);
        assert_eq!(m, n + 1);
        assert!(r.finished(&Err(Error::Unavailable("gone".into()))));
        assert!(matches!(r.wait(n).await, Err(Error::Unavailable(_))));
        assert!(!r.finished(&Ok(7)));
        assert_eq!(r.wait(m).await.unwrap(), 7);
        let (k, start3) = r.want();
        assert!(start3);
        assert_eq!(k, m + 1);
    }
}
