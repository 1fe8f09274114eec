// The blind study: sets, each participant's stored order and clip tokens, answers, and
// responses brought in. (Shared SQL: compiled once per backend, see store/mod.rs.)

use crate::clock::now_micros;
use crate::domain::facts::{ResponseFact, StudyClipFact, StudyData};
use crate::domain::import::{CheckedSets, ResponseRow, ResponseValue, ServedCopy};
use crate::domain::study::{
    Axis, Display, RANK_AXES, SetAnswer, Truth, check_ranking, label, participant_order,
};
use crate::domain::Role;
use crate::error::{Error, LineError, Rejected, Result};
use crate::store::Lock;
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::store::study::{
    ParticipantProgress, ResponsesSummary, ShownClip, ShownSet, Study, StudyImportSummary,
    StudyMedia, StudyProgress,
};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

#[derive(sqlx::FromRow)]
struct StudyRow {
    id: i64,
    campaign_id: i64,
    sources: String,
    display_mode: String,
    strip_frames: i64,
    seed: i64,
}

impl TryFrom<StudyRow> for Study {
    type Error = Error;
    fn try_from(r: StudyRow) -> Result<Study> {
        Ok(Study {
            id: r.id,
            campaign_id: r.campaign_id,
            sources: serde_json::from_str(&r.sources)
                .map_err(|e| Error::Internal(format!("stored sources are not JSON: {e}")))?,
            display: Display::parse(&r.display_mode).map_err(Error::Internal)?,
            frames: r.strip_frames,
            seed: r.seed,
        })
    }
}

async fn study_in(c: &mut Conn, campaign_id: i64) -> Result<Option<Study>> {
    qa::<StudyRow>(
        "SELECT id, campaign_id, sources, display_mode, strip_frames, seed FROM studies WHERE campaign_id = $1",
    )
    .bind(campaign_id)
    .fetch_optional(&mut *c)
    .await?
    .map(Study::try_from)
    .transpose()
}

async fn started_in(c: &mut Conn, study_id: i64) -> Result<bool> {
    let n: i64 = qs(
        "SELECT (SELECT COUNT(*) FROM study_orders WHERE study_id = $1)
              + (SELECT COUNT(*) FROM study_responses WHERE study_id = $1)",
    )
    .bind(study_id)
    .fetch_one(&mut *c)
    .await?;
    Ok(n > 0)
}

/// One clip of a participant's set: its slot (0 is A), token and clip.
async fn views_in(c: &mut Conn, study: &Study, user: &User, position: i64) -> Result<Vec<(i64, String, i64)>> {
    Ok(qa(
        "SELECT v.slot, v.token, v.clip_id FROM study_orders o JOIN study_views v ON v.order_id = o.id
         WHERE o.study_id = $1 AND o.participant_id = $2 AND o.position = $3 ORDER BY v.slot",
    )
    .bind(study.id)
    .bind(user.id)
    .bind(position)
    .fetch_all(&mut *c)
    .await?)
}

/// Draws this participant's order if it has not been drawn yet (inside a write).
async fn ensure_order_in(c: &mut Conn, study: &Study, user: &User) -> Result<()> {
    let have: i64 =
        qs("SELECT COUNT(*) FROM study_orders WHERE study_id = $1 AND participant_id = $2")
            .bind(study.id)
            .bind(user.id)
            .fetch_one(&mut *c)
            .await?;
    if have > 0 {
        return Ok(());
    }
    // Sets in import order, each with its clips in source order: the draw below
    // shuffles both, from the study's seed and the participant.
    let rows: Vec<(i64, i64, String)> = qa(
        "SELECT s.id, c.id, c.source
         FROM study_sets s JOIN study_clips c ON c.set_id = s.id
         WHERE s.study_id = $1 ORDER BY s.position, c.id",
    )
    .bind(study.id)
    .fetch_all(&mut *c)
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
    // Orders and views in bulk (one statement each per few thousand rows).
    let mut orders: Vec<(i64, i64)> = Vec::new(); // (set, position)
    for (pos, (set_index, _)) in order.iter().enumerate() {
        let (set_id, _) = &sets[*set_index];
        orders.push((*set_id, i64::try_from(pos + 1).unwrap_or(i64::MAX)));
    }
    let mut order_id: HashMap<i64, i64> = HashMap::new(); // set -> order id
    for chunk in orders.chunks(super::base::chunk_rows(4)) {
        let sql = format!(
            "INSERT INTO study_orders (study_id, participant_id, set_id, position) VALUES {} RETURNING id, set_id",
            super::base::values(1, 4, chunk.len())
        );
        let mut insert = qa::<(i64, i64)>(sqlx::AssertSqlSafe(sql));
        for (set_id, position) in chunk {
            insert = insert.bind(study.id).bind(user.id).bind(*set_id).bind(*position);
        }
        for (id, set_id) in insert.fetch_all(&mut *c).await? {
            order_id.insert(set_id, id);
        }
    }
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
    for chunk in views.chunks(super::base::chunk_rows(4)) {
        let sql = format!(
            "INSERT INTO study_views (order_id, clip_id, slot, token) VALUES {}",
            super::base::values(1, 4, chunk.len())
        );
        let mut insert = q(sqlx::AssertSqlSafe(sql));
        for (oid, clip, slot, token) in chunk {
            insert = insert.bind(*oid).bind(*clip).bind(*slot).bind(token.clone());
        }
        insert.execute(&mut *c).await?;
    }
    Ok(())
}

/// Which sets of this participant's order are answered: a set counts as answered
/// when they have given any response on its clips.
async fn answered_positions_in(c: &mut Conn, study: &Study, user: &User) -> Result<Vec<(i64, bool)>> {
    let rows: Vec<(i64, i64)> = qa(
        "SELECT o.position,
                CAST(CASE WHEN EXISTS (SELECT 1 FROM study_responses r JOIN study_clips c ON c.id = r.clip_id
                        WHERE r.participant_id = o.participant_id AND c.set_id = o.set_id)
                THEN 1 ELSE 0 END AS BIGINT) AS done
         FROM study_orders o WHERE o.study_id = $1 AND o.participant_id = $2
         ORDER BY o.position",
    )
    .bind(study.id)
    .bind(user.id)
    .fetch_all(&mut *c)
    .await?;
    Ok(rows.into_iter().map(|(p, d)| (p, d != 0)).collect())
}

fn progress_of(done: &[(i64, bool)]) -> StudyProgress {
    StudyProgress {
        total: i64::try_from(done.len()).unwrap_or(i64::MAX),
        answered: i64::try_from(done.iter().filter(|d| d.1).count()).unwrap_or(i64::MAX),
        next: done.iter().find(|d| !d.1).map(|d| d.0),
    }
}

/// One response, as stored.
struct NewResponse {
    participant: i64,
    clip: i64,
    axis: Axis,
    value: String,
}

async fn insert_responses_in(
    c: &mut Conn,
    study_id: i64,
    rows: &[NewResponse],
    origin: &str,
    at: i64,
) -> Result<()> {
    for chunk in rows.chunks(super::base::chunk_rows(7)) {
        let sql = format!(
            "INSERT INTO study_responses (study_id, participant_id, clip_id, axis, value, origin, answered_at) VALUES {}",
            super::base::values(1, 7, chunk.len())
        );
        let mut insert = q(sqlx::AssertSqlSafe(sql));
        for r in chunk {
            insert = insert
                .bind(study_id)
                .bind(r.participant)
                .bind(r.clip)
                .bind(r.axis.as_str())
                .bind(r.value.clone())
                .bind(origin)
                .bind(at);
        }
        insert.execute(&mut *c).await?;
    }
    Ok(())
}

/// A participant's stored answer on these clips (in slot order), if any: one query
/// over the set's clips (the set's clips all share one `set_id`).
async fn stored_answer_in(
    c: &mut Conn,
    participant_id: i64,
    clip_ids: &[i64],
) -> Result<Option<SetAnswer>> {
    let n = clip_ids.len();
    let Some(first) = clip_ids.first() else {
        return Ok(None);
    };
    let rows: Vec<(i64, String, String)> = qa(
        "SELECT r.clip_id, r.axis, r.value FROM study_responses r JOIN study_clips c ON c.id = r.clip_id
         WHERE r.participant_id = $1 AND c.set_id = (SELECT set_id FROM study_clips WHERE id = $2)",
    )
    .bind(participant_id)
    .bind(first)
    .fetch_all(&mut *c)
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
                    answer.ranks[i][slot] = value.parse().ok();
                }
            }
        }
    }
    Ok(Some(answer))
}

async fn import_study_in(
    c: &mut Conn,
    campaign_name: &str,
    sets: &CheckedSets,
    prepared: &[ServedCopy],
    display: Option<(Display, i64)>,
) -> Result<(StudyImportSummary, Study)> {
    let what = format!("study sets file {}", sets.path.display());
    let campaign = super::base::ensure_campaign_in(c, campaign_name).await?;
    let study = match study_in(c, campaign.id).await? {
        Some(s) => s,
        None => {
            let mut seed = [0u8; 8];
            crate::auth::random_bytes(&mut seed)?;
            let seed = i64::from_le_bytes(seed) & i64::MAX;
            let sources = serde_json::to_string(&sets.sources)
                .map_err(|e| Error::Internal(format!("sources do not serialise: {e}")))?;
            q("INSERT INTO studies (campaign_id, sources, seed, created_at) VALUES ($1, $2, $3, $4)")
                .bind(campaign.id)
                .bind(sources)
                .bind(seed)
                .bind(now_micros())
                .execute(&mut *c)
                .await?;
            study_in(c, campaign.id)
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
    let rows: Vec<(String, String, String, String, String)> = qa(
        "SELECT s.set_key, c.clip_key, c.source, c.truth, c.source_sha256
         FROM study_sets s JOIN study_clips c ON c.set_id = s.id WHERE s.study_id = $1",
    )
    .bind(study.id)
    .fetch_all(&mut *c)
    .await?;
    let mut stored: HashMap<String, Vec<(String, String, String, String)>> = HashMap::new();
    let mut stored_clips: HashMap<String, String> = HashMap::new();
    for (set, clip, source, truth, sha) in rows {
        stored_clips.insert(clip.clone(), set.clone());
        stored.entry(set).or_default().push((clip, source, truth, sha));
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
    if !new_sets.is_empty() && problems.is_empty() && started_in(c, study.id).await? {
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
    let served: HashMap<&str, &ServedCopy> =
        prepared.iter().map(|p| (p.clip_key.as_str(), p)).collect();
    let mut position: i64 = qs(
        "SELECT CAST(COALESCE(MAX(position), 0) AS BIGINT) FROM study_sets WHERE study_id = $1",
    )
    .bind(study.id)
    .fetch_one(&mut *c)
    .await?;
    for set in new_sets {
        position += 1;
        let set_id: i64 = qs(
            "INSERT INTO study_sets (study_id, set_key, position) VALUES ($1, $2, $3) RETURNING id",
        )
        .bind(study.id)
        .bind(&set.set_id)
        .bind(position)
        .fetch_one(&mut *c)
        .await?;
        let sql = format!(
            "INSERT INTO study_clips (study_id, set_id, clip_key, source, truth, source_file,
                 source_sha256, media_sha256, media_type, media_size) VALUES {}",
            super::base::values(1, 10, set.clips.len())
        );
        let mut insert = q(sqlx::AssertSqlSafe(sql));
        for cl in &set.clips {
            let p = served.get(cl.clip_id.as_str()).ok_or_else(|| {
                Error::Internal(format!("no served copy of clip {}", cl.clip_id))
            })?;
            insert = insert
                .bind(study.id)
                .bind(set_id)
                .bind(cl.clip_id.clone())
                .bind(cl.source.clone())
                .bind(cl.truth.as_str())
                .bind(cl.file.clone())
                .bind(cl.media.sha256.clone())
                .bind(p.sha256.clone())
                .bind(p.media_type.clone())
                .bind(p.size);
            summary.clips_new += 1;
        }
        insert.execute(&mut *c).await?;
        summary.sets_new += 1;
    }
    if let Some((d, k)) = display {
        q("UPDATE studies SET display_mode = $1, strip_frames = $2 WHERE id = $3")
            .bind(d.as_str())
            .bind(k)
            .bind(study.id)
            .execute(&mut *c)
            .await?;
    }
    let study = study_in(c, campaign.id)
        .await?
        .ok_or_else(|| Error::Internal("the study is not there".into()))?;
    Ok((summary, study))
}

/// One participant's answers on one axis of one set: the first line, clip -> value.
type AxisGroup = (usize, BTreeMap<String, String>);

async fn import_responses_in(
    c: &mut Conn,
    study: &Study,
    rows: &[ResponseRow],
    mut problems: Vec<LineError>,
    what: &str,
) -> Result<ResponsesSummary> {
    let n = study.sources.len();
    // set key -> (clip key -> clip id).
    let mut sets: HashMap<String, BTreeMap<String, i64>> = HashMap::new();
    let stored_clips: Vec<(String, String, i64)> = qa(
        "SELECT s.set_key, c.clip_key, c.id FROM study_sets s JOIN study_clips c ON c.set_id = s.id
         WHERE s.study_id = $1",
    )
    .bind(study.id)
    .fetch_all(&mut *c)
    .await?;
    for (set, clip, id) in stored_clips {
        sets.entry(set).or_default().insert(clip, id);
    }
    // Everyone the file names, in one statement.
    let names: Vec<String> = rows
        .iter()
        .map(|r| r.participant.clone())
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let mut people: HashMap<String, User> = HashMap::new();
    for chunk in names.chunks(super::base::chunk_rows(1)) {
        let list = (1..=chunk.len())
            .map(|i| format!("${i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!("SELECT id, name, role FROM users WHERE name IN ({list})");
        let mut select = qa::<crate::store::accounts::UserRow>(sqlx::AssertSqlSafe(sql));
        for name in chunk {
            select = select.bind(name.clone());
        }
        for row in select.fetch_all(&mut *c).await? {
            let user = User::try_from(row)?;
            people.insert(user.name.clone(), user);
        }
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
        let user = match people.get(&row.participant) {
            Some(u) if u.role == Role::Participant => Some(u.clone()),
            Some(u) => {
                problems.push(LineError::new(
                    row.line,
                    Some("participant"),
                    format!(
                        "`{}` is not a study participant (the account's role is {})",
                        row.participant, u.role
                    ),
                ));
                bad = true;
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
                bad = true;
                None
            }
        };
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
    for ((who, set, axis), (line, values)) in &groups {
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
    // What is stored already.
    let mut summary = ResponsesSummary::default();
    let mut stored: HashMap<(i64, i64, String), String> = HashMap::new();
    let existing: Vec<(i64, i64, String, String)> = qa(
        "SELECT participant_id, clip_id, axis, value FROM study_responses WHERE study_id = $1",
    )
    .bind(study.id)
    .fetch_all(&mut *c)
    .await?;
    for (p, clip, axis, value) in existing {
        stored.insert((p, clip, axis), value);
    }
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
    insert_responses_in(c, study.id, &to_insert, "import", now_micros()).await?;
    summary.added = to_insert.len();
    summary.participants = accepted
        .iter()
        .map(|(_, u, _)| u.id)
        .collect::<HashSet<_>>()
        .len();
    Ok(summary)
}

impl Backend {
    pub(crate) async fn study(&self, campaign: &Campaign) -> Result<Option<Study>> {
        study_in(&mut *self.read().await?, campaign.id).await
    }

    pub(crate) async fn require_study(&self, campaign: &Campaign) -> Result<Study> {
        self.study(campaign).await?.ok_or_else(|| {
            Error::NotFound(format!(
                "campaign `{}` has no study yet; import its comparison sets first (`tandem study import SETS.jsonl`)",
                campaign.name
            ))
        })
    }

    pub(crate) async fn import_study(
        &self,
        campaign_name: &str,
        sets: &CheckedSets,
        prepared: &[ServedCopy],
        display: Option<(Display, i64)>,
    ) -> Result<(StudyImportSummary, Study)> {
        let (campaign_name, sets, prepared) = (
            campaign_name.to_string(),
            Arc::new(sets.clone()),
            Arc::new(prepared.to_vec()),
        );
        self.write(Lock::Structure, move |c| {
            let (campaign_name, sets, prepared) =
                (campaign_name.clone(), sets.clone(), prepared.clone());
            Box::pin(async move { import_study_in(c, &campaign_name, &sets, &prepared, display).await })
        })
        .await
    }

    pub(crate) async fn study_media_hashes(&self, study: &Study) -> Result<Vec<String>> {
        Ok(qs(
            "SELECT DISTINCT media_sha256 FROM study_clips WHERE study_id = $1 ORDER BY 1",
        )
        .bind(study.id)
        .fetch_all(&mut *self.read().await?)
        .await?)
    }

    pub(crate) async fn set_study_display(
        &self,
        study: &Study,
        display: Display,
        frames: i64,
    ) -> Result<()> {
        let id = study.id;
        self.write(Lock::Structure, move |c| {
            Box::pin(async move {
                q("UPDATE studies SET display_mode = $1, strip_frames = $2 WHERE id = $3")
                    .bind(display.as_str())
                    .bind(frames)
                    .bind(id)
                    .execute(&mut *c)
                    .await?;
                Ok(())
            })
        })
        .await
    }

    /// Draws the participant's order when it is not there yet (a write only then).
    async fn ensure_order(&self, study: &Study, user: &User) -> Result<()> {
        let have: i64 =
            qs("SELECT COUNT(*) FROM study_orders WHERE study_id = $1 AND participant_id = $2")
                .bind(study.id)
                .bind(user.id)
                .fetch_one(&mut *self.read().await?)
                .await?;
        if have > 0 {
            return Ok(());
        }
        let (study, user) = (study.clone(), user.clone());
        self.write(Lock::Item, move |c| {
            let (study, user) = (study.clone(), user.clone());
            Box::pin(async move { ensure_order_in(c, &study, &user).await })
        })
        .await
    }

    pub(crate) async fn study_progress(&self, study: &Study, user: &User) -> Result<StudyProgress> {
        self.ensure_order(study, user).await?;
        let done = answered_positions_in(&mut *self.read().await?, study, user).await?;
        Ok(progress_of(&done))
    }

    pub(crate) async fn study_overview(&self, study: &Study, user: &User) -> Result<StudyProgress> {
        let mut c = self.read().await?;
        let done = answered_positions_in(&mut c, study, user).await?;
        if !done.is_empty() {
            return Ok(progress_of(&done));
        }
        let sets: i64 = qs("SELECT COUNT(*) FROM study_sets WHERE study_id = $1")
            .bind(study.id)
            .fetch_one(&mut *c)
            .await?;
        Ok(StudyProgress {
            total: sets,
            answered: 0,
            next: (sets > 0).then_some(1),
        })
    }

    pub(crate) async fn study_set(&self, study: &Study, user: &User, position: i64) -> Result<ShownSet> {
        self.ensure_order(study, user).await?;
        let mut c = self.read().await?;
        let progress = progress_of(&answered_positions_in(&mut c, study, user).await?);
        let rows = views_in(&mut c, study, user, position).await?;
        if rows.is_empty() {
            return Err(Error::NotFound(format!(
                "there is no set {position}; the study has {} sets",
                progress.total
            )));
        }
        let clips = rows
            .iter()
            .map(|(slot, token, _)| ShownClip {
                label: label(usize::try_from(*slot).unwrap_or(0)),
                token: token.clone(),
            })
            .collect();
        let clip_ids: Vec<i64> = rows.iter().map(|r| r.2).collect();
        let answer = stored_answer_in(&mut c, user.id, &clip_ids).await?;
        Ok(ShownSet {
            position,
            total: progress.total,
            answered_sets: progress.answered,
            next: progress.next,
            clips,
            answer,
        })
    }

    pub(crate) async fn answer_study_set(
        &self,
        study: &Study,
        user: &User,
        position: i64,
        answer: &SetAnswer,
    ) -> Result<()> {
        let (study, user, answer) = (study.clone(), user.clone(), answer.clone());
        self.write(Lock::Item, move |c| {
            let (study, user, answer) = (study.clone(), user.clone(), answer.clone());
            Box::pin(async move {
                ensure_order_in(c, &study, &user).await?;
                let clip_ids: Vec<i64> = views_in(c, &study, &user, position)
                    .await?
                    .into_iter()
                    .map(|v| v.2)
                    .collect();
                if clip_ids.is_empty() {
                    return Err(Error::NotFound(format!("there is no set {position}")));
                }
                let problems = answer.problems(clip_ids.len());
                if !problems.is_empty() {
                    return Err(Error::Invalid(problems.join("\n")));
                }
                if let Some(before) = stored_answer_in(c, user.id, &clip_ids).await? {
                    if before == answer {
                        return Ok(());
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
                insert_responses_in(c, study.id, &rows, "web", now_micros()).await
            })
        })
        .await
    }

    pub(crate) async fn study_media(&self, token: &str) -> Result<Option<StudyMedia>> {
        let row: Option<(i64, String, String, i64)> = qa(
            "SELECT o.participant_id, c.media_sha256, c.media_type, s.strip_frames
             FROM study_views v JOIN study_orders o ON o.id = v.order_id
             JOIN study_clips c ON c.id = v.clip_id JOIN studies s ON s.id = o.study_id
             WHERE v.token = $1",
        )
        .bind(token)
        .fetch_optional(&mut *self.read().await?)
        .await?;
        Ok(row.map(|(participant_id, sha256, media_type, frames)| StudyMedia {
            participant_id,
            sha256,
            media_type,
            frames,
        }))
    }

    pub(crate) async fn study_size(&self, study: &Study) -> Result<(i64, i64)> {
        Ok(qa(
            "SELECT (SELECT COUNT(*) FROM study_sets WHERE study_id = $1),
                    (SELECT COUNT(*) FROM study_clips WHERE study_id = $1)",
        )
        .bind(study.id)
        .fetch_one(&mut *self.read().await?)
        .await?)
    }

    pub(crate) async fn study_participants(
        &self,
        study: &Study,
    ) -> Result<Vec<ParticipantProgress>> {
        let (sets, _) = self.study_size(study).await?;
        let rows: Vec<(String, i64, i64)> = qa(
            "SELECT u.name,
                    (SELECT COUNT(DISTINCT c.set_id) FROM study_responses r JOIN study_clips c ON c.id = r.clip_id
                      WHERE r.participant_id = u.id AND r.study_id = $1) AS answered,
                    (SELECT COUNT(*) FROM study_responses r
                      WHERE r.participant_id = u.id AND r.study_id = $1 AND r.origin = 'import') AS imported
             FROM users u
             WHERE u.id IN (SELECT participant_id FROM study_orders WHERE study_id = $1
                            UNION SELECT participant_id FROM study_responses WHERE study_id = $1)
             ORDER BY u.name",
        )
        .bind(study.id)
        .fetch_all(&mut *self.read().await?)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(name, answered, imported)| ParticipantProgress {
                name,
                answered,
                total: sets,
                imported: imported > 0,
            })
            .collect())
    }

    pub(crate) async fn study_data(&self, study: &Study) -> Result<StudyData> {
        let mut c = self.read().await?;
        let clips: Vec<(i64, i64, String, String, String, String)> = qa(
            "SELECT c.id, c.set_id, s.set_key, c.clip_key, c.source, c.truth
             FROM study_clips c JOIN study_sets s ON s.id = c.set_id
             WHERE c.study_id = $1 ORDER BY s.position, c.id",
        )
        .bind(study.id)
        .fetch_all(&mut *c)
        .await?;
        let clips = clips
            .into_iter()
            .map(|(id, set_id, set_key, clip_key, source, truth)| {
                Ok(StudyClipFact {
                    id,
                    set_id,
                    set_key,
                    clip_key,
                    source,
                    truth: Truth::parse(&truth).map_err(Error::Internal)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let responses: Vec<(String, i64, String, String)> = qa(
            "SELECT u.name, r.clip_id, r.axis, r.value FROM study_responses r JOIN users u ON u.id = r.participant_id
             WHERE r.study_id = $1 ORDER BY r.id",
        )
        .bind(study.id)
        .fetch_all(&mut *c)
        .await?;
        let responses = responses
            .into_iter()
            .map(|(participant, clip_id, axis, value)| {
                Ok(ResponseFact {
                    participant,
                    clip_id,
                    axis: Axis::parse(&axis).map_err(Error::Internal)?,
                    value,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(StudyData {
            sources: study.sources.clone(),
            clips,
            responses,
        })
    }

    pub(crate) async fn import_responses(
        &self,
        campaign: &Campaign,
        rows: &[ResponseRow],
        problems: Vec<LineError>,
        what: &str,
    ) -> Result<ResponsesSummary> {
        let study = self.require_study(campaign).await?;
        let (rows, what) = (Arc::new(rows.to_vec()), what.to_string());
        self.write(Lock::Structure, move |c| {
            let (study, rows, problems, what) =
                (study.clone(), rows.clone(), problems.clone(), what.clone());
            Box::pin(async move { import_responses_in(c, &study, &rows, problems, &what).await })
        })
        .await
    }

    pub(crate) async fn study_by_id(&self, id: i64) -> Result<Study> {
        qa::<StudyRow>(
            "SELECT id, campaign_id, sources, display_mode, strip_frames, seed FROM studies WHERE id = $1",
        )
        .bind(id)
        .fetch_optional(&mut *self.read().await?)
        .await?
        .map(Study::try_from)
        .transpose()?
        .ok_or_else(|| Error::NotFound(format!("there is no study {id}")))
    }

    pub(crate) async fn study_ids(&self) -> Result<Vec<i64>> {
        Ok(qs("SELECT id FROM studies ORDER BY id")
            .fetch_all(&mut *self.read().await?)
            .await?)
    }
}
