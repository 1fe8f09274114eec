//! Tandem: paired human quality control for generated-video benchmarks.
//!
//! The library holds everything; `main.rs` only parses the command line. Tests call
//! [`web::app`] and [`serve`] with a real database and a real listening socket.

pub mod app;
pub mod auth;
pub mod cli;
pub mod clock;
pub mod config;
pub mod cores;
pub mod demo;
pub mod domain;
pub mod error;
pub mod io;
pub mod metrics;
pub mod report;
pub mod rng;
pub mod server;
pub mod stats;
pub mod store;
pub mod web;

use std::future::Future;
use std::sync::Arc;

pub use config::Config;
pub use error::{Error, Result};
pub use store::Store;

/// What every request handler can reach: the store, the configuration, the
/// server's own state (whether it is shutting down, its last write probe) and its
/// metrics.
#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub config: Arc<Config>,
    pub life: Arc<web::health::Life>,
    pub metrics: Arc<metrics::Metrics>,
}

impl AppState {
    pub fn new(store: Store, config: Config) -> AppState {
        let metrics = Arc::new(metrics::Metrics::new(store.metrics()));
        AppState {
            store,
            config: Arc::new(config),
            life: Arc::default(),
            metrics,
        }
    }
}

/// Serves the application on `listener` until `shutdown` completes, then finishes the
/// requests in flight (up to the configured grace period).
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    server::serve_with(listener, state, shutdown, None).await
}

pub use server::shutdown_signal;
