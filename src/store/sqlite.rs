//! SQLite: reads from a pool of read-only connections (sqlx); writes through one writer
//! thread that owns the only write connection (rusqlite, called in place: one driver
//! for every write) and commits the jobs waiting together.
//!
//! The writer takes every job waiting (up to [`MAX_BATCH`]), opens one `BEGIN
//! IMMEDIATE`, runs each job in its own savepoint (a job that fails rolls back alone
//! and gets its error), commits once (one fsync for the whole batch, `synchronous =
//! FULL`) and only then answers every job: nothing is acknowledged before it is
//! durable. A connection whose BEGIN, savepoint, COMMIT or ROLLBACK failed (a full
//! disk) is closed and a new one opened for the next batch, so writes recover by
//! themselves once the cause is gone.

use super::Lock;
use super::db::{Cell, Col, Dialect};
use crate::error::{Error, Result};
use crate::metrics::StoreMetrics as Metrics;
use futures_util::FutureExt;
use futures_util::future::LocalBoxFuture;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqlitePool, SqlitePoolOptions,
    SqliteSynchronous,
};
use sqlx::{ConnectOptions, Connection};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

pub(super) type Db = sqlx::Sqlite;
pub(super) type Conn = SqliteConnection;

/// Most jobs committed together.
pub const MAX_BATCH: usize = 256;

/// What a write-heavy moment looked like, for the metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriterStats {
    pub batches: u64,
    pub jobs: u64,
    pub largest_batch: u64,
    pub failed_commits: u64,
    /// Total time spent in COMMIT, in microseconds.
    pub commit_micros: u64,
}

#[derive(Default)]
struct Counters {
    batches: AtomicU64,
    jobs: AtomicU64,
    largest: AtomicU64,
    failed: AtomicU64,
    commit_micros: AtomicU64,
}

/// Why a batch could not be committed (shared by every job of the batch).
#[derive(Debug, Clone)]
struct CommitFailure {
    unavailable: bool,
    message: String,
}

impl CommitFailure {
    fn error(&self) -> Error {
        if self.unavailable {
            Error::Unavailable(
                "the database cannot write right now (the disk may be full); nothing was stored: try again later"
                    .into(),
            )
        } else {
            Error::Internal(format!(
                "the write could not be committed: {}",
                self.message
            ))
        }
    }
}

type Reply = Box<dyn FnOnce(std::result::Result<(), CommitFailure>) + Send>;

/// Whether a job succeeded, and how it is answered once its batch is committed (or not):
/// its value and statement count, or the commit's failure, or its own error.
fn answered_by<T: Send + 'static>(
    tx: oneshot::Sender<Result<(T, u64)>>,
    result: Result<T>,
    statements: u64,
) -> (bool, Reply) {
    let ok = result.is_ok();
    let reply: Reply = Box::new(move |committed| {
        let answer = match (result, committed) {
            (Ok(v), Ok(())) => Ok((v, statements)),
            (Ok(_), Err(f)) => Err(f.error()),
            (Err(e), _) => Err(e),
        };
        let _ = tx.send(answer);
    });
    (ok, reply)
}

/// Records a COMMIT's time and answers the batch's jobs with its result.
fn committed(
    c: &Counters,
    m: &Metrics,
    took: Duration,
    replies: Vec<Reply>,
    result: std::result::Result<(), CommitFailure>,
) {
    c.commit_micros.fetch_add(
        u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
    m.commit_seconds.observe(took.as_secs_f64());
    for r in replies {
        r(result.clone());
    }
}
type SyncJob = Box<dyn FnOnce(&mut WriteConn) -> (bool, Reply) + Send>;

/// A write, run in place on the writer's thread.
enum Job {
    /// In the next batch, in a savepoint of its own.
    Sync(SyncJob),
    /// In place, in a transaction of its own (a large import): without a savepoint
    /// around it, SQLite keeps each statement's journal in memory, where inside one it
    /// would write a copy of every page each statement touches to a temporary file.
    Alone(SyncJob),
}

mod tx;

pub(crate) use tx::WriteConn;

pub(crate) struct Backend {
    read: SqlitePool,
    jobs: mpsc::Sender<Job>,
    counters: Arc<Counters>,
    metrics: Arc<Metrics>,
    stamp: StampReader,
}

/// A read-only connection of its own for the revocation stamp, read in place for each
/// request that uses a cached session or token (one row by its key from the page cache:
/// microseconds, no hop to a driver thread).
struct StampReader {
    file: std::path::PathBuf,
    db: std::sync::Mutex<Option<rusqlite::Connection>>,
}

impl StampReader {
    fn read(&self) -> Result<i64> {
        let mut guard = self.db.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            let db = rusqlite::Connection::open_with_flags(
                &self.file,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
                    | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(tx::error)?;
            db.busy_timeout(Duration::from_secs(1)).map_err(tx::error)?;
            *guard = Some(db);
        }
        let found = guard.as_ref().map(|db| {
            db.prepare_cached("SELECT stamp FROM revocation_stamp WHERE id = 1")
                .and_then(|mut st| st.query_row([], |r| r.get::<_, i64>(0)))
        });
        match found {
            Some(Ok(stamp)) => Ok(stamp),
            Some(Err(e)) => {
                // Opened anew at the next read.
                *guard = None;
                Err(tx::error(e))
            }
            None => Err(Error::Internal(
                "no connection for the revocation stamp".into(),
            )),
        }
    }
}

/// Builds a statement and counts it.
pub(super) fn q<'q>(
    sql: impl sqlx::SqlSafeStr,
) -> sqlx::query::Query<'q, Db, <Db as sqlx::Database>::Arguments> {
    super::count::add(1);
    sqlx::query(sql)
}

fn options(url: &str) -> Result<SqliteConnectOptions> {
    Ok(SqliteConnectOptions::from_str(url)?
        .foreign_keys(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        // A command run beside the server waits this long for the server's write.
        .busy_timeout(Duration::from_secs(10))
        .pragma("wal_autocheckpoint", "1000")
        .pragma("journal_size_limit", "67108864")
        .pragma("cache_size", "-4000")
        .log_statements(tracing::log::LevelFilter::Trace))
}

impl Backend {
    pub(super) async fn open(url: &str, metrics: Arc<Metrics>) -> Result<Backend> {
        let opts = options(url)?;
        {
            let mut c = opts.clone().connect().await?;
            migrate(&mut c).await?;
            c.close().await?;
        }
        let read = SqlitePoolOptions::new()
            .max_connections(8)
            .min_connections(1)
            .test_before_acquire(false)
            .acquire_timeout(Duration::from_secs(30))
            // Readers keep a small cache of their own: the OS's page cache holds the
            // file for all of them (eight 16 MB caches were most of the server's memory,
            // 87 MiB after a load that 1 MB caches serve in 37 MiB at the same rate).
            .connect_with(opts.clone().read_only(true).pragma("cache_size", "-1000"))
            .await?;
        let stamp = StampReader {
            file: opts.get_filename().to_path_buf(),
            db: std::sync::Mutex::new(None),
        };
        let (jobs, rx) = mpsc::channel::<Job>(4096);
        let counters = Arc::new(Counters::default());
        // The writer has a thread of its own: its jobs run in place and block it while
        // they run.
        let (wc, wm) = (counters.clone(), metrics.clone());
        std::thread::Builder::new()
            .name("tandem-writer".into())
            .spawn(move || run_writer(rx, opts, wc, wm))
            .map_err(|e| Error::fault("cannot start the database writer", e))?;
        Ok(Backend {
            read,
            jobs,
            counters,
            metrics,
            stamp,
        })
    }

    /// A connection for reading.
    pub(super) async fn read(&self) -> Result<sqlx::pool::PoolConnection<Db>> {
        let asked = Instant::now();
        let c = self.read.acquire().await?;
        self.metrics.waited("read", asked.elapsed());
        Ok(c)
    }

    /// Runs `job` on the writer's connection as a [`super::db::Tx`], in its own
    /// savepoint, in the next batch (an import: in a transaction of its own, see
    /// `Job::Alone`); answers once its batch is committed. The job's future is polled
    /// once, on the writer's thread: it never waits (rusqlite answers in place), so it
    /// holds the writer only while it runs.
    pub(super) async fn write_tx<T, F>(&self, lock: Lock, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut WriteConn) -> LocalBoxFuture<'c, Result<T>> + Send + 'static,
    {
        self.tx_job(job, lock == Lock::Import).await
    }

    async fn tx_job<T, F>(&self, job: F, alone: bool) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut WriteConn) -> LocalBoxFuture<'c, Result<T>> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel::<Result<(T, u64)>>();
        let boxed: SyncJob = Box::new(move |c: &mut WriteConn| {
            c.statements = 0;
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                job(&mut *c).now_or_never()
            }));
            let result = match run {
                Ok(Some(r)) => r,
                Ok(None) => Err(Error::Internal(
                    "a write job waited for something on the writer's thread".into(),
                )),
                Err(_) => Err(Error::Internal("a write job panicked".into())),
            };
            answered_by(tx, result, c.statements)
        });
        let job = if alone {
            Job::Alone(boxed)
        } else {
            Job::Sync(boxed)
        };
        self.submit(job, rx).await
    }

    /// Hands `job` to the writer and waits for its answer, sent after its batch's COMMIT.
    async fn submit<T>(&self, job: Job, rx: oneshot::Receiver<Result<(T, u64)>>) -> Result<T> {
        self.jobs
            .send(job)
            .await
            .map_err(|_| Error::Internal("the database writer has stopped".into()))?;
        let (value, statements) = rx.await.map_err(|_| {
            Error::Unavailable(
                "the database cannot write right now; nothing was stored: try again later".into(),
            )
        })??;
        super::count::add(statements);
        Ok(value)
    }

    pub(crate) fn writer_stats(&self) -> WriterStats {
        let c = &self.counters;
        WriterStats {
            batches: c.batches.load(Ordering::Relaxed),
            jobs: c.jobs.load(Ordering::Relaxed),
            largest_batch: c.largest.load(Ordering::Relaxed),
            failed_commits: c.failed.load(Ordering::Relaxed),
            commit_micros: c.commit_micros.load(Ordering::Relaxed),
        }
    }

    /// SQLite's planner picks indexes by their shape (equalities first) without
    /// statistics, which is what every query here is written for (the EXPLAIN tests
    /// check the queues): nothing to refresh.
    pub(super) async fn refresh_statistics(&self) -> Result<()> {
        Ok(())
    }

    pub(super) async fn explain(&self, sql: &str, binds: &[i64]) -> Result<Vec<String>> {
        explain_on(&mut *self.read().await?, sql, binds).await
    }

    pub(super) async fn ping(&self) -> Result<()> {
        q("SELECT 1").execute(&mut *self.read().await?).await?;
        Ok(())
    }

    pub(super) async fn close(&self) {
        self.read.close().await;
    }

    pub(super) async fn backup(&self, _url: &str, out: &Path) -> Result<()> {
        let path = out
            .to_str()
            .ok_or_else(|| Error::field("out", "the path is not UTF-8"))?;
        let sql = format!("VACUUM INTO '{}'", path.replace('\'', "''"));
        q(sqlx::AssertSqlSafe(sql))
            .execute(&mut *self.read().await?)
            .await?;
        Ok(())
    }
}

/// The steps of SQLite's plan for `sql` (`EXPLAIN QUERY PLAN`), one line each.
async fn explain_on(c: &mut Conn, sql: &str, binds: &[i64]) -> Result<Vec<String>> {
    use sqlx::Row;
    let mut query = q(sqlx::AssertSqlSafe(format!("EXPLAIN QUERY PLAN {sql}")));
    for b in binds {
        query = query.bind(*b);
    }
    let rows = query.fetch_all(&mut *c).await?;
    Ok(rows
        .iter()
        .map(|r| r.try_get::<String, _>("detail").unwrap_or_default())
        .collect())
}

/// Applies the migrations that have not run yet. Migrations 8 and 20 rebuild tables with
/// their own transaction (foreign keys must be off while a referenced table is rebuilt,
/// and that cannot be done inside one); if a process stopped between such a commit and
/// sqlx's record of it, the record is written here.
async fn migrate(c: &mut Conn) -> Result<()> {
    let migrator = sqlx::migrate!("migrations/sqlite");
    // The migrations that commit by themselves, each known to have run by a column of
    // `items` it adds.
    for (version, column) in [(8i64, "item_key"), (20, "held")] {
        let ran: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM sqlite_master m, pragma_table_info(m.name) p
             WHERE m.type = 'table' AND m.name = 'items' AND p.name = $1",
        )
        .bind(column)
        .fetch_one(&mut *c)
        .await?;
        let table: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
        )
        .fetch_one(&mut *c)
        .await?;
        if ran == 0 || table == 0 {
            continue;
        }
        let recorded: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations WHERE version = $1")
                .bind(version)
                .fetch_one(&mut *c)
                .await?;
        if recorded == 0
            && let Some(m) = migrator.iter().find(|m| m.version == version)
        {
            tracing::warn!("migration {version} ran but was not recorded: recording it");
            sqlx::query(
                "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
                 VALUES ($1, $2, TRUE, $3, -1)",
            )
            .bind(version)
            .bind(&*m.description)
            .bind(&*m.checksum)
            .execute(&mut *c)
            .await?;
        }
    }
    migrator.run(&mut *c).await?;
    Ok(())
}

fn run_writer(
    mut rx: mpsc::Receiver<Job>,
    opts: SqliteConnectOptions,
    c: Arc<Counters>,
    m: Arc<Metrics>,
) {
    let mut conn: Option<WriteConn> = None;
    let mut jobs: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    let mut sync: Vec<SyncJob> = Vec::with_capacity(MAX_BATCH);
    let mut alone: Vec<SyncJob> = Vec::new();
    while let Some(first) = rx.blocking_recv() {
        jobs.push(first);
        while jobs.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(j) => jobs.push(j),
                Err(_) => break,
            }
        }
        for job in jobs.drain(..) {
            match job {
                Job::Sync(j) => sync.push(j),
                Job::Alone(j) => alone.push(j),
            }
        }
        // Each job that runs alone is a batch of one, after the others.
        let mut runs: Vec<Vec<SyncJob>> = Vec::with_capacity(1 + alone.len());
        if !sync.is_empty() {
            runs.push(std::mem::take(&mut sync));
        }
        runs.extend(alone.drain(..).map(|j| vec![j]));
        for mut batch in runs {
            observe(&c, &m, batch.len());
            if conn.is_none() {
                match open_writer(&opts) {
                    Ok(fresh) => conn = Some(fresh),
                    Err(e) => {
                        tracing::error!(error = %e, "the database writer cannot connect");
                        // Dropping the jobs answers them: nothing was stored.
                        batch.clear();
                    }
                }
            }
            if let Some(db) = conn.as_mut()
                && let Err(e) = run_batch(db, &mut batch, &c, &m)
            {
                c.failed.fetch_add(1, Ordering::Relaxed);
                m.failed_commits.inc();
                tracing::error!(error = %e, "a write batch failed: its connection is closed");
                conn = None;
            }
        }
    }
}

/// Counts one batch of `size` jobs.
fn observe(c: &Counters, m: &Metrics, size: usize) {
    let size = size as u64;
    c.batches.fetch_add(1, Ordering::Relaxed);
    c.jobs.fetch_add(size, Ordering::Relaxed);
    c.largest.fetch_max(size, Ordering::Relaxed);
    m.batch_jobs.observe(size as f64);
}

impl Backend {
    /// The revocation stamp, read now on the stamp's own connection.
    pub(super) fn revocation_stamp_now(&self) -> Result<i64> {
        self.stamp.read()
    }
}

/// The writer's connection, with the settings of the read connections (see
/// [`options`]): the same file.
fn open_writer(opts: &SqliteConnectOptions) -> rusqlite::Result<WriteConn> {
    let db = rusqlite::Connection::open(opts.get_filename())?;
    db.busy_timeout(Duration::from_secs(10))?;
    db.execute_batch(
        "PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
         PRAGMA wal_autocheckpoint = 1000; PRAGMA journal_size_limit = 67108864;
         PRAGMA cache_size = -4000; PRAGMA temp_store = MEMORY;",
    )?;
    db.set_prepared_statement_cache_capacity(128);
    Ok(WriteConn { db, statements: 0 })
}

/// Runs a transaction control statement, prepared once.
fn control(db: &rusqlite::Connection, sql: &str) -> rusqlite::Result<()> {
    db.prepare_cached(sql)?.execute([]).map(|_| ())
}

/// One batch: BEGIN IMMEDIATE, each job in its savepoint, COMMIT, then the answers. A
/// batch of one job needs no savepoint: a refused job rolls the transaction back. An
/// error here is the connection's (not a job's): the batch is answered with it and the
/// caller closes the connection.
fn run_batch(
    wc: &mut WriteConn,
    batch: &mut Vec<SyncJob>,
    c: &Counters,
    m: &Metrics,
) -> rusqlite::Result<()> {
    if let Err(e) = wc.db.execute_batch("BEGIN IMMEDIATE") {
        batch.clear();
        return Err(e);
    }
    let mut replies: Vec<Reply> = Vec::with_capacity(batch.len());
    let mut broken: Option<rusqlite::Error> = None;
    let alone = batch.len() == 1;
    let mut refused = false;
    for job in batch.drain(..) {
        if broken.is_some() {
            continue;
        }
        if alone {
            let (ok, reply) = job(wc);
            replies.push(reply);
            refused = !ok;
            continue;
        }
        if let Err(e) = control(&wc.db, "SAVEPOINT job") {
            broken = Some(e);
            continue;
        }
        let (ok, reply) = job(wc);
        replies.push(reply);
        let db = &wc.db;
        let end = if ok {
            control(db, "RELEASE job")
        } else {
            control(db, "ROLLBACK TO job").and_then(|()| control(db, "RELEASE job"))
        };
        if let Err(e) = end {
            broken = Some(e);
        }
    }
    let started = Instant::now();
    let db = &wc.db;
    let outcome = match broken {
        Some(e) => Err(e),
        None if refused => db.execute_batch("ROLLBACK"),
        None => db.execute_batch("COMMIT"),
    };
    let took = started.elapsed();
    match outcome {
        Ok(()) => {
            committed(c, m, took, replies, Ok(()));
            Ok(())
        }
        Err(e) => {
            let failure = CommitFailure {
                unavailable: tx::cannot_write(&e),
                message: e.to_string(),
            };
            let _ = db.execute_batch("ROLLBACK");
            committed(c, m, took, replies, Err(failure));
            Err(e)
        }
    }
}

/// Parameters in one bulk statement: sqlx finds each bound parameter by name among
/// all of the statement's, so a statement with n parameters costs n² comparisons
/// (100,000 clips in 30,000-parameter statements took 90 s); a hundred keep it small.
pub(super) const MAX_PARAMS: usize = 100;

/// A value of a SQLite row read through sqlx (the read connections), by its storage
/// class.
fn cell(row: &sqlx::sqlite::SqliteRow, col: Col<'_>) -> Result<Cell> {
    use sqlx::{Decode, Row, TypeInfo, ValueRef};
    let raw = match col {
        Col::Name(n) => row.try_get_raw(n),
        Col::Index(i) => row.try_get_raw(i),
    }?;
    if raw.is_null() {
        return Ok(Cell::Null);
    }
    let info = raw.type_info();
    let ty = info.name();
    let is = |names: &[&str]| names.iter().any(|n| n.eq_ignore_ascii_case(ty));
    let bad = |e: sqlx::error::BoxDynError| Error::fault(format!("column {col}"), e);
    Ok(if is(&["REAL", "FLOAT", "DOUBLE"]) {
        Cell::Real(<f64 as Decode<Db>>::decode(raw).map_err(bad)?)
    } else if is(&["TEXT", "DATE", "TIME", "DATETIME"]) {
        Cell::Text(<String as Decode<Db>>::decode(raw).map_err(bad)?)
    } else if is(&["BLOB"]) {
        Cell::Blob(<Vec<u8> as Decode<Db>>::decode(raw).map_err(bad)?)
    } else {
        Cell::Int(<i64 as Decode<Db>>::decode(raw).map_err(bad)?)
    })
}

crate::store::db::sqlx_tx!(Conn, Db, Dialect::Sqlite, cell, MAX_PARAMS);
