//! The human baseline's writes: answers brought in from a file, all or nothing and
//! final; the baseline set up for the browser, a participant's presentations drawn when
//! they begin, an answer (final); the lookups its reads share.

use crate::clock::now_micros;
use crate::domain::baseline::{draw, letter, letters};
use crate::error::{Error, LineError, Rejected, Result};
use crate::store::accounts::User;
use crate::store::baseline::{
    AnswersSummary, Baseline, BaselineMedia, BaselineProgress, NewAnswer, PlaceProgress,
    SetupQuestion, ShownPresentation, StoredAnswer,
};
use crate::store::catalog::Campaign;
use crate::store::db::{Tx, Value, named, row, sql};
use crate::store::{Lock, Store};
use std::sync::Arc;

impl Store {
    /// The baseline's participants of a campaign, by name.
    pub async fn baseline_participants(&self, campaign: &Campaign) -> Result<Vec<String>> {
        let found = read_tx!(self, long, |c| participants(c, campaign.id).await)?;
        Ok(found.into_iter().map(|(_, name)| name).collect())
    }

    /// How many people hold each role in a campaign, `(role, n)` by role.
    pub async fn group_sizes(&self, campaign: &Campaign) -> Result<Vec<(String, String, i64)>> {
        read_tx!(self, long, |c| group_sizes(c, campaign.id).await)
    }

    /// Every question id of a campaign, any version and outcome.
    pub async fn question_keys(&self, campaign: &Campaign) -> Result<Vec<String>> {
        read_tx!(self, long, |c| question_keys(c, campaign.id).await)
    }

    /// Every answer of a campaign's baseline, by participant, question and presentation.
    pub async fn baseline_answers(&self, campaign: &Campaign) -> Result<Vec<StoredAnswer>> {
        read_tx!(self, long, |c| answers(c, campaign.id).await)
    }

    /// Brings in answers gathered elsewhere (checked against the retained questions
    /// first): all or nothing, final.
    pub async fn import_baseline_answers(
        &self,
        campaign: &Campaign,
        rows: &[NewAnswer],
        what: &str,
    ) -> Result<AnswersSummary> {
        let (campaign, rows) = (campaign.id, Arc::new(rows.to_vec()));
        write_tx!(self, Lock::Structure, (rows, what), |tx| {
            import_answers(tx, campaign, rows, what).await
        })
    }

    /// The campaign's baseline as taken in the browser, if it was set up.
    pub async fn baseline(&self, campaign: &Campaign) -> Result<Option<Baseline>> {
        read_tx!(self, |c| baseline_of(c, campaign.id).await)
    }

    /// A baseline by its id (participants' URLs name it so).
    pub async fn baseline_by_id(&self, id: i64) -> Result<Baseline> {
        read_tx!(self, |c| baseline_by_id(c, id).await)
    }

    /// Sets the baseline up (again, while nobody has begun): k, the seed, its questions.
    pub async fn setup_baseline(
        &self,
        campaign: &Campaign,
        per_task: i64,
        seed: i64,
        questions: &[SetupQuestion],
    ) -> Result<Baseline> {
        let (campaign, questions) = (campaign.id, Arc::new(questions.to_vec()));
        write_tx!(self, Lock::Structure, (questions), |tx| {
            setup(tx, campaign, per_task, seed, questions).await
        })
    }

    /// Draws a participant's presentations on their first visit; their progress.
    pub async fn begin_baseline(
        &self,
        baseline: &Baseline,
        user: &User,
    ) -> Result<BaselineProgress> {
        write_tx!(self, Lock::Structure, (baseline, user), |tx| {
            begin(tx, baseline, user).await?;
            progress(tx, baseline, user).await
        })
    }

    /// A participant's progress, without drawing anything.
    pub async fn baseline_progress(
        &self,
        baseline: &Baseline,
        user: &User,
    ) -> Result<BaselineProgress> {
        read_tx!(self, |c| progress(c, baseline, user).await)
    }

    /// One presentation as its participant sees it.
    pub async fn baseline_presentation(
        &self,
        baseline: &Baseline,
        user: &User,
        seq: i64,
    ) -> Result<ShownPresentation> {
        read_tx!(self, |c| presentation(c, baseline, user, seq).await)
    }

    /// Records a participant's answer (final); their progress after it.
    pub async fn answer_baseline(
        &self,
        baseline: &Baseline,
        user: &User,
        seq: i64,
        chosen: usize,
    ) -> Result<BaselineProgress> {
        write_tx!(self, Lock::Item, (baseline, user), |tx| {
            answer(tx, baseline, user, seq, chosen).await
        })
    }

    /// The clip behind a participant's baseline token.
    pub async fn baseline_media(&self, token: &str) -> Result<Option<BaselineMedia>> {
        read_tx!(self, |c| media(c, token).await)
    }

    /// Every participant who began, in the order they began.
    pub async fn baseline_places(&self, baseline: &Baseline) -> Result<Vec<PlaceProgress>> {
        read_tx!(self, long, |c| places(c, baseline).await)
    }

    /// The served copies the baseline shows (their SHA-256).
    pub async fn baseline_media_hashes(&self, baseline: &Baseline) -> Result<Vec<String>> {
        read_tx!(self, long, |c| media_hashes(c, baseline).await)
    }
}
use std::collections::{BTreeMap, HashMap, HashSet};

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

/// How many people hold each role in a campaign (`member`), how many took part in the
/// baseline and in the study (`answered`: who gave at least one answer, as Tables 7, 14
/// and 15 count them), and how many of the baseline's and the study's members never
/// answered (`silent`: invited, revoked or not begun): `(kind, role, n)`.
pub(crate) async fn group_sizes(
    tx: &mut impl Tx,
    campaign: i64,
) -> Result<Vec<(String, String, i64)>> {
    tx.fetch(
        sql!(
            "SELECT 'member' AS kind, role, COUNT(*) AS n FROM campaign_members
             WHERE campaign_id = :campaign GROUP BY role
             UNION ALL
             SELECT 'answered', 'baseline', COUNT(DISTINCT participant_id) FROM baseline_answers
             WHERE campaign_id = :campaign
             UNION ALL
             SELECT 'answered', 'participant', COUNT(DISTINCT r.participant_id)
             FROM study_responses r JOIN studies s ON s.id = r.study_id
             WHERE s.campaign_id = :campaign
             UNION ALL
             SELECT 'silent', m.role, COUNT(*) FROM campaign_members m
             WHERE m.campaign_id = :campaign AND m.role IN ('baseline', 'participant')
               AND NOT EXISTS (SELECT 1 FROM baseline_answers a
                               WHERE a.campaign_id = m.campaign_id AND a.participant_id = m.user_id)
               AND NOT EXISTS (SELECT 1 FROM study_responses r JOIN studies s ON s.id = r.study_id
                               WHERE s.campaign_id = m.campaign_id AND r.participant_id = m.user_id)
             GROUP BY m.role"
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
    let rows: Vec<AnswerRow> = new
        .iter()
        .map(|(id, r)| {
            (
                *id,
                r.question_key.as_str(),
                r.presentation,
                r.shown.as_str(),
                r.chosen.as_str(),
            )
        })
        .collect();
    insert_answers(tx, campaign, "import", &rows).await?;
    summary.added = new.len();
    summary.participants = who.len();
    Ok(summary)
}

/// An answer to store: the participant's id, the question, the presentation, the
/// options as shown and the one chosen.
type AnswerRow<'a> = (i64, &'a str, i64, &'a str, &'a str);

/// The one statement that stores baseline answers, for an answer given on the web
/// (`origin` "web") and for those an import brings ("import").
async fn insert_answers(
    tx: &mut impl Tx,
    campaign: i64,
    origin: &str,
    rows: &[AnswerRow<'_>],
) -> Result<()> {
    let now = now_micros();
    let values: Vec<Vec<Value<'_>>> = rows
        .iter()
        .map(|&(participant, question, presentation, shown, chosen)| {
            vec![
                campaign.into(),
                participant.into(),
                question.into(),
                presentation.into(),
                shown.into(),
                chosen.into(),
                origin.into(),
                now.into(),
            ]
        })
        .collect();
    tx.insert_rows::<(i64,)>(
        "INSERT INTO baseline_answers (campaign_id, participant_id, question_key, presentation, shown, chosen, origin, answered_at)",
        "presentation",
        &values,
    )
    .await?;
    Ok(())
}

row! {
    struct BaselineRow {
        id: i64,
        campaign_id: i64,
        per_task: i64,
        seed: i64,
    }
}

fn baseline_of_row(r: BaselineRow) -> Baseline {
    Baseline {
        id: r.id,
        campaign_id: r.campaign_id,
        per_task: r.per_task,
        seed: r.seed,
    }
}

/// The campaign's baseline, if it was set up.
pub(crate) async fn baseline_of(tx: &mut impl Tx, campaign: i64) -> Result<Option<Baseline>> {
    Ok(tx
        .fetch_opt::<BaselineRow>(
            sql!("SELECT id, campaign_id, per_task, seed FROM baselines WHERE campaign_id = :campaign"),
            named! { campaign },
        )
        .await?
        .map(baseline_of_row))
}

/// A baseline by its id.
pub(crate) async fn baseline_by_id(tx: &mut impl Tx, id: i64) -> Result<Baseline> {
    tx.fetch_opt::<BaselineRow>(
        sql!("SELECT id, campaign_id, per_task, seed FROM baselines WHERE id = :id"),
        named! { id },
    )
    .await?
    .map(baseline_of_row)
    .ok_or_else(|| Error::NotFound(format!("there is no baseline {id}")))
}

/// How many participants have begun.
async fn begun(tx: &mut impl Tx, baseline: i64) -> Result<i64> {
    tx.scalar(
        sql!("SELECT COUNT(*) FROM baseline_places WHERE baseline_id = :baseline"),
        named! { baseline },
    )
    .await
}

/// Sets the campaign's baseline up (or again, while nobody has begun): k videos of each
/// task per participant, the seed, and the questions as they are now, in the given
/// order. Refused once someone has begun: their draw would no longer be the seed's.
pub(crate) async fn setup(
    tx: &mut impl Tx,
    campaign: i64,
    per_task: i64,
    seed: i64,
    questions: &[SetupQuestion],
) -> Result<Baseline> {
    if per_task < 1 {
        return Err(Error::field("per_task", "give at least 1 video per task"));
    }
    if questions.is_empty() {
        return Err(Error::Invalid(
            "the campaign has no retained question yet: the baseline asks retained questions only"
                .into(),
        ));
    }
    let id = match baseline_of(tx, campaign).await? {
        Some(b) => {
            let n = begun(tx, b.id).await?;
            if n > 0 {
                return Err(Error::Conflict(format!(
                    "the baseline has begun ({n} participant(s) have their questions): it cannot be set up again"
                )));
            }
            tx.exec(
                sql!("UPDATE baselines SET per_task = :per_task, seed = :seed WHERE id = :id"),
                named! { per_task, seed, id: b.id },
            )
            .await?;
            tx.exec(
                sql!("DELETE FROM baseline_questions WHERE baseline_id = :id"),
                named! { id: b.id },
            )
            .await?;
            b.id
        }
        None => {
            tx.scalar(
                sql!(
                    "INSERT INTO baselines (campaign_id, per_task, seed, created_at)
                     VALUES (:campaign, :per_task, :seed, :now) RETURNING id"
                ),
                named! { campaign, per_task, seed, now: now_micros() },
            )
            .await?
        }
    };
    let options: Vec<String> = questions
        .iter()
        .map(|q| serde_json::to_string(&q.options).map_err(|e| Error::Internal(e.to_string())))
        .collect::<Result<_>>()?;
    let values: Vec<Vec<Value<'_>>> = questions
        .iter()
        .zip(&options)
        .enumerate()
        .map(|(i, (q, o))| {
            vec![
                id.into(),
                q.question_key.as_str().into(),
                q.clip_key.as_str().into(),
                q.task.as_str().into(),
                (i as i64).into(),
                q.text.as_str().into(),
                o.as_str().into(),
                q.media_sha256.as_str().into(),
                q.media_type.as_str().into(),
            ]
        })
        .collect();
    tx.insert_rows::<(i64,)>(
        "INSERT INTO baseline_questions (baseline_id, question_key, clip_key, task, position, text, options, media_sha256, media_type)",
        "position",
        &values,
    )
    .await?;
    baseline_by_id(tx, id).await
}

/// The place a participant began at, if they have.
async fn place_of(tx: &mut impl Tx, baseline: i64, user: i64) -> Result<Option<i64>> {
    tx.scalar_opt(
        sql!(
            "SELECT place FROM baseline_places
             WHERE baseline_id = :baseline AND participant_id = :user"
        ),
        named! { baseline, user },
    )
    .await
}

row! {
    struct DrawQuestion {
        question_key: String,
        clip_key: String,
        task: String,
        options: String,
    }
}

/// Draws a participant's presentations on their first visit (nothing when they have):
/// their place is the number who began before them; the draw depends on it and the
/// seed alone (`domain::baseline::draw`). Each presentation gets a random clip token.
pub(crate) async fn begin(tx: &mut impl Tx, baseline: &Baseline, user: &User) -> Result<()> {
    if place_of(tx, baseline.id, user.id).await?.is_some() {
        return Ok(());
    }
    let place = begun(tx, baseline.id).await?;
    let rows: Vec<DrawQuestion> = tx
        .fetch(
            sql!(
                "SELECT question_key, clip_key, task, options FROM baseline_questions
                 WHERE baseline_id = :baseline ORDER BY position"
            ),
            named! { baseline: baseline.id },
        )
        .await?;
    // Tasks by name, videos in the export's order, questions in order within them.
    // Per task, its videos: (clip, its questions as (row, options)).
    type Videos<'a> = Vec<(&'a str, Vec<(usize, usize)>)>;
    let mut tasks: BTreeMap<&str, Videos<'_>> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        let n = serde_json::from_str::<Vec<String>>(&r.options)
            .map_err(|e| Error::fault("stored options are not JSON", e))?
            .len();
        let videos = tasks.entry(r.task.as_str()).or_default();
        match videos.last_mut() {
            Some((clip, qs)) if *clip == r.clip_key.as_str() => qs.push((i, n)),
            _ => videos.push((r.clip_key.as_str(), vec![(i, n)])),
        }
    }
    let by_task: Vec<Vec<Vec<(usize, usize)>>> = tasks
        .into_values()
        .map(|videos| videos.into_iter().map(|(_, qs)| qs).collect())
        .collect();
    let drawn = draw(
        &by_task,
        usize::try_from(place).unwrap_or(0),
        usize::try_from(baseline.per_task).unwrap_or(1),
        baseline.seed as u64,
    );
    tx.exec(
        sql!(
            "INSERT INTO baseline_places (baseline_id, participant_id, place, started_at)
             VALUES (:baseline, :user, :place, :now)"
        ),
        named! { baseline: baseline.id, user: user.id, place, now: now_micros() },
    )
    .await?;
    let shown: Vec<(String, String)> = drawn
        .iter()
        .map(|d| Ok((letters(&d.shown), crate::auth::random_id(16)?)))
        .collect::<Result<_>>()?;
    let values: Vec<Vec<Value<'_>>> = drawn
        .iter()
        .zip(&shown)
        .enumerate()
        .map(|(i, (d, (letters, token)))| {
            vec![
                baseline.id.into(),
                user.id.into(),
                (i as i64 + 1).into(),
                rows[d.question].question_key.as_str().into(),
                (d.presentation as i64).into(),
                letters.as_str().into(),
                token.as_str().into(),
            ]
        })
        .collect();
    if !values.is_empty() {
        tx.insert_rows::<(i64,)>(
            "INSERT INTO baseline_slots (baseline_id, participant_id, seq, question_key, presentation, shown, token)",
            "seq",
            &values,
        )
        .await?;
    }
    Ok(())
}

/// A participant's progress: their presentations and which are answered.
pub(crate) async fn progress(
    tx: &mut impl Tx,
    baseline: &Baseline,
    user: &User,
) -> Result<BaselineProgress> {
    let rows: Vec<(i64, i64)> = tx
        .fetch(
            sql!(
                "SELECT s.seq, CASE WHEN a.answered_at IS NULL THEN 0 ELSE 1 END AS done
                 FROM baseline_slots s
                 JOIN baselines b ON b.id = s.baseline_id
                 LEFT JOIN baseline_answers a
                   ON a.campaign_id = b.campaign_id AND a.participant_id = s.participant_id
                  AND a.question_key = s.question_key AND a.presentation = s.presentation
                 WHERE s.baseline_id = :baseline AND s.participant_id = :user
                 ORDER BY s.seq"
            ),
            named! { baseline: baseline.id, user: user.id },
        )
        .await?;
    let begun = !rows.is_empty() || place_of(tx, baseline.id, user.id).await?.is_some();
    Ok(BaselineProgress {
        total: rows.len() as i64,
        answered: rows.iter().filter(|r| r.1 == 1).count() as i64,
        next: rows.iter().find(|r| r.1 == 0).map(|r| r.0),
        begun,
    })
}

row! {
    struct SlotRow {
        question_key: String,
        presentation: i64,
        shown: String,
        token: String,
        text: String,
        options: String,
        chosen: Option<String>,
    }
}

async fn slot(tx: &mut impl Tx, baseline: &Baseline, user: &User, seq: i64) -> Result<SlotRow> {
    tx.fetch_opt(
        sql!(
            "SELECT s.question_key, s.presentation, s.shown, s.token, q.text, q.options, a.chosen
             FROM baseline_slots s
             JOIN baselines b ON b.id = s.baseline_id
             JOIN baseline_questions q
               ON q.baseline_id = s.baseline_id AND q.question_key = s.question_key
             LEFT JOIN baseline_answers a
               ON a.campaign_id = b.campaign_id AND a.participant_id = s.participant_id
              AND a.question_key = s.question_key AND a.presentation = s.presentation
             WHERE s.baseline_id = :baseline AND s.participant_id = :user AND s.seq = :seq"
        ),
        named! { baseline: baseline.id, user: user.id, seq },
    )
    .await?
    .ok_or_else(|| Error::NotFound(format!("there is no question {seq} for you")))
}

/// One presentation as its participant sees it: the options in the order shown.
pub(crate) async fn presentation(
    tx: &mut impl Tx,
    baseline: &Baseline,
    user: &User,
    seq: i64,
) -> Result<ShownPresentation> {
    let s = slot(tx, baseline, user, seq).await?;
    let options: Vec<String> = serde_json::from_str(&s.options)
        .map_err(|e| Error::fault("stored options are not JSON", e))?;
    let shown: Vec<String> = s
        .shown
        .chars()
        .map(|c| {
            crate::domain::baseline::letter_index(c)
                .and_then(|i| options.get(i).cloned())
                .ok_or_else(|| Error::Internal(format!("a stored presentation shows `{c}`")))
        })
        .collect::<Result<_>>()?;
    let chosen = s
        .chosen
        .as_deref()
        .and_then(|c| c.chars().next())
        .and_then(crate::domain::baseline::letter_index);
    Ok(ShownPresentation {
        seq,
        progress: progress(tx, baseline, user).await?,
        text: s.text,
        options: shown,
        token: s.token,
        chosen,
    })
}

/// Records a participant's answer to presentation `seq` (the shown position chosen,
/// 0 = the first shown): final, so the same answer again changes nothing and another is
/// refused. Returns their progress after it.
pub(crate) async fn answer(
    tx: &mut impl Tx,
    baseline: &Baseline,
    user: &User,
    seq: i64,
    chosen: usize,
) -> Result<BaselineProgress> {
    let s = slot(tx, baseline, user, seq).await?;
    if chosen >= s.shown.chars().count() {
        return Err(Error::field(
            "chosen",
            format!(
                "choose one of the {} options shown (A to {})",
                s.shown.chars().count(),
                letter(s.shown.chars().count().saturating_sub(1))
            ),
        ));
    }
    let chosen = letter(chosen).to_string();
    match s.chosen {
        Some(before) if before == chosen => {}
        Some(before) => {
            return Err(Error::Conflict(format!(
                "question {seq} was answered already ({before}); answers are final"
            )));
        }
        None => {
            let row = (
                user.id,
                s.question_key.as_str(),
                s.presentation,
                s.shown.as_str(),
                chosen.as_str(),
            );
            insert_answers(tx, baseline.campaign_id, "web", &[row]).await?;
        }
    }
    progress(tx, baseline, user).await
}

/// The clip behind a participant's token.
pub(crate) async fn media(tx: &mut impl Tx, token: &str) -> Result<Option<BaselineMedia>> {
    let row: Option<(i64, String, String)> = tx
        .fetch_opt(
            sql!(
                "SELECT s.participant_id, q.media_sha256, q.media_type FROM baseline_slots s
                 JOIN baseline_questions q
                   ON q.baseline_id = s.baseline_id AND q.question_key = s.question_key
                 WHERE s.token = :token"
            ),
            named! { token },
        )
        .await?;
    Ok(
        row.map(|(participant_id, sha256, media_type)| BaselineMedia {
            participant_id,
            sha256,
            media_type,
        }),
    )
}

/// Every participant who began, in the order they began, with how far they are.
pub(crate) async fn places(tx: &mut impl Tx, baseline: &Baseline) -> Result<Vec<PlaceProgress>> {
    tx.fetch(
        sql!(
            "SELECT u.name, p.place,
                    (SELECT COUNT(*) FROM baseline_slots s
                     WHERE s.baseline_id = p.baseline_id AND s.participant_id = p.participant_id) AS total,
                    (SELECT COUNT(*) FROM baseline_slots s
                     JOIN baseline_answers a
                       ON a.campaign_id = :campaign AND a.participant_id = s.participant_id
                      AND a.question_key = s.question_key AND a.presentation = s.presentation
                     WHERE s.baseline_id = p.baseline_id AND s.participant_id = p.participant_id) AS answered
             FROM baseline_places p JOIN users u ON u.id = p.participant_id
             WHERE p.baseline_id = :baseline ORDER BY p.place"
        ),
        named! { baseline: baseline.id, campaign: baseline.campaign_id },
    )
    .await
}

/// The media of a baseline's questions (their SHA-256), distinct.
pub(crate) async fn media_hashes(tx: &mut impl Tx, baseline: &Baseline) -> Result<Vec<String>> {
    let rows: Vec<(String,)> = tx
        .fetch(
            sql!(
                "SELECT DISTINCT media_sha256 FROM baseline_questions
                 WHERE baseline_id = :baseline ORDER BY 1"
            ),
            named! { baseline: baseline.id },
        )
        .await?;
    Ok(rows.into_iter().map(|r| r.0).collect())
}
