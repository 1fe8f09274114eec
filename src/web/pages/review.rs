//! The validator's pages: the queue of a stage and the review of one item. Nothing
//! here reads the partner's decisions or the item's outcome.

use super::{
    Carried, Chrome, FormFields, PageResult, ReasonBox, for_people, pretty, reason_boxes, render,
    stage,
};
use crate::clock::now_micros;
use crate::domain::{Origin, Stage, Verdict};
use crate::error::Error;
use crate::store::review::{ValidatorItem, VerdictRequest, VersionRule};
use crate::store::sessions::Session;
use crate::web::media;
use crate::web::routes::{Kind::Page, Route, VALIDATOR};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, RawForm, State};
use axum::http::StatusCode;

#[derive(Template)]
#[template(path = "review/queue.html")]
struct QueuePage {
    chrome: Chrome,
    stage: i64,
    campaign: String,
    done: i64,
    total: i64,
    percent: i64,
    next: Option<String>,
    /// The rows shown: undecided first, then decided, each in queue order.
    rows: Vec<QueueRow>,
    /// How many rows the filters left out.
    hidden: usize,
    /// The links to the other pages.
    pager: super::Pager,
    /// The tasks of the queue, for the filter.
    tasks: Vec<String>,
    filter: QueueFilter,
    /// The filters as the item links keep them (`?task=...`, or empty).
    kept: String,
    /// Whether the filters hold nothing more to decide while the queue does.
    filtered_done: bool,
    /// Stage 1 only, once everything in it is decided: the questions waiting in Stage 2.
    stage2_waiting: Option<i64>,
    /// Whether the protocol reviews clips: without, no Stage 1 to switch to.
    clip_review: bool,
}

/// One row of a validator's queue, as the page shows it.
pub struct QueueRow {
    pub item_id: String,
    pub task: String,
    /// "OE · Object existence" (Stage 2).
    pub qa_type: Option<String>,
    pub level: Option<String>,
    pub verdict: Option<&'static str>,
    pub decided_at: Option<String>,
}

/// The queue's filters (`?task=&show=undecided|decided&id=PREFIX`) and the page
/// (`after=` or `before=` a row's cursor, `domain::paging`).
#[derive(serde::Deserialize, Default)]
pub struct QueueFilter {
    #[serde(default)]
    pub task: String,
    #[serde(default)]
    pub show: String,
    /// A prefix of the item's id.
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub after: String,
    #[serde(default)]
    pub before: String,
    /// A page by its number (the pager's jump).
    #[serde(default)]
    pub page: String,
    /// Rows on a page (the API's `limit`; the pages use the default).
    #[serde(default)]
    pub limit: Option<usize>,
}

impl QueueFilter {
    /// The store's query, and the `show` value as the links keep it.
    pub fn query(&self) -> Result<(&'static str, crate::store::review::QueueQuery), Error> {
        let (show, mut query) = crate::store::review::QueueQuery::from_fields(
            &self.task,
            &self.show,
            &self.id,
            &self.after,
            &self.before,
            self.limit,
        )?;
        query.page = crate::domain::paging::page_number(&self.page)?;
        Ok((show, query))
    }
}

/// The queue's filters as the review keeps them (`?task=&show=&id=`): the queue's item
/// links, an item's queue link (`Q`) and forms, and the next item after a save follow
/// them, so that a validator who filtered the queue reviews what the filter holds.
#[derive(Debug, Clone, Default)]
pub struct Kept {
    task: String,
    show: &'static str,
    id: String,
}

impl Kept {
    fn new(task: &str, show: &str, id: &str) -> Result<Kept, Error> {
        let (show, _) =
            crate::store::review::QueueQuery::from_fields(task, show, id, "", "", None)?;
        Ok(Kept {
            task: task.trim().to_string(),
            show,
            id: id.trim().to_string(),
        })
    }

    /// The filters and `extra` as a query string (`?task=...`), or nothing.
    fn query_with(&self, extra: &[(&str, &str)]) -> String {
        let pairs: Vec<(&str, &str)> = [
            ("task", self.task.as_str()),
            ("show", self.show),
            ("id", self.id.as_str()),
        ]
        .into_iter()
        .chain(extra.iter().copied())
        .filter(|(_, v)| !v.is_empty())
        .collect();
        match serde_urlencoded::to_string(&pairs) {
            Ok(q) if !q.is_empty() => format!("?{q}"),
            _ => String::new(),
        }
    }

    /// The filters as a query string (`?task=...`), or nothing: what the templates add
    /// to a link.
    pub fn query(&self) -> String {
        self.query_with(&[])
    }

    /// Whether the filters choose which item comes next (a task or an id prefix;
    /// `show` only chooses the rows listed).
    fn narrows(&self) -> bool {
        !self.task.is_empty() || !self.id.is_empty()
    }

    /// The first item to decide that the filters hold (when they narrow the queue).
    async fn first_held(
        &self,
        state: &AppState,
        campaign: &crate::store::catalog::Campaign,
        session: &Session,
        stage: Stage,
    ) -> Result<Option<String>, Error> {
        state
            .store
            .next_filtered(campaign, &session.user, stage, (&self.task, &self.id))
            .await
    }
}

pub fn percent(done: i64, total: i64) -> i64 {
    if total == 0 { 0 } else { done * 100 / total }
}

pub async fn queue(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((c, s)): Path<(String, String)>,
    axum::extract::Query(filter): axum::extract::Query<QueueFilter>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let stage = stage(&s)?;
    let q = match state.store.queue(&campaign, &session.user, stage).await {
        Ok(q) => q,
        Err(e) => return calibration_first(&state, &campaign, &session, e).await,
    };
    let (decided, query) = filter.query()?;
    let kept = Kept::new(&filter.task, &filter.show, &filter.id)?;
    let next = if kept.narrows() {
        kept.first_held(&state, &campaign, &session, stage).await?
    } else {
        q.next.clone()
    };
    let listing = state
        .store
        .queue_page(&campaign, &session.user, stage, &query)
        .await?;
    let here_list = format!("/c/{c}/review/{s}");
    let pager = super::Pager::new(
        &here_list,
        &[
            ("task", filter.task.trim()),
            ("show", decided),
            ("id", filter.id.trim()),
        ],
        &listing.page,
        |it| crate::domain::paging::Cursor::token(it.decided, &it.item_id),
    )
    .jumps();
    let hidden = listing.all.saturating_sub(listing.page.matching);
    let tasks = listing.tasks;
    let rows: Vec<QueueRow> = listing
        .page
        .rows
        .into_iter()
        .map(|it| QueueRow {
            qa_type: it
                .qa_type
                .as_ref()
                .map(|code| match campaign.taxonomy.qa_type(code) {
                    Some(d) => format!("{code} · {}", d.name),
                    None => code.clone(),
                }),
            item_id: it.item_id,
            task: it.task,
            level: it.level,
            verdict: it.verdict.map(|v| v.as_str()),
            decided_at: it.decided_at.map(|t| {
                let full = crate::clock::to_rfc3339(t);
                full.get(..16).unwrap_or(&full).replace('T', " ")
            }),
        })
        .collect();
    let stage2_waiting = if stage == crate::domain::Stage::Clip && q.next.is_none() && q.total > 0 {
        match state
            .store
            .queue(&campaign, &session.user, crate::domain::Stage::Question)
            .await
        {
            Ok(q2) => Some(q2.total - q2.done),
            Err(_) => None,
        }
    } else {
        None
    };
    let here = format!("/c/{c}/review/{s}");
    let chrome = Chrome::new(
        &state,
        &session,
        Some(&c),
        &format!("Stage {stage}: {}s", stage.item_noun()),
        &here,
    )
    .await?;
    Ok(render(&QueuePage {
        chrome,
        stage: stage.number(),
        campaign: c,
        done: q.done,
        total: q.total,
        percent: percent(q.done, q.total),
        filtered_done: next.is_none() && q.next.is_some(),
        next,
        kept: kept.query(),
        hidden,
        rows,
        pager,
        tasks,
        filter,
        stage2_waiting,
        clip_review: campaign.taxonomy.clip_review,
    }))
}

/// The task's name and axes, for the page header.
pub struct TaskLine {
    pub code: String,
    pub name: String,
    pub axes: String,
}

/// From the campaign's taxonomy (no database statement).
pub async fn task_line(
    _state: &AppState,
    campaign: &crate::store::catalog::Campaign,
    code: &str,
) -> Result<TaskLine, Error> {
    Ok(match campaign.taxonomy.task(code) {
        Some((_, t)) => TaskLine {
            code: t.code.clone(),
            name: t.name.clone(),
            axes: t.attribute_line(),
        },
        None => TaskLine {
            code: code.to_string(),
            name: String::new(),
            axes: String::new(),
        },
    })
}

/// A question as the review pages show it.
pub struct QuestionLine {
    pub id: String,
    pub qa_type: String,
    pub level: String,
    pub text: String,
    /// (letter, text, is the keyed answer)
    pub options: Vec<(char, String, bool)>,
    /// The other direction of its linked pair: (question id, text, its key in words
    /// where it is shown).
    pub linked: Option<(String, String, String)>,
}

pub fn question_line(q: &crate::store::review::QuestionView) -> QuestionLine {
    QuestionLine {
        id: q.question_id.clone(),
        qa_type: q.qa_type.clone(),
        level: q.level.clone(),
        text: q.question.clone(),
        options: q
            .options
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let i = i64::try_from(i).unwrap_or(i64::MAX);
                (option_letter(i), o.clone(), q.answer == Some(i))
            })
            .collect(),
        linked: q.linked.as_ref().map(|l| {
            let key = l
                .answer
                .map(|a| crate::domain::records::option_words(&l.options, a))
                .unwrap_or_default();
            (l.question_id.clone(), l.question.clone(), key)
        }),
    }
}

/// The player's sources for a clip.
pub struct Player {
    pub src: String,
    pub media_type: String,
    pub strip: Option<String>,
    /// The clip version's frame rate and frame count (read by ffprobe after the import,
    /// `app::probe_timings`), drawn as the video's `data-fps` and `data-frames` so that
    /// a step goes to the middle of the next frame. `None` until probed, without
    /// ffprobe, or for a file it cannot read: the player then steps from one presented
    /// frame to the next (`requestVideoFrameCallback`). Used only for a constant rate.
    pub timing: Option<crate::domain::video::FrameTiming>,
}

/// A refusal of a validator's queue: before calibration is passed, the calibration
/// page; anything else as it is. (The store refuses in the statement it runs anyway;
/// the calibration status is read only then.)
async fn calibration_first(
    state: &AppState,
    campaign: &crate::store::catalog::Campaign,
    session: &Session,
    e: Error,
) -> PageResult {
    if matches!(e, Error::Forbidden(_))
        && state.store.in_pool(campaign, &session.user).await?
        && !state
            .store
            .calibration_status(campaign, &session.user)
            .await?
            .open()
    {
        return Ok(super::see_other(&format!(
            "/c/{}/calibration",
            campaign.name
        )));
    }
    Err(e.into())
}

pub async fn player(
    state: &AppState,
    session: &Session,
    clip: &crate::store::review::ClipView,
) -> Result<Player, Error> {
    let token = state.store.media_grant(&session.user, clip.version_id)?;
    Ok(Player {
        src: format!("/media/{token}"),
        media_type: clip.media_type.clone(),
        strip: media::strips_possible().then(|| format!("/media/{token}/strip")),
        timing: clip.timing,
    })
}

#[derive(Template)]
#[template(path = "review/item.html")]
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
    done: i64,
    total: i64,
    percent: i64,
    reasons: Vec<ReasonBox>,
    /// The key legend, drawn from the page's key table.
    keys: Vec<super::KeyHint>,
    verdict: String,
    note: String,
    locked: bool,
    history: Vec<(i64, String, String, String)>,
    error: Option<String>,
    rendered_at: i64,
    carried: Carried,
    version: i64,
    /// The blind key check, when the campaign has it on (questions only).
    blind: Option<BlindLine>,
    /// The queue's filters, kept by the queue link and the forms (`?task=...`).
    kept: String,
}

impl ItemPage {
    /// Whether the blind answer is asked for first (the verdict form waits).
    fn blind_asked(&self) -> bool {
        self.blind.as_ref().is_some_and(|b| b.asked)
    }
}

/// The blind key check on the page: the answer asked for first (the verdict form
/// waits), or the answer given beside the key.
pub struct BlindLine {
    pub asked: bool,
    /// The letters of their answer and of the key, and whether they agree.
    pub answered: Option<(char, char, bool)>,
}

use crate::domain::records::option_letter;

/// What the form holds when the page is drawn: the last verdict, or what was sent.
struct Draft {
    verdict: String,
    reasons: Vec<String>,
    note: String,
    carried: Carried,
}

/// Where the time and the video stand when an item's page is drawn without a refused
/// form: after a blind answer and before any verdict, the time spent on the answer is
/// counted in and the page counts as drawn that long ago, so that the verdict's time runs
/// from the question first shown (the page's script never reports more than the time
/// since it was drawn); the video's position comes from the address (`?at=`, seconds),
/// as the blind answer's save sends it there.
fn first_draw(item: &ValidatorItem, at: Option<&str>) -> Carried {
    let blind_spent = item
        .blind
        .as_ref()
        .and_then(|b| b.answered)
        .filter(|_| item.my_decisions.is_empty())
        .and_then(|a| a.time_spent_ms)
        .unwrap_or(0);
    Carried {
        rendered_at: (blind_spent > 0).then(|| now_micros() / 1000 - blind_spent),
        spent_before: blind_spent,
        position: super::position(at.unwrap_or("")),
    }
}

async fn item_page(
    state: &AppState,
    session: &Session,
    c: &str,
    stage: Stage,
    (item, at, kept): (ValidatorItem, Option<&str>, &Kept),
    draft: Option<Draft>,
    error: Option<String>,
) -> PageResult {
    let first = first_draw(&item, at);
    let campaign = state.store.campaign(c).await?;
    let q = state.store.queue(&campaign, &session.user, stage).await?;
    let level = item
        .question
        .as_ref()
        .map(|q| {
            campaign
                .taxonomy
                .parse_level(&q.level)
                .map_err(|m| Error::fault(format!("question `{}`", q.question_id), m))
        })
        .transpose()?;
    let latest = item.my_decisions.last();
    // A final item shows the verdict given, whatever a refused form sent.
    let draft = draft.filter(|_| !item.locked);
    let draft = draft.unwrap_or_else(|| Draft {
        verdict: latest
            .map(|d| d.verdict.as_str().to_string())
            .unwrap_or_default(),
        reasons: latest
            .map(|d| d.reasons.iter().map(|r| r.as_str().to_string()).collect())
            .unwrap_or_default(),
        note: latest.map(|d| d.note.clone()).unwrap_or_default(),
        carried: first,
    });
    let reasons = reason_boxes(&campaign.taxonomy, stage, level.as_ref(), &draft.reasons);
    let history = item
        .my_decisions
        .iter()
        .map(|d| {
            (
                d.change,
                d.verdict.as_str().to_string(),
                d.reasons
                    .iter()
                    .map(|r| r.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                crate::clock::to_rfc3339(d.decided_at),
            )
        })
        .collect();
    let here = format!("/c/{c}/review/{}", stage.number());
    let chrome = Chrome::new(
        state,
        session,
        Some(c),
        &format!("Review {}", item.item_id),
        &here,
    )
    .await?;
    let fields = |v: &Option<String>| v.clone().unwrap_or_default();
    let page = ItemPage {
        chrome,
        campaign: c.to_string(),
        stage: stage.number(),
        task: task_line(state, &campaign, &item.clip.task).await?,
        theme: fields(&item.clip.theme),
        details: item.clip.declared(&campaign.taxonomy),
        scene_graph: pretty(&item.clip.scene_graph),
        scenario: pretty(&item.clip.scenario),
        player: player(state, session, &item.clip).await?,
        question: item.question.as_ref().map(question_line),
        done: q.done,
        total: q.total,
        percent: super::review::percent(q.done, q.total),
        keys: super::verdict_keys(&reasons, super::KeyPage::Review),
        reasons,
        verdict: draft.verdict,
        note: draft.note,
        locked: item.locked,
        history,
        error: error.clone(),
        rendered_at: draft
            .carried
            .rendered_at
            .unwrap_or_else(|| now_micros() / 1000),
        carried: draft.carried,
        version: item.clip.version,
        blind: item.blind.as_ref().map(|b| BlindLine {
            asked: b.asked,
            answered: b
                .answered
                .map(|a| (option_letter(a.answer), option_letter(a.key), a.agrees)),
        }),
        kept: kept.query(),
        item_id: item.item_id,
    };
    let mut resp = render(&page);
    if error.is_some() {
        *resp.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(resp)
}

/// An item's page and its forms: `?at=` (seconds) starts the video there; the queue's
/// filters (`task`, `show`, `id`) are kept ([`Kept`]).
#[derive(serde::Deserialize)]
pub struct ItemQuery {
    at: Option<String>,
    #[serde(default)]
    task: String,
    #[serde(default)]
    show: String,
    #[serde(default)]
    id: String,
}

impl ItemQuery {
    fn kept(&self) -> Result<Kept, Error> {
        Kept::new(&self.task, &self.show, &self.id)
    }
}

pub async fn item(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((c, s, key)): Path<(String, String, String)>,
    axum::extract::Query(query): axum::extract::Query<ItemQuery>,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let stage = stage(&s)?;
    let kept = query.kept()?;
    let item = match state
        .store
        .validator_item(&campaign, &session.user, stage, &key)
        .await
    {
        Ok(item) => item,
        Err(e) => return calibration_first(&state, &campaign, &session, e).await,
    };
    item_page(
        &state,
        &session,
        &c,
        stage,
        (item, query.at.as_deref(), &kept),
        None,
        None,
    )
    .await
}

/// The item page again, with why a form was refused (and what it held).
async fn refused(
    state: &AppState,
    session: &Session,
    (campaign, stage, key): (&crate::store::catalog::Campaign, Stage, &str),
    kept: &Kept,
    draft: Option<Draft>,
    e: &Error,
) -> PageResult {
    let item = state
        .store
        .validator_item(campaign, &session.user, stage, key)
        .await?;
    item_page(
        state,
        session,
        &campaign.name,
        stage,
        (item, None, kept),
        draft,
        Some(for_people(e)),
    )
    .await
}

pub async fn decide(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((c, s, key)): Path<(String, String, String)>,
    axum::extract::Query(query): axum::extract::Query<ItemQuery>,
    RawForm(body): RawForm,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let stage = stage(&s)?;
    let kept = query.kept()?;
    let form = FormFields::parse(&body)?;
    let reasons = form.all("reasons");
    let draft = Draft {
        verdict: form.get("verdict"),
        reasons: reasons.clone(),
        note: form.get("note"),
        carried: form.carried(),
    };
    let time_spent_ms = form.time_spent_ms();
    let outcome = match Verdict::parse(&draft.verdict) {
        Err(_) => Err(Error::field("verdict", "choose valid (V) or reject (R)")),
        Ok(verdict) => {
            let req = VerdictRequest {
                verdict,
                reasons,
                note: draft.note.clone(),
                time_spent_ms,
                time_measure: form.time_measure(),
                version: form
                    .get("version")
                    .parse::<i64>()
                    .map_or(VersionRule::Newest, VersionRule::Shown),
            };
            crate::app::known::record_verdict(
                &state.known,
                &campaign,
                &session.user,
                stage,
                &key,
                &req,
                Origin::Web,
            )
            .await
        }
    };
    match outcome {
        Ok(recorded) => {
            let d = &recorded.decision;
            // The reasons in words, as the page lists them.
            let what = if d.reasons.is_empty() {
                d.verdict.as_str().to_string()
            } else {
                format!(
                    "{} ({})",
                    d.verdict.as_str(),
                    d.reasons
                        .iter()
                        .map(|r| campaign.taxonomy.reason_label(stage, r.as_str()))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            // A repeat of the stored decision records nothing, and says so.
            let said = if recorded.recorded {
                "Saved"
            } else {
                "Already saved (nothing new recorded)"
            };
            // The next item the queue's filters hold (all of it without them).
            let next = if kept.narrows() {
                kept.first_held(&state, &campaign, &session, stage).await?
            } else {
                state
                    .store
                    .queue(&campaign, &session.user, stage)
                    .await?
                    .next
            };
            let filters = kept.query();
            let last = if next.is_none() && kept.narrows() {
                " Nothing more waits under this filter."
            } else {
                ""
            };
            let to = match next {
                Some(next) => format!("/c/{c}/review/{}/{next}{filters}", stage.number()),
                None => format!("/c/{c}/review/{}{filters}", stage.number()),
            };
            if recorded.is_final {
                Ok(crate::web::flash::redirect(
                    &to,
                    &format!("{said}: {key} is {what} (final: both verdicts are in).{last}"),
                ))
            } else {
                // While the partner has not decided, the verdict can still change.
                Ok(crate::web::flash::redirect_with_link(
                    &to,
                    &format!("{said}: {key} is {what}.{last}"),
                    &format!("/c/{c}/review/{}/{key}{filters}", stage.number()),
                ))
            }
        }
        Err(e @ (Error::Field { .. } | Error::Invalid(_) | Error::Conflict(_))) => {
            refused(
                &state,
                &session,
                (&campaign, stage, &key),
                &kept,
                Some(draft),
                &e,
            )
            .await
        }
        Err(e) => Err(e.into()),
    }
}

/// A validator's answer to a question before its key is shown (the blind key check),
/// from the page: the option's letter (`chosen`). Back to the item, its key now shown.
pub async fn blind_answer(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path((c, s, key)): Path<(String, String, String)>,
    axum::extract::Query(query): axum::extract::Query<ItemQuery>,
    RawForm(body): RawForm,
) -> PageResult {
    let campaign = state.store.campaign(&c).await?;
    let stage = stage(&s)?;
    let kept = query.kept()?;
    if stage != Stage::Question {
        return Err(Error::NotFound(
            "blind answers are given to questions (Stage 2), not clips".into(),
        )
        .into());
    }
    let form = FormFields::parse(&body)?;
    let carried = form.carried();
    let chosen = form.get("chosen");
    let answer = match chosen.trim().as_bytes() {
        [l] if l.is_ascii_alphabetic() => Ok(i64::from(l.to_ascii_uppercase() - b'A')),
        _ => Err(Error::field(
            "chosen",
            "choose your answer first: type its letter (A, B, ...)",
        )),
    };
    let saved = match answer {
        Ok(a) => {
            state
                .store
                .record_blind_answer(&campaign, &session.user, &key, (a, form.time_spent_ms()))
                .await
        }
        Err(e) => Err(e),
    };
    // Back to the item with the video where it was (and the queue's filters).
    let here = format!(
        "/c/{c}/review/2/{key}{}",
        kept.query_with(&[("at", &carried.position)])
    );
    match saved {
        Ok(a) => Ok(crate::web::flash::redirect(
            &here,
            &format!(
                "Your answer: {}. The key: {}{}. Now give the verdict.",
                option_letter(a.answer),
                option_letter(a.key),
                if a.agrees {
                    " (the same)"
                } else {
                    " (they differ)"
                }
            ),
        )),
        Err(e @ (Error::Field { .. } | Error::Conflict(_))) => {
            refused(&state, &session, (&campaign, stage, &key), &kept, None, &e).await
        }
        Err(e) => Err(e.into()),
    }
}

/// The validators' queues and items, both stages.
pub fn routes() -> Vec<Route> {
    use axum::routing::{get, post};
    vec![
        Route::new(
            "GET",
            "/c/{campaign}/review/{stage}",
            VALIDATOR,
            Page,
            get(queue),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/review/{stage}/{item}",
            VALIDATOR,
            Page,
            get(item),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/review/{stage}/{item}",
            VALIDATOR,
            Page,
            post(decide),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/review/{stage}/{item}/blind",
            VALIDATOR,
            Page,
            post(blind_answer),
        ),
    ]
}
