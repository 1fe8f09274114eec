//! The revocation stamp as requests see it (migration 0023). A server trusts its copy of
//! a session or of a token's owner only when the copy was read under the stamp that a
//! read *begun after the request arrived* finds: a disable, a token revocation, a
//! sign-out or a role change committed before the request (by this server, another
//! one, or the CLI) raised the stamp, so the copy is not used.
//!
//! On PostgreSQL, where a read is a round trip, reads are shared: while one read runs,
//! the requests that arrive wait for the next, which starts as soon as the running one
//! ends. A burst of any number of requests costs at most two reads of one row, and a
//! request waits at most two of them. (SQLite reads the row in place, on a read
//! connection: `sqlite::Backend::revocation_stamp_now`.)
//!
//! And on PostgreSQL, while this server listens ([`Listened`]), a request reads nothing.
//! The transaction that raises the stamp notifies it (migration 0032); each listening
//! server, on a notification or after a quiet second ([`HEARTBEAT`]), reads the stamp
//! on its listening connection and records in its row of `stamp_listeners` the figure it
//! took in and a lease ([`LEASE`]) until which it trusts it; it trusts it here for a lease
//! counted from before it asked, so never longer than its row says. The write that raised
//! the stamp returns only after every row whose lease runs shows the new figure
//! (`postgres::Backend::until_taken_in`, [`noting_raises`]): a listener that died, froze or
//! lost its connection holds it up at most until its lease runs out, and by then it no
//! longer trusts its figure. So a revocation holds on every server at the next request, as
//! when each request read the stamp. Until the listener has begun, while it reconnects,
//! and once its lease has run out, requests read the row as above.

use crate::clock::Clock;
use crate::error::{Error, Result};
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The channel the stamp's trigger notifies (migration 0032).
pub(super) const CHANNEL: &str = "tandem_revocation";
/// How long the listener waits for a notification before it renews its lease anyway.
pub(super) const HEARTBEAT: Duration = Duration::from_secs(1);
/// How long taking the stamp in may take before the connection counts as lost.
pub(super) const HEARTBEAT_TIMEOUT: Duration = Duration::from_millis(500);
/// How long after it asked the listener trusts the stamp it took in (and its row says
/// so): longer than a heartbeat and its time-out, so that a healthy listener never lapses.
pub(super) const LEASE: Duration = Duration::from_millis(2000);

/// The stamp as this server's `LISTEN` connection tells it (PostgreSQL).
pub(super) struct Listened {
    /// The highest stamp the listener has taken in.
    stamp: AtomicI64,
    /// Until when (microseconds after `base`, by the store's clock) `stamp` may be used
    /// without a read; 0 while not listening.
    until: AtomicI64,
    base: Instant,
    /// Whether the listener was started (on the first request that needs the stamp).
    started: AtomicBool,
}

impl Listened {
    pub(super) fn new(clock: &Clock) -> Listened {
        Listened {
            stamp: AtomicI64::new(i64::MIN),
            until: AtomicI64::new(0),
            base: clock.instant(),
            started: AtomicBool::new(false),
        }
    }

    fn micros(&self, clock: &Clock) -> i64 {
        i64::try_from(
            clock
                .instant()
                .saturating_duration_since(self.base)
                .as_micros(),
        )
        .unwrap_or(i64::MAX)
    }

    /// The stamp, if the listener's last sign of life is recent enough to use it.
    pub(super) fn current(&self, clock: &Clock) -> Option<i64> {
        let until = self.until.load(Ordering::Acquire);
        let stamp = self.stamp.load(Ordering::Acquire);
        (until > 0 && self.micros(clock) < until && stamp != i64::MIN).then_some(stamp)
    }

    /// A stamp the listener read on its connection.
    pub(super) fn raise(&self, stamp: i64) {
        self.stamp.fetch_max(stamp, Ordering::AcqRel);
    }

    /// The listener took the stamp in with a read it began at `asked`: trusted for a
    /// lease from then.
    pub(super) fn alive_from(&self, asked: Instant) {
        let since = asked.saturating_duration_since(self.base);
        let until = i64::try_from((since + LEASE).as_micros())
            .unwrap_or(i64::MAX)
            .max(1);
        self.until.store(until, Ordering::Release);
    }

    /// The listening connection is lost: requests read the row until it is back.
    pub(super) fn down(&self) {
        self.until.store(0, Ordering::Release);
    }

    /// True once: whether the caller must start the listener.
    pub(super) fn start(&self) -> bool {
        !self.started.swap(true, Ordering::AcqRel)
    }
}

tokio::task_local! {
    /// The highest stamp a running write of this server raised the row to.
    static RAISED: Cell<i64>;
}

/// A write raised the stamp to `stamp` (`accounts::access_changed`): noted for
/// [`noting_raises`], if it runs this write.
pub(crate) fn raised(stamp: i64) {
    let _ = RAISED.try_with(|c| c.set(c.get().max(stamp)));
}

/// Runs a write, and answers with the highest stamp it raised the row to (`None`: it
/// raised none).
pub(super) async fn noting_raises<T, F: std::future::Future<Output = Result<T>>>(
    write: F,
) -> (Result<T>, Option<i64>) {
    RAISED
        .scope(Cell::new(i64::MIN), async {
            let r = write.await;
            let raised = RAISED.with(Cell::get);
            (r, (raised != i64::MIN).then_some(raised))
        })
        .await
}

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
