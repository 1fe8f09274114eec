// The lookups that the other SQL files share, called downward only: users by name or
// id, a campaign (made on first use), the helpers of multi-row inserts, the known
// verdicts of calibration items. (Shared SQL: compiled once per backend, see
// store/mod.rs.)

use crate::clock::now_micros;
use crate::domain::check_identifier;
use crate::domain::taxonomy::Taxonomy;
use crate::error::{Error, Result};
use crate::store::accounts::{User, UserRow};
use crate::store::catalog::{Campaign, Settings};
use std::sync::Arc;

pub(crate) async fn user_by_name_in(c: &mut Conn, name: &str) -> Result<Option<User>> {
    qa::<UserRow>("SELECT id, name, role FROM users WHERE name = $1")
        .bind(name)
        .fetch_optional(&mut *c)
        .await?
        .map(User::try_from)
        .transpose()
}

pub(crate) async fn user_by_id_in(c: &mut Conn, id: i64) -> Result<Option<User>> {
    qa::<UserRow>("SELECT id, name, role FROM users WHERE id = $1")
        .bind(id)
        .fetch_optional(&mut *c)
        .await?
        .map(User::try_from)
        .transpose()
}

#[derive(sqlx::FromRow)]
pub(crate) struct CampaignRow {
    id: i64,
    name: String,
    taxonomy: String,
    target_per_task: i64,
    calibration_threshold: f64,
    calibration_min_items: i64,
    revision: i64,
}

impl TryFrom<CampaignRow> for Campaign {
    type Error = Error;
    fn try_from(r: CampaignRow) -> Result<Campaign> {
        let taxonomy: Taxonomy = serde_json::from_str(&r.taxonomy).map_err(|e| {
            Error::Internal(format!("stored taxonomy of `{}` is unreadable: {e}", r.name))
        })?;
        Ok(Campaign {
            id: r.id,
            name: r.name,
            taxonomy: Arc::new(taxonomy),
            settings: Settings {
                target_per_task: r.target_per_task,
                calibration_threshold: r.calibration_threshold,
                calibration_min_items: r.calibration_min_items,
            },
            revision: r.revision,
        })
    }
}

pub(crate) async fn campaign_in(c: &mut Conn, name: &str) -> Result<Option<Campaign>> {
    qa::<CampaignRow>(
        "SELECT id, name, taxonomy, target_per_task, calibration_threshold, calibration_min_items, revision
         FROM campaigns WHERE name = $1",
    )
    .bind(name)
    .fetch_optional(&mut *c)
    .await?
    .map(Campaign::try_from)
    .transpose()
}

/// The campaign named `name`, created with the built-in taxonomy if it does not exist.
pub(crate) async fn ensure_campaign_in(c: &mut Conn, name: &str) -> Result<Campaign> {
    if let Some(found) = campaign_in(c, name).await? {
        return Ok(found);
    }
    check_identifier("campaign name", name).map_err(|m| Error::field("campaign", m))?;
    let taxonomy = Taxonomy::vgenst();
    let json = serde_json::to_string(&taxonomy)
        .map_err(|e| Error::Internal(format!("taxonomy does not serialise: {e}")))?;
    let id: i64 = qs("INSERT INTO campaigns (name, taxonomy, created_at) VALUES ($1, $2, $3) RETURNING id")
        .bind(name)
        .bind(json)
        .bind(now_micros())
        .fetch_one(&mut *c)
        .await?;
    let mut sql = String::from("INSERT INTO tasks (campaign_id, position, code, name, attributes) VALUES ");
    sql.push_str(&values(1, 5, taxonomy.tasks.len()));
    let mut insert = q(sqlx::AssertSqlSafe(sql));
    for (position, t) in taxonomy.tasks.iter().enumerate() {
        let attributes = serde_json::json!({
            "scale": t.scale, "perspective": t.perspective, "dynamics": t.dynamics
        })
        .to_string();
        insert = insert
            .bind(id)
            .bind(i64::try_from(position).unwrap_or(i64::MAX))
            .bind(t.code.clone())
            .bind(t.name.clone())
            .bind(attributes);
    }
    insert.execute(&mut *c).await?;
    super::gates::refresh_pairs_in(c, id).await?;
    Ok(Campaign {
        id,
        name: name.to_string(),
        taxonomy: Arc::new(taxonomy),
        settings: Settings::default(),
        revision: 0,
    })
}

/// `($1, $2, $3), ($4, $5, $6), ...`: `rows` rows of `cols` parameters from `first`.
pub(crate) fn values(first: usize, cols: usize, rows: usize) -> String {
    let mut s = String::with_capacity(rows * cols * 5);
    for r in 0..rows {
        if r > 0 {
            s.push_str(", ");
        }
        s.push('(');
        for k in 0..cols {
            if k > 0 {
                s.push_str(", ");
            }
            s.push('$');
            s.push_str(&(first + r * cols + k).to_string());
        }
        s.push(')');
    }
    s
}

/// Rows per multi-row insert: at most `MAX_PARAMS` parameters in a statement.
pub(crate) fn chunk_rows(cols: usize) -> usize {
    (MAX_PARAMS / cols.max(1)).max(1)
}

/// Stores the known verdicts of calibration items: (item, verdict) pairs.
pub(crate) async fn insert_keys_in(
    c: &mut Conn,
    keys: &[(i64, &crate::domain::rules::CheckedVerdict)],
) -> Result<()> {
    for chunk in keys.chunks(chunk_rows(4)) {
        let sql = format!(
            "INSERT INTO calibration_keys (item_id, verdict, reasons, note) VALUES {}",
            values(1, 4, chunk.len())
        );
        let mut insert = q(sqlx::AssertSqlSafe(sql));
        for (item, key) in chunk {
            insert = insert
                .bind(*item)
                .bind(key.verdict.as_str())
                .bind(crate::domain::Reason::join(&key.reasons))
                .bind(key.note.clone());
        }
        insert.execute(&mut *c).await?;
    }
    Ok(())
}
