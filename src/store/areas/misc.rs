//! The store's own upkeep: the write probe, the server's media key, where the media live.

use crate::error::{Error, Result};
use crate::store::db::{Cell, Sql, Tx, named, sql};
use crate::store::{ControlText, Lock, Store};

impl Store {
    /// Writes one row and commits: whether the database can write now (a full disk
    /// cannot).
    pub async fn probe_write(&self) -> Result<()> {
        write_tx!(self, Lock::Rows, (), |tx| probe(tx).await)
    }

    /// The key of media tokens: made at the first start, shared by every server.
    pub(crate) async fn media_key(&self) -> Result<[u8; 16]> {
        let fresh = crate::auth::random_id(16)?;
        let hex: String = write_tx!(self, Lock::Rows, (fresh), |tx| media_key(tx, fresh).await)?;
        let mut key = [0u8; 16];
        for (i, k) in key.iter_mut().enumerate() {
            *k = hex
                .get(2 * i..2 * i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| Error::Internal("the stored media key is unreadable".into()))?;
        }
        Ok(key)
    }

    /// Where the installation's media live, as stored: `local` or `s3://BUCKET/PREFIX`
    /// (migration 0027).
    pub async fn media_location(&self) -> Result<String> {
        read_tx!(self, |c| {
            c.scalar(sql!("SELECT location FROM media_store WHERE id = 1"), &[])
                .await
        })
    }

    /// Stores where the installation's media live (the caller has checked the text and
    /// that every file is there).
    pub async fn set_media_location(&self, location: &str) -> Result<()> {
        write_tx!(self, Lock::Structure, (location), |tx| {
            set_media_location(tx, location).await
        })
    }

    /// Every row of every table in a stable order, as text. Tests compare two dumps to
    /// prove that a refused import or request changed nothing.
    pub async fn dump(&self) -> Result<String> {
        read_tx!(self, long, |c| dump(c).await)
    }

    /// Every stored text value holding a control character (`tandem check`).
    pub async fn find_control_text(&self) -> Result<Vec<ControlText>> {
        read_tx!(self, long, |c| find_control_text(c).await)
    }
}

/// The tables, by name (Tandem's own records: not the migrations' table, nor the
/// running servers' `stamp_listeners`).
const TABLES: Sql = Sql {
    sqlite: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
             AND name <> '_sqlx_migrations' ORDER BY name",
    postgres: "SELECT CAST(table_name AS TEXT) FROM information_schema.tables
               WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
                 AND table_name NOT IN ('_sqlx_migrations', 'stamp_listeners') ORDER BY 1",
};

/// Every text column of the tables, by table and column.
const TEXT_COLUMNS: Sql = Sql {
    sqlite: "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
             WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name <> '_sqlx_migrations'
               AND upper(p.type) = 'TEXT' ORDER BY m.name, p.cid",
    postgres: "SELECT CAST(c.table_name AS TEXT), CAST(c.column_name AS TEXT)
               FROM information_schema.columns c
               JOIN information_schema.tables t
                 ON t.table_schema = c.table_schema AND t.table_name = c.table_name
               WHERE c.table_schema = current_schema() AND c.data_type = 'text'
                 AND t.table_type = 'BASE TABLE'
                 AND c.table_name NOT IN ('_sqlx_migrations', 'stamp_listeners')
               ORDER BY c.table_name, c.ordinal_position",
};

async fn dump(c: &mut impl Tx) -> Result<String> {
    let mut out = String::new();
    let tables: Vec<(String,)> = c.fetch(TABLES, &[]).await?;
    for (t,) in tables {
        out.push_str(&format!("== {t}\n"));
        let rows = c.cells(&format!("SELECT * FROM {t} ORDER BY 1")).await?;
        let mut lines: Vec<String> = rows
            .iter()
            .map(|cells| {
                let shown: Vec<String> = cells
                    .iter()
                    .map(|cell| match cell {
                        Cell::Null => "None".to_string(),
                        Cell::Int(v) => format!("Some({v})"),
                        Cell::Real(v) => format!("Some({v:?})"),
                        Cell::Text(v) => format!("Some({v:?})"),
                        Cell::Bool(v) => format!("Some({v})"),
                        Cell::Blob(v) => format!("Some({v:?})"),
                    })
                    .collect();
                shown.join("|")
            })
            .collect();
        // The first column alone does not order tables keyed by several columns;
        // the whole rendered row does, the same way on both backends.
        lines.sort();
        for line in lines {
            out.push_str(&line);
            out.push('\n');
        }
    }
    Ok(out)
}

async fn find_control_text(c: &mut impl Tx) -> Result<Vec<ControlText>> {
    let columns: Vec<(String, String)> = c.fetch(TEXT_COLUMNS, &[]).await?;
    let mut found = Vec::new();
    for (table, column) in columns {
        // Names come from the database's own catalogue, never from input.
        let sql = format!("SELECT \"{column}\" FROM \"{table}\" WHERE \"{column}\" IS NOT NULL");
        let mut hit = ControlText {
            table,
            column,
            rows: 0,
            examples: Vec::new(),
        };
        for row in c.cells(&sql).await? {
            let Some(Cell::Text(v)) = row.into_iter().next() else {
                continue;
            };
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

/// Writes one row: whether the database can write now (a full disk cannot).
pub(crate) async fn probe(tx: &mut impl Tx) -> Result<()> {
    tx.exec(
        sql!(
            "INSERT INTO health (id, checked_at) VALUES (1, :now)
             ON CONFLICT (id) DO UPDATE SET checked_at = :now"
        ),
        named! { now: crate::clock::now_micros() },
    )
    .await?;
    Ok(())
}

/// The key of media tokens, made at the first start (`fresh`, hex) and shared by every
/// server: the one stored.
pub(crate) async fn media_key(tx: &mut impl Tx, fresh: &str) -> Result<String> {
    tx.exec(
        sql!(
            "INSERT INTO server_keys (name, value) VALUES ('media', :fresh)
             ON CONFLICT (name) DO NOTHING"
        ),
        named! { fresh },
    )
    .await?;
    tx.scalar(
        sql!("SELECT value FROM server_keys WHERE name = 'media'"),
        &[],
    )
    .await
}

/// Stores where the installation's media live (`local` or `s3://BUCKET/PREFIX`, checked
/// by the caller).
pub(crate) async fn set_media_location(tx: &mut impl Tx, location: &str) -> Result<()> {
    tx.exec(
        sql!("UPDATE media_store SET location = :location, changed_at = :now WHERE id = 1"),
        named! { location, now: crate::clock::now_micros() },
    )
    .await?;
    Ok(())
}
