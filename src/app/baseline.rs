//! The human baseline as the CLI, the pages and the API use it alike: the questions it
//! may ask (the retained benchmark's, linked pairs only whole), answers brought in from
//! a file (checked whole by `io::baseline`, stored in one write), written out again,
//! and its tables (`report::baseline`) over the answers stored.

use std::collections::HashSet;

use crate::domain::baseline::{AnswerRow, BaselineQuestion, letter, letter_index, letters};
use crate::domain::records::{keep_whole_pairs, pair_keys};
use crate::error::{Error, LineError, Rejected, Result};
use crate::io;
use crate::report::baseline::BaselineReport;
use crate::stats::circular::IntervalMethod;
use crate::store::Store;
use crate::store::baseline::{AnswersSummary, NewAnswer, StoredAnswer};
use crate::store::catalog::Campaign;

/// The questions a baseline may ask: those of the retained benchmark (as the export
/// gives it: a linked pair only when both its questions are retained), in the export's
/// order; and the campaign's other question ids, so that an error can say a question
/// exists but is not retained.
pub async fn questions(
    store: &Store,
    campaign: &Campaign,
) -> Result<(Vec<BaselineQuestion>, HashSet<String>)> {
    let (clips, _) = store.retained(campaign).await?;
    let mut questions = Vec::new();
    for clip in clips {
        let pairs = pair_keys(&clip.fields);
        let (kept, _) = keep_whole_pairs(clip.questions, &pairs);
        for q in kept {
            questions.push(BaselineQuestion {
                pair: pairs
                    .get(&q.question_id)
                    .map(|p| format!("{}/{p}", clip.clip_id)),
                task: clip.task.clone(),
                qa_type: q.qa_type,
                level: q.level,
                options: q.options.len(),
                key: q.answer,
                question_id: q.question_id,
            });
        }
    }
    let asked: HashSet<&str> = questions.iter().map(|q| q.question_id.as_str()).collect();
    let others = store
        .question_keys(campaign)
        .await?
        .into_iter()
        .filter(|k| !asked.contains(k.as_str()))
        .collect();
    Ok((questions, others))
}

/// Brings in answers read from a file (`rows`, with the problems reading found in
/// `problems`): every row checked against the retained questions and the baseline's
/// participants, every problem reported with its line and field, and nothing stored
/// unless all are right; then one write.
pub async fn import_answers(
    store: &Store,
    campaign: &Campaign,
    rows: &[AnswerRow],
    mut problems: Vec<LineError>,
    what: &str,
) -> Result<AnswersSummary> {
    let (questions, others) = questions(store, campaign).await?;
    let participants: HashSet<String> = store
        .baseline_participants(campaign)
        .await?
        .into_iter()
        .collect();
    if let Err(more) = io::baseline::check_answers(rows, &questions, &others, &participants) {
        problems.extend(more);
    }
    if !problems.is_empty() {
        problems.sort_by_key(|p| p.line);
        return Err(Error::Rejected(Rejected {
            what: what.to_string(),
            problems,
        }));
    }
    let new: Vec<NewAnswer> = rows
        .iter()
        .map(|r| NewAnswer {
            line: r.line,
            participant: r.participant.clone(),
            question_key: r.question_id.clone(),
            presentation: r.presentation as i64,
            shown: letters(&r.shown),
            chosen: letter(r.chosen).to_string(),
        })
        .collect();
    store.import_baseline_answers(campaign, &new, what).await
}

/// Table 16, the annotator pool: the campaign's groups and their sizes.
pub async fn groups(store: &Store, campaign: &Campaign) -> Result<crate::report::baseline::Groups> {
    Ok(crate::report::baseline::Groups::from_counts(
        &store.group_sizes(campaign).await?,
    ))
}

/// A stored answer as a row of the answers file (`line`: its place in the export).
fn as_row(line: usize, a: &StoredAnswer) -> Result<AnswerRow> {
    let bad = || {
        Error::Internal(format!(
            "a stored baseline answer cannot be read: {} `{}` presentation {}",
            a.participant, a.question_key, a.presentation
        ))
    };
    let shown: Option<Vec<usize>> = a.shown.chars().map(letter_index).collect();
    let mut chosen = a.chosen.chars();
    let (Some(shown), Some(c), None) = (shown, chosen.next().and_then(letter_index), chosen.next())
    else {
        return Err(bad());
    };
    Ok(AnswerRow {
        line,
        participant: a.participant.clone(),
        question_id: a.question_key.clone(),
        presentation: usize::try_from(a.presentation).map_err(|_| bad())?,
        shown,
        chosen: c,
    })
}

/// Every stored answer as rows of the answers file, by participant, question and
/// presentation.
pub async fn answer_rows(store: &Store, campaign: &Campaign) -> Result<Vec<AnswerRow>> {
    store
        .baseline_answers(campaign)
        .await?
        .iter()
        .enumerate()
        .map(|(i, a)| as_row(i + 2, a))
        .collect()
}

/// The baseline's tables over every stored answer to a question the baseline may ask
/// now; `None` before any answer. Answers to a question no longer retained (its clip
/// regenerated, its pair broken) are not counted: `left_out` says how many.
pub async fn report(
    store: &Store,
    campaign: &Campaign,
    method: IntervalMethod,
) -> Result<Option<BaselineReport>> {
    let rows = answer_rows(store, campaign).await?;
    if rows.is_empty() {
        return Ok(None);
    }
    let (questions, _) = questions(store, campaign).await?;
    let options: std::collections::HashMap<&str, usize> = questions
        .iter()
        .map(|q| (q.question_id.as_str(), q.options))
        .collect();
    let (counted, left_out): (Vec<AnswerRow>, Vec<AnswerRow>) = rows
        .into_iter()
        .partition(|r| options.get(r.question_id.as_str()) == Some(&r.shown.len()));
    let participants: HashSet<String> = counted.iter().map(|r| r.participant.clone()).collect();
    let checked = io::baseline::check_answers(&counted, &questions, &HashSet::new(), &participants)
        .map_err(|problems| {
            Error::Internal(format!(
                "the stored baseline answers do not check: {}",
                problems
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ))
        })?;
    let mut report = crate::report::baseline::baseline(&questions, &checked, method)
        .map_err(|e| Error::fault("the baseline's figures", e))?;
    report.left_out = left_out.len();
    Ok(Some(report))
}

/// Sets the baseline up for the browser: the retained questions as they are now (linked
/// pairs only whole), k videos of each task per participant, the seed (a random one when
/// none is given), and a served copy of each clip without its metadata (when ffmpeg is
/// there: a file's tags could name the model that made it). Refused once a participant
/// has begun.
pub async fn setup(
    store: &Store,
    config: &crate::config::Config,
    campaign: &Campaign,
    per_task: i64,
    seed: Option<i64>,
) -> Result<crate::store::baseline::SetupSummary> {
    if per_task < 1 {
        return Err(Error::field("per_task", "give at least 1 video per task"));
    }
    if let Some(b) = store.baseline(campaign).await?
        && !store.baseline_places(&b).await?.is_empty()
    {
        return Err(Error::Conflict(
            "the baseline has begun: it cannot be set up again".into(),
        ));
    }
    let seed = match seed {
        Some(s) => s,
        None => {
            let mut b = [0u8; 8];
            crate::auth::random_bytes(&mut b)?;
            // Positive, so that it reads the same in every tool.
            (u64::from_le_bytes(b) >> 1) as i64
        }
    };
    // The clips with a question to ask (a linked pair only whole), with those questions.
    let (clips, _) = store.retained(campaign).await?;
    let asked: Vec<_> = clips
        .into_iter()
        .filter_map(|clip| {
            let pairs = pair_keys(&clip.fields);
            let (kept, _) = keep_whole_pairs(clip.questions.clone(), &pairs);
            (!kept.is_empty()).then_some((clip, kept))
        })
        .collect();
    if asked.is_empty() {
        return Err(Error::Invalid(
            "the campaign has no retained question yet: the baseline asks retained questions only"
                .into(),
        ));
    }
    let strip = io::video::ffmpeg_available();
    let media = super::media::media_store(store, config).await?;
    let dir = config.media_dir.clone();
    let mut sources: Vec<(String, std::path::PathBuf, String)> = Vec::with_capacity(asked.len());
    // The stored videos as files here (fetched from a bucket, removed when done).
    let mut fetched = Vec::with_capacity(asked.len());
    for (c, _) in &asked {
        let copy = media.local_copy(&c.media_sha256).await?;
        sources.push((
            c.clip_id.clone(),
            copy.path().to_path_buf(),
            c.media_type.clone(),
        ));
        fetched.push(copy);
    }
    let (copies, added) = tokio::task::spawn_blocking(move || {
        let mut copies = std::collections::HashMap::new();
        let mut added = Vec::new();
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
        for (clip, src, media_type) in &sources {
            let ext = io::manifest::extension_for(media_type);
            match io::media::served_copy(src, &dir, ext, strip) {
                Ok((copy, _, new)) => {
                    added.extend(new);
                    copies.insert(clip.clone(), copy);
                }
                Err(e) => {
                    for f in added {
                        let _ = std::fs::remove_file(f);
                    }
                    return Err(Error::Invalid(format!("clip `{clip}`: {e}")));
                }
            }
        }
        Ok((copies, added))
    })
    .await
    .map_err(|e| Error::fault("preparing the videos failed", e))??;
    drop(fetched);
    let mut setup = Vec::new();
    let mut tasks = HashSet::new();
    for (clip, kept) in &asked {
        let copy = copies
            .get(&clip.clip_id)
            .cloned()
            .ok_or_else(|| Error::Internal(format!("no served copy of clip `{}`", clip.clip_id)))?;
        tasks.insert(clip.task.clone());
        for q in kept {
            setup.push(crate::store::baseline::SetupQuestion {
                question_key: q.question_id.clone(),
                clip_key: clip.clip_id.clone(),
                task: clip.task.clone(),
                text: q.question.clone(),
                options: q.options.clone(),
                media_sha256: copy.clone(),
                media_type: clip.media_type.clone(),
            });
        }
    }
    let summary = crate::store::baseline::SetupSummary {
        questions: setup.len(),
        clips: asked.len(),
        tasks: tasks.len(),
        per_task,
        seed,
        metadata_removed: strip,
    };
    let added = super::media::publish(&media, added).await?;
    match store.setup_baseline(campaign, per_task, seed, &setup).await {
        Ok(_) => Ok(summary),
        Err(e) => {
            super::media::unpublish(&media, &added).await;
            Err(e)
        }
    }
}

/// A baseline participant's completion code: once every question is answered, and only
/// for one who came by a link.
pub async fn completion_code(
    store: &Store,
    user: &crate::store::accounts::User,
    progress: &crate::store::baseline::BaselineProgress,
) -> Result<Option<String>> {
    if progress.begun && progress.next.is_none() {
        store
            .completion_code(user, crate::domain::Part::Baseline)
            .await
    } else {
        Ok(None)
    }
}

/// Makes `count` participants of a part, each with an invitation link (a random token
/// shown only now) and a completion code.
pub async fn invite(
    store: &Store,
    campaign: &Campaign,
    part: crate::domain::Part,
    count: usize,
) -> Result<Vec<crate::store::invitations::NewLink>> {
    if !(1..=1000).contains(&count) {
        return Err(Error::field("count", "make 1 to 1000 links at a time"));
    }
    let mut tokens = Vec::with_capacity(count);
    let mut links = Vec::with_capacity(count);
    for _ in 0..count {
        let token = crate::auth::random_id(24)?;
        links.push((
            crate::auth::sha256_hex(token.as_bytes()),
            new_completion_code()?,
        ));
        tokens.push(token);
    }
    let names = store.invite(campaign, part, &links).await?;
    Ok(names
        .into_iter()
        .zip(tokens)
        .map(|(participant, token)| crate::store::invitations::NewLink {
            participant,
            path: format!("/join/{token}"),
        })
        .collect())
}

/// A completion code: 8 characters from an alphabet without look-alikes, in two groups.
fn new_completion_code() -> Result<String> {
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut b = [0u8; 8];
    crate::auth::random_bytes(&mut b)?;
    let c: String = b
        .iter()
        .map(|x| char::from(ALPHABET[usize::from(*x) % ALPHABET.len()]))
        .collect();
    Ok(format!("{}-{}", &c[..4], &c[4..]))
}

/// An external participant id as a link may carry it: up to 64 letters, digits, `-`,
/// `_` or `.`; anything else is not kept.
pub fn external_id(raw: Option<&str>) -> Option<&str> {
    raw.filter(|s| {
        !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    })
}

/// A link exchanged for a browser session (`api`: false) or an API token: `None` when
/// it opens nothing (unknown or revoked). The link's earlier sessions and tokens end.
pub async fn join(
    store: &Store,
    token: &str,
    external: Option<&str>,
    api: bool,
) -> Result<Option<crate::store::invitations::Joined>> {
    use crate::store::invitations::Credential;
    if token.is_empty() || token.len() > 100 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    let digest = crate::auth::sha256_hex(token.as_bytes());
    // Made-up tokens are turned away by a read; the write checks again.
    if !store.link_opens(&digest).await? {
        return Ok(None);
    }
    let (secret, credential) = if api {
        let (token, digest) = crate::auth::generate_token()?;
        (token, Credential::Token { digest })
    } else {
        let id = crate::auth::random_id(32)?;
        let hash = crate::auth::sha256_hex(id.as_bytes());
        let csrf = crate::auth::random_id(32)?;
        (id, Credential::Session { hash, csrf })
    };
    let Some((_user, part, target)) = store
        .join(&digest, external_id(external), &credential)
        .await?
    else {
        return Ok(None);
    };
    Ok(Some(crate::store::invitations::Joined {
        session: secret,
        part,
        target,
    }))
}
