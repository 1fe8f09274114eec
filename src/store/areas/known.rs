//! A clip the author resolved, made a known item for the validators who did not review
//! it: the clip's current version copied under a new id (its video, fields and
//! questions), each item the author resolved known with the author's verdict, the copy
//! imported as any known clip is (`catalog::import_manifest`) and fixed to a pair that
//! reviewed none of the source clip, in one write.

use super::{base, catalog, gates};
use crate::domain::import::{
    CheckedManifest, ManifestClip, ManifestQuestion, Media, copied_fields, copied_id, media_type,
};
use crate::domain::pairing::{Pairing, least_open_work};
use crate::domain::rules::{CheckedVerdict, check_verdict};
use crate::domain::video::{FrameTiming, TimingRead};
use crate::domain::{Level, Reason, Stage, Verdict, check_identifier};
use crate::error::{Error, Result};
use crate::store::calibration::KnownCopy;
use crate::store::db::{Tx, named, row, sql};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

row! {
    /// The source clip's current version, as stored.
    struct Source {
        version_id: i64,
        clip_pk: i64,
        kind: i64,
        task: String,
        task_id: i64,
        media_sha256: String,
        media_type: String,
        media_size: i64,
        source_file: String,
        fields: String,
        fps: Option<f64>,
        frame_count: Option<i64>,
        constant_rate: Option<i64>,
        timing_probed_at: Option<i64>,
    }
}

row! {
    /// An item of the source version the author resolved.
    struct Resolved {
        item_key: String,
        stage: i64,
        level: Option<String>,
        outcome: String,
        verdict1: Option<String>,
        reasons1: Option<String>,
        reasons2: Option<String>,
        note: String,
    }
}

row! {
    /// A question of the source version.
    struct SourceQuestion {
        question_key: String,
        qa_type: String,
        level: String,
        body: String,
        options: String,
        answer: i64,
    }
}

/// Every current item of a clip version the author resolved (a split accepted or
/// rejected), with the rejecting verdict's reasons and the author's note.
const RESOLVED: &str =
    "SELECT i.item_key, i.stage, i.level, i.outcome, i.verdict1, i.reasons1, i.reasons2,
        r.note
   FROM items i JOIN resolutions r ON r.item_id = i.id
   WHERE i.clip_version_id = :version AND i.outcome IN ('split_accepted', 'split_rejected')
   ORDER BY i.stage, i.sort_key";

/// Everyone who had any item of any version of a clip, or of a copy made of it before,
/// in their queue, or gave one a verdict: who has seen it.
const REVIEWERS: &str = "WITH seen AS (
        SELECT i.id, i.rater1_id, i.rater2_id, i.queue1, i.queue2
        FROM items i JOIN clip_versions v ON v.id = i.clip_version_id
        WHERE v.clip_id = :clip
           OR v.copy_of IN (SELECT s.id FROM clip_versions s WHERE s.clip_id = :clip))
   SELECT u.id, u.name FROM users u WHERE u.id IN (
        SELECT rater1_id FROM seen UNION SELECT rater2_id FROM seen
        UNION SELECT queue1 FROM seen UNION SELECT queue2 FROM seen
        UNION SELECT d.validator_id FROM decisions d JOIN seen ON seen.id = d.item_id)
   ORDER BY u.name";

/// Fixes the copy's pair on its clip item, or without clip review on its questions (a
/// retained clip's questions follow its pair, as any clip's do).
const PIN: &str = "UPDATE items SET rater1_id = :rater1, rater2_id = :rater2, queue1 = :rater1,
                  queue2 = :rater2, held = 0
   WHERE clip_version_id = :version AND (stage = 1 OR parent_item_id IS NULL)";

/// The known verdict an item the author resolved gives its copy: the author's verdict,
/// with the reasons of the validator who rejected it when the author rejected it, and
/// the author's note; checked against the protocol in force.
fn known_verdict(
    taxonomy: &crate::domain::taxonomy::Taxonomy,
    r: &Resolved,
) -> Result<(Stage, CheckedVerdict)> {
    let stage = Stage::from_number(r.stage)
        .ok_or_else(|| Error::Internal(format!("stored stage {}", r.stage)))?;
    let (verdict, reasons) = if r.outcome == "split_rejected" {
        let rejecting = if r.verdict1.as_deref() == Some(Verdict::Reject.as_str()) {
            &r.reasons1
        } else {
            &r.reasons2
        };
        let reasons = Reason::split_stored(rejecting.as_deref().unwrap_or(""))
            .map_err(Error::Internal)?
            .iter()
            .map(|x| x.as_str().to_string())
            .collect();
        (Verdict::Reject, reasons)
    } else {
        (Verdict::Valid, Vec::new())
    };
    let level = gates::stored_level(r.level.as_deref(), &r.item_key)?;
    check_verdict(taxonomy, stage, level.as_ref(), verdict, &reasons, &r.note)
        .map(|k| (stage, k))
        .map_err(|e| {
            Error::Conflict(format!(
                "`{}`'s resolution cannot be a known verdict under the protocol in force: {}",
                r.item_key, e.message
            ))
        })
}

/// Copies `source` (a clip of the campaign with an item the author resolved) as the
/// known clip `copy`, served to a pair that reviewed none of it: the task's pair in force
/// when neither of them did (pairing by task), else, pairing per clip, the two of the
/// rest of the pool with the least open work. Refused (nothing written) when the clip
/// is unknown, not a real clip, has no resolved item, `copy` is taken or not an id, or
/// no such pair exists.
pub(crate) async fn copy_resolved(
    tx: &mut impl Tx,
    campaign_name: &str,
    source: &str,
    copy: &str,
) -> Result<KnownCopy> {
    let campaign = base::campaign(tx, campaign_name)
        .await?
        .ok_or_else(|| Error::NotFound(format!("no campaign `{campaign_name}`")))?;
    check_identifier("the copy's clip_id", copy).map_err(|m| Error::field("as", m))?;
    let src: Source = tx
        .fetch_opt(
            sql!(
                "SELECT v.id AS version_id, c.id AS clip_pk, c.calibration AS kind, t.code AS task,
                        t.id AS task_id, v.media_sha256, v.media_type, v.media_size, v.source_file,
                        v.fields, v.fps, v.frame_count, v.constant_rate, v.timing_probed_at
                 FROM clips c JOIN clip_versions v ON v.id = c.current_version_id
                 JOIN tasks t ON t.id = c.task_id
                 WHERE c.campaign_id = :campaign AND c.clip_key = :clip"
            ),
            named! { campaign: campaign.id, clip: source },
        )
        .await?
        .ok_or_else(|| {
            Error::NotFound(format!(
                "campaign `{}` has no clip `{source}`",
                campaign.name
            ))
        })?;
    if src.kind != 0 {
        return Err(Error::Conflict(format!(
            "`{source}` is a calibration or known clip; only a clip of the benchmark the author resolved can be copied"
        )));
    }
    let taken: i64 = tx
        .scalar(
            sql!("SELECT COUNT(*) FROM clips WHERE campaign_id = :campaign AND clip_key = :clip"),
            named! { campaign: campaign.id, clip: copy },
        )
        .await?;
    if taken > 0 {
        return Err(Error::Conflict(format!(
            "campaign `{}` has a clip `{copy}` already: give the copy an id of its own",
            campaign.name
        )));
    }
    let resolved: Vec<Resolved> = tx
        .fetch(sql!(RESOLVED), named! { version: src.version_id })
        .await?;
    if resolved.is_empty() {
        return Err(Error::Conflict(format!(
            "no item of `{source}` was resolved by an author: only an item the author resolved becomes a known item"
        )));
    }
    let mut keys: HashMap<(Stage, String), CheckedVerdict> = HashMap::new();
    for r in &resolved {
        let (stage, key) = known_verdict(&campaign.taxonomy, r)?;
        keys.insert((stage, copied_id(source, copy, &r.item_key)), key);
    }

    // Who may see it: a pair neither of whom has seen any version of the source, or a
    // copy of it: each validator meets its known item at most once.
    let reviewers: Vec<(i64, String)> = tx
        .fetch(sql!(REVIEWERS), named! { clip: src.clip_pk })
        .await?;
    let seen: HashSet<i64> = reviewers.iter().map(|r| r.0).collect();
    let names = reviewers
        .iter()
        .map(|r| r.1.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let pair = unseen_pair(tx, campaign.id, &src, source, &seen, &names).await?;

    // The copy, as a manifest line would give it.
    let copied = copied_questions(tx, src.version_id, source, copy, &mut keys).await?;
    let file = src.source_file.replace(source, copy);
    let fields = copied_fields(&src.fields, source, copy).map_err(Error::Internal)?;
    let clip = ManifestClip {
        line: 1,
        clip_id: copy.to_string(),
        task: src.task.clone(),
        source_path: PathBuf::from(&file),
        file,
        media: Media {
            media_type: media_type(&src.media_type).ok_or_else(|| {
                Error::Internal(format!("stored media type `{}`", src.media_type))
            })?,
            sha256: src.media_sha256,
            size: u64::try_from(src.media_size).unwrap_or(0),
        },
        known: keys.remove(&(Stage::Clip, copy.to_string())),
        fields,
        questions: copied,
        calibration: None,
        timing: match (src.fps, src.frame_count, src.constant_rate) {
            (Some(fps), Some(frames), Some(constant)) => TimingRead::Read(FrameTiming {
                fps,
                constant: constant == 1,
                frames: u64::try_from(frames).unwrap_or(0),
            }),
            _ if src.timing_probed_at.is_some() => TimingRead::Unreadable,
            _ => TimingRead::NotTried,
        },
        copy_of: Some(src.version_id),
    };
    let line = format!("{}\n{}", clip.fields, source);
    let manifest = CheckedManifest {
        path: PathBuf::from(format!("known copy of {source}")),
        sha256: crate::auth::sha256_hex(line.as_bytes()),
        clips: vec![clip],
    };
    catalog::import_manifest(tx, &campaign.name, &manifest).await?;
    let version: i64 = tx
        .scalar(
            sql!(
                "SELECT current_version_id FROM clips WHERE campaign_id = :campaign AND clip_key = :clip"
            ),
            named! { campaign: campaign.id, clip: copy },
        )
        .await?;
    tx.exec(
        sql!(PIN),
        named! { rater1: pair.0, rater2: pair.1, version },
    )
    .await?;
    let validators: Vec<String> = tx
        .fetch::<(String,)>(
            sql!("SELECT name FROM users WHERE id IN (:rater1, :rater2) ORDER BY name"),
            named! { rater1: pair.0, rater2: pair.1 },
        )
        .await?
        .into_iter()
        .map(|r| r.0)
        .collect();
    let known_items = resolved
        .iter()
        .map(|r| copied_id(source, copy, &r.item_key))
        .collect();
    Ok(KnownCopy {
        clip_id: copy.to_string(),
        source: source.to_string(),
        known_items,
        validators,
    })
}

/// The pair a known copy is served to: one neither of whom has seen any version of the
/// source or a copy of it (`seen`, named in `names`), by the campaign's pairing.
async fn unseen_pair(
    tx: &mut impl Tx,
    campaign: i64,
    src: &Source,
    source: &str,
    seen: &HashSet<i64>,
    names: &str,
) -> Result<(i64, i64)> {
    Ok(match gates::pairing_of(tx, campaign).await? {
        Pairing::TaskPairs => {
            let (a, b): (Option<i64>, Option<i64>) = tx
                .fetch_one(
                    sql!("SELECT rater1_id, rater2_id FROM tasks WHERE id = :task"),
                    named! { task: src.task_id },
                )
                .await?;
            match a.zip(b) {
                Some((a, b)) if !seen.contains(&a) && !seen.contains(&b) => (a, b),
                Some(_) => {
                    return Err(Error::Conflict(format!(
                        "task `{}`'s pair has seen `{source}` or a copy of it (of those who have: {names}): pairing by task, this copy would reach them; give the task another pair first (its clips under review keep theirs), or pair per clip",
                        src.task
                    )));
                }
                None => {
                    return Err(Error::Conflict(format!(
                        "task `{}` has no pair to serve the copy to",
                        src.task
                    )));
                }
            }
        }
        Pairing::LeastOpenWork => {
            let mut pool: Vec<_> = gates::open_work(tx, campaign)
                .await?
                .into_iter()
                .filter(|m| !seen.contains(&m.id))
                .collect();
            least_open_work(&mut pool, 1).ok_or_else(|| {
                Error::Conflict(format!(
                    "fewer than two validators of the pool (who can sign in) reviewed none of `{source}` or its copies ({names} did)"
                ))
            })?
        }
    })
}

/// The source's questions under the copy's ids, each with the known verdict the author's
/// resolution gave it (taken from `keys`).
async fn copied_questions(
    tx: &mut impl Tx,
    version: i64,
    source: &str,
    copy: &str,
    keys: &mut HashMap<(Stage, String), CheckedVerdict>,
) -> Result<Vec<ManifestQuestion>> {
    let questions: Vec<SourceQuestion> = tx
        .fetch(
            sql!(
                "SELECT question_key, qa_type, level, body, options, answer FROM questions
                 WHERE clip_version_id = :version ORDER BY position"
            ),
            named! { version },
        )
        .await?;
    let mut copied = Vec::with_capacity(questions.len());
    for q in questions {
        let question_id = copied_id(source, copy, &q.question_key);
        copied.push(ManifestQuestion {
            known: keys.remove(&(Stage::Question, question_id.clone())),
            question_id,
            qa_type: q.qa_type,
            level: Level::new(&q.level),
            question: q.body,
            options: serde_json::from_str(&q.options)
                .map_err(|e| Error::fault(format!("stored options of `{}`", q.question_key), e))?,
            answer: usize::try_from(q.answer).map_err(|_| {
                Error::Internal(format!(
                    "stored answer of `{}`: {}",
                    q.question_key, q.answer
                ))
            })?,
            calibration: None,
        });
    }
    Ok(copied)
}
