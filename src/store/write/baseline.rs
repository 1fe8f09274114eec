//! The human baseline's writes: answers brought in from a file, all or nothing and
//! final; the lookups its reads share (its participants, its stored answers).

use crate::clock::now_micros;
use crate::error::{Error, LineError, Rejected, Result};
use crate::store::baseline::{AnswersSummary, NewAnswer, StoredAnswer};
use crate::store::db::{Tx, Value, named, sql};
use std::collections::{HashMap, HashSet};

/// The baseline's participants of a campaign, `(id, name)` by name.
pub(crate) async fn participants(tx: &mut impl Tx, campaign: i64) -> Result<Vec<(i64, String)>> {
    tx.fetch(
        sql!(
            "SELECT u.id, u.name FROM campaign_members m JOIN users u ON u.id = m.user_id
             WHERE m.campaign_id = :campaign AND m.role = 'baseline'
             ORDER BY u.name"
        ),
        named! { campaign },
    )
    .await
}

/// How many people hold each role in a campaign: `(role, n)` by role.
pub(crate) async fn group_sizes(tx: &mut impl Tx, campaign: i64) -> Result<Vec<(String, i64)>> {
    tx.fetch(
        sql!(
            "SELECT role, COUNT(*) AS n FROM campaign_members
             WHERE campaign_id = :campaign GROUP BY role ORDER BY role"
        ),
        named! { campaign },
    )
    .await
}

/// Every question id of a campaign (any version, any outcome), for errors that say
/// whether a question exists but is not retained.
pub(crate) async fn question_keys(tx: &mut impl Tx, campaign: i64) -> Result<Vec<String>> {
    let rows: Vec<(String,)> = tx
        .fetch(
            sql!(
                "SELECT DISTINCT q.question_key FROM questions q
                 JOIN items i ON i.question_id = q.id
                 WHERE i.campaign_id = :campaign AND i.stage = 2"
            ),
            named! { campaign },
        )
        .await?;
    Ok(rows.into_iter().map(|(k,)| k).collect())
}

/// Every answer stored for a campaign's baseline, by participant, question and
/// presentation.
pub(crate) async fn answers(tx: &mut impl Tx, campaign: i64) -> Result<Vec<StoredAnswer>> {
    tx.fetch(
        sql!(
            "SELECT u.name AS participant, a.question_key, a.presentation, a.shown,
                    a.chosen, a.origin, a.answered_at
             FROM baseline_answers a JOIN users u ON u.id = a.participant_id
             WHERE a.campaign_id = :campaign
             ORDER BY u.name, a.question_key, a.presentation"
        ),
        named! { campaign },
    )
    .await
}

/// Brings in answers gathered elsewhere (checked whole against the retained questions
/// by `io::baseline` first), all or nothing: every row's participant must hold the
/// baseline's role in the campaign; a presentation answered before must be answered the
/// same (then it counts as already there), since answers are final.
pub(crate) async fn import_answers(
    tx: &mut impl Tx,
    campaign: i64,
    rows: &[NewAnswer],
    what: &str,
) -> Result<AnswersSummary> {
    let people: HashMap<String, i64> = participants(tx, campaign)
        .await?
        .into_iter()
        .map(|(id, name)| (name, id))
        .collect();
    let stored: HashMap<(String, String, i64), (String, String)> = answers(tx, campaign)
        .await?
        .into_iter()
        .map(|a| {
            (
                (a.participant, a.question_key, a.presentation),
                (a.shown, a.chosen),
            )
        })
        .collect();
    let mut problems = Vec::new();
    let mut summary = AnswersSummary::default();
    let mut who = HashSet::new();
    let mut new = Vec::new();
    for row in rows {
        let Some(&id) = people.get(&row.participant) else {
            problems.push(LineError::new(
                row.line,
                Some("participant"),
                format!(
                    "`{}` is not a participant of this campaign's baseline",
                    row.participant
                ),
            ));
            continue;
        };
        who.insert(id);
        let key = (
            row.participant.clone(),
            row.question_key.clone(),
            row.presentation,
        );
        match stored.get(&key) {
            Some((shown, chosen)) if *shown == row.shown && *chosen == row.chosen => {
                summary.already_there += 1
            }
            Some((shown, chosen)) => problems.push(LineError::new(
                row.line,
                Some("chosen"),
                format!(
                    "{} answered presentation {} of `{}` already (shown {shown}, chose {chosen}); answers are final",
                    row.participant, row.presentation, row.question_key
                ),
            )),
            None => new.push((id, row)),
        }
    }
    if !problems.is_empty() {
        return Err(Error::Rejected(Rejected {
            what: what.to_string(),
            problems,
        }));
    }
    let now = now_micros();
    let values: Vec<Vec<Value<'_>>> = new
        .iter()
        .map(|(id, r)| {
            vec![
                campaign.into(),
                (*id).into(),
                r.question_key.as_str().into(),
                r.presentation.into(),
                r.shown.as_str().into(),
                r.chosen.as_str().into(),
                "import".into(),
                now.into(),
            ]
        })
        .collect();
    if !values.is_empty() {
        tx.insert_rows::<(i64,)>(
            "INSERT INTO baseline_answers (campaign_id, participant_id, question_key, presentation, shown, chosen, origin, answered_at)",
            "presentation",
            &values,
        )
        .await?;
    }
    summary.added = new.len();
    summary.participants = who.len();
    Ok(summary)
}
