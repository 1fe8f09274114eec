//! SQLite: reads from a pool of read-only connections; writes through one writer task
//! that owns the only write connection and commits the jobs waiting together.
//!
//! The writer takes every job waiting (up to [`MAX_BATCH`]), opens one `BEGIN
//! IMMEDIATE`, runs each job in its own savepoint (a job that fails rolls back alone
//! and gets its error), commits once (one fsync for the whole batch, `synchronous =
//! FULL`) and only then answers every job: nothing is acknowledged before it is
//! durable. A connection whose BEGIN, savepoint, COMMIT or ROLLBACK failed (a full
//! disk) is closed and a new one opened for the next batch, so writes recover by
//! themselves once the cause is gone.

use super::Lock;
use crate::error::{Error, Result};
use crate::metrics::StoreMetrics as Metrics;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
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
    fn of(e: &sqlx::Error) -> CommitFailure {
        CommitFailure {
            unavailable: e
                .as_database_error()
                .is_some_and(|d| crate::error::cannot_write(d.code().as_deref())),
            message: e.to_string(),
        }
    }

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
type AsyncJob = Box<dyn for<'c> FnOnce(&'c mut Conn) -> BoxFuture<'c, (bool, Reply)> + Send>;
type SyncJob = Box<dyn FnOnce(&rusqlite::Connection) -> (bool, Reply) + Send>;

/// A write: through sqlx (any write), or called in place on the writer's thread
/// (rusqlite: the hot ones, see `verdict`).
enum Job {
    Async(AsyncJob),
    Sync(SyncJob),
    /// In place, in a transaction of its own (a large import): without a savepoint
    /// around it, SQLite keeps each statement's journal in memory, where inside one it
    /// would write a copy of every page each statement touches to a temporary file.
    Alone(SyncJob),
}

mod import;
mod verdict;

pub(crate) struct Backend {
    read: SqlitePool,
    jobs: mpsc::Sender<Job>,
    counters: Arc<Counters>,
    metrics: Arc<Metrics>,
}

/// The same SQL as PostgreSQL, but SQLite locks the whole database for a write: a
/// row lock is implied.
macro_rules! for_update {
    ($t:literal) => {
        ""
    };
}

/// Builds a statement and counts it.
pub(super) fn q<'q>(
    sql: impl sqlx::SqlSafeStr,
) -> sqlx::query::Query<'q, Db, <Db as sqlx::Database>::Arguments> {
    super::count::add(1);
    sqlx::query(sql)
}

pub(super) fn qa<'q, T>(
    sql: impl sqlx::SqlSafeStr,
) -> sqlx::query::QueryAs<'q, Db, T, <Db as sqlx::Database>::Arguments>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>,
{
    super::count::add(1);
    sqlx::query_as(sql)
}

pub(super) fn qs<'q, T>(
    sql: impl sqlx::SqlSafeStr,
) -> sqlx::query::QueryScalar<'q, Db, T, <Db as sqlx::Database>::Arguments>
where
    (T,): for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>,
{
    super::count::add(1);
    sqlx::query_scalar(sql)
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
        let (jobs, rx) = mpsc::channel::<Job>(4096);
        let counters = Arc::new(Counters::default());
        // The writer has a thread of its own: its in-place jobs block it while they
        // run, and its sqlx jobs' round trips wake a thread that does nothing else.
        let (wc, wm) = (counters.clone(), metrics.clone());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Internal(format!("cannot start the database writer: {e}")))?;
        std::thread::Builder::new()
            .name("tandem-writer".into())
            .spawn(move || runtime.block_on(run_writer(rx, opts, wc, wm)))
            .map_err(|e| Error::Internal(format!("cannot start the database writer: {e}")))?;
        Ok(Backend {
            read,
            jobs,
            counters,
            metrics,
        })
    }

    /// A connection for reading.
    pub(super) async fn read(&self) -> Result<sqlx::pool::PoolConnection<Db>> {
        let asked = Instant::now();
        let c = self.read.acquire().await?;
        self.metrics.waited("read", asked.elapsed());
        Ok(c)
    }

    /// Runs `job` on the write connection, in its own savepoint, in the next batch;
    /// answers once the batch is committed.
    pub(super) async fn write<T, F>(&self, _lock: Lock, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> Fn(&'c mut Conn) -> BoxFuture<'c, Result<T>> + Send + Sync + 'static,
    {
        let (tx, rx) = oneshot::channel::<Result<(T, u64)>>();
        let boxed: AsyncJob = Box::new(move |c: &mut Conn| {
            Box::pin(async move {
                let run = std::panic::AssertUnwindSafe(super::count::measure(job(c)))
                    .catch_unwind()
                    .await;
                let (result, statements) = match run {
                    Ok(r) => r,
                    Err(_) => (Err(Error::Internal("a write job panicked".into())), 0),
                };
                answered_by(tx, result, statements)
            })
        });
        self.submit(Job::Async(boxed), rx).await
    }

    /// Runs `job` in place on the writer's thread (rusqlite), in its own savepoint, in
    /// the next batch; answers once the batch is committed. The job counts the
    /// statements it sends in its second argument.
    async fn write_in_place<T, F>(&self, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection, &mut u64) -> Result<T> + Send + 'static,
    {
        self.in_place(job, false).await
    }

    /// As [`Backend::write_in_place`], in a transaction of its own (see `Job::Alone`).
    async fn write_alone<T, F>(&self, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection, &mut u64) -> Result<T> + Send + 'static,
    {
        self.in_place(job, true).await
    }

    async fn in_place<T, F>(&self, job: F, alone: bool) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection, &mut u64) -> Result<T> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel::<Result<(T, u64)>>();
        let boxed: SyncJob = Box::new(move |c: &rusqlite::Connection| {
            let mut statements = 0;
            let run =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(c, &mut statements)));
            let result =
                run.unwrap_or_else(|_| Err(Error::Internal("a write job panicked".into())));
            answered_by(tx, result, statements)
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

    /// An import: in place on the writer's thread (`import`), or through a write job
    /// when the campaign is new or the manifest has calibration keys.
    pub(super) async fn import_manifest(
        &self,
        campaign_name: &str,
        manifest: &crate::domain::import::CheckedManifest,
    ) -> Result<(
        crate::store::catalog::ImportSummary,
        std::collections::HashSet<String>,
    )> {
        let manifest = Arc::new(manifest.clone());
        let campaign = match self.load_campaign(campaign_name).await? {
            Some(c) if !import::needs_general_road(&manifest) => c,
            _ => return self.import_manifest_job(campaign_name, manifest).await,
        };
        let stored = self
            .write_alone(move |c, statements| {
                import::import_manifest(c, statements, &campaign, &manifest)
            })
            .await?;
        self.after_import().await;
        Ok(stored)
    }

    /// A verdict from a validator's queue: in place on the writer's thread, or, for the
    /// refusals that need more lookups, the general road (`record_verdict_job`).
    pub(super) async fn record_verdict(
        &self,
        campaign: &crate::store::catalog::Campaign,
        validator: &crate::store::accounts::User,
        stage: crate::domain::Stage,
        key: &str,
        req: &crate::store::review::VerdictRequest,
        origin: crate::domain::Origin,
    ) -> Result<crate::store::review::Recorded> {
        let (campaign_id, owned_key, owned_req, owned_validator) =
            (campaign.id, key.to_string(), req.clone(), validator.clone());
        let fast = self
            .write_in_place(move |c, statements| {
                let target = review::Target {
                    campaign_id,
                    stage,
                    key: &owned_key,
                    version: None,
                    path: crate::store::review::Path::Queue,
                };
                verdict::record_verdict(
                    c,
                    statements,
                    &target,
                    &owned_validator,
                    &owned_req,
                    crate::clock::now_micros(),
                    origin,
                )
            })
            .await?;
        match fast {
            verdict::Fast::Done(r) => Ok(r),
            verdict::Fast::Elsewhere => {
                self.record_verdict_job(campaign, validator, stage, key, req, origin)
                    .await
            }
        }
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

    pub(super) async fn table_names(&self, c: &mut Conn) -> Result<Vec<String>> {
        Ok(qs(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
             AND name <> '_sqlx_migrations' ORDER BY name",
        )
        .fetch_all(&mut *c)
        .await?)
    }

    pub(super) async fn text_columns(&self, c: &mut Conn) -> Result<Vec<(String, String)>> {
        Ok(qa(
            "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
             WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name <> '_sqlx_migrations'
               AND upper(p.type) = 'TEXT' ORDER BY m.name, p.cid",
        )
        .fetch_all(&mut *c)
        .await?)
    }
}

/// Applies the migrations that have not run yet. Migration 8 rebuilds tables with its
/// own transaction (foreign keys must be off while a referenced table is rebuilt, and
/// that cannot be done inside one); if a process stopped between its commit and sqlx's
/// record of it, the record is written here.
/// The steps of SQLite's plan for `sql` (`EXPLAIN QUERY PLAN`), one line each.
async fn explain(c: &mut Conn, sql: &str, binds: &[i64]) -> Result<Vec<String>> {
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

async fn migrate(c: &mut Conn) -> Result<()> {
    let migrator = sqlx::migrate!("migrations/sqlite");
    let rebuilt: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM sqlite_master m, pragma_table_info(m.name) p
         WHERE m.type = 'table' AND m.name = 'items' AND p.name = 'item_key'",
    )
    .fetch_one(&mut *c)
    .await?;
    let table: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
    )
    .fetch_one(&mut *c)
    .await?;
    if rebuilt > 0 && table > 0 {
        let recorded: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations WHERE version = 8")
                .fetch_one(&mut *c)
                .await?;
        if recorded == 0
            && let Some(m) = migrator.iter().find(|m| m.version == 8)
        {
            tracing::warn!("migration 8 ran but was not recorded: recording it");
            sqlx::query(
                "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
                 VALUES (8, $1, TRUE, $2, -1)",
            )
            .bind(&*m.description)
            .bind(&*m.checksum)
            .execute(&mut *c)
            .await?;
        }
    }
    migrator.run(&mut *c).await?;
    Ok(())
}

async fn run_writer(
    mut rx: mpsc::Receiver<Job>,
    opts: SqliteConnectOptions,
    c: Arc<Counters>,
    m: Arc<Metrics>,
) {
    let mut conn: Option<Conn> = None;
    let mut in_place: Option<rusqlite::Connection> = None;
    let mut jobs: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    let mut sync: Vec<SyncJob> = Vec::with_capacity(MAX_BATCH);
    let mut alone: Vec<SyncJob> = Vec::new();
    let mut batch: Vec<AsyncJob> = Vec::with_capacity(MAX_BATCH);
    while let Some(first) = rx.recv().await {
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
                Job::Async(j) => batch.push(j),
            }
        }
        // Each job that runs alone is a batch of one, after the others in place.
        let mut runs: Vec<Vec<SyncJob>> = Vec::with_capacity(1 + alone.len());
        if !sync.is_empty() {
            runs.push(std::mem::take(&mut sync));
        }
        runs.extend(alone.drain(..).map(|j| vec![j]));
        for mut sync in runs {
            observe(&c, &m, sync.len());
            if in_place.is_none() {
                match open_in_place(&opts) {
                    Ok(fresh) => in_place = Some(fresh),
                    Err(e) => {
                        tracing::error!(error = %e, "the database writer cannot connect");
                        // Dropping the jobs answers them: nothing was stored.
                        sync.clear();
                    }
                }
            }
            if let Some(db) = in_place.as_ref()
                && let Err(e) = run_in_place(db, &mut sync, &c, &m)
            {
                c.failed.fetch_add(1, Ordering::Relaxed);
                m.failed_commits.inc();
                tracing::error!(error = %e, "a write batch failed: its connection is closed");
                in_place = None;
            }
        }
        if batch.is_empty() {
            continue;
        }
        observe(&c, &m, batch.len());
        if conn.is_none() {
            match opts.clone().connect().await {
                Ok(fresh) => conn = Some(fresh),
                Err(e) => {
                    tracing::error!(error = %e, "the database writer cannot connect");
                    batch.clear();
                    continue;
                }
            }
        }
        let Some(db) = conn.as_mut() else {
            batch.clear();
            continue;
        };
        match run_batch(db, &mut batch, &c, &m).await {
            Ok(()) => {}
            Err(e) => {
                c.failed.fetch_add(1, Ordering::Relaxed);
                m.failed_commits.inc();
                tracing::error!(error = %e, "a write batch failed: its connection is closed");
                if let Some(old) = conn.take() {
                    let _ = old.close().await;
                }
            }
        }
        batch.clear();
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

/// The writer's connection for its in-place jobs, with the settings of sqlx's (see
/// [`options`]): the same file, used by the same thread, never at the same time.
fn open_in_place(opts: &SqliteConnectOptions) -> rusqlite::Result<rusqlite::Connection> {
    let db = rusqlite::Connection::open(opts.get_filename())?;
    db.busy_timeout(Duration::from_secs(10))?;
    db.execute_batch(
        "PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
         PRAGMA wal_autocheckpoint = 1000; PRAGMA journal_size_limit = 67108864;
         PRAGMA cache_size = -4000; PRAGMA temp_store = MEMORY;",
    )?;
    db.set_prepared_statement_cache_capacity(64);
    Ok(db)
}

/// Runs a transaction control statement, prepared once.
fn control(db: &rusqlite::Connection, sql: &str) -> rusqlite::Result<()> {
    db.prepare_cached(sql)?.execute([]).map(|_| ())
}

/// One batch of in-place jobs, as [`run_batch`] does it: BEGIN IMMEDIATE, each job in
/// its savepoint, COMMIT, then the answers. A batch of one job needs no savepoint: a
/// refused job rolls the transaction back.
fn run_in_place(
    db: &rusqlite::Connection,
    batch: &mut Vec<SyncJob>,
    c: &Counters,
    m: &Metrics,
) -> rusqlite::Result<()> {
    if let Err(e) = db.execute_batch("BEGIN IMMEDIATE") {
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
            let (ok, reply) = job(db);
            replies.push(reply);
            refused = !ok;
            continue;
        }
        if let Err(e) = control(db, "SAVEPOINT job") {
            broken = Some(e);
            continue;
        }
        let (ok, reply) = job(db);
        replies.push(reply);
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
                unavailable: verdict::cannot_write(&e),
                message: e.to_string(),
            };
            let _ = db.execute_batch("ROLLBACK");
            committed(c, m, took, replies, Err(failure));
            Err(e)
        }
    }
}

/// One batch: BEGIN IMMEDIATE, each job in its savepoint, COMMIT, then the answers.
/// The end of one job's savepoint and the start of the next go to SQLite in one call
/// (`RELEASE job; SAVEPOINT job`): each call is a round trip to the connection's
/// thread, and these are most of the writer's time. An error here is the connection's
/// (not a job's): the batch is answered with it and the caller closes the connection.
async fn run_batch(
    db: &mut Conn,
    batch: &mut Vec<AsyncJob>,
    c: &Counters,
    m: &Metrics,
) -> std::result::Result<(), sqlx::Error> {
    let control = |sql: &'static str| sqlx::raw_sql(sqlx::AssertSqlSafe(sql));
    if let Err(e) = control("BEGIN IMMEDIATE; SAVEPOINT job")
        .execute(&mut *db)
        .await
    {
        batch.clear();
        return Err(e);
    }
    let mut replies: Vec<Reply> = Vec::with_capacity(batch.len());
    let mut broken: Option<sqlx::Error> = None;
    let jobs = batch.len();
    for (i, job) in batch.drain(..).enumerate() {
        if broken.is_some() {
            // Not run: dropping it answers "nothing was stored".
            continue;
        }
        let (ok, reply) = job(db).await;
        let last = i + 1 == jobs;
        let end = match (ok, last) {
            (true, true) => "RELEASE job",
            (true, false) => "RELEASE job; SAVEPOINT job",
            (false, true) => "ROLLBACK TO job; RELEASE job",
            (false, false) => "ROLLBACK TO job; RELEASE job; SAVEPOINT job",
        };
        replies.push(reply);
        if let Err(e) = control(end).execute(&mut *db).await {
            broken = Some(e);
        }
    }
    let started = Instant::now();
    let outcome = match broken {
        Some(e) => Err(e),
        None => control("COMMIT").execute(&mut *db).await.map(|_| ()),
    };
    let took = started.elapsed();
    match outcome {
        Ok(()) => {
            committed(c, m, took, replies, Ok(()));
            Ok(())
        }
        Err(e) => {
            let failure = CommitFailure::of(&e);
            let _ = control("ROLLBACK").execute(&mut *db).await;
            committed(c, m, took, replies, Err(failure));
            Err(e)
        }
    }
}

/// Parameters in one bulk statement: sqlx finds each bound parameter by name among
/// all of the statement's, so a statement with n parameters costs n² comparisons
/// (100,000 clips in 30,000-parameter statements took 90 s); a hundred keep it small.
pub(super) const MAX_PARAMS: usize = 100;

/// SQLite has no data-modifying `WITH`: a verdict inserts its decision, then updates
/// its item.
pub(super) const ONE_STATEMENT_WRITES: bool = false;

/// Opens the shared SQL of `store/sql/` for this backend.
macro_rules! shared {
    ($($m:ident),*) => {
        $(
            #[allow(clippy::too_many_arguments)]
            mod $m {
                #[allow(unused_imports)]
                use super::{Backend, Conn, Db, MAX_PARAMS, ONE_STATEMENT_WRITES, q, qa, qs};
                include!(concat!("sql/", stringify!($m), ".rs"));
            }
        )*
    };
}

shared!(
    gates,
    base,
    misc,
    accounts,
    catalog,
    review,
    calibration,
    records,
    sessions,
    stats,
    study
);
