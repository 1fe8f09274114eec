//! A consistent copy of the database while the server runs.

use super::{Backend, Store};
use crate::error::{Error, Result};
use std::path::Path;

/// Copies the database to `out`, which must not exist: SQLite with `VACUUM INTO` (one
/// consistent file, as of one transaction); PostgreSQL with `pg_dump --format=custom`
/// (restore with `pg_restore --no-owner --dbname URL FILE`).
pub async fn backup(store: &Store, database_url: &str, out: &Path) -> Result<()> {
    if out.exists() {
        return Err(Error::field(
            "out",
            format!("{} exists; give a new file", out.display()),
        ));
    }
    match store.backend() {
        Backend::Sqlite => {
            let path = out
                .to_str()
                .ok_or_else(|| Error::field("out", "the path is not UTF-8"))?;
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "VACUUM INTO '{}'",
                path.replace('\'', "''")
            )))
            .execute(store.pool())
            .await?;
            Ok(())
        }
        Backend::Postgres => {
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
                        format!("cannot run pg_dump (install PostgreSQL's client programs, or run: {command})"),
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
}
