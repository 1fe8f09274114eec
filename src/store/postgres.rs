//! PostgreSQL: a read pool and a write pool (a connection waiting for a lock never
//! holds one that reads need), and writes in parallel. A verdict-class write takes a
//! shared advisory lock and the row lock of its item (`SELECT ... FOR UPDATE`), so
//! verdicts on different items commit at the same time, from any number of servers;
//! a structural write (an import, a change of pair or pool, settings) takes the same
//! advisory lock exclusively, only for its short write phase. A serialization failure
//! or a deadlock is retried; a unique violation is a conflict.

use super::Lock;
use super::db::{Cell, Col, Dialect};
use crate::error::{Error, Result};
use crate::metrics::StoreMetrics as Metrics;
use futures_util::future::BoxFuture;
use sqlx::ConnectOptions;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
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

    /// A connection for reading.
    pub(super) async fn read(&self) -> Result<sqlx::pool::PoolConnection<Db>> {
        let asked = Instant::now();
        let c = self.read.acquire().await?;
        self.metrics.waited("read", asked.elapsed());
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
        let mut attempt = 0;
        loop {
            attempt += 1;
            let asked = Instant::now();
            let mut conn = self.write.acquire().await?;
            self.metrics.waited("write", asked.elapsed());
            if let Err(e) = sqlx::raw_sql(sqlx::AssertSqlSafe(begin))
                .execute(&mut *conn)
                .await
            {
                conn.close_on_drop();
                return Err(e.into());
            }
            let (result, statements) = super::count::measure(job(&mut conn)).await;
            match result {
                Ok(v) => {
                    let started = Instant::now();
                    let committed = sqlx::raw_sql("COMMIT").execute(&mut *conn).await;
                    self.metrics
                        .commit_seconds
                        .observe(started.elapsed().as_secs_f64());
                    match committed {
                        Ok(_) => {
                            super::count::add(statements);
                            return Ok(v);
                        }
                        Err(e) => {
                            let _ = sqlx::raw_sql("ROLLBACK").execute(&mut *conn).await;
                            conn.close_on_drop();
                            let e: Error = e.into();
                            if retryable(&e) && attempt < ATTEMPTS {
                                self.metrics.write_retries.inc();
                                continue;
                            }
                            self.metrics.failed_commits.inc();
                            return Err(e);
                        }
                    }
                }
                Err(e) => {
                    if sqlx::raw_sql("ROLLBACK").execute(&mut *conn).await.is_err() {
                        conn.close_on_drop();
                    }
                    if retryable(&e) && attempt < ATTEMPTS {
                        tracing::debug!(attempt, "a write met a serialization failure: again");
                        self.metrics.write_retries.inc();
                        continue;
                    }
                    return Err(e);
                }
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
        let mut c = self.write.acquire().await?;
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
