//! Storage. Handlers and commands never write SQL: they call the store in domain
//! terms, and everything that must happen together happens in one store method, in
//! one transaction.
//!
//! The store speaks to the database through sqlx's `Any` driver, so one body of SQL
//! serves every backend; the SQL is written in the dialect both SQLite and PostgreSQL
//! accept (`$n` parameters, `RETURNING`, `ON CONFLICT`, `CAST(.. AS BIGINT)`).

pub mod accounts;
pub mod backup;
pub mod calibration;
pub mod catalog;
pub mod records;
pub mod review;
pub mod sessions;
pub mod stats;
pub mod study;

use crate::error::{Error, Result};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{Any, AnyConnection, AnyPool, Executor, Transaction};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// Which database the store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A cheap-to-clone handle on the database.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// On SQLite, this process's writers queue here, in order, before `BEGIN IMMEDIATE`,
    /// instead of in SQLite's busy handler, which sleeps in growing steps (long tails).
    write_gate: Arc<tokio::sync::Mutex<()>>,
}

/// A write transaction: dereferences to its connection; rolled back when dropped
/// without `commit`, and the write gate is let go with it.
pub struct Tx {
    inner: Transaction<'static, Any>,
    _gate: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl Tx {
    pub async fn commit(self) -> std::result::Result<(), sqlx::Error> {
        self.inner.commit().await
    }
}

impl std::ops::Deref for Tx {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        &self.inner
    }
}

impl std::ops::DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.inner
    }
}

/// The PostgreSQL advisory lock every write transaction holds (any number; Tandem's own).
const WRITE_LOCK: i64 = 0x007A_4DE3;

/// Set on every SQLite connection: enforce foreign keys, let a writer wait up to 30 s
/// for another writer's transaction instead of failing, and make each commit durable.
const SQLITE_PRAGMAS: &str =
    "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 30000; PRAGMA synchronous = FULL;";

impl Store {
    /// The URL of the SQLite database file inside a data folder.
    pub fn sqlite_url(path: &Path) -> String {
        format!("sqlite://{}?mode=rwc", path.display())
    }

    /// Opens the database named by `url` and brings its schema up to date.
    pub async fn open(url: &str) -> Result<Store> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            return Err(Error::Invalid(format!(
                "DATABASE_URL must start with sqlite:// or postgres:// (got `{}`)",
                url.split(':').next().unwrap_or_default()
            )));
        };
        let options = AnyConnectOptions::from_str(url)?;
        let pool = AnyPoolOptions::new()
            .max_connections(8)
            .min_connections(1)
            .acquire_timeout(Duration::from_secs(60))
            .after_connect(move |conn, _meta| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        conn.execute(SQLITE_PRAGMAS).await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await?;
        if backend == Backend::Sqlite {
            // WAL is a property of the file: readers never wait for the writer.
            pool.execute("PRAGMA journal_mode = WAL").await?;
        }
        let store = Store {
            pool,
            backend,
            write_gate: Arc::new(tokio::sync::Mutex::new(())),
        };
        store.migrate().await?;
        Ok(store)
    }

    /// Applies the migrations that have not run yet.
    pub async fn migrate(&self) -> Result<()> {
        match self.backend {
            Backend::Sqlite => sqlx::migrate!("migrations/sqlite").run(&self.pool).await?,
            Backend::Postgres => {
                sqlx::migrate!("migrations/postgres")
                    .run(&self.pool)
                    .await?
            }
        }
        Ok(())
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// Starts a transaction that writes, holding the database's one write lock until it
    /// ends: on SQLite `BEGIN IMMEDIATE` (two writers queue instead of one failing when it
    /// upgrades a read lock); on PostgreSQL a transaction-scoped advisory lock, so that
    /// writers from any number of servers are serialised exactly as on SQLite and every
    /// check-then-write in a store method sees the state it writes over.
    pub async fn begin_write(&self) -> Result<Tx> {
        Ok(match self.backend {
            Backend::Sqlite => {
                let gate = self.write_gate.clone().lock_owned().await;
                Tx {
                    inner: self.pool.begin_with("BEGIN IMMEDIATE").await?,
                    _gate: Some(gate),
                }
            }
            Backend::Postgres => {
                let mut tx = self.pool.begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock($1)")
                    .bind(WRITE_LOCK)
                    .execute(&mut *tx)
                    .await?;
                Tx {
                    inner: tx,
                    _gate: None,
                }
            }
        })
    }

    /// Checks that the database answers.
    pub async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Reads a column, turning a type mismatch into an error that names the column.
pub(crate) fn col<'r, T>(row: &'r sqlx::any::AnyRow, name: &str) -> Result<T>
where
    T: sqlx::Decode<'r, Any> + sqlx::Type<Any>,
{
    use sqlx::Row;
    row.try_get::<T, _>(name).map_err(Error::from)
}

/// Runs `f` with a connection from the pool, for reads.
pub(crate) async fn conn(store: &Store) -> Result<sqlx::pool::PoolConnection<Any>> {
    Ok(store.pool.acquire().await?)
}

/// Dumps every row of every table in a stable order, as text. Tests compare two
/// dumps to prove that a refused import or request changed nothing.
pub async fn dump(store: &Store) -> Result<String> {
    use sqlx::Row;
    let mut out = String::new();
    let mut c = conn(store).await?;
    let list = match store.backend {
        Backend::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations' ORDER BY name"
        }
        Backend::Postgres => {
            "SELECT CAST(table_name AS TEXT) AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> '_sqlx_migrations' ORDER BY name"
        }
    };
    let tables: Vec<String> = sqlx::query(list)
        .fetch_all(&mut *c)
        .await?
        .iter()
        .map(|r| r.try_get::<String, _>("name"))
        .collect::<std::result::Result<_, _>>()?;
    for t in tables {
        out.push_str(&format!("== {t}\n"));
        let sql = format!("SELECT * FROM {t} ORDER BY 1");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&mut *c)
            .await?;
        for r in rows {
            let mut cells = Vec::new();
            for i in 0..r.len() {
                let cell = if let Ok(v) = r.try_get::<Option<i64>, _>(i) {
                    format!("{v:?}")
                } else if let Ok(v) = r.try_get::<Option<String>, _>(i) {
                    format!("{v:?}")
                } else if let Ok(v) = r.try_get::<Option<f64>, _>(i) {
                    format!("{v:?}")
                } else {
                    "?".to_string()
                };
                cells.push(cell);
            }
            out.push_str(&cells.join("|"));
            out.push('\n');
        }
    }
    Ok(out)
}

/// A database connection: from the pool, or the inside of a transaction.
pub(crate) type Conn = AnyConnection;
