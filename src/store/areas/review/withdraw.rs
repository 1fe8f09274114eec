//! An author's withdrawal of a retained question (its key in doubt after the blind key
//! check): the question leaves the retained benchmark with a reason of the protocol's
//! Stage 2 and a note; its outcome, and the tables built from it, stay as the review
//! left them. Written once for both backends, the item's row locked on PostgreSQL.

use crate::clock::now_micros;
use crate::domain::records::Withdrawal;
use crate::domain::{Origin, Outcome, Stage};
use crate::error::{Error, Result};
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::store::db::{Tx, locked, named, row, sql};
use crate::store::review::WithdrawalRequest;
use crate::store::{Lock, Store};

row! {
    struct Held {
        id: i64,
        outcome: String,
        author_id: Option<i64>,
        reason: Option<String>,
        note: Option<String>,
        name: Option<String>,
    }
}

/// Withdraws the retained question `key` (current version, not a calibration item).
/// Returns false when the same withdrawal was already stored.
async fn withdraw(
    tx: &mut impl Tx,
    campaign_id: i64,
    key: &str,
    author: &User,
    (reason, note): (&str, &str),
    origin: Origin,
) -> Result<bool> {
    let row: Held = tx
        .fetch_opt(
            locked!(
                "SELECT i.id, i.outcome, w.author_id, w.reason, w.note, u.name
                 FROM items i LEFT JOIN withdrawals w ON w.item_id = i.id
                 LEFT JOIN users u ON u.id = w.author_id
                 WHERE i.campaign_id = :campaign AND i.stage = 2 AND i.item_key = :key
                   AND i.is_current = 1 AND i.calibration = 0",
                "i"
            ),
            named! { campaign: campaign_id, key },
        )
        .await?
        .ok_or_else(|| Error::NotFound(format!("no question `{key}` in Stage 2")))?;
    if let Some(by) = row.author_id {
        if by == author.id
            && row.reason.as_deref() == Some(reason)
            && row.note.as_deref() == Some(note)
        {
            return Ok(false);
        }
        return Err(Error::Conflict(format!(
            "question `{key}` was already withdrawn by {} ({}); a withdrawal is final",
            row.name.unwrap_or_default(),
            row.reason.unwrap_or_default()
        )));
    }
    let outcome = Outcome::parse(&row.outcome)
        .ok_or_else(|| Error::Internal(format!("stored outcome `{}`", row.outcome)))?;
    if !outcome.is_retained() {
        return Err(Error::Conflict(format!(
            "question `{key}` is not retained ({}): only a retained question is withdrawn{}",
            outcome.words(),
            if outcome == Outcome::Split {
                "; resolve its split instead"
            } else {
                ""
            }
        )));
    }
    tx.exec(
        sql!(
            "INSERT INTO withdrawals (item_id, campaign_id, author_id, reason, note, decided_at, origin)
             VALUES (:item, :campaign, :author, :reason, :note, :at, :origin)"
        ),
        named! {
            item: row.id,
            campaign: campaign_id,
            author: author.id,
            reason,
            note,
            at: now_micros(),
            origin: origin.as_str(),
        },
    )
    .await?;
    Ok(true)
}

row! {
    struct Found {
        item_key: String,
        clip_key: String,
        name: String,
        reason: String,
        note: String,
        decided_at: i64,
    }
}

impl Store {
    /// An author withdraws a retained question from the benchmark, finally: the reason
    /// must be one of the protocol's Stage 2 reasons, the note says why.
    pub async fn withdraw_question(
        &self,
        campaign: &Campaign,
        author: &User,
        key: &str,
        req: &WithdrawalRequest,
        origin: Origin,
    ) -> Result<bool> {
        let reason = campaign
            .taxonomy
            .parse_reason(Stage::Question, &req.reason)
            .map_err(|m| Error::field("reason", m))?;
        let note = req.note.trim();
        crate::domain::text::check(note).map_err(|m| Error::field("note", m))?;
        if note.is_empty() {
            return Err(Error::field("note", "a withdrawal needs a note saying why"));
        }
        if note.chars().count() > crate::domain::rules::MAX_NOTE_CHARS {
            return Err(Error::field("note", "the note is too long"));
        }
        let campaign_id = campaign.id;
        let reason = reason.as_str();
        write_tx!(self, Lock::Item, (key, reason, note, author), |tx| {
            withdraw(tx, campaign_id, key, author, (reason, note), origin).await
        })
    }

    /// The campaign's withdrawn questions (current versions), in id order; with `key`,
    /// that question's only.
    pub async fn withdrawals(
        &self,
        campaign: &Campaign,
        key: Option<&str>,
    ) -> Result<Vec<Withdrawal>> {
        let (campaign, key) = (campaign.id, key.unwrap_or(""));
        let rows: Vec<Found> = read_tx!(self, |c| {
            c.fetch(
                sql!(
                    "SELECT i.item_key, c.clip_key, u.name, w.reason, w.note, w.decided_at
                     FROM withdrawals w JOIN items i ON i.id = w.item_id
                     JOIN clip_versions v ON v.id = i.clip_version_id
                     JOIN clips c ON c.id = v.clip_id
                     JOIN users u ON u.id = w.author_id
                     WHERE w.campaign_id = :campaign AND i.is_current = 1
                       AND (:key = '' OR i.item_key = :key)
                     ORDER BY i.item_key"
                ),
                named! { campaign, key },
            )
            .await
        })?;
        Ok(rows
            .into_iter()
            .map(|r| Withdrawal {
                question_id: r.item_key,
                clip_id: r.clip_key,
                author: r.name,
                reason: r.reason,
                note: r.note,
                decided_at: r.decided_at,
            })
            .collect())
    }
}
