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
//!
//! In detail (what ARCHITECTURE.md summarises):
//!
//! **Every statement is written once**, by area, in `store::areas` (`base` and `gates`,
//! which the others call downward; `accounts`, `sessions`, `catalog`, `review`,
//! `calibration`, `known`, `records`, `stats`, `study`, `baseline`, `invitations`,
//! `sampling`, `misc`; and `store/jobs/`): a function generic over `store::db::Tx`, the
//! connection of whichever backend runs it. Each area's `Store` methods sit beside its
//! statements (in the area's file; in a child `ops` for the large ones: `catalog`,
//! `review`, `calibration`, `records`, `study`) and run them through `read_tx!` (a read
//! connection of either backend) or `write_tx!` (a write of the backend's kind, with its
//! `Lock`). An operation touches its area, and its backend only where the backends differ.
//! An area's public types stay in `store::<area>` (`store::catalog::Campaign`): one module
//! per area holding types and statements together would make circles the layer test refuses
//! (`areas::base` reads `catalog`'s and `accounts`' types while their statements call
//! `base`; `gates` calls `known`, which calls `calibration`, whose statements call
//! `gates`), until the shared types sit in a module below them all. Each backend's
//! connection implements `Tx` once: SQLite's through rusqlite (`sqlite/tx.rs`),
//! PostgreSQL's through sqlx (`db::sqlx_tx!`).
//! What differs by backend is said where it differs: by `Tx::DIALECT` (PostgreSQL's
//! one-statement verdict writes), by a `db::Sql` with a text per database (`db::locked!`
//! for `FOR UPDATE OF` on PostgreSQL, whose writes run side by side; the catalogue queries
//! of the dump), or by the implementation (`Tx::insert_rows`: SQLite runs each row's insert
//! prepared once, PostgreSQL multi-row statements). Parameters are named (`:campaign`),
//! bound from one list (`db::named!`, a row's `args()`); both backends refuse a statement
//! whose parameters and values do not match, so a misspelt name is an error, never a silent
//! NULL. Rows are read by column name into types declared once with `db::row!` (or tuples,
//! by position). Two kinds of statement are made at run time: the audit trail's
//! (`areas::records::audit`, only the conditions a filter gives, so that the planner takes
//! the indexes they name; `Tx::fetch_built` binds their `$1`, `$2`, ... in order) and the
//! upkeep that walks every table (`Tx::cells`, names from the database's own catalogue).
//! SQL fragments that several statements share are written once as macros (`db::retained!`,
//! `db::question_open!`, `areas::review`'s `set_marks!`/`set_outcome!`, from which
//! PostgreSQL's one-statement verdicts are built).
//!
//! **SQLite reads in place**: a read runs on the request's own thread, on a read-only
//! rusqlite connection (`sqlite::Readers`): a next item or a review page is a few
//! statements answered from the page cache in microseconds, where sqlx's pool sent each
//! statement to its connection's thread and back (about six thread switches for a next
//! item, a third of the server's CPU time in the kernel). A read that walks a campaign
//! (statistics, exports, every item of a list) is written `read_tx!(self, long, |c| ..)`:
//! it hands its thread's other requests to another thread while it runs
//! (`block_in_place`), at most eight at once. Views (`item_details`, `split_details`,
//! migration 0009) hold the joins that many statements share. Every statement counts one
//! (`store::count`: a task-local counter that `/metrics` reports per request; the writer
//! counts its job's statements and hands the count back, a reader when it is put back).
//!
//! | | SQLite | PostgreSQL |
//! | --- | --- | --- |
//! | reads | read-only connections used in place (WAL readers never wait for the writer), eight kept open, each with a 1 MB page cache (the OS's page cache holds the file for all; the writer's connection keeps 4 MB) | a read pool of 16 |
//! | writes | one writer thread (`tandem-writer`) owns the write connection (rusqlite) and runs every write in place: it takes every job waiting (up to 256), opens one `BEGIN IMMEDIATE`, runs each job in its own `SAVEPOINT` (a refused job rolls back alone and gets its 4xx), `COMMIT`s once (one fsync, `synchronous = FULL`) and only then answers each job. A job is a `store::areas` function's future, polled once on that thread: rusqlite answers in place, so it never waits (one that did would be refused, not blocked on). An import runs in a transaction of its own (`Job::Alone`: no savepoint, so each statement's journal stays small and in memory; `temp_store = MEMORY` keeps the journals off the disk) | a write pool of 8 (on two cores, 16 gave one server the same rate and made two servers on one database 0.87-0.94x one; 8 gives 1.00-1.01x); each write is its own transaction, retried on a serialization failure or deadlock (4 attempts) |
//! | what a write excludes | everything: one writer | by its `Lock`: `Item` (verdicts, resolutions, calibration and study answers) takes a shared advisory lock and the row lock of its item (`SELECT ... FOR UPDATE OF i`); `Structure` (imports, pairs, pools, settings, records imports) takes that advisory lock exclusively, only for its short write phase; `Rows` (sessions, tokens, sign-in counts) takes none |
//! | a connection whose BEGIN, COMMIT or ROLLBACK failed | closed; the next batch opens a new one | closed (`close_on_drop`) |
//! | queue counters | row triggers on `items` | statement triggers with transition tables (one update per counter per statement, in key order); each counter in eight parts by item id (`queue_counts.part`, migration 0015), summed by readers, because a counter row stays locked until its verdict commits and one row per validator made that validator's verdicts wait for each other's commits |
//! | after a bulk import | nothing (the planner goes by index shape; the EXPLAIN tests check the queues) | `ANALYZE` of the imported tables (`refresh_statistics`), so that the planner does not take a fresh campaign for an empty one and scan a stage to find an item |
//!
//! Queues are columns of `items`: `queue1`/`queue2` (the two validators it waits for, NULL
//! outside any queue: calibration items, questions of clips not retained, replaced
//! versions, items held for a sample: `held`, with `lot_id` and `drawn` once a draw took
//! them), `decided1`/`decided2`, `sort_key` (task order, then clip, then question) and
//! `is_current`. The next item is one seek in each of the partial indexes `items_queue1`
//! and `items_queue2`; done and total are one row of `queue_counts` (the sum of eight on
//! PostgreSQL), kept by the triggers. Whatever changes a queue (a verdict, opening a clip's
//! questions, a new version, a pair change moving unstarted items) is an UPDATE of those
//! columns, so the counters cannot drift (`tests/it/store.rs` recounts them after races).
//!
//! Caches, each checked against what a write depends on: the campaign and its parsed
//! taxonomy (1 s; writes re-read what they rely on inside their own transaction), the
//! accounts behind API tokens, with their roles in each campaign, and the sessions that
//! fetch clip files (2 s, and each used only under the **revocation stamp** it was read
//! with: one row, `revocation_stamp`, that every write taking access away raises in its own
//! transaction: on SQLite a request reads it anew, in place, on a read connection
//! (`sqlite::Backend::revocation_stamp_now`, microseconds from the page cache); on PostgreSQL the
//! server listens for it and a write that raised it waits until every listening server
//! has taken it in, or, while not listening, shares reads between requests: see
//! `store::stamp`), whether a person may see a clip
//! (2 s, for the same roles), the file behind a clip version or a study clip token (never
//! changes), and open clip files with their size and date (`web::media`,
//! `Config::open_file_reuse`, 10 s; stored files are named by their hash and never change).
//! A clip's URL token is the AES-128 encryption of (person, clip version) under a key
//! stored once in the database (`server_keys`), so any server can check it without a row
//! per grant.

/// Runs `$body` on a read connection of whichever backend serves, as a
/// [`db::Tx`]: `read_tx!(self, |c| some_read(c, campaign).await)`. The body is written
/// once and compiled for each backend's connection. On SQLite it runs in place, on the
/// request's own thread (a few statements from the page cache); a read that walks a
/// campaign (statistics, exports, lists of every item) says so, `read_tx!(self, long, |c|
/// ...)`, and runs without holding up the runtime's other requests (`sqlite::long`).
macro_rules! read_tx {
    ($store:expr, |$c:ident| $body:expr) => {
        match &$store.inner.db {
            $crate::store::Db::Sqlite(b) => {
                let mut conn = b.reader()?;
                let $c = &mut *conn;
                $body
            }
            $crate::store::Db::Postgres(b) => read_tx!(@postgres b, |$c| $body),
        }
    };
    ($store:expr, long, |$c:ident| $body:expr) => {
        match &$store.inner.db {
            $crate::store::Db::Sqlite(b) => {
                let mut conn = b.reader()?;
                let $c = &mut *conn;
                b.long(async { $body }).await?
            }
            $crate::store::Db::Postgres(b) => read_tx!(@postgres long b, |$c| $body),
        }
    };
    // Boxed, as in `write_tx!`: PostgreSQL's futures would make every read's future on
    // SQLite as large as theirs.
    // A short read ends by the request's deadline (`deadline`); its connection, which
    // may be stuck in a statement, is closed then.
    (@postgres $b:ident, |$c:ident| $body:expr) => {
        Box::pin(async {
            let mut conn = $b.read().await?;
            let done =
                tokio::time::timeout_at($crate::store::deadline::at(), async {
                    let $c = &mut *conn;
                    $body
                })
                .await;
            match done {
                Ok(r) => r,
                Err(_) => Err($crate::store::postgres::stuck(&mut conn)),
            }
        })
        .await
    };
    (@postgres long $b:ident, |$c:ident| $body:expr) => {
        Box::pin(async {
            let mut conn = $b.read().await?;
            let $c = &mut *conn;
            $body
        })
        .await
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
            // A write that raised the revocation stamp returns once every listening
            // server has taken the new figure in (`store::stamp`). Boxed: the arms of a
            // match are one future, and this one's (sqlx's, the stamp's) would make every
            // write's future, on SQLite too, tens of kilobytes that each request copies.
            $crate::store::Db::Postgres(b) => Box::pin(async move {
                let (r, raised) = $crate::store::stamp::noting_raises(b.write_tx($lock, move |$tx| {
                    $(let $v = ::std::clone::Clone::clone(&$v);)*
                    let clock = clock.clone();
                    Box::pin(async move {
                        $(let $v = &$v;)*
                        clock.scope(async { $body }).await
                    })
                }))
                .await;
                if let (Ok(_), Some(stamp)) = (&r, raised) {
                    b.until_taken_in(stamp).await;
                }
                r
            })
            .await,
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
pub mod deadline;
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
    listened: Arc<stamp::Listened>,
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
                listened: Arc::new(stamp::Listened::new(&clock)),
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

    /// The SQLite database's file (`None` on PostgreSQL, whose disk is not this server's).
    pub fn database_file(&self) -> Option<&Path> {
        match &self.inner.db {
            Db::Sqlite(b) => Some(b.file()),
            Db::Postgres(_) => None,
        }
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
        // PostgreSQL: as notified, while the listener is alive; else read, shared.
        match &self.inner.db {
            Db::Sqlite(b) => return b.revocation_stamp_now(),
            Db::Postgres(b) => {
                if let Some(stamp) = self.inner.listened.current(&self.inner.clock) {
                    return Ok(stamp);
                }
                if self.inner.listened.start() {
                    b.listen_for_stamps(self.inner.listened.clone(), self.inner.clock.clone());
                }
            }
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
        // A read that started before this request may be stuck: the request waits for
        // it and the next only until its own deadline.
        deadline::bounded(self.inner.stamps.wait(needed)).await
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
