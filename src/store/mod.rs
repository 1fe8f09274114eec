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
use sqlx::{Any, AnyConnection, AnyPool, Executor};
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

/// A write transaction on a connection of its own: dereferences to the connection.
/// Committed by [`Tx::commit`]; dropped without it, it is rolled back in the
/// background (the write gate held until then). A connection whose COMMIT or ROLLBACK
/// failed (a full disk, a lost server) is closed, never given back to the pool: the
/// next write gets a fresh connection and succeeds once the cause is gone.
pub struct Tx {
    conn: Option<sqlx::pool::PoolConnection<Any>>,
    gate: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl Tx {
    async fn begin(
        mut conn: sqlx::pool::PoolConnection<Any>,
        sql: &'static str,
        gate: Option<tokio::sync::OwnedMutexGuard<()>>,
    ) -> Result<Tx> {
        if let Err(e) = sqlx::query(sql).execute(&mut *conn).await {
            // Whatever state the connection is in now, it is not reused.
            conn.close_on_drop();
            return Err(e.into());
        }
        Ok(Tx {
            conn: Some(conn),
            gate,
        })
    }

    pub async fn commit(mut self) -> std::result::Result<(), sqlx::Error> {
        let Some(mut conn) = self.conn.take() else {
            return Err(sqlx::Error::WorkerCrashed);
        };
        match sqlx::query("COMMIT").execute(&mut *conn).await {
            Ok(_) => Ok(()),
            Err(e) => {
                if sqlx::query("ROLLBACK").execute(&mut *conn).await.is_err() {
                    tracing::warn!("a connection whose commit failed is closed");
                }
                conn.close_on_drop();
                Err(e)
            }
        }
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        let (Some(mut conn), gate) = (self.conn.take(), self.gate.take()) else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(async move {
                    if sqlx::query("ROLLBACK").execute(&mut *conn).await.is_err() {
                        conn.close_on_drop();
                    }
                    drop(conn);
                    drop(gate);
                });
            }
            Err(_) => conn.close_on_drop(),
        }
    }
}

impl std::ops::Deref for Tx {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        // Present until commit, which consumes the Tx.
        self.conn
            .as_deref()
            .unwrap_or_else(|| unreachable!("a Tx always holds its connection"))
    }
}

impl std::ops::DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        self.conn
            .as_deref_mut()
            .unwrap_or_else(|| unreachable!("a Tx always holds its connection"))
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
        crate::config::sqlite_url(path)
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
        match self.backend {
            Backend::Sqlite => {
                let gate = self.write_gate.clone().lock_owned().await;
                let conn = self.pool.acquire().await?;
                Tx::begin(conn, "BEGIN IMMEDIATE", Some(gate)).await
            }
            Backend::Postgres => {
                let conn = self.pool.acquire().await?;
                let mut tx = Tx::begin(conn, "BEGIN", None).await?;
                sqlx::query("SELECT pg_advisory_xact_lock($1)")
                    .bind(WRITE_LOCK)
                    .execute(&mut *tx)
                    .await?;
                Ok(tx)
            }
        }
    }

    /// Checks that the database answers.
    pub async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// Writes one row and commits: whether the database can write now (a full disk
    /// cannot).
    pub async fn probe_write(&self) -> Result<()> {
        let mut tx = self.begin_write().await?;
        sqlx::query(
            "INSERT INTO health (id, checked_at) VALUES (1, $1)
             ON CONFLICT (id) DO UPDATE SET checked_at = $1",
        )
        .bind(crate::clock::now_micros())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
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

/// Finds every stored text value holding a control character (`tandem check`).
pub async fn find_control_text(store: &Store) -> Result<Vec<ControlText>> {
    use futures_util::TryStreamExt;
    use sqlx::Row;
    let mut c = conn(store).await?;
    let columns_sql = match store.backend {
        Backend::Sqlite => {
            "SELECT m.name AS t, p.name AS c FROM sqlite_master m, pragma_table_info(m.name) p
             WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name <> '_sqlx_migrations'
               AND upper(p.type) = 'TEXT' ORDER BY m.name, p.cid"
        }
        Backend::Postgres => {
            "SELECT CAST(table_name AS TEXT) AS t, CAST(column_name AS TEXT) AS c
             FROM information_schema.columns
             WHERE table_schema = current_schema() AND data_type = 'text' AND table_name <> '_sqlx_migrations'
             ORDER BY table_name, ordinal_position"
        }
    };
    let columns: Vec<(String, String)> = sqlx::query(columns_sql)
        .fetch_all(&mut *c)
        .await?
        .iter()
        .map(|r| Ok((r.try_get::<String, _>("t")?, r.try_get::<String, _>("c")?)))
        .collect::<std::result::Result<_, sqlx::Error>>()?;
    let mut found = Vec::new();
    for (table, column) in columns {
        // Names come from the database's own catalogue, never from input.
        let sql = format!("SELECT \"{column}\" FROM \"{table}\" WHERE \"{column}\" IS NOT NULL");
        let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch(&mut *c);
        let mut hit = ControlText {
            table: table.clone(),
            column: column.clone(),
            rows: 0,
            examples: Vec::new(),
        };
        while let Some(row) = rows.try_next().await? {
            let v: String = row.try_get(0)?;
            if crate::domain::text::forbidden_char(&v).is_some() {
                hit.rows += 1;
                if hit.examples.len() < 3 {
                    let shown: String = v.chars().take(60).flat_map(char::escape_default).collect();
                    hit.examples.push(shown);
                }
            }
        }
        if hit.rows > 0 {
            found.push(hit);
        }
    }
    Ok(found)
}

/// A database connection: from the pool, or the inside of a transaction.
pub(crate) type Conn = AnyConnection;
