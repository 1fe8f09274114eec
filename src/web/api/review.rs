//! The validators' review through the API: the queue of a stage, its items, verdicts
//! and blind answers (both stages).

use super::{ApiJson, ItemPath, StagePath, campaign, clip_urls, stage};
use crate::domain::{Origin, Stage, Verdict};
use crate::error::{Error, Result};
use crate::store::accounts::User;
use crate::store::review::{QueueEntry, QueueStatus, Recorded, ValidatorItem};
use crate::store::review::{VerdictRequest, VersionRule};
use crate::web::routes::api;
use crate::web::routes::{Route, VALIDATOR};
use crate::web::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// The validator's progress in a stage (done, total) and the next item to decide.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/queue/{stage}",
    tag = "review",
    operation_id = "get_queue",
    params(StagePath),
    responses((status = 200, description = "Where the validator stands", body = QueueStatus))
)]
pub async fn queue(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<StagePath>,
) -> Result<Json<QueueStatus>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let q = state
        .store
        .queue(&campaign, &user, stage(&p.stage)?)
        .await?;
    Ok(Json(q))
}

/// A page of a validator's queue.
#[derive(Serialize, ToSchema)]
pub struct QueueItems {
    /// The page's rows, in review order: undecided first, then the review order.
    pub items: Vec<QueueEntry>,
    /// The rows the filters keep, on every page.
    pub matching: usize,
    /// The rows of the whole queue, whatever the filters.
    pub total: usize,
    /// Give as `after` for the next page (absent on the last page).
    pub next: Option<String>,
    /// Give as `before` for the page before (absent on the first page).
    pub previous: Option<String>,
}

/// Which rows of a queue to list, and where the page starts.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct QueuePageQuery {
    /// Only this task's items (its code)
    task: Option<String>,
    /// `undecided` or `decided` (absent: both)
    show: Option<String>,
    /// Only items whose id starts with this
    id: Option<String>,
    /// The page after this row (a page's `next`)
    after: Option<String>,
    /// The page before this row (a page's `previous`), or `end`: the last page
    before: Option<String>,
    /// Rows in the page: 1 to 1000 (250 when absent)
    limit: Option<usize>,
}

/// A page of the validator's queue, in review order (undecided first), with whether
/// they decided each. Pages are cut by the row beside them (`next`, `previous`), so a
/// row decided while a client pages moves to the decided part and is not listed twice.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/queue/{stage}/items",
    tag = "review",
    operation_id = "list_queue_items",
    params(StagePath, QueuePageQuery),
    responses((status = 200, description = "A page of the queue, in review order", body = QueueItems))
)]
pub async fn queue_items(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<StagePath>,
    axum::extract::Query(q): axum::extract::Query<QueuePageQuery>,
) -> Result<Json<QueueItems>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let field = |v: &Option<String>| v.clone().unwrap_or_default();
    let (_, query) = crate::store::review::QueueQuery::from_fields(
        &field(&q.task),
        &field(&q.show),
        &field(&q.id),
        &field(&q.after),
        &field(&q.before),
        q.limit,
    )?;
    let listing = state
        .store
        .queue_page(&campaign, &user, stage(&p.stage)?, &query)
        .await?;
    let token = |it: &QueueEntry| crate::domain::paging::Cursor::token(it.decided, &it.item_id);
    let page = listing.page;
    Ok(Json(QueueItems {
        next: if page.more_after {
            page.rows.last().map(token)
        } else {
            None
        },
        previous: if page.more_before {
            page.rows.first().map(token)
        } else {
            None
        },
        matching: page.matching,
        total: listing.all,
        items: page.rows,
    }))
}

/// One item of the validator's queue: the clip (and question) and the validator's own
/// decisions; `locked` once the verdict is final.
///
/// `clip.media_url` (and `clip.strip_url` when the server draws strips) fetch the clip
/// with this same token (byte ranges, ETag, 304). A question of a linked pair carries
/// `question.linked`: the other direction of its pair. Never the partner's verdict or
/// the item's outcome.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/items/{stage}/{item}",
    tag = "review",
    operation_id = "get_item",
    params(ItemPath),
    responses((status = 200, description = "The item as its validator sees it", body = ValidatorItem))
)]
pub async fn item(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<ItemPath>,
) -> Result<Json<ValidatorItem>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let mut item = state
        .store
        .validator_item(&campaign, &user, stage(&p.stage)?, &p.item)
        .await?;
    clip_urls(&state, &user, &mut item.clip)?;
    Ok(Json(item))
}

/// A verdict on an item.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"verdict": "reject", "reasons": ["generation_artifact"], "note": "", "time_spent_ms": 5400, "version": 1}))]
pub struct VerdictBody {
    /// `valid` or `reject`
    #[schema(value_type = Verdict)]
    verdict: String,
    /// Only with `reject`, at least one: codes of the campaign's protocol's reasons for
    /// the stage (`GET /api/v1/campaigns/{campaign}/protocol`), each on a level it
    /// applies to.
    #[serde(default)]
    reasons: Vec<String>,
    /// Required with a reason that needs a note (VGenST-Bench: `other`); at most 4000
    /// characters.
    #[serde(default)]
    note: String,
    /// How long the item took, as the client measured it (0 to 86,400,000 ms).
    #[schema(minimum = 0, maximum = 86_400_000)]
    time_spent_ms: Option<i64>,
    /// The clip version the validator reviewed; refused with 409 if a newer one arrived.
    #[schema(minimum = 1)]
    version: Option<i64>,
}

impl VerdictBody {
    pub(super) fn request(self) -> Result<VerdictRequest> {
        Ok(VerdictRequest {
            verdict: Verdict::parse(&self.verdict).map_err(|m| Error::field("verdict", m))?,
            reasons: self.reasons,
            note: self.note,
            time_spent_ms: self.time_spent_ms,
            time_measure: Some(crate::domain::TimeMeasure::Client),
            version: self.version.map_or(VersionRule::Newest, VersionRule::Shown),
        })
    }
}

/// Record a verdict (or change it while the partner has not decided).
///
/// 201 when recorded, 200 when it repeats the latest decision (nothing is added);
/// `final` in the reply is true once both verdicts are in (the verdict can no longer
/// change).
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/items/{stage}/{item}/verdict",
    tag = "review",
    operation_id = "record_verdict",
    params(ItemPath),
    request_body = VerdictBody,
    responses(
        (status = 201, description = "Recorded", body = Recorded),
        (status = 200, description = "The same as the latest decision: nothing was added", body = Recorded),
        (status = 409, description = "The verdict is final, or a newer version of the clip arrived"),
    )
)]
pub async fn verdict(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<ItemPath>,
    ApiJson(body): ApiJson<VerdictBody>,
) -> Result<(StatusCode, Json<Recorded>)> {
    let campaign = campaign(&state, &p.campaign).await?;
    let req = body.request()?;
    let recorded = crate::app::known::record_verdict(
        &state.known,
        &campaign,
        &user,
        stage(&p.stage)?,
        &p.item,
        &req,
        Origin::Api,
    )
    .await?;
    let status = if recorded.recorded {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(recorded)))
}

/// A validator's answer to a question before its key is shown.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"answer": 2, "time_spent_ms": 5200}))]
pub struct BlindAnswerBody {
    /// 0-based index of the option chosen (0 is A)
    #[schema(minimum = 0)]
    answer: i64,
    /// Milliseconds spent on the question before this answer. The verdict's own
    /// `time_spent_ms` then counts from the question first shown, this time included.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 86_400_000)]
    time_spent_ms: Option<i64>,
}

/// Answer a question from the video before its key is shown (the campaign's blind key
/// check, Stage 2): once, before the verdict. The reply gives the key; the verdict is
/// taken after it.
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/items/{stage}/{item}/blind-answer",
    tag = "review",
    operation_id = "record_blind_answer",
    params(ItemPath),
    request_body = BlindAnswerBody,
    responses(
        (status = 201, description = "Recorded; the key is in the reply", body = crate::store::review::BlindAnswer),
        (status = 409, description = "The check is off, the question was answered blind already, or a verdict came first"),
        (status = 404, description = "Not a question of the validator's Stage 2 queue"),
    )
)]
pub async fn blind_answer(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<ItemPath>,
    ApiJson(body): ApiJson<BlindAnswerBody>,
) -> Result<(StatusCode, Json<crate::store::review::BlindAnswer>)> {
    let campaign = campaign(&state, &p.campaign).await?;
    if stage(&p.stage)? != Stage::Question {
        return Err(Error::NotFound(
            "blind answers are given to questions (Stage 2), not clips".into(),
        ));
    }
    let answer = state
        .store
        .record_blind_answer(&campaign, &user, &p.item, (body.answer, body.time_spent_ms))
        .await?;
    Ok((StatusCode::CREATED, Json(answer)))
}

/// The validators' queues, items, verdicts and blind answers.
pub fn routes() -> Vec<Route> {
    vec![
        api!(VALIDATOR, queue),
        api!(VALIDATOR, queue_items),
        api!(VALIDATOR, item),
        api!(VALIDATOR, verdict),
        api!(VALIDATOR, blind_answer),
    ]
}
