//! PostgreSQL: a read pool and a write pool (a connection waiting for a lock never
//! holds one that reads need), and writes in parallel. A verdict-class write takes a
//! shared advisory lock and the row lock of its item (`SELECT ... FOR UPDATE`), so
//! verdicts on different items commit at the same time, from any number of servers;
//! a structural write (an import, a change of pair or pool, settings) takes the same
//! advisory lock exclusively, only for its short write phase. A serialization failure
//! or a deadlock is retried; a unique violation is a conflict.

use super::Lock;
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

/// PostgreSQL locks the item's row for the rest of the transaction: verdicts on one
/// item queue there, on different items they run at once.
macro_rules! for_update {
    ($t:literal) => {
        concat!(" FOR UPDATE OF ", $t)
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
    T: for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>,
{
    super::count::add(1);
    sqlx::query_as(sql)
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
async fn explain(c: &mut Conn, sql: &str, binds: &[i64]) -> Result<Vec<String>> {
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
    /// An import: one write job under the exclusive lock (`catalog::import_manifest_in`).
    pub(super) async fn import_manifest(
        &self,
        campaign_name: &str,
        manifest: &crate::domain::import::CheckedManifest,
    ) -> Result<(
        crate::store::catalog::ImportSummary,
        std::collections::HashSet<String>,
    )> {
        let stored = self
            .import_manifest_job(campaign_name, Arc::new(manifest.clone()))
            .await?;
        self.after_import().await;
        Ok(stored)
    }

    /// A verdict: one write job, its item's row locked (`review::record_verdict_in`).
    pub(super) async fn record_verdict(
        &self,
        campaign: &crate::store::catalog::Campaign,
        validator: &crate::store::accounts::User,
        stage: crate::domain::Stage,
        key: &str,
        req: &crate::store::review::VerdictRequest,
        origin: crate::domain::Origin,
    ) -> Result<crate::store::review::Recorded> {
        self.record_verdict_job(campaign, validator, stage, key, req, origin)
            .await
    }

    pub(super) async fn open(url: &str, metrics: Arc<Metrics>) -> Result<Backend> {
        let opts = PgConnectOptions::from_str(url)?
            .log_statements(tracing::log::LevelFilter::Trace)
            .application_name("tandem");
        let pool = |n: u32| {
            PgPoolOptions::new()
                .max_connections(n)
                .min_connections(1)
                .test_before_acquire(false)
                .acquire_timeout(Duration::from_secs(60))
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
            Lock::Structure => "BEGIN; SELECT pg_advisory_xact_lock(8015331)",
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

    pub(super) async fn ping(&self) -> Result<()> {
        q("SELECT 1").execute(&mut *self.read().await?).await?;
        Ok(())
    }

    pub(super) async fn close(&self) {
        self.read.close().await;
        self.write.close().await;
    }

    pub(super) async fn backup(&self, database_url: &str, out: &Path) -> Result<()> {
        let command = format!(
            "pg_dump --format=custom --file {} \"$DATABASE_URL\"",
            out.display()
        );
        let status = tokio::process::Command::new("pg_dump")
            .args(["--format=custom", "--no-owner", "--file"])
            .arg(out)
            .arg(database_url)
            .status()
            .await
            .map_err(|e| {
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

    pub(super) async fn table_names(&self, c: &mut Conn) -> Result<Vec<String>> {
        Ok(qs(
            "SELECT CAST(table_name AS TEXT) FROM information_schema.tables
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
               AND table_name <> '_sqlx_migrations' ORDER BY 1",
        )
        .fetch_all(&mut *c)
        .await?)
    }

    pub(super) async fn text_columns(&self, c: &mut Conn) -> Result<Vec<(String, String)>> {
        Ok(qa(
            "SELECT CAST(c.table_name AS TEXT), CAST(c.column_name AS TEXT)
             FROM information_schema.columns c
             JOIN information_schema.tables t
               ON t.table_schema = c.table_schema AND t.table_name = c.table_name
             WHERE c.table_schema = current_schema() AND c.data_type = 'text'
               AND t.table_type = 'BASE TABLE' AND c.table_name <> '_sqlx_migrations'
             ORDER BY c.table_name, c.ordinal_position",
        )
        .fetch_all(&mut *c)
        .await?)
    }
}

/// Parameters in one bulk statement (PostgreSQL takes up to 65,535).
pub(super) const MAX_PARAMS: usize = 20_000;

/// A verdict writes its decision and its item in one statement (a data-modifying
/// `WITH`): one round trip less while the item's row and its counters are locked.
pub(super) const ONE_STATEMENT_WRITES: bool = true;

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
