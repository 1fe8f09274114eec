//! The open connections, for choosing which one to close when every place is taken,
//! and the request body that must keep a minimum rate.
//!
//! Every accepted connection is registered with its client address and what it is
//! doing ([`Conn`]). While every place is taken, a new connection makes room: first the
//! oldest connection that has sent no byte is closed; else, when the newcomer's address
//! holds fewer connections than the address holding the most, the oldest of that
//! address's connections that waits on its client (between requests, or for a body's
//! next bytes) is closed; else the newcomer is closed at once. So addresses share the
//! places fairly: many addresses holding every place with slow bodies still leave
//! room for a client at another address.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Accepted, no byte sent yet.
const SILENT: u8 = 0;
/// Between requests, or sending a request's head.
const IDLE: u8 = 1;
/// A request is being answered.
const BUSY: u8 = 2;
/// A request waits for its body's next bytes.
const BODY: u8 = 3;
/// Told to close (never chosen twice).
const CUT: u8 = 4;

/// One open connection: what it is doing, and the signal that closes it.
pub(super) struct Conn {
    state: AtomicU8,
    pub(super) cut: Notify,
    accepted: Instant,
}

/// A connection silent for less than this is not closed to make room: it has just
/// been accepted, and a client sends its request at once (without this, a flood's new
/// connections would cut a normal client's before its first byte is read).
const SILENT_AT_LEAST: Duration = Duration::from_secs(1);

impl Conn {
    /// The connection sent its first byte.
    pub(super) fn spoke(&self) {
        self.state.store(IDLE, Ordering::Relaxed);
    }

    /// A request's head arrived: it is being answered.
    pub(super) fn busy(&self) {
        self.state.store(BUSY, Ordering::Relaxed);
    }

    /// The answer's head is ready: the connection waits for its client again.
    pub(super) fn answered(&self) {
        self.state.store(IDLE, Ordering::Relaxed);
    }

    /// Tells the connection to close.
    fn close(&self) {
        self.state.store(CUT, Ordering::Relaxed);
        self.cut.notify_one();
    }
}

/// The open connections in the order they were accepted.
#[derive(Default)]
pub(super) struct Open {
    inner: Mutex<Registry>,
}

#[derive(Default)]
struct Registry {
    next: u64,
    /// Each connection with its client address (none for a trusted proxy's).
    conns: BTreeMap<u64, (Option<IpAddr>, Arc<Conn>)>,
}

/// What a new connection found when every place was taken.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Room {
    /// A connection was closed for it: a place frees at once.
    Made,
    /// Nothing could be closed: it waits for a place.
    Wait,
    /// Its address holds as many places as any: it is closed at once.
    Refused,
}

impl Open {
    /// Registers a new (silent) connection from `ip`: its number, and its record.
    pub(super) fn enter(&self, ip: Option<IpAddr>) -> (u64, Arc<Conn>) {
        let conn = Arc::new(Conn {
            state: AtomicU8::new(SILENT),
            cut: Notify::new(),
            accepted: Instant::now(),
        });
        let mut r = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let id = r.next;
        r.next += 1;
        r.conns.insert(id, (ip, conn.clone()));
        (id, conn)
    }

    /// The connection closed.
    pub(super) fn leave(&self, id: u64) {
        let mut r = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        r.conns.remove(&id);
    }

    /// Closes the silent connection accepted first: false when none has been silent
    /// for [`SILENT_AT_LEAST`].
    pub(super) fn cut_oldest_silent(&self) -> bool {
        self.cut_silent_before(Instant::now() - SILENT_AT_LEAST)
    }

    /// Closes the oldest connection accepted before `before` that is still silent.
    fn cut_silent_before(&self, before: Instant) -> bool {
        let r = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let oldest = r
            .conns
            .values()
            .take_while(|(_, c)| c.accepted < before)
            .find(|(_, c)| c.state.load(Ordering::Relaxed) == SILENT);
        match oldest {
            Some((_, c)) => {
                c.close();
                true
            }
            None => false,
        }
    }

    /// Makes room for a new connection from `ip` (none: a trusted proxy) while every
    /// place is taken, given the open connections per address (`held`).
    pub(super) fn make_room(&self, ip: Option<IpAddr>, held: &HashMap<IpAddr, usize>) -> Room {
        let mine = ip.and_then(|ip| held.get(&ip).copied()).unwrap_or(0);
        let Some((&heavy, &most)) = held.iter().max_by_key(|(_, n)| **n) else {
            return Room::Wait;
        };
        // Closing one of the heaviest address's connections must not leave the
        // newcomer's address holding more than it.
        if mine + 1 >= most {
            return Room::Refused;
        }
        let r = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let waiting = r.conns.values().find(|(at, c)| {
            *at == Some(heavy) && matches!(c.state.load(Ordering::Relaxed), SILENT | IDLE | BODY)
        });
        match waiting {
            Some((_, c)) => {
                c.close();
                Room::Made
            }
            None => Room::Wait,
        }
    }
}

/// The rule a request body must keep: it may take `grace`, and one second more for
/// every `min_rate` bytes it has sent (Apache's `mod_reqtimeout` rule). A body that
/// sends one byte every few seconds is cut after the grace, however short its gaps.
#[derive(Debug, Clone, Copy)]
pub(super) struct BodyRate {
    pub(super) grace: Duration,
    pub(super) min_rate: u64,
}

/// A request body held to a [`BodyRate`]: past its time, it ends with an error that
/// says why (the handler's answer to a body it cannot read).
pub(super) struct RateBody<B> {
    inner: B,
    rule: BodyRate,
    started: Instant,
    received: u64,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
    conn: Arc<Conn>,
}

impl<B> RateBody<B> {
    pub(super) fn new(inner: B, rule: BodyRate, conn: Arc<Conn>) -> Self {
        RateBody {
            inner,
            rule,
            started: Instant::now(),
            received: 0,
            timer: None,
            conn,
        }
    }

    /// When the body's time ends, for what it has sent so far.
    fn deadline(&self) -> Instant {
        let earned =
            Duration::from_secs_f64(self.received as f64 / self.rule.min_rate.max(1) as f64);
        self.started + self.rule.grace + earned
    }
}

impl<B> hyper::body::Body for RateBody<B>
where
    B: hyper::body::Body<Data = hyper::body::Bytes> + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = hyper::body::Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                this.conn.busy();
                if let Some(Ok(f)) = &frame
                    && let Some(d) = f.data_ref()
                {
                    this.received += d.len() as u64;
                }
                Poll::Ready(frame.map(|r| r.map_err(Into::into)))
            }
            Poll::Pending => {
                this.conn.state.store(BODY, Ordering::Relaxed);
                let deadline = tokio::time::Instant::from_std(this.deadline());
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                if timer.deadline() != deadline {
                    timer.as_mut().reset(deadline);
                }
                match timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(crate::error::TooSlow {
                        min_rate: this.rule.min_rate,
                        grace: this.rule.grace,
                    })))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(pairs: &[([u8; 4], usize)]) -> HashMap<IpAddr, usize> {
        pairs.iter().map(|(a, n)| (IpAddr::from(*a), *n)).collect()
    }

    #[test]
    fn a_lighter_address_closes_the_heaviest_addresses_oldest_waiting_connection() {
        let open = Open::default();
        let heavy = IpAddr::from([10, 0, 0, 1]);
        let (_, busy) = open.enter(Some(heavy));
        busy.spoke();
        busy.busy();
        let (_, waiting) = open.enter(Some(heavy));
        waiting.spoke();
        let (_, later) = open.enter(Some(heavy));
        later.spoke();
        let counts = held(&[([10, 0, 0, 1], 3), ([10, 0, 0, 2], 2)]);
        assert_eq!(
            open.make_room(Some(IpAddr::from([10, 0, 0, 3])), &counts),
            Room::Made
        );
        // The busy one is passed over; the oldest waiting one is told to close.
        assert!(futures_now(waiting.cut.notified()));
        assert!(!futures_now(later.cut.notified()));
        assert!(!futures_now(busy.cut.notified()));
        // An address that would then hold as many is refused; a trusted proxy is not.
        assert_eq!(
            open.make_room(Some(IpAddr::from([10, 0, 0, 2])), &counts),
            Room::Refused
        );
        assert_eq!(open.make_room(Some(heavy), &counts), Room::Refused);
        assert_eq!(open.make_room(None, &counts), Room::Made);
    }

    #[test]
    fn only_busy_connections_leave_a_newcomer_waiting() {
        let open = Open::default();
        let heavy = IpAddr::from([10, 0, 0, 1]);
        for _ in 0..3 {
            let (_, c) = open.enter(Some(heavy));
            c.spoke();
            c.busy();
        }
        let counts = held(&[([10, 0, 0, 1], 3)]);
        assert_eq!(open.make_room(None, &counts), Room::Wait);
        assert!(!open.cut_oldest_silent());
        let (_, silent) = open.enter(Some(heavy));
        // Just accepted: not cut yet.
        assert!(!open.cut_oldest_silent());
        assert!(open.cut_silent_before(Instant::now() + Duration::from_millis(1)));
        assert!(futures_now(silent.cut.notified()));
    }

    /// Whether a future is ready at its first poll.
    fn futures_now<F: std::future::Future>(f: F) -> bool {
        let mut f = std::pin::pin!(f);
        let waker = std::task::Waker::noop();
        f.as_mut().poll(&mut Context::from_waker(waker)).is_ready()
    }
}
