//! SQLite, through rusqlite (sqlx only applies the migrations): reads on read-only
//! connections, in place on the reading request's thread ([`Readers`]); writes through
//! one writer thread that owns the only write connection and commits the jobs waiting
//! together.
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
use futures_util::future::LocalBoxFuture;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteJournalMode, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

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
type SyncJob = Box<dyn FnOnce(&mut Conn) -> (bool, Reply) + Send>;

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

pub(crate) use tx::Conn;

pub(crate) struct Backend {
    readers: Readers,
    long_reads: tokio::sync::Semaphore,
    jobs: mpsc::Sender<Job>,
    counters: Arc<Counters>,
}

/// Read-only connections (rusqlite), used in place on the thread of the request that
/// reads: a read is a few statements answered from the page cache, microseconds, where a
/// hop to a driver's thread and back costs more than the read. At most [`IDLE_READERS`]
/// are kept; more are opened while more requests read at once (one per runtime thread
/// that reads, and one per long read, see [`long`]).
struct Readers {
    file: std::path::PathBuf,
    idle: std::sync::Mutex<Vec<Conn>>,
}

/// Read connections kept open between reads.
const IDLE_READERS: usize = 8;

/// A read connection taken from [`Readers`]; back to them when dropped, with the
/// statements it sent counted for the request.
pub(crate) struct Reader<'a> {
    conn: Option<Conn>,
    home: &'a Readers,
}

impl Readers {
    fn take(&self) -> Result<Reader<'_>> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let conn = match idle {
            Some(c) => c,
            None => open_reader(&self.file).map_err(tx::error)?,
        };
        Ok(Reader {
            conn: Some(conn),
            home: self,
        })
    }
}

/// A read-only connection to `file`. It waits at most a second for a lock (a reader of a
/// WAL database waits only while the log is being recovered), in place.
fn open_reader(file: &Path) -> rusqlite::Result<Conn> {
    let db = rusqlite::Connection::open_with_flags(
        file,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    db.busy_timeout(Duration::from_secs(1))?;
    // Readers keep a small cache of their own: the OS's page cache holds the file for
    // all of them (eight 16 MB caches were most of the server's memory, 87 MiB after a
    // load that 1 MB caches serve in 37 MiB at the same rate).
    db.execute_batch("PRAGMA cache_size = -1000;")?;
    db.set_prepared_statement_cache_capacity(128);
    Ok(Conn { db, statements: 0 })
}

impl std::ops::Deref for Reader<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn
            .as_ref()
            .unwrap_or_else(|| unreachable!("a reader holds its connection until dropped"))
    }
}

impl std::ops::DerefMut for Reader<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        self.conn
            .as_mut()
            .unwrap_or_else(|| unreachable!("a reader holds its connection until dropped"))
    }
}

impl Drop for Reader<'_> {
    fn drop(&mut self) {
        if let Some(mut c) = self.conn.take() {
            super::count::add(std::mem::take(&mut c.statements));
            let mut idle = self.home.idle.lock().unwrap_or_else(|p| p.into_inner());
            if idle.len() < IDLE_READERS {
                idle.push(c);
            }
        }
    }
}

/// Runs a read that may take long (one that walks a campaign: statistics, exports, the
/// dump) without holding up the runtime's other requests: on a multi-threaded runtime the
/// thread hands its other tasks to another thread while the read runs
/// (`block_in_place`); at most [`LONG_READS`] run at once. On a single-threaded runtime
/// (a test, a command) it runs in place.
pub(super) async fn long<F: std::future::Future>(
    limit: &tokio::sync::Semaphore,
    read: F,
) -> Result<F::Output> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let _permit = limit
        .acquire()
        .await
        .map_err(|_| Error::Internal("the long reads are closed".into()))?;
    Ok(match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => {
            tokio::task::block_in_place(|| Handle::current().block_on(read))
        }
        _ => read.await,
    })
}

/// Long reads running at once (as many as the read connections kept).
const LONG_READS: usize = IDLE_READERS;

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
        let readers = Readers {
            file: opts.get_filename().to_path_buf(),
            idle: std::sync::Mutex::new(Vec::with_capacity(IDLE_READERS)),
        };
        // The first read connection opens now: a file that cannot be read is an error
        // at start, not at the first request.
        drop(readers.take()?);
        let (jobs, rx) = mpsc::channel::<Job>(4096);
        let counters = Arc::new(Counters::default());
        // The writer has a thread of its own: its jobs run in place and block it while
        // they run.
        let (wc, wm) = (counters.clone(), metrics.clone());
        std::thread::Builder::new()
            .name("tandem-writer".into())
            .spawn(move || {
                let mut rx = rx;
                restarting(&wm, || run_writer(&mut rx, &opts, &wc, &wm));
            })
            .map_err(|e| Error::fault("cannot start the database writer", e))?;
        Ok(Backend {
            readers,
            long_reads: tokio::sync::Semaphore::new(LONG_READS),
            jobs,
            counters,
        })
    }

    /// The database's file.
    pub(super) fn file(&self) -> &Path {
        &self.readers.file
    }

    /// A connection for reading, used in place (see [`Readers`]).
    pub(super) fn reader(&self) -> Result<Reader<'_>> {
        self.readers.take()
    }

    /// Runs `read` as a long read (see [`long`]).
    pub(super) async fn long<F: std::future::Future>(&self, read: F) -> Result<F::Output> {
        long(&self.long_reads, read).await
    }

    /// Runs `job` on the writer's connection as a [`super::db::Tx`], in its own
    /// savepoint, in the next batch (an import: in a transaction of its own, see
    /// `Job::Alone`); answers once its batch is committed. The job's future is polled
    /// once, on the writer's thread: it never waits (rusqlite answers in place), so it
    /// holds the writer only while it runs.
    pub(super) async fn write_tx<T, F>(&self, lock: Lock, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut Conn) -> LocalBoxFuture<'c, Result<T>> + Send + 'static,
    {
        self.tx_job(job, lock == Lock::Import).await
    }

    async fn tx_job<T, F>(&self, job: F, alone: bool) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut Conn) -> LocalBoxFuture<'c, Result<T>> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel::<Result<(T, u64)>>();
        let boxed: SyncJob = Box::new(move |c: &mut Conn| {
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

    /// The steps of SQLite's plan for `sql` (`EXPLAIN QUERY PLAN`), one line each, its
    /// parameters `$1`, `$2`, ... bound to `binds`.
    pub(super) async fn explain(&self, sql: &str, binds: &[i64]) -> Result<Vec<String>> {
        let reader = self.reader()?;
        let mut st = reader
            .db
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .map_err(tx::error)?;
        for (i, b) in binds.iter().enumerate() {
            st.raw_bind_parameter(i + 1, *b).map_err(tx::error)?;
        }
        let mut rows = st.raw_query();
        let mut steps = Vec::new();
        while let Some(r) = rows.next().map_err(tx::error)? {
            steps.push(r.get::<_, String>("detail").map_err(tx::error)?);
        }
        Ok(steps)
    }

    pub(super) async fn ping(&self) -> Result<()> {
        let reader = self.reader()?;
        reader
            .db
            .prepare_cached("SELECT 1")
            .and_then(|mut st| st.query_row([], |r| r.get::<_, i64>(0)))
            .map_err(tx::error)?;
        Ok(())
    }

    pub(super) async fn close(&self) {
        self.readers
            .idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    pub(super) async fn backup(&self, _url: &str, out: &Path) -> Result<()> {
        let path = out
            .to_str()
            .ok_or_else(|| Error::field("out", "the path is not UTF-8"))?;
        let reader = self.reader()?;
        self.long(async {
            reader
                .db
                .execute("VACUUM INTO ?1", [path])
                .map(|_| ())
                .map_err(tx::error)
        })
        .await?
    }
}

/// Applies the migrations that have not run yet. Migrations 8 and 20 rebuild tables with
/// their own transaction (foreign keys must be off while a referenced table is rebuilt,
/// and that cannot be done inside one); if a process stopped between such a commit and
/// sqlx's record of it, the record is written here.
async fn migrate(c: &mut SqliteConnection) -> Result<()> {
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

/// Runs the writer's loop again each time it panics, until its channel closes. A panic
/// drops the jobs it held (their requests are answered 503: nothing of them was
/// committed, the connection's transaction rolls back as it closes) and the jobs waiting
/// in the channel are run by the next round, so the writer never stays stopped.
fn restarting(m: &Metrics, mut round: impl FnMut()) {
    while std::panic::catch_unwind(std::panic::AssertUnwindSafe(&mut round)).is_err() {
        m.writer_restarts.inc();
        tracing::error!("the database writer stopped on a panic and starts again");
        // A cause that lasts (a panic at every start) costs a round a tenth of a second.
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn run_writer(
    rx: &mut mpsc::Receiver<Job>,
    opts: &SqliteConnectOptions,
    c: &Counters,
    m: &Metrics,
) {
    let mut conn: Option<Conn> = None;
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
            observe(c, m, batch.len());
            if conn.is_none() {
                match open_writer(opts) {
                    Ok(fresh) => conn = Some(fresh),
                    Err(e) => {
                        tracing::error!(error = %e, "the database writer cannot connect");
                        // Dropping the jobs answers them: nothing was stored.
                        batch.clear();
                    }
                }
            }
            if let Some(db) = conn.as_mut()
                && let Err(e) = run_batch(db, &mut batch, c, m)
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
    /// The revocation stamp, read now, in place.
    pub(super) fn revocation_stamp_now(&self) -> Result<i64> {
        self.reader()?
            .db
            .prepare_cached("SELECT stamp FROM revocation_stamp WHERE id = 1")
            .and_then(|mut st| st.query_row([], |r| r.get::<_, i64>(0)))
            .map_err(tx::error)
    }
}

/// The writer's connection, with the settings of the read connections (see
/// [`options`]): the same file.
fn open_writer(opts: &SqliteConnectOptions) -> rusqlite::Result<Conn> {
    let db = rusqlite::Connection::open(opts.get_filename())?;
    db.busy_timeout(Duration::from_secs(10))?;
    db.execute_batch(
        "PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
         PRAGMA wal_autocheckpoint = 1000; PRAGMA journal_size_limit = 67108864;
         PRAGMA cache_size = -4000; PRAGMA temp_store = MEMORY;",
    )?;
    db.set_prepared_statement_cache_capacity(128);
    Ok(Conn { db, statements: 0 })
}

/// Runs a transaction control statement, prepared once (`execute_batch` compiled each
/// BEGIN and COMMIT anew: 3,400 instructions a batch).
fn control(db: &rusqlite::Connection, sql: &str) -> rusqlite::Result<()> {
    db.prepare_cached(sql)?.execute([]).map(|_| ())
}

/// One batch: BEGIN IMMEDIATE, each job in its savepoint, COMMIT, then the answers. A
/// batch of one job needs no savepoint: a refused job rolls the transaction back. An
/// error here is the connection's (not a job's): the batch is answered with it and the
/// caller closes the connection.
fn run_batch(
    wc: &mut Conn,
    batch: &mut Vec<SyncJob>,
    c: &Counters,
    m: &Metrics,
) -> rusqlite::Result<()> {
    if let Err(e) = control(&wc.db, "BEGIN IMMEDIATE") {
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
        None => control(db, "COMMIT"),
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

#[cfg(test)]
mod tests {
    use super::{long, restarting};
    use std::time::{Duration, Instant};

    /// A writer's round that panics is run again (and counted), until one returns.
    #[test]
    fn a_writer_that_panics_starts_again() {
        let m = crate::metrics::StoreMetrics::default();
        let mut rounds = 0;
        restarting(&m, || {
            rounds += 1;
            assert!(
                rounds > 2,
                "round {rounds} fails, as a panic on the writer would"
            );
        });
        assert_eq!(rounds, 3);
        assert_eq!(m.writer_restarts.get(), 2);
    }

    /// A long read on a runtime of one worker thread: the runtime's other tasks go on
    /// while it runs (its thread handed them on), where a read in place would hold them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_long_read_leaves_the_runtime_to_the_other_requests() {
        let limit = std::sync::Arc::new(tokio::sync::Semaphore::new(2));
        let (began, begun) = tokio::sync::oneshot::channel::<()>();
        // On the one worker, as a request's task is (the test's body is not a worker).
        let read = tokio::spawn(async move {
            long(&limit, async {
                let _ = began.send(());
                std::thread::sleep(Duration::from_millis(600));
                7
            })
            .await
        });
        let _ = begun.await;
        let started = Instant::now();
        let other = tokio::spawn(async move { started.elapsed() });
        let other = other.await.unwrap_or(Duration::MAX);
        assert!(
            other < Duration::from_millis(300),
            "the other task waited {other:?} for the long read"
        );
        assert_eq!(read.await.ok().and_then(Result::ok), Some(7));
    }

    /// On a single-threaded runtime (a test, a command) a long read runs in place, and
    /// the limit holds.
    #[tokio::test]
    async fn a_long_read_on_one_thread_runs_in_place_under_its_limit() {
        let limit = tokio::sync::Semaphore::new(1);
        assert_eq!(long(&limit, async { 3 }).await.ok(), Some(3));
        let held = limit.acquire().await.ok();
        let waiting = tokio::time::timeout(Duration::from_millis(50), long(&limit, async { 4 }));
        assert!(waiting.await.is_err(), "a long read ran past the limit");
        drop(held);
        assert_eq!(long(&limit, async { 5 }).await.ok(), Some(5));
    }
}
