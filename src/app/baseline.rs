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
    Ok(crate::report::baseline::Groups::from_roles(
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
        .map_err(|e| Error::Internal(format!("the baseline's figures: {e}")))?;
    report.left_out = left_out.len();
    Ok(Some(report))
}
