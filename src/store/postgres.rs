//! PostgreSQL: a read pool and a write pool (a connection waiting for a lock never
//! holds one that reads need), and writes in parallel. A verdict-class write takes a
//! shared advisory lock and the row lock of its item (`SELECT ... FOR UPDATE`), so
//! verdicts on different items commit at the same time, from any number of servers;
//! a structural write (an import, a change of pair or pool, settings) takes the same
//! advisory lock exclusively, only for its short write phase. A serialization failure
//! or a deadlock is retried; a unique violation is a conflict.

use super::Lock;
use super::db::{Cell, Col, Dialect};
use super::deadline;
use super::stamp::{self, Listened};
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::metrics::StoreMetrics as Metrics;
use futures_util::future::BoxFuture;
use sqlx::ConnectOptions;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgListener, PgPool, PgPoolOptions};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) type Db = sqlx::Postgres;
pub(super) type Conn = PgConnection;

/// The advisory lock between verdict-class writes (shared) and structural writes
/// (exclusive): any number, Tandem's own.
const STRUCTURE_LOCK: i64 = 0x007A_4DE3;
/// Attempts of a write that meets a serialization failure or a deadlock.
const ATTEMPTS: usize = 4;

pub(crate) struct Backend {
    read: PgPool,
    write: PgPool,
    metrics: Arc<Metrics>,
}

/// Builds a statement and counts it.
pub(super) fn q<'q>(
    sql: impl sqlx::SqlSafeStr,
) -> sqlx::query::Query<'q, Db, <Db as sqlx::Database>::Arguments> {
    super::count::add(1);
    sqlx::query(sql)
}

pub(super) fn qs<'q, T>(
    sql: impl sqlx::SqlSafeStr,
) -> sqlx::query::QueryScalar<'q, Db, T, <Db as sqlx::Database>::Arguments>
where
    (T,): for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>,
{
    super::count::add(1);
    sqlx::query_scalar(sql)
}

/// The lines of PostgreSQL's plan for `sql` (`EXPLAIN`).
async fn explain_on(c: &mut Conn, sql: &str, binds: &[i64]) -> Result<Vec<String>> {
    let mut query = qs::<String>(sqlx::AssertSqlSafe(format!("EXPLAIN {sql}")));
    for b in binds {
        query = query.bind(*b);
    }
    Ok(query.fetch_all(&mut *c).await?)
}

/// A connection that did not finish its work by the request's deadline: closed (it may
/// be stuck in a statement), and the request told so.
pub(super) fn stuck(conn: &mut sqlx::pool::PoolConnection<Db>) -> Error {
    conn.close_on_drop();
    deadline::late()
}

/// Whether a failed write may simply be tried again.
fn retryable(e: &Error) -> bool {
    match e {
        Error::Db(e) => e
            .as_database_error()
            .and_then(|d| d.code())
            .is_some_and(|c| c == "40001" || c == "40P01"),
        _ => false,
    }
}

impl Backend {
    pub(super) async fn open(url: &str, metrics: Arc<Metrics>) -> Result<Backend> {
        let opts = PgConnectOptions::from_str(url)?
            .log_statements(tracing::log::LevelFilter::Trace)
            .application_name("tandem");
        let pool = |n: u32| {
            PgPoolOptions::new()
                .max_connections(n)
                .min_connections(1)
                .test_before_acquire(false)
                // A bounded wait: past it (the database is gone, or every connection
                // is held far longer than a request takes) the request is answered
                // 503 with Retry-After instead of hanging.
                .acquire_timeout(Duration::from_secs(10))
        };
        // Writes are short (five round trips a verdict): eight connections keep the
        // cores busy, and each further server on the same database adds only eight
        // backends that compete for them.
        let write = pool(8).connect_with(opts.clone()).await?;
        sqlx::migrate!("migrations/postgres").run(&write).await?;
        let read = pool(16).connect_with(opts).await?;
        Ok(Backend {
            read,
            write,
            metrics,
        })
    }

    /// Starts listening for the revocation stamp's notifications (`store::stamp`), on a
    /// connection of the read pool, for as long as the pool is open.
    pub(super) fn listen_for_stamps(&self, listened: Arc<Listened>, clock: Clock) {
        tokio::spawn(listen(self.read.clone(), listened, clock));
    }

    /// A connection for reading.
    pub(super) async fn read(&self) -> Result<sqlx::pool::PoolConnection<Db>> {
        self.take(&self.read, "read").await
    }

    /// A connection of `pool` (`name` in the metrics), waited for until the request's
    /// deadline.
    async fn take(
        &self,
        pool: &PgPool,
        name: &'static str,
    ) -> Result<sqlx::pool::PoolConnection<Db>> {
        let asked = Instant::now();
        let c = deadline::bounded(async { Ok(pool.acquire().await?) }).await?;
        self.metrics.waited(name, asked.elapsed());
        Ok(c)
    }

    /// Runs `job` in a transaction of its own on a connection of the write pool,
    /// holding the locks its kind needs; retries it on a serialization failure or a
    /// deadlock. A connection whose COMMIT or ROLLBACK failed is closed.
    pub(super) async fn write<T, F>(&self, lock: Lock, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> Fn(&'c mut Conn) -> BoxFuture<'c, Result<T>> + Send + Sync + 'static,
    {
        let begin: &'static str = match lock {
            Lock::Rows => "BEGIN",
            Lock::Item => "BEGIN; SELECT pg_advisory_xact_lock_shared(8015331)",
            Lock::Structure | Lock::Import => "BEGIN; SELECT pg_advisory_xact_lock(8015331)",
        };
        debug_assert_eq!(STRUCTURE_LOCK, 8_015_331);
        // A verdict-class write is short: it ends by the request's deadline, and its
        // connection, which may be stuck in a statement, is closed then. A structural
        // write may take long (an import): its statements are bounded by its route.
        let short = matches!(lock, Lock::Item | Lock::Rows);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut conn = self.take(&self.write, "write").await?;
            let (tried, at_commit) = if short {
                let done =
                    tokio::time::timeout_at(deadline::at(), self.attempt(&mut conn, begin, &job))
                        .await;
                match done {
                    Ok(tried) => tried,
                    Err(_) => return Err(stuck(&mut conn)),
                }
            } else {
                self.attempt(&mut conn, begin, &job).await
            };
            match tried {
                Ok(v) => return Ok(v),
                Err(e) if retryable(&e) && attempt < ATTEMPTS => {
                    tracing::debug!(attempt, "a write met a serialization failure: again");
                    self.metrics.write_retries.inc();
                }
                Err(e) => {
                    if at_commit {
                        self.metrics.failed_commits.inc();
                    }
                    return Err(e);
                }
            }
        }
    }

    /// One attempt of a write: BEGIN (with its lock), the job, COMMIT; a connection
    /// whose BEGIN, COMMIT or ROLLBACK failed is closed. Answers whether it was the
    /// COMMIT that failed.
    async fn attempt<T, F>(
        &self,
        conn: &mut sqlx::pool::PoolConnection<Db>,
        begin: &'static str,
        job: &F,
    ) -> (Result<T>, bool)
    where
        F: for<'c> Fn(&'c mut Conn) -> BoxFuture<'c, Result<T>> + Send + Sync + 'static,
    {
        if let Err(e) = sqlx::raw_sql(sqlx::AssertSqlSafe(begin))
            .execute(&mut **conn)
            .await
        {
            conn.close_on_drop();
            return (Err(e.into()), false);
        }
        let (result, statements) = super::count::measure(job(conn)).await;
        match result {
            Ok(v) => {
                let started = Instant::now();
                let committed = sqlx::raw_sql("COMMIT").execute(&mut **conn).await;
                self.metrics
                    .commit_seconds
                    .observe(started.elapsed().as_secs_f64());
                match committed {
                    Ok(_) => {
                        super::count::add(statements);
                        (Ok(v), false)
                    }
                    Err(e) => {
                        let _ = sqlx::raw_sql("ROLLBACK").execute(&mut **conn).await;
                        conn.close_on_drop();
                        (Err(e.into()), true)
                    }
                }
            }
            Err(e) => {
                if sqlx::raw_sql("ROLLBACK")
                    .execute(&mut **conn)
                    .await
                    .is_err()
                {
                    conn.close_on_drop();
                }
                (Err(e), false)
            }
        }
    }

    /// A write as every write is written (generic over [`super::db::Tx`]): on
    /// PostgreSQL, the connection is the transaction; an import holds the structural
    /// lock.
    pub(super) async fn write_tx<T, F>(&self, lock: Lock, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> Fn(&'c mut Conn) -> BoxFuture<'c, Result<T>> + Send + Sync + 'static,
    {
        self.write(lock, job).await
    }

    /// Brings the planner's statistics up to date after a bulk write. Without it, the
    /// planner still believes a freshly imported campaign's tables are nearly empty and
    /// finds an item by scanning every item of its stage (26 ms, not 0.05 ms, on 120,000
    /// clips) until autovacuum gets to it. `ANALYZE` reads a sample and blocks neither
    /// reads nor writes.
    pub(super) async fn refresh_statistics(&self) -> Result<()> {
        let mut c = self.take(&self.write, "write").await?;
        q("ANALYZE items, clips, clip_versions, questions, tasks")
            .execute(&mut *c)
            .await?;
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
        self.write.close().await;
    }

    /// `pg_dump --format=custom` of the database, its password (if the URL has one)
    /// given through `PGPASSWORD` in pg_dump's own environment, never on its command
    /// line (which every user of the machine can read in `ps`).
    pub(super) async fn backup(&self, database_url: &str, out: &Path) -> Result<()> {
        let (url, password) = crate::config::split_password(database_url);
        let command = format!(
            "pg_dump --format=custom --file {} \"$DATABASE_URL\"",
            out.display()
        );
        let mut dump = tokio::process::Command::new("pg_dump");
        dump.args(["--format=custom", "--no-owner", "--file"])
            .arg(out)
            .arg(&url)
            .env_remove("PGPASSWORD");
        if let Some(p) = &password {
            dump.env("PGPASSWORD", p);
        }
        let status = dump.status().await.map_err(|e| {
            Error::io(
                format!(
                    "cannot run pg_dump (install PostgreSQL's client programs, or run: {command})"
                ),
                e,
            )
        })?;
        if status.success() {
            Ok(())
        } else {
            let _ = std::fs::remove_file(out);
            Err(Error::Invalid(format!(
                "pg_dump failed ({status}); the command was: {command}"
            )))
        }
    }
}

/// Parameters in one bulk statement (PostgreSQL takes up to 65,535).
pub(super) const MAX_PARAMS: usize = 20_000;

/// A value of a PostgreSQL row, by its type (every column Tandem reads is one of these).
fn cell(row: &sqlx::postgres::PgRow, col: Col<'_>) -> Result<Cell> {
    use sqlx::{Decode, Row, TypeInfo, ValueRef};
    let raw = match col {
        Col::Name(n) => row.try_get_raw(n),
        Col::Index(i) => row.try_get_raw(i),
    }?;
    if raw.is_null() {
        return Ok(Cell::Null);
    }
    let ty = raw.type_info().name().to_string();
    let bad = |e: sqlx::error::BoxDynError| Error::fault(format!("column {col}"), e);
    Ok(match ty.as_str() {
        "INT8" => Cell::Int(<i64 as Decode<Db>>::decode(raw).map_err(bad)?),
        "INT4" => Cell::Int(i64::from(<i32 as Decode<Db>>::decode(raw).map_err(bad)?)),
        "INT2" => Cell::Int(i64::from(<i16 as Decode<Db>>::decode(raw).map_err(bad)?)),
        "FLOAT8" => Cell::Real(<f64 as Decode<Db>>::decode(raw).map_err(bad)?),
        "FLOAT4" => Cell::Real(f64::from(<f32 as Decode<Db>>::decode(raw).map_err(bad)?)),
        "BOOL" => Cell::Bool(<bool as Decode<Db>>::decode(raw).map_err(bad)?),
        "TEXT" | "VARCHAR" | "NAME" | "BPCHAR" => {
            Cell::Text(<String as Decode<Db>>::decode(raw).map_err(bad)?)
        }
        "BYTEA" => Cell::Blob(<Vec<u8> as Decode<Db>>::decode(raw).map_err(bad)?),
        other => {
            return Err(Error::Internal(format!(
                "{col}: PostgreSQL type {other} is not read by the store"
            )));
        }
    })
}

crate::store::db::sqlx_tx!(Conn, Db, Dialect::Postgres, cell, MAX_PARAMS);

/// The listener of the revocation stamp: listens on one connection after another, with a
/// growing pause after each failure (100 ms to 5 s), until the pool closes.
async fn listen(pool: PgPool, listened: Arc<Listened>, clock: Clock) {
    let mut pause = Duration::from_millis(100);
    loop {
        let lost = listen_once(&pool, &listened, &clock).await;
        listened.down();
        if pool.is_closed() {
            return;
        }
        match lost {
            // It worked, then its connection closed: try again soon.
            Ok(()) => pause = Duration::from_millis(100),
            Err(e) => {
                tracing::warn!(error = %e, "not listening for revocations: each request reads the stamp");
                pause = (pause * 2).min(Duration::from_secs(5));
            }
        }
        tokio::time::sleep(pause).await;
    }
}

/// Listens on one connection: `Ok` when the connection closed, `Err` when it failed or
/// did not answer in time. The listener's row is made after `LISTEN` succeeds, with the
/// stamp as it is then, so nothing committed since is missed.
async fn listen_once(pool: &PgPool, listened: &Listened, clock: &Clock) -> Result<()> {
    let mut l = PgListener::connect_with(pool).await?;
    l.eager_reconnect(false);
    sqlx::raw_sql("SET application_name = 'tandem-stamp'")
        .execute(&mut l)
        .await?;
    l.listen(stamp::CHANNEL).await?;
    // Random, so that servers never share a row.
    let id = crate::auth::random_id(16)?;
    sqlx::query(
        "DELETE FROM stamp_listeners \
         WHERE lease_until < (extract(epoch FROM clock_timestamp()) * 1e6)::bigint - 3600000000",
    )
    .execute(&mut l)
    .await?;
    take_in(&mut l, &id, listened, clock, true).await?;
    tracing::debug!("listening for revocations");
    loop {
        match tokio::time::timeout(stamp::HEARTBEAT, l.try_recv()).await {
            // A notification or a quiet second: the stamp taken in, the lease renewed.
            Ok(Ok(Some(_))) | Err(_) => take_in(&mut l, &id, listened, clock, false).await?,
            Ok(Ok(None)) => return Ok(()),
            Ok(Err(e)) => return Err(e.into()),
        }
    }
}

/// Reads the stamp on the listener's own connection and records, in the listener's row,
/// that it has taken it in and until when it trusts it; then trusts it here, until a
/// lease after the moment it asked (so never longer than the row says).
async fn take_in(
    l: &mut PgListener,
    id: &str,
    listened: &Listened,
    clock: &Clock,
    first: bool,
) -> Result<()> {
    let lease = i64::try_from(stamp::LEASE.as_micros()).unwrap_or(i64::MAX);
    let asked = clock.instant();
    let statement = if first {
        "INSERT INTO stamp_listeners (id, seen, lease_until) \
         SELECT $1, stamp, (extract(epoch FROM clock_timestamp()) * 1e6)::bigint + $2 \
         FROM revocation_stamp WHERE id = 1 RETURNING seen"
    } else {
        "UPDATE stamp_listeners \
         SET seen = (SELECT stamp FROM revocation_stamp WHERE id = 1), \
             lease_until = (extract(epoch FROM clock_timestamp()) * 1e6)::bigint + $2 \
         WHERE id = $1 RETURNING seen"
    };
    let read = sqlx::query_scalar::<_, i64>(statement)
        .bind(id)
        .bind(lease)
        .fetch_optional(&mut *l);
    match tokio::time::timeout(stamp::HEARTBEAT_TIMEOUT, read).await {
        Ok(Ok(Some(seen))) => {
            listened.raise(seen);
            listened.alive_from(asked);
            Ok(())
        }
        Ok(Ok(None)) => Err(Error::Unavailable(
            "the stamp listener's row is gone".into(),
        )),
        Ok(Err(e)) => Err(e.into()),
        Err(_) => Err(Error::Unavailable(
            "the revocation stamp's listener did not answer in time".into(),
        )),
    }
}

impl Backend {
    /// After a write that raised the revocation stamp to `stamp` committed: waits until
    /// every listener whose lease runs has taken it in (milliseconds), or until every
    /// lease granted before the commit has run out (at most `stamp::LEASE`, also when the
    /// listeners' rows cannot be read): then no server uses an older stamp.
    pub(super) async fn until_taken_in(&self, stamp: i64) {
        let deadline = Instant::now() + stamp::LEASE + Duration::from_millis(250);
        let mut pause = Duration::from_millis(1);
        // The listeners found behind at some moment: whether each answered or lapsed.
        let mut waited_for: Vec<String> = Vec::new();
        while Instant::now() < deadline {
            let behind = sqlx::query_scalar::<_, String>(
                "SELECT id FROM stamp_listeners WHERE seen < $1 \
                 AND lease_until > (extract(epoch FROM clock_timestamp()) * 1e6)::bigint",
            )
            .bind(stamp)
            .fetch_all(&self.read)
            .await;
            match behind {
                Ok(ids) if ids.is_empty() => {
                    if !waited_for.is_empty() && self.lapsed(stamp, &waited_for).await {
                        self.metrics.stamp_lease_waits.inc();
                    }
                    return;
                }
                Ok(ids) => {
                    for id in ids {
                        if !waited_for.contains(&id) {
                            waited_for.push(id);
                        }
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read the stamp's listeners: waiting out their leases");
                    tokio::time::sleep_until(deadline.into()).await;
                    break;
                }
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(20));
        }
        self.metrics.stamp_lease_waits.inc();
    }

    /// Whether one of these listeners let its lease run out without taking `stamp` in.
    async fn lapsed(&self, stamp: i64, ids: &[String]) -> bool {
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM stamp_listeners WHERE seen < $1 AND id = ANY($2)",
        )
        .bind(stamp)
        .bind(ids)
        .fetch_one(&self.read)
        .await
        .map_or(true, |n| n > 0)
    }
}
