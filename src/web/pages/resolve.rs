//! The author's pages: the splits of a stage, and one split with both verdicts, their
//! reasons and notes, and the resolution form.

use super::review::{Player, QuestionLine, TaskLine, player, question_line, task_line};
use super::{Chrome, FormFields, PageResult, pretty, render, stage};
use crate::domain::taxonomy::Taxonomy;
use crate::domain::{Origin, Outcome, Resolution, Role, Stage};
use crate::error::Error;
use crate::store::review::{ResolutionRequest, SplitItem, SplitSide};
use crate::store::sessions::Session;
use crate::web::routes::{AUTHOR, AUTHOR_OR_ADMIN, Kind::Page, Route};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, RawForm, State};
use axum::http::StatusCode;

/// One row of the split list.
pub struct SplitRow {
    pub item_id: String,
    pub task: String,
    pub status: &'static str,
    pub waiting: bool,
    /// Its key is in doubt (the blind key check).
    pub doubt: bool,
}

#[derive(Template)]
#[template(path = "resolve/queue.html")]
struct QueuePage {
    chrome: Chrome,
    campaign: String,
    stage: i64,
    waiting: usize,
    rows: Vec<SplitRow>,
    next: Option<String>,
    /// Whether the protocol reviews clips: without, no Stage 1 to switch to.
    clip_review: bool,
    pager: super::Pager,
    /// The id prefix searched for.
    id: String,
    /// Stage 2: the questions whose key both validators answered otherwise, blind.
    keys_in_doubt: Vec<DoubtRow>,
}

/// The split list's search (the start of an item's id) and its page (`after` or
/// `before` a row, `domain::paging`).
#[derive(serde::Deserialize, Default)]
pub struct SplitsFilter {
    #[serde(default)]
    id: String,
    #[serde(flatten)]
    at: super::At,
}

pub async fn queue(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((c, s)): Path<(String, String)>,
    axum::extract::Query(filter): axum::extract::Query<SplitsFilter>,
) -> PageResult {
    use crate::domain::paging;
    let campaign = state.store.campaign(&c).await?;
    let stage = stage(&s)?;
    let prefix = paging::prefix("id", Some(&filter.id)).map_err(Error::from)?;
    let splits = state.store.splits(&campaign, stage, true).await?;
    let (keys_in_doubt, withdrawals) = if stage == crate::domain::Stage::Question {
        (
            crate::report::blind::keys_in_doubt(&state.store.blind_records(&campaign).await?),
            state.store.withdrawals(&campaign, None).await?,
        )
    } else {
        (Vec::new(), Vec::new())
    };
    let doubt_rows = keys_in_doubt
        .iter()
        .map(|k| {
            let outcome = Outcome::parse(&k.outcome);
            let split = outcome.is_some_and(|o| {
                matches!(
                    o,
                    Outcome::Split | Outcome::SplitAccepted | Outcome::SplitRejected
                )
            });
            let decided = outcome.is_some_and(|o| o != Outcome::Pending);
            DoubtRow {
                link: if split {
                    Some(format!("/c/{c}/splits/2/{}", k.question_id))
                } else {
                    decided.then(|| format!("/c/{c}/questions/{}", k.question_id))
                },
                withdrawn: withdrawals.iter().any(|w| w.question_id == k.question_id),
                question_id: k.question_id.clone(),
                clip_id: k.clip_id.clone(),
                kind: format!("{} · {}", k.qa_type, k.level),
                key: format!("{}: {}", k.key, k.key_text),
                answers: k
                    .answers
                    .iter()
                    .map(|a| format!("{}: {} ({})", a.answer, a.text, a.validator))
                    .collect(),
                outcome: outcome.map_or(k.outcome.clone(), |o| o.words().to_string()),
            }
        })
        .collect();
    let rows: Vec<SplitRow> = splits
        .iter()
        .map(|s| SplitRow {
            item_id: s.item_id.clone(),
            task: s.clip.task.clone(),
            status: match s.outcome {
                Outcome::SplitAccepted => "accepted",
                Outcome::SplitRejected => "rejected",
                _ => "waiting",
            },
            waiting: s.outcome == Outcome::Split,
            doubt: keys_in_doubt.iter().any(|k| k.question_id == s.item_id),
        })
        .collect();
    let next = rows.iter().find(|r| r.waiting).map(|r| r.item_id.clone());
    let waiting = rows.iter().filter(|r| r.waiting).count();
    // In task and item order, as stored: a split resolved while the author pages keeps
    // its place.
    let wanted = prefix.as_deref().unwrap_or("");
    fn key(r: &SplitRow) -> &str {
        &r.item_id
    }
    let keep = |r: &SplitRow| r.item_id.starts_with(wanted);
    let cursor = filter.at.cursor_in(&rows, key, keep)?;
    let page = paging::page_of(rows, key, keep, cursor.as_ref(), paging::PAGE_ROWS)
        .map_err(Error::from)?;
    let here = format!("/c/{c}/splits/{s}");
    let pager = super::Pager::new(&here, &[("id", wanted)], &page, |r| {
        paging::Cursor::token(false, &r.item_id)
    })
    .jumps();
    let chrome = Chrome::new(
        &state,
        &session,
        Some(&c),
        &format!("Splits of Stage {stage}"),
        &here,
    )
    .await?;
    Ok(render(&QueuePage {
        chrome,
        campaign: c,
        stage: stage.number(),
        waiting,
        rows: page.rows,
        next,
        clip_review: campaign.taxonomy.clip_review,
        pager,
        id: wanted.to_string(),
        keys_in_doubt: doubt_rows,
    }))
}

/// One validator's side, as shown to the author.
/// A question whose key is in doubt, as the splits page lists it: in words, with a link
/// to its split page when it is one.
pub struct DoubtRow {
    pub question_id: String,
    pub link: Option<String>,
    pub clip_id: String,
    /// "OE · L1"
    pub kind: String,
    /// "C: a glass orb"
    pub key: String,
    /// "A: a brass key (val00)"
    pub answers: Vec<String>,
    /// Where it stands, in words.
    pub outcome: String,
    /// An author withdrew it from the benchmark.
    pub withdrawn: bool,
}

pub struct Side {
    pub label: &'static str,
    pub validator: String,
    pub verdict: &'static str,
    pub reasons: String,
    pub note: String,
    pub seconds: String,
    /// Their answer before the key was shown, in words ("A: a brass key"), or empty.
    pub blind: String,
}

/// The blind answers of a Stage 2 split in words, and whether its key is in doubt (both
/// answered, both otherwise than the key).
fn blind_words(split: &SplitItem, sides: &mut [Side]) -> bool {
    use crate::domain::records::{key_in_doubt, option_words};
    let Some(q) = &split.question else {
        return false;
    };
    let answers = [split.rater1.blind_answer, split.rater2.blind_answer];
    for (side, answer) in sides.iter_mut().zip(answers) {
        side.blind = answer
            .map(|a| option_words(&q.options, a))
            .unwrap_or_default();
    }
    let given: Vec<i64> = answers.into_iter().flatten().collect();
    q.answer.is_some_and(|k| key_in_doubt(&given, k))
}

fn side(tax: &Taxonomy, stage: Stage, label: &'static str, s: &SplitSide) -> Side {
    Side {
        label,
        validator: s.validator.clone(),
        verdict: s.verdict.as_str(),
        reasons: s
            .reasons
            .iter()
            .map(|r| tax.reason_label(stage, r.as_str()))
            .collect::<Vec<_>>()
            .join(", "),
        note: s.note.clone(),
        seconds: s
            .time_spent_ms
            .map(|ms| format!("{:.0} s", ms as f64 / 1000.0))
            .unwrap_or_default(),
        blind: String::new(),
    }
}

#[derive(Template)]
#[template(path = "resolve/item.html")]
struct ItemPage {
    chrome: Chrome,
    campaign: String,
    stage: i64,
    item_id: String,
    task: TaskLine,
    theme: String,
    /// The manifest fields the protocol declares: (label, value).
    details: Vec<(String, String)>,
    scene_graph: String,
    scenario: String,
    player: Player,
    question: Option<QuestionLine>,
    sides: Vec<Side>,
    /// Both validators answered blind otherwise than the key.
    doubt: bool,
    resolved: Option<(String, String, String)>,
    can_resolve: bool,
    choice: String,
    note: String,
    error: Option<String>,
    /// Where it stands, in words.
    standing: &'static str,
    /// An author's withdrawal from the benchmark: (who, reason's label, note).
    withdrawn: Option<(String, String, String)>,
    /// The withdrawal form: an author, on a retained question not withdrawn.
    can_withdraw: bool,
    /// The protocol's Stage 2 reasons: (code, label, chosen).
    withdraw_reasons: Vec<(String, String, bool)>,
}

/// What a refused form is shown again with: the resolution's choice, or the
/// withdrawal's reason, and the note.
#[derive(Default)]
struct Draft {
    choice: String,
    reason: String,
    note: String,
}

async fn item_page(
    state: &AppState,
    session: &Session,
    c: &str,
    split: SplitItem,
    draft: Draft,
    error: Option<String>,
) -> PageResult {
    let campaign = state.store.campaign(c).await?;
    let here = format!("/c/{c}/splits/{}", split.stage.number());
    let is_split = matches!(
        split.outcome,
        Outcome::Split | Outcome::SplitAccepted | Outcome::SplitRejected
    );
    let title = if is_split { "Split" } else { "Question" };
    let chrome = Chrome::new(
        state,
        session,
        Some(c),
        &format!("{title} {}", split.item_id),
        &here,
    )
    .await?;
    let withdrawn = if split.stage == Stage::Question && split.outcome.is_retained() {
        state
            .store
            .withdrawals(&campaign, Some(&split.item_id))
            .await?
            .pop()
            .map(|w| {
                let reason = campaign.taxonomy.reason_label(Stage::Question, &w.reason);
                (w.author, reason, w.note)
            })
    } else {
        None
    };
    let is_author = session.user.role_in(campaign.id) == Some(Role::Author);
    let default_reason = if draft.reason.is_empty() {
        "incorrect_answer"
    } else {
        draft.reason.as_str()
    };
    let withdraw_reasons = campaign
        .taxonomy
        .reasons_of(Stage::Question)
        .map(|r| (r.code.clone(), r.label.clone(), r.code == default_reason))
        .collect();
    let Draft { choice, note, .. } = draft;
    let mut sides = vec![
        side(&campaign.taxonomy, split.stage, "Rater 1", &split.rater1),
        side(&campaign.taxonomy, split.stage, "Rater 2", &split.rater2),
    ];
    let doubt = blind_words(&split, &mut sides);
    let page = ItemPage {
        chrome,
        campaign: c.to_string(),
        stage: split.stage.number(),
        task: task_line(state, &campaign, &split.clip.task).await?,
        theme: split.clip.theme.clone().unwrap_or_default(),
        details: split.clip.declared(&campaign.taxonomy),
        scene_graph: pretty(&split.clip.scene_graph),
        scenario: pretty(&split.clip.scenario),
        player: player(state, session, &split.clip).await?,
        question: split.question.as_ref().map(question_line),
        sides,
        doubt,
        resolved: split.resolution.as_ref().map(|r| {
            (
                r.verdict.as_str().to_string(),
                r.author.clone(),
                r.note.clone(),
            )
        }),
        can_resolve: is_split && split.resolution.is_none() && is_author,
        choice,
        note,
        error: error.clone(),
        standing: split.outcome.words(),
        can_withdraw: is_author
            && withdrawn.is_none()
            && split.stage == Stage::Question
            && split.outcome.is_retained(),
        withdrawn,
        withdraw_reasons,
        item_id: split.item_id,
    };
    let mut resp = render(&page);
    if error.is_some() {
        *resp.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(resp)
}

pub async fn item(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((c, s, key)): Path<(String, String, String)>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let split = state.store.split_item(&campaign, stage(&s)?, &key).await?;
    item_page(&state, &session, &c, split, Draft::default(), None).await
}

/// A reviewed question (a key in doubt that both validators passed, say): both sides,
/// their blind answers, and for an author the withdrawal form.
pub async fn question(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((c, key)): Path<(String, String)>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let item = state
        .store
        .reviewed_item(&campaign, Stage::Question, &key, false)
        .await?;
    item_page(&state, &session, &c, item, Draft::default(), None).await
}

/// An author withdraws a retained question from the benchmark.
pub async fn withdraw(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((c, key)): Path<(String, String)>,
    RawForm(body): RawForm,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let form = FormFields::parse(&body)?;
    let request = crate::store::review::WithdrawalRequest {
        reason: form.get("reason"),
        note: form.get("note"),
    };
    let result = state
        .store
        .withdraw_question(&campaign, &session.user, &key, &request, Origin::Web)
        .await;
    match result {
        Ok(_) => Ok(crate::web::flash::redirect(
            &format!("/c/{c}/splits/2#keys-in-doubt"),
            &format!("Withdrawn: {key} leaves the retained benchmark."),
        )),
        Err(e @ (Error::Field { .. } | Error::Invalid(_) | Error::Conflict(_))) => {
            let item = state
                .store
                .reviewed_item(&campaign, Stage::Question, &key, false)
                .await?;
            let draft = Draft {
                reason: request.reason,
                note: request.note,
                ..Draft::default()
            };
            item_page(
                &state,
                &session,
                &c,
                item,
                draft,
                Some(super::for_people(&e)),
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}

pub async fn decide(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((c, s, key)): Path<(String, String, String)>,
    RawForm(body): RawForm,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let stage: Stage = stage(&s)?;
    let form = FormFields::parse(&body)?;
    let (choice, note) = (form.get("verdict"), form.get("note"));
    let result = match Resolution::parse(&choice) {
        Err(_) => Err(Error::field("verdict", "choose accept (A) or reject (R)")),
        Ok(verdict) => {
            state
                .store
                .resolve_split(
                    &campaign,
                    &session.user,
                    stage,
                    &key,
                    &ResolutionRequest {
                        verdict,
                        note: note.clone(),
                    },
                    Origin::Web,
                )
                .await
        }
    };
    match result {
        Ok(_) => {
            let next = state
                .store
                .splits(&campaign, stage, false)
                .await?
                .into_iter()
                .next();
            let to = match next {
                Some(n) => format!("/c/{c}/splits/{}/{}", stage.number(), n.item_id),
                None => format!("/c/{c}/splits/{}", stage.number()),
            };
            Ok(crate::web::flash::redirect(
                &to,
                &format!("Resolved: {key} is {choice}ed."),
            ))
        }
        Err(e @ (Error::Field { .. } | Error::Invalid(_) | Error::Conflict(_))) => {
            let split = state.store.split_item(&campaign, stage, &key).await?;
            let draft = Draft {
                choice,
                note,
                ..Draft::default()
            };
            item_page(
                &state,
                &session,
                &c,
                split,
                draft,
                Some(super::for_people(&e)),
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}

/// The authors' splits.
pub fn routes() -> Vec<Route> {
    use axum::routing::{get, post};
    vec![
        Route::new(
            "GET",
            "/c/{campaign}/splits/{stage}",
            AUTHOR_OR_ADMIN,
            Page,
            get(queue),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/splits/{stage}/{item}",
            AUTHOR_OR_ADMIN,
            Page,
            get(item),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/splits/{stage}/{item}",
            AUTHOR,
            Page,
            post(decide),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/questions/{question}",
            AUTHOR_OR_ADMIN,
            Page,
            get(question),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/questions/{question}/withdrawal",
            AUTHOR,
            Page,
            post(withdraw),
        ),
    ]
}
