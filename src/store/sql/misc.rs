// The store's own upkeep: the write probe, the server's media key, the dump that tests
// compare, the search for stored control characters. (Shared SQL: compiled once per
// backend, see store/mod.rs.)

use crate::error::{Error, Result};
use crate::store::ControlText;

impl Backend {
    pub(crate) async fn probe_write(&self) -> Result<()> {
        self.write_tx(crate::store::Lock::Rows, |tx| {
            Box::pin(crate::store::write::misc::probe(tx))
        })
        .await
    }

    /// The key of media tokens: made at the first start, shared by every server.
    pub(crate) async fn media_key(&self) -> Result<[u8; 16]> {
        let fresh = crate::auth::random_id(16)?;
        let hex: String = self
            .write_tx(crate::store::Lock::Rows, move |tx| {
                let fresh = fresh.clone();
                Box::pin(async move { crate::store::write::misc::media_key(tx, &fresh).await })
            })
            .await?;
        let mut key = [0u8; 16];
        for (i, k) in key.iter_mut().enumerate() {
            *k = hex
                .get(2 * i..2 * i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| Error::Internal("the stored media key is unreadable".into()))?;
        }
        Ok(key)
    }

    /// Where the installation's media live, as stored (migration 0027).
    pub(crate) async fn media_location(&self) -> Result<String> {
        Ok(qs::<String>("SELECT location FROM media_store WHERE id = 1")
            .fetch_one(&mut *self.read().await?)
            .await?)
    }

    pub(crate) async fn set_media_location(&self, location: String) -> Result<()> {
        self.write_tx(crate::store::Lock::Structure, move |tx| {
            let location = location.clone();
            Box::pin(async move {
                crate::store::write::misc::set_media_location(tx, &location).await
            })
        })
        .await
    }

    pub(crate) async fn dump(&self) -> Result<String> {
        use sqlx::Row;
        let mut out = String::new();
        let mut c = self.read().await?;
        for t in self.table_names(&mut c).await? {
            out.push_str(&format!("== {t}\n"));
            let sql = format!("SELECT * FROM {t} ORDER BY 1");
            let rows = q(sqlx::AssertSqlSafe(sql)).fetch_all(&mut *c).await?;
            let mut lines = Vec::with_capacity(rows.len());
            for r in rows {
                let mut cells = Vec::new();
                for i in 0..r.columns().len() {
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
                lines.push(cells.join("|"));
            }
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

    pub(crate) async fn find_control_text(&self) -> Result<Vec<ControlText>> {
        use futures_util::TryStreamExt;
        use sqlx::Row;
        let mut c = self.read().await?;
        let columns = self.text_columns(&mut c).await?;
        let mut found = Vec::new();
        for (table, column) in columns {
            // Names come from the database's own catalogue, never from input.
            let sql = format!(
                "SELECT \"{column}\" FROM \"{table}\" WHERE \"{column}\" IS NOT NULL"
            );
            let mut rows = q(sqlx::AssertSqlSafe(sql)).fetch(&mut *c);
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
                        let shown: String =
                            v.chars().take(60).flat_map(char::escape_default).collect();
                        hit.examples.push(shown);
                    }
                }
            }
            drop(rows);
            if hit.rows > 0 {
                found.push(hit);
            }
        }
        Ok(found)
    }
}
