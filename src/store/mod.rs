//! Storage. Handlers and commands never write SQL: they call the store in domain terms,
//! and everything that must happen together happens in one store method, in one write.
//!
//! Two backends behind one small interface (`Store` dispatches to either):
//! - `sqlite`: a read-only pool for reads, and one writer task that owns the write
//!   connection and commits the jobs waiting together (group commit: one fsync for a
//!   batch, every job in its own savepoint, nobody answered before the commit).
//! - `postgres`: a read pool and a write pool; writes run in parallel, a verdict
//!   locking only its item's row (and a shared advisory lock that only structural
//!   writes such as imports take exclusively), retried on a serialization failure.
//!
//! Every statement is written once, against the [`db::Tx`] trait (named parameters,
//! rows read by column name), and runs on either backend: `read_tx!` hands it a read
//! connection, `write_tx!` a write of the backend's kind. Each area's statements and
//! its `Store` methods live together: `store::areas::<area>` (the bigger areas keep
//! their `Store` methods in a child `ops`), beside the area's public types in
//! `store::<area>`; `areas::base` and `areas::gates` hold what several areas share.
//! What differs per backend is in the backend file (connection settings, locks, the
//! plan of a statement, the backup) and in the few statements written per dialect
//! (`db::Sql`, `db::locked!`).

/// Runs `$body` on a read connection of whichever backend serves, as a
/// [`db::Tx`]: `read_tx!(self, |c| some_read(c, campaign).await)`. The body is written
/// once and compiled for each backend's connection.
macro_rules! read_tx {
    ($store:expr, |$c:ident| $body:expr) => {
        match &$store.inner.db {
            $crate::store::Db::Sqlite(b) => {
                let mut conn = b.read().await?;
                let $c = &mut *conn;
                $body
            }
            $crate::store::Db::Postgres(b) => {
                let mut conn = b.read().await?;
                let $c = &mut *conn;
                $body
            }
        }
    };
}

/// Runs `$body` as one write of whichever backend serves, holding `$lock`:
/// `write_tx!(self, Lock::Item, (campaign, key), |tx| write_it(tx, campaign, key).await)`.
/// The values named in parentheses are owned copies the write keeps (the body sees each
/// as a reference): SQLite runs the write on its writer's thread, PostgreSQL may run it
/// again after a serialization failure. Everything else the body names must be `Copy`.
/// The body runs with the store's clock in scope (`clock::now_micros` is its time).
macro_rules! write_tx {
    ($store:expr, $lock:expr, ($($v:ident),* $(,)?), |$tx:ident| $body:expr) => {{
        $(let $v = $v.to_owned();)*
        let clock = $store.inner.clock.clone();
        match &$store.inner.db {
            $crate::store::Db::Sqlite(b) => {
                b.write_tx($lock, move |$tx| {
                    Box::pin(async move {
                        $(let $v = &$v;)*
                        clock.scope(async { $body }).await
                    })
                })
                .await
            }
            $crate::store::Db::Postgres(b) => {
                b.write_tx($lock, move |$tx| {
                    $(let $v = ::std::clone::Clone::clone(&$v);)*
                    let clock = clock.clone();
                    Box::pin(async move {
                        $(let $v = &$v;)*
                        clock.scope(async { $body }).await
                    })
                })
                .await
            }
        }
    }};
}

pub mod accounts;
pub mod baseline;
pub mod calibration;
pub mod catalog;
pub mod count;
pub mod invitations;
pub mod jobs;
pub mod records;
pub mod review;
pub mod sampling;
pub mod sessions;
pub mod study;

mod areas;
mod cache;
pub(crate) mod db;
mod postgres;
mod sqlite;
mod stamp;

pub use areas::base::DEFAULT_CAMPAIGN;

/// The texts of the statements whose plans and compilation the tests and benches check
/// (they name a stage as a parameter, which SQLite's partial indexes could make it
/// compile again on every run).
pub mod statements {
    /// A validator's queue: `:campaign`, `:validator`, `:stage`.
    pub const QUEUE: &str = super::review::QUEUE;
    /// A verdict's load of its item, as SQLite runs it (named parameters).
    pub const FACTS_SQLITE: &str = super::areas::review::FACTS.sqlite;
    /// A verdict's load of its item, as PostgreSQL runs it (its row locked).
    pub const FACTS_POSTGRES: &str = super::areas::review::FACTS.postgres;
}

use crate::error::{Error, Result};
use accounts::User;
use std::path::Path;
use std::sync::Arc;

/// Which database the store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// What a write must exclude while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lock {
    /// Nothing beyond the rows it writes (sessions, tokens, sign-in counts).
    Rows,
    /// A verdict, a resolution, a calibration verdict, a study answer: it reads the
    /// pairs, versions and gates that structural writes change, so it runs while no
    /// structural write does (many of these at once), and locks its own item's row.
    Item,
    /// An import, a change of pair or pool, a campaign's settings: alone.
    Structure,
    /// A large import: alone, and in a transaction of its own on SQLite (not in a
    /// savepoint of a batch, see `sqlite::Job::Alone`).
    Import,
}

enum Db {
    Sqlite(sqlite::Backend),
    Postgres(postgres::Backend),
}

struct Inner {
    db: Db,
    cache: cache::Caches,
    stamps: stamp::StampReads,
    metrics: Arc<crate::metrics::StoreMetrics>,
    clock: crate::clock::Clock,
}

/// A cheap-to-clone handle on the database.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

/// Dispatches a method to the backend in use.
macro_rules! on_backend {
    ($self:expr, $name:ident($($arg:expr),*)) => {
        match &$self.inner.db {
            Db::Sqlite(b) => b.$name($($arg),*).await,
            Db::Postgres(b) => b.$name($($arg),*).await,
        }
    };
}

impl Store {
    /// The URL of the SQLite database file inside a data folder.
    pub fn sqlite_url(path: &Path) -> String {
        crate::config::sqlite_url(path)
    }

    /// Opens the database named by `url` and brings its schema up to date.
    pub async fn open(url: &str) -> Result<Store> {
        let metrics = Arc::new(crate::metrics::StoreMetrics::default());
        let db = if url.starts_with("sqlite:") {
            Db::Sqlite(sqlite::Backend::open(url, metrics.clone()).await?)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Db::Postgres(postgres::Backend::open(url, metrics.clone()).await?)
        } else {
            return Err(Error::Invalid(format!(
                "DATABASE_URL must start with sqlite:// or postgres:// (got `{}`)",
                url.split(':').next().unwrap_or_default()
            )));
        };
        let clock = crate::clock::Clock::default();
        let store = Store {
            inner: Arc::new(Inner {
                db,
                cache: cache::Caches::new(clock.clone()),
                stamps: stamp::StampReads::default(),
                metrics,
                clock,
            }),
        };
        let key = store.media_key().await?;
        store.inner.cache.set_media_key(key);
        Ok(store)
    }

    /// What the database side measures (batches, commits, retries, pool waits).
    pub fn metrics(&self) -> &crate::metrics::StoreMetrics {
        &self.inner.metrics
    }

    /// This store's clock (the system's, unless a test moved it forward).
    pub fn clock(&self) -> &crate::clock::Clock {
        &self.inner.clock
    }

    /// Now, by this store's clock, in microseconds since the epoch.
    pub fn now(&self) -> i64 {
        self.inner.clock.now_micros()
    }

    pub fn backend(&self) -> Backend {
        match &self.inner.db {
            Db::Sqlite(_) => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
        }
    }

    /// The revocation stamp as a read begun after this call finds it: on SQLite read in
    /// place; on PostgreSQL shared between the requests that wait at the same moment
    /// (see `stamp`).
    async fn stamp(&self) -> Result<i64> {
        // SQLite: one row from the page cache on a connection of its own, in place.
        if let Db::Sqlite(b) = &self.inner.db {
            return b.revocation_stamp_now();
        }
        let (needed, start) = self.inner.stamps.want();
        if start {
            let store = self.clone();
            tokio::spawn(async move {
                loop {
                    let found: Result<i64> = store.revocation_stamp().await;
                    if !store.inner.stamps.finished(&found) {
                        break;
                    }
                }
            });
        }
        self.inner.stamps.wait(needed).await
    }

    /// The user an API token belongs to, if the token is known, not revoked and its
    /// account not disabled: from this server's copy only while no revocation (on any
    /// server, or by the CLI) has been committed since the copy was read.
    pub async fn user_by_token(&self, token: &str) -> Result<Option<User>> {
        let digest = crate::auth::token_digest(token);
        let stamp = self.stamp().await?;
        if let Some(u) = self.inner.cache.token(&digest, stamp) {
            return Ok(u);
        }
        let u: Option<User> = self.user_by_token_digest(&digest).await?;
        self.inner.cache.put_token(&digest, stamp, u.clone());
        Ok(u)
    }

    /// After an import: the planner's statistics, so that queues keep their indexes.
    pub(crate) async fn after_import(&self) {
        if let Err(e) = on_backend!(self, refresh_statistics()) {
            // The import is stored; only the planner's estimates wait for autovacuum.
            tracing::warn!(error = %e, "cannot refresh the planner's statistics after an import");
        }
    }

    /// The plan the database chooses for `sql` (its `$n` parameters bound to `binds`),
    /// one line per step.
    pub(crate) async fn explain(&self, sql: &str, binds: &[i64]) -> Result<Vec<String>> {
        on_backend!(self, explain(sql, binds))
    }

    /// Checks that the database answers.
    pub async fn ping(&self) -> Result<()> {
        on_backend!(self, ping())
    }

    pub async fn close(&self) {
        on_backend!(self, close())
    }

    /// A consistent copy of the database, taken while it serves (SQLite: `VACUUM
    /// INTO` one file; PostgreSQL: `pg_dump --format=custom`).
    pub async fn backup(&self, database_url: &str, out: &Path) -> Result<()> {
        if out.exists() {
            return Err(Error::field(
                "out",
                format!("{} exists; give a new file", out.display()),
            ));
        }
        on_backend!(self, backup(database_url, out))
    }

    /// How the writer has batched and committed, for the metrics.
    pub fn writer_stats(&self) -> Option<sqlite::WriterStats> {
        match &self.inner.db {
            Db::Sqlite(b) => Some(b.writer_stats()),
            Db::Postgres(_) => None,
        }
    }
}

/// Text stored with characters no field may hold (older versions stored NUL and other
/// control characters on SQLite): per table and column, how many values, and a few of
/// them, escaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlText {
    pub table: String,
    pub column: String,
    pub rows: u64,
    pub examples: Vec<String>,
}
