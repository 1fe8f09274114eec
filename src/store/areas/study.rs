//! The blind study's writes: its comparison sets brought in, how clips are shown, each
//! participant's order drawn on their first visit, an answer (whole and final), and
//! responses of an earlier study brought in. Reads of a participant's sets use the
//! lookups here too.

mod ops;

use super::base;
use crate::clock::now_micros;
use crate::domain::Role;
use crate::domain::import::{CheckedSets, ResponseRow, ResponseValue, ServedCopy, StudySet};
use crate::domain::study::{
    Axis, Display, RANK_AXES, SetAnswer, Truth, check_ranking, participant_order,
};
use crate::error::{Error, LineError, Rejected, Result};
use crate::store::accounts::{User, UserRow, fold_users, user_columns, user_joins};
use crate::store::db::{Tx, Value, named, row, sql};
use crate::store::study::{ResponsesSummary, Study, StudyImportSummary, StudyProgress};
use std::collections::{BTreeMap, HashMap, HashSet};

row! {
    pub(crate) struct StudyRow {
        pub id: i64,
        pub campaign_id: i64,
        pub sources: String,
        pub display_mode: String,
        pub strip_frames: i64,
        pub seed: i64,
    }
}

impl TryFrom<StudyRow> for Study {
    type Error = Error;
    fn try_from(r: StudyRow) -> Result<Study> {
        Ok(Study {
            id: r.id,
            campaign_id: r.campaign_id,
            sources: serde_json::from_str(&r.sources)
                .map_err(|e| Error::fault("stored sources are not JSON", e))?,
            display: Display::parse(&r.display_mode).map_err(Error::Internal)?,
            frames: r.strip_frames,
            seed: r.seed,
        })
    }
}

/// The campaign's study, if it has one.
pub(crate) async fn study_of(tx: &mut impl Tx, campaign_id: i64) -> Result<Option<Study>> {
    tx.fetch_opt::<StudyRow>(
        sql!(
            "SELECT id, campaign_id, sources, display_mode, strip_frames, seed FROM studies
             WHERE campaign_id = :campaign"
        ),
        named! { campaign: campaign_id },
    )
    .await?
    .map(Study::try_from)
    .transpose()
}

/// Whether anyone has an order or an answer in the study.
async fn started(tx: &mut impl Tx, study_id: i64) -> Result<bool> {
    let n: i64 = tx
        .scalar(
            sql!(
                "SELECT (SELECT COUNT(*) FROM study_orders WHERE study_id = :study)
                      + (SELECT COUNT(*) FROM study_responses WHERE study_id = :study)"
            ),
            named! { study: study_id },
        )
        .await?;
    Ok(n > 0)
}

/// The clips of a participant's set at `position`: (slot, 0 is A; token; clip id).
pub(crate) async fn views(
    tx: &mut impl Tx,
    study: &Study,
    user: &User,
    position: i64,
) -> Result<Vec<(i64, String, i64)>> {
    tx.fetch(
        sql!(
            "SELECT v.slot, v.token, v.clip_id FROM study_orders o
             JOIN study_views v ON v.order_id = o.id
             WHERE o.study_id = :study AND o.participant_id = :user AND o.position = :position
             ORDER BY v.slot"
        ),
        named! { study: study.id, user: user.id, position },
    )
    .await
}

/// The clips of the set at `position` of a participant's order, in slot order, each with
/// the time the set was answered (none while it is not).
async fn set_slots(
    tx: &mut impl Tx,
    study: &Study,
    user: &User,
    position: i64,
) -> Result<Vec<(i64, Option<i64>)>> {
    tx.fetch(
        sql!(
            "SELECT v.clip_id, o.answered_at FROM study_orders o
             JOIN study_views v ON v.order_id = o.id
             WHERE o.study_id = :study AND o.participant_id = :user AND o.position = :position
             ORDER BY v.slot"
        ),
        named! { study: study.id, user: user.id, position },
    )
    .await
}

/// Whether the participant has an order in the study.
pub(crate) async fn has_order(tx: &mut impl Tx, study: &Study, user: &User) -> Result<bool> {
    let first: Option<i64> = tx
        .scalar_opt(
            sql!(
                "SELECT position FROM study_orders
                 WHERE study_id = :study AND participant_id = :user AND position = 1"
            ),
            named! { study: study.id, user: user.id },
        )
        .await?;
    Ok(first.is_some())
}

/// Marks the sets of the study that participants have answered (responses of theirs on
/// the set's clips) and that their order does not mark yet: after responses are brought
/// in, and when an order is drawn after them.
async fn mark_answered(tx: &mut impl Tx, study_id: i64, at: i64) -> Result<()> {
    tx.exec(
        sql!(
            "UPDATE study_orders SET answered_at = :at
             WHERE study_id = :study AND answered_at IS NULL
               AND EXISTS (SELECT 1 FROM study_clips c
                           JOIN study_responses r ON r.clip_id = c.id
                                                 AND r.participant_id = study_orders.participant_id
                           WHERE c.set_id = study_orders.set_id)"
        ),
        named! { at, study: study_id },
    )
    .await?;
    Ok(())
}

/// Draws this participant's order if it has not been drawn yet: every set in an order
/// of their own, each set's clips in slots of their own, from the study's seed and the
/// participant, with a random token per clip.
pub(crate) async fn ensure_order(tx: &mut impl Tx, study: &Study, user: &User) -> Result<()> {
    if has_order(tx, study, user).await? {
        return Ok(());
    }
    // Sets in import order, each with its clips in source order: the draw below
    // shuffles both, from the study's seed and the participant.
    let rows: Vec<(i64, i64, String)> = tx
        .fetch(
            sql!(
                "SELECT s.id, c.id, c.source
                 FROM study_sets s JOIN study_clips c ON c.set_id = s.id
                 WHERE s.study_id = :study ORDER BY s.position, c.id"
            ),
            named! { study: study.id },
        )
        .await?;
    let mut sets: Vec<(i64, Vec<(String, i64)>)> = Vec::new();
    for (set_id, clip_id, source) in rows {
        if sets.last().map(|s| s.0) != Some(set_id) {
            sets.push((set_id, Vec::new()));
        }
        if let Some(last) = sets.last_mut() {
            last.1.push((source, clip_id));
        }
    }
    for (_, clips) in &mut sets {
        clips.sort_by_key(|(source, _)| study.sources.iter().position(|s| s == source));
    }
    let n = study.sources.len();
    let order = participant_order(study.seed as u64, user.id, sets.len(), n);
    let orders: Vec<Vec<Value<'_>>> = order
        .iter()
        .enumerate()
        .map(|(pos, (set_index, _))| {
            vec![
                study.id.into(),
                user.id.into(),
                sets[*set_index].0.into(),
                i64::try_from(pos + 1).unwrap_or(i64::MAX).into(),
            ]
        })
        .collect();
    let order_id: HashMap<i64, i64> = tx // set -> order id
        .insert_rows::<(i64, i64)>(
            "INSERT INTO study_orders (study_id, participant_id, set_id, position)",
            "id, set_id",
            &orders,
        )
        .await?
        .into_iter()
        .map(|(id, set)| (set, id))
        .collect();
    let mut views: Vec<(i64, i64, i64, String)> = Vec::new();
    for (set_index, slots) in &order {
        let (set_id, clips) = &sets[*set_index];
        let oid = order_id.get(set_id).copied().unwrap_or(0);
        for (slot, &k) in slots.iter().enumerate() {
            let Some((_, clip_id)) = clips.get(k) else {
                return Err(Error::Internal(format!(
                    "a set holds {} clips where the study has {n} sources",
                    clips.len()
                )));
            };
            views.push((
                oid,
                *clip_id,
                i64::try_from(slot).unwrap_or(i64::MAX),
                crate::auth::random_id(16)?,
            ));
        }
    }
    let rows: Vec<Vec<Value<'_>>> = views
        .iter()
        .map(|(oid, clip, slot, token)| {
            vec![
                (*oid).into(),
                (*clip).into(),
                (*slot).into(),
                token.as_str().into(),
            ]
        })
        .collect();
    tx.insert_rows::<(i64,)>(
        "INSERT INTO study_views (order_id, clip_id, slot, token)",
        "order_id",
        &rows,
    )
    .await?;
    // Responses brought in before the first visit answer their sets already.
    let imported: i64 = tx
        .scalar(
            sql!(
                "SELECT COUNT(*) FROM study_responses
                 WHERE participant_id = :user AND study_id = :study"
            ),
            named! { user: user.id, study: study.id },
        )
        .await?;
    if imported > 0 {
        mark_answered(tx, study.id, now_micros()).await?;
    }
    Ok(())
}

/// Which sets of this participant's order are answered (a set counts as answered when
/// they have given any response on its clips): one seek on their order, its marks set
/// by the writes that store responses.
pub(crate) async fn answered_positions(
    tx: &mut impl Tx,
    study: &Study,
    user: &User,
) -> Result<Vec<(i64, bool)>> {
    let rows: Vec<(i64, Option<i64>)> = tx
        .fetch(
            sql!(
                "SELECT position, answered_at FROM study_orders
                 WHERE study_id = :study AND participant_id = :user ORDER BY position"
            ),
            named! { study: study.id, user: user.id },
        )
        .await?;
    Ok(rows
        .into_iter()
        .map(|(position, at)| (position, at.is_some()))
        .collect())
}

/// One response, as stored.
struct NewResponse {
    participant: i64,
    clip: i64,
    axis: Axis,
    value: String,
}

async fn insert_responses(
    tx: &mut impl Tx,
    study_id: i64,
    rows: &[NewResponse],
    origin: &str,
    at: i64,
) -> Result<()> {
    let rows: Vec<Vec<Value<'_>>> = rows
        .iter()
        .map(|r| {
            vec![
                study_id.into(),
                r.participant.into(),
                r.clip.into(),
                r.axis.as_str().into(),
                r.value.as_str().into(),
                origin.into(),
                at.into(),
            ]
        })
        .collect();
    tx.insert_rows::<(i64,)>(
        "INSERT INTO study_responses (study_id, participant_id, clip_id, axis, value, origin, answered_at)",
        "id",
        &rows,
    )
    .await?;
    Ok(())
}

/// A participant's stored answer on these clips (in slot order), if any: one query
/// over the set's clips (the set's clips all share one `set_id`).
pub(crate) async fn stored_answer(
    tx: &mut impl Tx,
    participant_id: i64,
    clip_ids: &[i64],
) -> Result<Option<SetAnswer>> {
    let n = clip_ids.len();
    let Some(first) = clip_ids.first() else {
        return Ok(None);
    };
    let rows: Vec<(i64, String, String)> = tx
        .fetch(
            // The set's clips first (a seek by set), then each one's responses (a seek
            // on the participant and clip): not every response of the participant.
            sql!(
                "SELECT r.clip_id, r.axis, r.value FROM study_responses r
                 WHERE r.participant_id = :participant
                   AND r.clip_id IN (SELECT c.id FROM study_clips c
                                     WHERE c.set_id = (SELECT set_id FROM study_clips
                                                       WHERE id = :clip))"
            ),
            named! { participant: participant_id, clip: *first },
        )
        .await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let mut answer = SetAnswer {
        ranks: [vec![None; n], vec![None; n], vec![None; n]],
        labels: vec![None; n],
    };
    for (clip, axis, value) in rows {
        let Some(slot) = clip_ids.iter().position(|c| *c == clip) else {
            continue;
        };
        match Axis::parse(&axis).map_err(Error::Internal)? {
            Axis::RealFake => {
                answer.labels[slot] = Some(Truth::parse(&value).map_err(Error::Internal)?);
            }
            a => {
                if let Some(i) = RANK_AXES.iter().position(|x| *x == a) {
                    // A rank stored by this code is a number; anything else reads as not ranked.
                    answer.ranks[i][slot] = value.parse().ok();
                }
            }
        }
    }
    Ok(Some(answer))
}

/// Records a participant's answer to the set at `position` of their order: whole (every
/// clip ranked on every axis and labelled) and final (the same answer again stores
/// nothing; another is refused).
pub(crate) async fn answer_set(
    tx: &mut impl Tx,
    study: &Study,
    user: &User,
    position: i64,
    answer: &SetAnswer,
) -> Result<StudyProgress> {
    // The set's clips and whether it was answered, in one read; the order is drawn
    // first only when the participant has none yet (the set is then empty).
    let mut slots = set_slots(tx, study, user, position).await?;
    if slots.is_empty() && !has_order(tx, study, user).await? {
        ensure_order(tx, study, user).await?;
        slots = set_slots(tx, study, user, position).await?;
    }
    let clip_ids: Vec<i64> = slots.iter().map(|s| s.0).collect();
    if clip_ids.is_empty() {
        return Err(Error::NotFound(format!("there is no set {position}")));
    }
    let problems = answer.problems(clip_ids.len());
    if !problems.is_empty() {
        return Err(Error::Invalid(problems.join("\n")));
    }
    // An answered set (its order says so, whether answered here or brought in) keeps
    // its answer: the same one again stores nothing, another is refused.
    if slots.iter().any(|s| s.1.is_some())
        && let Some(before) = stored_answer(tx, user.id, &clip_ids).await?
    {
        if before == *answer {
            return Ok(progress(&answered_positions(tx, study, user).await?));
        }
        return Err(Error::Conflict(format!(
            "set {position} is already answered; answers are final"
        )));
    }
    let mut rows = Vec::new();
    for (slot, clip_id) in clip_ids.iter().enumerate() {
        for (axis, ranks) in RANK_AXES.iter().zip(&answer.ranks) {
            if let Some(r) = ranks[slot] {
                rows.push(NewResponse {
                    participant: user.id,
                    clip: *clip_id,
                    axis: *axis,
                    value: r.to_string(),
                });
            }
        }
        if let Some(t) = answer.labels[slot] {
            rows.push(NewResponse {
                participant: user.id,
                clip: *clip_id,
                axis: Axis::RealFake,
                value: t.as_str().to_string(),
            });
        }
    }
    let now = now_micros();
    insert_responses(tx, study.id, &rows, "web", now).await?;
    tx.exec(
        sql!(
            "UPDATE study_orders SET answered_at = :now
             WHERE study_id = :study AND participant_id = :user AND position = :position"
        ),
        named! { now, study: study.id, user: user.id, position },
    )
    .await?;
    Ok(progress(&answered_positions(tx, study, user).await?))
}

/// How far a participant is, from the answered places of their order.
pub(crate) fn progress(done: &[(i64, bool)]) -> StudyProgress {
    StudyProgress {
        total: i64::try_from(done.len()).unwrap_or(i64::MAX),
        answered: i64::try_from(done.iter().filter(|d| d.1).count()).unwrap_or(i64::MAX),
        next: done.iter().find(|d| !d.1).map(|d| d.0),
    }
}

/// Sets how a study's clips are shown.
pub(crate) async fn set_display(
    tx: &mut impl Tx,
    study_id: i64,
    display: Display,
    frames: i64,
) -> Result<()> {
    tx.exec(
        sql!(
            "UPDATE studies SET display_mode = :display, strip_frames = :frames WHERE id = :study"
        ),
        named! { display: display.as_str(), frames, study: study_id },
    )
    .await?;
    Ok(())
}

/// Stores checked comparison sets, all or nothing, with the copies participants
/// receive: the study is made on first use; a set already there must be the same; no
/// set is added once anyone has an order or an answer.
pub(crate) async fn import_sets(
    tx: &mut impl Tx,
    campaign_name: &str,
    sets: &CheckedSets,
    prepared: &[ServedCopy],
    display: Option<(Display, i64)>,
) -> Result<(StudyImportSummary, Study)> {
    let what = format!("study sets file {}", sets.path.display());
    let campaign = base::existing_campaign(tx, campaign_name).await?;
    let study = match study_of(tx, campaign.id).await? {
        Some(s) => s,
        None => {
            let mut seed = [0u8; 8];
            crate::auth::random_bytes(&mut seed)?;
            let seed = i64::from_le_bytes(seed) & i64::MAX;
            let sources = serde_json::to_string(&sets.sources)
                .map_err(|e| Error::fault("sources do not serialise", e))?;
            tx.exec(
                sql!(
                    "INSERT INTO studies (campaign_id, sources, seed, created_at)
                     VALUES (:campaign, :sources, :seed, :now)"
                ),
                named! { campaign: campaign.id, sources: &sources, seed, now: now_micros() },
            )
            .await?;
            study_of(tx, campaign.id)
                .await?
                .ok_or_else(|| Error::Internal("the new study is not there".into()))?
        }
    };
    let mut problems = Vec::new();
    if study.sources != sets.sources {
        problems.push(LineError::new(
            1,
            Some("clips"),
            format!(
                "the study compares the sources {}; this file has {}",
                study.sources.join(", "),
                sets.sources.join(", ")
            ),
        ));
    }
    // What is stored already: set -> its clips (clip id, source, truth, file hash).
    let rows: Vec<(String, String, String, String, String)> = tx
        .fetch(
            sql!(
                "SELECT s.set_key, c.clip_key, c.source, c.truth, c.source_sha256
                 FROM study_sets s JOIN study_clips c ON c.set_id = s.id WHERE s.study_id = :study"
            ),
            named! { study: study.id },
        )
        .await?;
    let mut stored: HashMap<String, Vec<(String, String, String, String)>> = HashMap::new();
    let mut stored_clips: HashMap<String, String> = HashMap::new();
    for (set, clip, source, truth, sha) in rows {
        stored_clips.insert(clip.clone(), set.clone());
        stored
            .entry(set)
            .or_default()
            .push((clip, source, truth, sha));
    }
    let mut new_sets = Vec::new();
    let mut summary = StudyImportSummary::default();
    for set in &sets.sets {
        let mut mine: Vec<(String, String, String, String)> = set
            .clips
            .iter()
            .map(|c| {
                (
                    c.clip_id.clone(),
                    c.source.clone(),
                    c.truth.as_str().to_string(),
                    c.media.sha256.clone(),
                )
            })
            .collect();
        match stored.get_mut(&set.set_id) {
            Some(theirs) => {
                theirs.sort();
                mine.sort();
                if *theirs == mine {
                    summary.sets_known += 1;
                } else {
                    problems.push(LineError::new(
                        set.line,
                        Some("clips"),
                        format!(
                            "set `{}` is already in the study with other clips, sources, truths or files; a set cannot change",
                            set.set_id
                        ),
                    ));
                }
            }
            None => {
                for cl in &set.clips {
                    if let Some(other) = stored_clips.get(&cl.clip_id) {
                        problems.push(LineError::new(
                            set.line,
                            Some("clips"),
                            format!(
                                "clip `{}` is already in the study, in set `{other}`",
                                cl.clip_id
                            ),
                        ));
                    }
                }
                new_sets.push(set);
            }
        }
    }
    if !new_sets.is_empty() && problems.is_empty() && started(tx, study.id).await? {
        problems.push(LineError::new(
            new_sets[0].line,
            Some("set_id"),
            format!(
                "the study has begun (participants have orders or answers), so no set can be added; `{}` is new",
                new_sets[0].set_id
            ),
        ));
    }
    if !problems.is_empty() {
        return Err(Error::Rejected(Rejected { what, problems }));
    }
    insert_sets(tx, study.id, &new_sets, prepared, &mut summary).await?;
    if let Some((d, k)) = display {
        set_display(tx, study.id, d, k).await?;
    }
    let study = study_of(tx, campaign.id)
        .await?
        .ok_or_else(|| Error::Internal("the study is not there".into()))?;
    Ok((summary, study))
}

/// Stores the new sets of a study after its last, each with its clips and the copies
/// participants receive.
async fn insert_sets(
    tx: &mut impl Tx,
    study: i64,
    new_sets: &[&StudySet],
    prepared: &[ServedCopy],
    summary: &mut StudyImportSummary,
) -> Result<()> {
    let served: HashMap<&str, &ServedCopy> =
        prepared.iter().map(|p| (p.clip_key.as_str(), p)).collect();
    let mut position: i64 = tx
        .scalar(
            sql!(
                "SELECT CAST(COALESCE(MAX(position), 0) AS BIGINT) FROM study_sets
                 WHERE study_id = :study"
            ),
            named! { study },
        )
        .await?;
    for set in new_sets {
        position += 1;
        let set_id: i64 = tx
            .scalar(
                sql!(
                    "INSERT INTO study_sets (study_id, set_key, position)
                     VALUES (:study, :set_key, :position) RETURNING id"
                ),
                named! { study, set_key: &set.set_id, position },
            )
            .await?;
        let mut rows: Vec<Vec<Value<'_>>> = Vec::with_capacity(set.clips.len());
        for cl in &set.clips {
            let p = served
                .get(cl.clip_id.as_str())
                .ok_or_else(|| Error::Internal(format!("no served copy of clip {}", cl.clip_id)))?;
            rows.push(vec![
                study.into(),
                set_id.into(),
                cl.clip_id.as_str().into(),
                cl.source.as_str().into(),
                cl.truth.as_str().into(),
                cl.file.as_str().into(),
                cl.media.sha256.as_str().into(),
                p.sha256.as_str().into(),
                p.media_type.as_str().into(),
                p.size.into(),
            ]);
            summary.clips_new += 1;
        }
        tx.insert_rows::<(i64,)>(
            "INSERT INTO study_clips (study_id, set_id, clip_key, source, truth, source_file,
                                      source_sha256, media_sha256, media_type, media_size)",
            "id",
            &rows,
        )
        .await?;
        summary.sets_new += 1;
    }
    Ok(())
}

/// Each participant's answers on one axis of one set are whole: a real/fake label for
/// every clip, a ranking that ranks them all.
fn check_groups(
    groups: &BTreeMap<(String, String, Axis), AxisGroup>,
    sets: &HashMap<String, BTreeMap<String, i64>>,
    problems: &mut Vec<LineError>,
) {
    for ((who, set, axis), (line, values)) in groups {
        let Some(clips) = sets.get(set) else { continue };
        let names: Vec<String> = clips.keys().cloned().collect();
        if *axis == Axis::RealFake {
            let missing: Vec<&str> = names
                .iter()
                .filter(|c| !values.contains_key(*c))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                problems.push(LineError::new(
                    *line,
                    Some("clip_id"),
                    format!(
                        "{who} labels only part of set `{set}`: no real_fake for {}",
                        missing.join(", ")
                    ),
                ));
            }
        } else {
            // A rank that is not a number is missing: `check_ranking` names the file's cell.
            let ranks: Vec<Option<i64>> = names
                .iter()
                .map(|c| values.get(c).and_then(|v| v.parse().ok()))
                .collect();
            if let Err(m) = check_ranking(*axis, &names, &ranks) {
                problems.push(LineError::new(
                    *line,
                    Some("value"),
                    format!("{who}, set `{set}`: {m}"),
                ));
            }
        }
    }
}

/// The participant a response row names, when the account is one in this campaign;
/// else its problem is listed.
fn participant(
    people: &HashMap<String, User>,
    row: &ResponseRow,
    campaign_id: i64,
    problems: &mut Vec<LineError>,
) -> Option<User> {
    match people.get(&row.participant) {
        Some(u) if u.role_in(campaign_id) == Some(Role::Participant) => Some(u.clone()),
        Some(u) => {
            problems.push(LineError::new(
                row.line,
                Some("participant"),
                format!(
                    "`{}` is not a participant of this campaign's study ({})",
                    row.participant,
                    u.role_in(campaign_id).map_or_else(
                        || "no role in this campaign".to_string(),
                        |r| format!("the account is {} here", r.with_article())
                    )
                ),
            ));
            None
        }
        None => {
            problems.push(LineError::new(
                row.line,
                Some("participant"),
                format!(
                    "no participant named `{}` (create it: tandem user add {} --role participant)",
                    row.participant, row.participant
                ),
            ));
            None
        }
    }
}

/// A study's stored responses: (participant, clip, axis) -> value.
async fn stored_responses(
    tx: &mut impl Tx,
    study: i64,
) -> Result<HashMap<(i64, i64, String), String>> {
    let existing: Vec<(i64, i64, String, String)> = tx
        .fetch(
            sql!(
                "SELECT participant_id, clip_id, axis, value FROM study_responses
                 WHERE study_id = :study"
            ),
            named! { study },
        )
        .await?;
    Ok(existing
        .into_iter()
        .map(|(p, clip, axis, value)| ((p, clip, axis), value))
        .collect())
}

/// One participant's answers on one axis of one set: the first line, clip -> value.
type AxisGroup = (usize, BTreeMap<String, String>);

/// Brings in the responses of an earlier study, all or nothing: every row names a set,
/// a clip of it, a participant and an answer; each participant's answers on a set are
/// whole (a ranking without ties, every clip labelled) and final.
pub(crate) async fn import_responses(
    tx: &mut impl Tx,
    study: &Study,
    rows: &[ResponseRow],
    mut problems: Vec<LineError>,
    what: &str,
) -> Result<ResponsesSummary> {
    let n = study.sources.len();
    // set key -> (clip key -> clip id).
    let mut sets: HashMap<String, BTreeMap<String, i64>> = HashMap::new();
    let stored_clips: Vec<(String, String, i64)> = tx
        .fetch(
            sql!(
                "SELECT s.set_key, c.clip_key, c.id FROM study_sets s
                 JOIN study_clips c ON c.set_id = s.id
                 WHERE s.study_id = :study"
            ),
            named! { study: study.id },
        )
        .await?;
    for (set, clip, id) in stored_clips {
        sets.entry(set).or_default().insert(clip, id);
    }
    // Everyone, in one statement (accounts are people: a few hundred at most).
    let mut people: HashMap<String, User> = HashMap::new();
    let accounts = tx
        .fetch::<UserRow>(
            sql!(concat!(
                "SELECT ",
                user_columns!(),
                " FROM users u ",
                user_joins!(),
                " ORDER BY u.id"
            )),
            &[],
        )
        .await?;
    for user in fold_users(accounts)? {
        people.insert(user.name.clone(), user);
    }
    let mut seen: HashMap<(String, i64, Axis), usize> = HashMap::new();
    // (participant, set, axis) -> (first line, clip key -> value)
    let mut groups: BTreeMap<(String, String, Axis), AxisGroup> = BTreeMap::new();
    let mut accepted: Vec<(&ResponseRow, User, i64)> = Vec::new();
    for row in rows {
        let mut bad = false;
        let Some(clips) = sets.get(&row.set_id) else {
            problems.push(LineError::new(
                row.line,
                Some("set_id"),
                format!("no set `{}` in the study", row.set_id),
            ));
            continue;
        };
        let clip_id = match clips.get(&row.clip_id) {
            Some(id) => Some(*id),
            None => {
                problems.push(LineError::new(
                    row.line,
                    Some("clip_id"),
                    format!("clip `{}` is not in set `{}`", row.clip_id, row.set_id),
                ));
                bad = true;
                None
            }
        };
        let user = participant(&people, row, study.campaign_id, &mut problems);
        bad |= user.is_none();
        if let ResponseValue::Rank(r) = row.value
            && r > n as i64
        {
            problems.push(LineError::new(
                row.line,
                Some("value"),
                format!("rank {r} is outside 1-{n} (the sets hold {n} clips)"),
            ));
            bad = true;
        }
        let (Some(user), Some(clip_id), false) = (user, clip_id, bad) else {
            continue;
        };
        if let Some(first) = seen.insert((user.name.clone(), clip_id, row.axis), row.line) {
            problems.push(LineError::new(
                row.line,
                Some("axis"),
                format!(
                    "a second {} answer of {} for clip `{}` (first on line {first})",
                    row.axis, user.name, row.clip_id
                ),
            ));
            continue;
        }
        groups
            .entry((user.name.clone(), row.set_id.clone(), row.axis))
            .or_insert_with(|| (row.line, BTreeMap::new()))
            .1
            .insert(row.clip_id.clone(), row.value.text());
        accepted.push((row, user, clip_id));
    }
    check_groups(&groups, &sets, &mut problems);
    // What is stored already.
    let mut summary = ResponsesSummary::default();
    let stored = stored_responses(tx, study.id).await?;
    let mut to_insert = Vec::new();
    for (row, user, clip_id) in &accepted {
        let value = row.value.text();
        match stored.get(&(user.id, *clip_id, row.axis.as_str().to_string())) {
            Some(v) if *v == value => summary.already_there += 1,
            Some(v) => problems.push(LineError::new(
                row.line,
                Some("value"),
                format!(
                    "{} already answered {} = {v} for clip `{}`; answers are final",
                    user.name, row.axis, row.clip_id
                ),
            )),
            None => to_insert.push(NewResponse {
                participant: user.id,
                clip: *clip_id,
                axis: row.axis,
                value,
            }),
        }
    }
    if !problems.is_empty() {
        problems.sort_by_key(|p| p.line);
        return Err(Error::Rejected(Rejected {
            what: what.to_string(),
            problems,
        }));
    }
    let now = now_micros();
    insert_responses(tx, study.id, &to_insert, "import", now).await?;
    mark_answered(tx, study.id, now).await?;
    summary.added = to_insert.len();
    summary.participants = accepted
        .iter()
        .map(|(_, u, _)| u.id)
        .collect::<HashSet<_>>()
        .len();
    Ok(summary)
}
