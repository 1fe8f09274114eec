//! The server loop: accepts connections, serves each with hyper, and bounds what a
//! client can hold: a connection that sends no byte, or a header that is not complete,
//! in time is closed (sooner while many connections hold no whole request), a body
//! below its least rate is cut (`open::RateBody`), the number of open connections is
//! capped and so is the number from one client address (more are closed at once); while
//! every place is taken, a new connection makes room as `open` says (a silent one
//! first, then the heaviest address's), so that many addresses together cannot hold
//! them all. Shutdown drains, then waits for the requests in flight only until a
//! deadline. Every accepted socket has `TCP_NODELAY`: a reply written in two parts
//! (head, then a small body) must not wait for the client's delayed ACK.

mod open;

use crate::error::{Error, Result};
use crate::web::state::AppState;
use axum::extract::connect_info::ConnectInfo;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, TryAcquireError};
use tokio::task::JoinSet;
use tower::ServiceExt;

pub use crate::config::{ServerSettings, default_max_connections};

/// Called with each accepted socket, after its options are set (tests read them).
pub type AcceptTap = Arc<dyn Fn(&TcpStream) + Send + Sync>;

/// Binds the listening socket.
pub async fn listen(bind: &str) -> Result<(TcpListener, SocketAddr)> {
    let listener = TcpListener::bind(bind)
        .await
        .map_err(|e| Error::io(format!("cannot listen on {bind}"), e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::io("cannot read the listening address", e))?;
    Ok((listener, addr))
}

/// Serves the application on `listener` until `shutdown` completes, then finishes the
/// requests in flight (up to the configured grace period).
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, state, shutdown, None).await
}

/// Serves `state` on `listener` until `shutdown` completes; then keeps serving for the
/// drain period with `/readyz` answering 503 (a load balancer stops sending), stops
/// accepting, lets the requests in flight finish for up to the grace period and cuts
/// the rest.
pub async fn serve_with(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
    tap: Option<AcceptTap>,
) -> std::io::Result<()> {
    let settings = state.config.server.clone();
    let router = crate::web::app(state.clone());
    let builder = |header_timeout: Duration| {
        let mut builder = Builder::new(TokioExecutor::new());
        builder
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(header_timeout);
        builder.http2().timer(TokioTimer::new());
        Arc::new(builder)
    };
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut accept = Acceptor {
        listener,
        router,
        builder: builder(settings.header_read_timeout),
        hurried: builder(
            settings
                .header_read_timeout
                .min(crate::config::HURRIED_HEADER_TIMEOUT),
        ),
        slots: Arc::new(Semaphore::new(settings.max_connections.max(1))),
        clients: Arc::new(Mutex::new(HashMap::new())),
        per_client: settings.per_client_cap(),
        trusted: state.config.trusted_proxies.clone(),
        unsent: Arc::new(AtomicUsize::new(0)),
        unsent_budget: settings.unsent_budget(),
        open: Arc::default(),
        body_rate: open::BodyRate {
            grace: settings.body_grace,
            min_rate: settings.body_min_rate,
        },
        first_byte: settings.header_read_timeout,
        refused_since_warning: 0,
        warned_at: None,
        stop: stop_rx,
        connections: JoinSet::new(),
        tap,
    };
    accept.until(shutdown).await;
    state.life.start_draining();
    if !settings.drain.is_zero() {
        tracing::info!(
            drain_s = settings.drain.as_secs_f64(),
            "stopping: /readyz answers 503 while the server still answers"
        );
        accept.until(tokio::time::sleep(settings.drain)).await;
    }
    let Acceptor {
        listener,
        mut connections,
        ..
    } = accept;
    drop(listener);
    let _ = stop_tx.send(true);
    let open = connections.len();
    if open > 0 {
        tracing::info!(
            connections = open,
            grace_s = settings.shutdown_grace.as_secs_f64(),
            "finishing the requests in flight"
        );
    }
    let drained = tokio::time::timeout(settings.shutdown_grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            connections = connections.len(),
            "shutdown deadline reached: cutting the connections still open"
        );
        connections.abort_all();
        while connections.join_next().await.is_some() {}
    }
    Ok(())
}

/// The accepting half of the server: what each new connection is served with, and the
/// connections each client address holds.
struct Acceptor {
    listener: TcpListener,
    router: crate::web::App,
    builder: Arc<Builder<TokioExecutor>>,
    /// The same with a short time for a request's head, for connections accepted while
    /// many hold no whole request yet.
    hurried: Arc<Builder<TokioExecutor>>,
    slots: Arc<Semaphore>,
    /// Open connections per client address (trusted proxies not counted).
    clients: Arc<Mutex<HashMap<IpAddr, usize>>>,
    per_client: usize,
    trusted: Vec<crate::config::IpNet>,
    /// Open connections that have not sent a whole request head yet.
    unsent: Arc<AtomicUsize>,
    unsent_budget: usize,
    /// Every open connection, with what it is doing.
    open: Arc<open::Open>,
    body_rate: open::BodyRate,
    /// How long a new connection may stay silent (the time for a request's head).
    first_byte: Duration,
    refused_since_warning: u64,
    warned_at: Option<std::time::Instant>,
    stop: tokio::sync::watch::Receiver<bool>,
    connections: JoinSet<()>,
    tap: Option<AcceptTap>,
}

/// One connection's place in its client address's count, given back when it closes.
struct ClientSlot {
    ip: IpAddr,
    clients: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut m = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = m.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                m.remove(&self.ip);
            }
        }
    }
}

/// Counts a connection among those that have sent no whole request head until its
/// first request (or its end), exactly once.
struct Unsent {
    sent: AtomicBool,
    count: Arc<AtomicUsize>,
}

impl Unsent {
    fn new(count: Arc<AtomicUsize>) -> Unsent {
        count.fetch_add(1, Ordering::Relaxed);
        Unsent {
            sent: AtomicBool::new(false),
            count,
        }
    }

    fn sent(&self) {
        if !self.sent.swap(true, Ordering::Relaxed) {
            self.count.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Unsent {
    fn drop(&mut self) {
        self.sent();
    }
}

/// Waits until the connection sends its first byte (or closes): false when it stays
/// silent for `within`, is cut to make room, or the server stops first.
async fn first_byte(
    stream: &TcpStream,
    within: Duration,
    cut: &Notify,
    stop: &mut tokio::sync::watch::Receiver<bool>,
) -> bool {
    let mut byte = [0u8; 1];
    tokio::select! {
        // A peek, not readiness alone (which may wake without data); 0 bytes is the end,
        // which hyper then reads.
        r = tokio::time::timeout(within, stream.peek(&mut byte)) => matches!(r, Ok(Ok(_))),
        () = cut.notified() => false,
        () = stopping(stop) => false,
    }
}

/// An address as one client: an IPv4 address seen through an IPv6 socket is that
/// IPv4 address.
fn client_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

impl Acceptor {
    /// Whether `ip` is a trusted proxy's (its clients are counted by the proxy).
    fn is_trusted(&self, ip: IpAddr) -> bool {
        self.trusted.iter().any(|n| n.contains(ip))
    }

    /// A place for one more connection from `ip`, or none when that address holds its
    /// cap already (a trusted proxy's connections are not capped: the proxy limits its
    /// own clients).
    fn admit(&mut self, ip: IpAddr) -> Result<Option<ClientSlot>, ()> {
        if self.is_trusted(ip) {
            return Ok(None);
        }
        let mut m = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        let n = m.entry(ip).or_insert(0);
        if *n >= self.per_client {
            return Err(());
        }
        *n += 1;
        Ok(Some(ClientSlot {
            ip,
            clients: self.clients.clone(),
        }))
    }

    /// Says, at most once a minute, that connections were refused for their address,
    /// and why.
    fn note_refusal(&mut self, ip: IpAddr, why: &'static str) {
        self.refused_since_warning += 1;
        let now = std::time::Instant::now();
        if self
            .warned_at
            .is_none_or(|t| now.duration_since(t) >= Duration::from_secs(60))
        {
            tracing::warn!(
                client = %ip,
                cap = self.per_client,
                refused = self.refused_since_warning,
                "a client's new connections are closed at once: {why}"
            );
            self.warned_at = Some(now);
            self.refused_since_warning = 0;
        }
    }

    /// Accepts the next connection: none when `until` completes first.
    async fn accept(
        &mut self,
        until: &mut (impl Future<Output = ()> + Unpin),
    ) -> Option<(TcpStream, SocketAddr)> {
        loop {
            tokio::select! {
                r = self.listener.accept() => match r {
                    Ok(r) => return Some(r),
                    Err(e) => {
                        // Out of file descriptors, or a connection reset before it was
                        // accepted: wait a moment instead of spinning.
                        tracing::warn!(error = %e, "cannot accept a connection");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                () = &mut *until => return None,
            }
        }
    }

    /// A place for the next connection, and that connection; while every place is
    /// taken, it makes room as [`open`] says. None when `until` completes first or the
    /// server stops.
    async fn next(
        &mut self,
        until: &mut (impl Future<Output = ()> + Unpin),
    ) -> Option<(OwnedSemaphorePermit, TcpStream, SocketAddr)> {
        loop {
            match self.slots.clone().try_acquire_owned() {
                Ok(slot) => {
                    let (stream, remote) = self.accept(until).await?;
                    return Some((slot, stream, remote));
                }
                Err(TryAcquireError::Closed) => return None,
                Err(TryAcquireError::NoPermits) => {}
            }
            // Every place is taken: the oldest connection that has sent nothing makes
            // room for the next one (one for one, so a flood of silent connections cuts
            // its own, and a client that speaks at once stays).
            if self.open.cut_oldest_silent() {
                let slot = self.place(until).await?;
                let (stream, remote) = self.accept(until).await?;
                return Some((slot, stream, remote));
            }
            // Else the newcomer's address decides: a lighter one than the heaviest has
            // that address's oldest waiting connection closed; one as heavy is closed.
            let (stream, remote) = self.accept(until).await?;
            let ip = client_of(remote.ip());
            let room = {
                let held = self.clients.lock().unwrap_or_else(|e| e.into_inner());
                self.open
                    .make_room((!self.is_trusted(ip)).then_some(ip), &held)
            };
            match room {
                open::Room::Refused => {
                    drop(stream);
                    self.note_refusal(
                        ip,
                        "every place is taken and this address holds as many as any",
                    );
                }
                open::Room::Made | open::Room::Wait => {
                    let slot = self.place(until).await?;
                    return Some((slot, stream, remote));
                }
            }
        }
    }

    /// Waits for a place.
    async fn place(
        &mut self,
        until: &mut (impl Future<Output = ()> + Unpin),
    ) -> Option<OwnedSemaphorePermit> {
        tokio::select! {
            s = self.slots.clone().acquire_owned() => s.ok(),
            () = &mut *until => None,
        }
    }

    /// Accepts and serves connections until `until` completes.
    async fn until(&mut self, until: impl Future<Output = ()>) {
        let mut until = std::pin::pin!(until);
        loop {
            // Reap finished connections so the set does not grow.
            while self.connections.try_join_next().is_some() {}
            let Some((slot, stream, remote)) = self.next(&mut until).await else {
                return;
            };
            let ip = client_of(remote.ip());
            let Ok(client) = self.admit(ip) else {
                // Closed at once: the others, and this address's open connections, go
                // on as before.
                drop(stream);
                self.note_refusal(ip, "the address holds its cap of open connections");
                continue;
            };
            if let Err(e) = stream.set_nodelay(true) {
                tracing::debug!(error = %e, "cannot set TCP_NODELAY");
            }
            if let Some(tap) = &self.tap {
                tap(&stream);
            }
            let unsent = Arc::new(Unsent::new(self.unsent.clone()));
            let hurried = self.unsent.load(Ordering::Relaxed) > self.unsent_budget;
            let builder = if hurried {
                self.hurried.clone()
            } else {
                self.builder.clone()
            };
            // hyper's time for a head starts at its first byte: a connection that sends
            // none gets the same time for that byte.
            let first_within = if hurried {
                self.first_byte.min(crate::config::HURRIED_HEADER_TIMEOUT)
            } else {
                self.first_byte
            };
            let open = self.open.clone();
            // (A trusted proxy's connections hold no client place, and are not counted.)
            let (id, conn) = open.enter(client.is_some().then_some(ip));
            let router = self.router.clone();
            let first = unsent.clone();
            let rate = self.body_rate;
            let this = conn.clone();
            let service = hyper::service::service_fn(move |mut req: hyper::Request<_>| {
                first.sent();
                this.busy();
                req.extensions_mut().insert(ConnectInfo(remote));
                let this = this.clone();
                let req =
                    req.map(|b| axum::body::Body::new(open::RateBody::new(b, rate, this.clone())));
                let answer = router.clone().oneshot(req);
                async move {
                    let r = answer.await;
                    this.answered();
                    r
                }
            });
            let mut stop = self.stop.clone();
            self.connections.spawn(async move {
                let spoke = first_byte(&stream, first_within, &conn.cut, &mut stop).await;
                if !spoke {
                    open.leave(id);
                    return;
                }
                conn.spoke();
                let served = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                let mut served = std::pin::pin!(served);
                tokio::select! {
                    r = served.as_mut() => {
                        if let Err(e) = r {
                            tracing::debug!(error = %e, "connection ended with an error");
                        }
                    }
                    // Closed to make room for a client at a lighter address.
                    () = conn.cut.notified() => {}
                    () = stopping(&mut stop) => {
                        served.as_mut().graceful_shutdown();
                        if let Err(e) = served.await {
                            tracing::debug!(error = %e, "connection ended with an error");
                        }
                    }
                }
                open.leave(id);
                drop(unsent);
                drop(client);
                drop(slot);
            });
        }
    }
}

/// Completes when the server starts shutting down.
async fn stopping(stop: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await.map(drop);
}

/// Serves until Ctrl-C or SIGTERM (the caller starts the background media work,
/// `app::media::warm_up`).
pub async fn serve_until_stopped(
    listener: TcpListener,
    config: crate::Config,
    store: crate::Store,
) -> Result<()> {
    let state = AppState::new(store, config);
    survive_file_size_limit();
    serve_with(listener, state, shutdown_signal(), None)
        .await
        .map_err(|e| Error::io("the server stopped", e))
}

/// A process file-size limit (`ulimit -f`) kills the process with SIGXFSZ when a write
/// goes past it; with this handler the write fails with an error instead, which the
/// store reports and recovers from like a full disk.
fn survive_file_size_limit() {
    #[cfg(target_os = "linux")]
    {
        const SIGXFSZ: i32 = 25;
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::from_raw(SIGXFSZ)) {
            Ok(mut s) => {
                tokio::spawn(async move {
                    while s.recv().await.is_some() {
                        tracing::warn!("a write went past the process's file-size limit");
                    }
                });
            }
            Err(e) => tracing::debug!(error = %e, "cannot handle SIGXFSZ"),
        }
    }
}

/// Completes on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutting down: finishing the requests in flight");
}
