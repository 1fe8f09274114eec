//! What every request handler can reach: the store, the configuration, the server's
//! own state (whether it is shutting down, its last health probes) and its metrics.

use crate::config::Config;
use crate::metrics::Metrics;
use crate::store::Store;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What every request handler can reach: the store, the configuration, the
/// server's own state (whether it is shutting down, its last write probe) and its
/// metrics.
#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub config: Arc<Config>,
    pub life: Arc<Life>,
    pub metrics: Arc<Metrics>,
    /// Looks at the known items' catch rates after verdicts (`app::known`).
    pub known: crate::app::known::Checker,
}

impl AppState {
    pub fn new(store: Store, config: Config) -> AppState {
        let metrics = Arc::new(Metrics::new(store.metrics()));
        let known = crate::app::known::Checker::new(store.clone(), config.known_pause_delay);
        AppState {
            known,
            store,
            config: Arc::new(config),
            life: Arc::default(),
            metrics,
        }
    }
}

/// The server's own state, shared by its handlers.
#[derive(Default)]
pub struct Life {
    draining: AtomicBool,
    /// The last write probe of the health checks (`web::health`), and when.
    pub(super) last_probe: Mutex<Option<(Instant, Result<(), &'static str>)>>,
    /// The last answer of the media store to the readiness check, and when.
    pub(super) last_media: Mutex<Option<(Instant, &'static str)>>,
}

impl Life {
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }
}
