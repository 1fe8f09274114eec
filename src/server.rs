//! The server loop: accepts connections, serves each with hyper, and bounds what a
//! client can hold: a header that is not complete in time closes the connection, a
//! body that stalls is cut, the number of open connections is capped (new ones wait in
//! the kernel's backlog), and shutdown waits for the requests in flight only until a
//! deadline. Every accepted socket has `TCP_NODELAY`: a reply written in two parts (head,
//! then a small body) must not wait for the client's delayed ACK.

use crate::AppState;
use crate::error::{Error, Result};
use axum::extract::connect_info::ConnectInfo;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
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

/// Serves `state` on `listener` until `shutdown` completes; then stops accepting, lets
/// the requests in flight finish for up to the grace period and cuts the rest.
pub async fn serve_with(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
    tap: Option<AcceptTap>,
) -> std::io::Result<()> {
    let settings = state.config.server.clone();
    let router = crate::web::app(state.clone());
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(settings.header_read_timeout);
    builder.http2().timer(TokioTimer::new());
    let builder = Arc::new(builder);
    let slots = Arc::new(Semaphore::new(settings.max_connections.max(1)));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut connections = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        // Reap finished connections so the set does not grow.
        while connections.try_join_next().is_some() {}
        let slot = tokio::select! {
            s = slots.clone().acquire_owned() => match s {
                Ok(s) => s,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let (stream, remote) = tokio::select! {
            r = listener.accept() => match r {
                Ok(r) => r,
                Err(e) => {
                    // Out of file descriptors, or a connection reset before it was
                    // accepted: wait a moment instead of spinning.
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY");
        }
        if let Some(tap) = &tap {
            tap(&stream);
        }
        let router = router.clone();
        let service = hyper::service::service_fn(move |mut req: hyper::Request<_>| {
            req.extensions_mut().insert(ConnectInfo(remote));
            router.clone().oneshot(req)
        });
        let builder = builder.clone();
        let mut stop = stop_rx.clone();
        connections.spawn(async move {
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                }
                () = stopping(&mut stop) => {
                    conn.as_mut().graceful_shutdown();
                    if let Err(e) = conn.await {
                        tracing::debug!(error = %e, "connection ended with an error");
                    }
                }
            }
            drop(slot);
        });
    }
    drop(listener);
    state.life.start_draining();
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
