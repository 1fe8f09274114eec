//! The JSON API under `/api/v1`. Handlers parse the request into domain types and
//! call the store; they hold no rules of their own.

pub mod admin;
pub mod baseline;
pub mod jobs;
pub mod study;

use super::routes::{
    ADMIN, AUTHOR, AUTHOR_OR_ADMIN, Access, BASELINE, PARTICIPANT, Route, STAFF, VALIDATOR,
};
use crate::app::exports;
use crate::domain::{Origin, Resolution, Stage, Verdict};
use crate::error::{Error, Result};
use crate::store::accounts::Account;
use crate::store::accounts::User;
use crate::store::calibration::{CalibrationFeedback, CalibrationItem, CalibrationScore};
use crate::store::catalog::Campaign;
use crate::store::catalog::{Settings, TaskInfo, TaskProgress};
use crate::store::review::{QueueEntry, QueueStatus, Recorded, SplitItem, ValidatorItem};
use crate::store::review::{ResolutionRequest, VerdictRequest, VersionRule};
use crate::web::media::download;
use crate::web::state::AppState;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Path, Query, Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::{Extension, Json};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::{IntoParams, ToSchema};

/// A JSON body whose errors come back in the API's error format.
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        // Read as plain JSON first, so that text no field may hold (NUL, control
        // characters) is refused by name before anything is decoded or stored.
        let value = match Json::<serde_json::Value>::from_request(req, state).await {
            Ok(Json(v)) => v,
            Err(rejection) => {
                return Err(match rejection {
                    JsonRejection::MissingJsonContentType(_) => Error::Invalid(
                        "send the body as JSON with `Content-Type: application/json`".into(),
                    ),
                    other => Error::Invalid(format!("invalid JSON body: {}", other.body_text())),
                });
            }
        };
        crate::domain::text::check_json(&value)
            .map_err(|(field, message)| Error::Field { field, message })?;
        serde_json::from_value::<T>(value)
            .map(ApiJson)
            .map_err(|e| Error::Invalid(format!("invalid JSON body: {e}")))
    }
}

async fn campaign(state: &AppState, name: &str) -> Result<Campaign> {
    state.store.campaign(name).await
}

/// The stage of a path, as a 404 when it is not one.
fn stage(s: &str) -> Result<Stage> {
    Stage::parse(s).map_err(|m| Error::NotFound(format!("no such stage: {m}")))
}

// The path parameters of the API's routes, with what they name.

/// A campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct CampaignPath {
    /// The campaign's name (`default` unless named otherwise at import)
    campaign: String,
}

/// A stage of a campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct StagePath {
    /// The campaign's name (`default` unless named otherwise at import)
    campaign: String,
    /// 1 (clips) or 2 (questions)
    #[param(value_type = Stage)]
    stage: String,
}

/// One item of a stage of a campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ItemPath {
    /// The campaign's name (`default` unless named otherwise at import)
    campaign: String,
    /// 1 (clips) or 2 (questions)
    #[param(value_type = Stage)]
    stage: String,
    /// A clip_id in Stage 1, a question_id in Stage 2 (of the clip's newest version)
    item: String,
}

/// One task of a campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TaskPath {
    /// The campaign's name (`default` unless named otherwise at import)
    campaign: String,
    /// The task's code, e.g. MC_F_EGO_STA
    task: String,
}

/// An account.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct UserPath {
    /// The account's name
    name: String,
}

/// Puts the URLs of a clip's file and strip, made for `user`, into an API reply.
/// They answer to this user's token (or session) only, under the pages' rules.
fn clip_urls(
    state: &AppState,
    user: &User,
    clip: &mut crate::store::review::ClipView,
) -> Result<()> {
    let token = state.store.media_grant(user, clip.version_id)?;
    clip.media_url = Some(format!("/media/{token}"));
    clip.strip_url = crate::web::media::strips_possible().then(|| format!("/media/{token}/strip"));
    Ok(())
}

/// The signed-in account.
#[derive(Serialize, ToSchema)]
pub struct Me {
    pub id: i64,
    pub name: String,
    /// Admins act as admins in every campaign and hold no roles.
    pub admin: bool,
    pub roles: Vec<MyRole>,
}

/// A role the signed-in account holds in one campaign.
#[derive(Serialize, ToSchema)]
pub struct MyRole {
    /// The campaign's name; never given to a participant (it could hint at the source
    /// of the clips).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub campaign: Option<String>,
    pub role: crate::domain::Role,
}

/// The signed-in account: whether it is an admin (server-wide) and its role in each
/// campaign.
///
/// One role per campaign (validator, author or participant); an admin holds none and
/// reaches every campaign.
#[utoipa::path(
    get,
    path = "/api/v1/me",
    tag = "accounts",
    operation_id = "me",
    responses((status = 200, description = "The account", body = Me))
)]
pub async fn me(Extension(user): Extension<User>) -> Json<Me> {
    let roles = user
        .roles
        .iter()
        .map(|r| MyRole {
            campaign: r.role.is_staff().then(|| r.campaign.clone()),
            role: r.role,
        })
        .collect();
    Json(Me {
        id: user.id,
        name: user.name,
        admin: user.admin,
        roles,
    })
}

/// Every account.
#[derive(Serialize, ToSchema)]
pub struct Users {
    pub users: Vec<Account>,
}

/// Every account, its role in each campaign and whether it is disabled.
#[utoipa::path(
    get,
    path = "/api/v1/users",
    tag = "accounts",
    operation_id = "list_users",
    responses((status = 200, description = "Every account, by name", body = Users))
)]
pub async fn users(State(state): State<AppState>) -> Result<Json<Users>> {
    let users = state.store.accounts().await?;
    Ok(Json(Users { users }))
}

/// An account's state after it was disabled or enabled.
#[derive(Serialize, ToSchema)]
pub struct UserState {
    pub user: String,
    pub disabled: bool,
    /// False when the account already was in this state.
    pub changed: bool,
}

/// Disable an account: its sessions end and its API tokens are revoked at once; a
/// validator keeps their pool index.
#[utoipa::path(
    post,
    path = "/api/v1/users/{name}/disable",
    tag = "accounts",
    operation_id = "disable_user",
    params(UserPath),
    responses(
        (status = 200, description = "The account is disabled", body = UserState),
        (status = 409, description = "The last admin who can sign in cannot be disabled"),
    )
)]
pub async fn disable_user(
    State(state): State<AppState>,
    Path(p): Path<UserPath>,
) -> Result<Json<UserState>> {
    let changed = state.store.set_disabled(&p.name, true).await?;
    Ok(Json(UserState {
        user: p.name,
        disabled: true,
        changed,
    }))
}

/// Enable a disabled account again (it signs in anew and needs new API tokens).
#[utoipa::path(
    post,
    path = "/api/v1/users/{name}/enable",
    tag = "accounts",
    operation_id = "enable_user",
    params(UserPath),
    responses((status = 200, description = "The account is enabled", body = UserState))
)]
pub async fn enable_user(
    State(state): State<AppState>,
    Path(p): Path<UserPath>,
) -> Result<Json<UserState>> {
    let changed = state.store.set_disabled(&p.name, false).await?;
    Ok(Json(UserState {
        user: p.name,
        disabled: false,
        changed,
    }))
}

/// Campaign names.
#[derive(Serialize, ToSchema)]
pub struct Campaigns {
    pub campaigns: Vec<String>,
}

/// The campaigns the caller works in: admins see every campaign, everyone else those
/// where they are a validator or an author (participants never see campaign names).
#[utoipa::path(
    get,
    path = "/api/v1/campaigns",
    tag = "campaigns",
    operation_id = "list_campaigns",
    responses((status = 200, description = "Campaign names", body = Campaigns))
)]
pub async fn campaigns(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
) -> Result<Json<Campaigns>> {
    let campaigns = state.store.campaign_names_for(&user).await?;
    Ok(Json(Campaigns { campaigns }))
}

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
    fn request(self) -> Result<VerdictRequest> {
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
        &state.store,
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
#[schema(example = json!({"answer": 2}))]
pub struct BlindAnswerBody {
    /// 0-based index of the option chosen (0 is A)
    #[schema(minimum = 0)]
    answer: i64,
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
        .record_blind_answer(&campaign, &user, &p.item, body.answer)
        .await?;
    Ok((StatusCode::CREATED, Json(answer)))
}

/// Questions whose key is in doubt.
#[derive(Serialize, ToSchema)]
pub struct KeysInDoubt {
    pub keys_in_doubt: Vec<crate::report::blind::KeyInDoubt>,
}

/// The questions both of whose validators answered, blind (the blind key check),
/// otherwise than the key: for the authors to check the key.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/keys-in-doubt",
    tag = "authors",
    operation_id = "list_keys_in_doubt",
    params(CampaignPath),
    responses((status = 200, description = "The questions", body = KeysInDoubt))
)]
pub async fn keys_in_doubt(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<KeysInDoubt>> {
    let campaign = campaign(&state, &p.campaign).await?;
    Ok(Json(KeysInDoubt {
        keys_in_doubt: crate::report::blind::keys_in_doubt(
            &state.store.blind_records(&campaign).await?,
        ),
    }))
}

/// Which splits to list.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SplitsQuery {
    /// Resolved splits too
    #[serde(default)]
    all: bool,
}

/// Splits of a stage.
#[derive(Serialize, ToSchema)]
pub struct Splits {
    pub splits: Vec<SplitItem>,
}

/// Splits waiting for an author (with `all=true` resolved ones too), with both
/// verdicts, reasons and notes.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/splits/{stage}",
    tag = "authors",
    operation_id = "list_splits",
    params(StagePath, SplitsQuery),
    responses((status = 200, description = "The splits", body = Splits))
)]
pub async fn splits(
    State(state): State<AppState>,
    Path(p): Path<StagePath>,
    Query(q): Query<SplitsQuery>,
) -> Result<Json<Splits>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let splits = state
        .store
        .splits(&campaign, stage(&p.stage)?, q.all)
        .await?;
    Ok(Json(Splits { splits }))
}

/// One split with both verdicts.
///
/// `clip.media_url` (and `clip.strip_url` when the server draws strips) fetch the clip
/// with this same token (byte ranges, ETag, 304).
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/splits/{stage}/{item}",
    tag = "authors",
    operation_id = "get_split",
    params(ItemPath),
    responses((status = 200, description = "The split", body = SplitItem))
)]
pub async fn split(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<ItemPath>,
) -> Result<Json<SplitItem>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let mut split = state
        .store
        .split_item(&campaign, stage(&p.stage)?, &p.item)
        .await?;
    clip_urls(&state, &user, &mut split.clip)?;
    Ok(Json(split))
}

/// An author's resolution of a split.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"verdict": "accept", "note": "the artifact is in the background only"}))]
pub struct ResolutionBody {
    /// `accept` or `reject`
    #[schema(value_type = crate::domain::Resolution)]
    verdict: String,
    /// Why (at most 4000 characters)
    #[serde(default)]
    note: String,
}

/// A resolution and the split it resolved.
#[derive(Serialize, ToSchema)]
pub struct ResolutionReply {
    /// False when the same resolution was already stored (nothing was added).
    pub recorded: bool,
    pub split: SplitItem,
}

/// Resolve a split: accept or reject, with a note; final.
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/splits/{stage}/{item}/resolution",
    tag = "authors",
    operation_id = "resolve_split",
    params(ItemPath),
    request_body = ResolutionBody,
    responses(
        (status = 201, description = "Recorded", body = ResolutionReply),
        (status = 200, description = "The same resolution was already stored", body = ResolutionReply),
        (status = 409, description = "The split was resolved otherwise, or a newer version of the clip arrived"),
    )
)]
pub async fn resolution(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<ItemPath>,
    ApiJson(body): ApiJson<ResolutionBody>,
) -> Result<(StatusCode, Json<ResolutionReply>)> {
    let campaign = campaign(&state, &p.campaign).await?;
    let verdict = Resolution::parse(&body.verdict).map_err(|m| Error::field("verdict", m))?;
    let stage = stage(&p.stage)?;
    let recorded = state
        .store
        .resolve_split(
            &campaign,
            &user,
            stage,
            &p.item,
            &ResolutionRequest {
                verdict,
                note: body.note,
            },
            Origin::Api,
        )
        .await?;
    let mut split = state.store.split_item(&campaign, stage, &p.item).await?;
    clip_urls(&state, &user, &mut split.clip)?;
    let status = if recorded {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(ResolutionReply { recorded, split })))
}

/// A campaign's protocol in force.
#[derive(Serialize, ToSchema)]
pub struct ProtocolView {
    pub campaign: String,
    /// The protocol's name (e.g. vgenst, glimpse, tumtraffic)
    pub name: String,
    /// Counts the campaign's protocols: 1 at creation, one more at each change; each
    /// decision records the version it was made under.
    pub version: i64,
    pub tasks: Vec<ProtocolTask>,
    /// The QA levels, in order.
    pub levels: Vec<crate::domain::Level>,
    pub qa_types: Vec<crate::domain::taxonomy::QaTypeDef>,
    /// The reasons of both stages, each stage's in the protocol's order.
    pub reasons: Vec<ProtocolReason>,
    /// Whether the retained benchmark's questions carry their reformulations.
    pub export_variants: bool,
    pub pairing: crate::domain::pairing::Pairing,
}

/// A task of a protocol.
#[derive(Serialize, ToSchema)]
pub struct ProtocolTask {
    pub code: String,
    pub name: String,
    /// The task's attributes (VGenST-Bench: scale, perspective, dynamics).
    pub attributes: BTreeMap<String, String>,
    /// The QA types that apply to the task.
    pub qa_types: Vec<String>,
}

/// A rejection reason of a protocol.
#[derive(Serialize, ToSchema)]
pub struct ProtocolReason {
    pub stage: Stage,
    /// What verdicts send
    pub code: String,
    /// What the pages show
    pub label: String,
    /// Its digit key on the review page
    pub key: u8,
    /// The question levels it applies to (every level when empty)
    pub levels: Vec<crate::domain::Level>,
    /// Whether a verdict giving it needs a note
    pub note_required: bool,
}

/// The campaign's protocol in force, with its version: the tasks (with their
/// attributes and QA types), the QA types with their levels, and the reasons of each
/// stage with their digit key, the levels they apply to and whether they need a note.
/// Verdicts name these reasons.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/protocol",
    tag = "campaigns",
    operation_id = "get_protocol",
    params(CampaignPath),
    responses((status = 200, description = "The protocol", body = ProtocolView))
)]
pub async fn protocol(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<ProtocolView>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let t = &campaign.taxonomy;
    Ok(Json(ProtocolView {
        campaign: campaign.name.clone(),
        name: t.name.clone(),
        version: campaign.protocol_version,
        tasks: t
            .tasks
            .iter()
            .map(|task| ProtocolTask {
                code: task.code.clone(),
                name: task.name.clone(),
                attributes: task.all_attributes(),
                qa_types: t.applicability.get(&task.code).cloned().unwrap_or_default(),
            })
            .collect(),
        levels: t.levels.clone(),
        qa_types: t.qa_types.clone(),
        reasons: t
            .reasons
            .iter()
            .map(|r| ProtocolReason {
                stage: r.stage,
                code: r.code.clone(),
                label: r.label.clone(),
                key: r.key,
                levels: r.levels.clone(),
                note_required: r.note,
            })
            .collect(),
        export_variants: t.variants,
        pairing: t.pairing,
    }))
}

/// A campaign's tasks.
#[derive(Serialize, ToSchema)]
pub struct Tasks {
    pub tasks: Vec<TaskInfo>,
}

/// The tasks with the pair in force.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/tasks",
    tag = "pairs",
    operation_id = "list_tasks",
    params(CampaignPath),
    responses((status = 200, description = "The tasks in pairing order", body = Tasks))
)]
pub async fn tasks(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<Tasks>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let tasks = state.store.tasks(&campaign).await?;
    Ok(Json(Tasks { tasks }))
}

/// A task's pair.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"rater1": "val00", "rater2": "val03"}))]
pub struct PairBody {
    /// Rater 1 in the statistics
    rater1: String,
    rater2: String,
}

/// Override a task's pair (rater1 is rater 1 in the statistics); items already
/// started keep their pair.
#[utoipa::path(
    put,
    path = "/api/v1/campaigns/{campaign}/tasks/{task}/pair",
    tag = "pairs",
    operation_id = "set_pair",
    params(TaskPath),
    request_body = PairBody,
    responses(
        (status = 200, description = "The task with its new pair", body = TaskInfo),
        (status = 409, description = "The campaign pairs per clip (its protocol's `pairing`): a task has no pair to set"),
    )
)]
pub async fn set_pair(
    State(state): State<AppState>,
    Path(p): Path<TaskPath>,
    ApiJson(body): ApiJson<PairBody>,
) -> Result<Json<TaskInfo>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let t = state
        .store
        .set_pair(&campaign, &p.task, Some((&body.rater1, &body.rater2)))
        .await?;
    Ok(Json(t))
}

/// Go back to the default pair from the pool.
#[utoipa::path(
    delete,
    path = "/api/v1/campaigns/{campaign}/tasks/{task}/pair",
    tag = "pairs",
    operation_id = "clear_pair",
    params(TaskPath),
    responses((status = 200, description = "The task with its default pair", body = TaskInfo))
)]
pub async fn clear_pair(
    State(state): State<AppState>,
    Path(p): Path<TaskPath>,
) -> Result<Json<TaskInfo>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let t = state.store.set_pair(&campaign, &p.task, None).await?;
    Ok(Json(t))
}

/// Where each task stands.
#[derive(Serialize, ToSchema)]
pub struct Progress {
    pub tasks: Vec<TaskProgress>,
}

/// Per task and stage: items, unstarted, half decided, both pass, both reject, split
/// (waiting, accepted, rejected), not open.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/progress",
    tag = "campaigns",
    operation_id = "get_progress",
    params(CampaignPath),
    responses((status = 200, description = "Per task, both stages", body = Progress))
)]
pub async fn progress(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<Progress>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let tasks = state.store.progress(&campaign).await?;
    Ok(Json(Progress { tasks }))
}

/// Every decision including changes, as CSV; `final` marks the verdicts that counted.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/export/decisions",
    tag = "exports",
    operation_id = "export_decisions",
    params(CampaignPath),
    responses((status = 200, description = "decisions.csv", content_type = "text/csv", body = String))
)]
pub async fn export_decisions(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Response> {
    let campaign = campaign(&state, &p.campaign).await?;
    Ok(download(exports::decisions(&state.store, &campaign).await?))
}

/// Every resolution as CSV.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/export/resolutions",
    tag = "exports",
    operation_id = "export_resolutions",
    params(CampaignPath),
    responses((status = 200, description = "resolutions.csv", content_type = "text/csv", body = String))
)]
pub async fn export_resolutions(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Response> {
    let campaign = campaign(&state, &p.campaign).await?;
    Ok(download(
        exports::resolutions(&state.store, &campaign).await?,
    ))
}

/// The audit trail as CSV, with the same filters as `list_audit_events`.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/export/audit",
    tag = "exports",
    operation_id = "export_audit",
    params(CampaignPath, AuditQuery),
    responses((status = 200, description = "audit.csv", content_type = "text/csv", body = String))
)]
pub async fn export_audit(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
    Query(q): Query<AuditQuery>,
) -> Result<Response> {
    let campaign = campaign(&state, &p.campaign).await?;
    let filter = q.filter()?;
    Ok(download(
        exports::audit(&state.store, &campaign, &filter).await?,
    ))
}

/// The clips to generate again as JSON lines (one clip per line, as `list_regeneration`
/// gives them): the generation pipeline's input.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/export/regeneration",
    tag = "exports",
    operation_id = "export_regeneration",
    params(CampaignPath),
    responses((status = 200, description = "regeneration.jsonl", content_type = "application/jsonl", body = String))
)]
pub async fn export_regeneration(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Response> {
    let campaign = campaign(&state, &p.campaign).await?;
    Ok(download(
        exports::regeneration(&state.store, &campaign).await?,
    ))
}

/// Every blind answer (the blind key check) as CSV: question_id, clip_id, qa_type,
/// level, validator, answer, key, agrees, answered_at, outcome.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/export/blind-answers",
    tag = "exports",
    operation_id = "export_blind_answers",
    params(CampaignPath),
    responses(
        (status = 200, description = "blind-answers.csv", content_type = "text/csv", body = String),
    )
)]
pub async fn export_blind_answers(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Response> {
    let campaign = campaign(&state, &p.campaign).await?;
    Ok(download(
        exports::blind_answers(&state.store, &campaign).await?,
    ))
}

/// Every verdict on a known item of the live queue beside its known verdict, as CSV:
/// stage, item_id, clip_id, task, validator, verdict, reasons, known_verdict,
/// known_reasons, agrees, decided_at. Kept apart from the decisions export.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/export/known-verdicts",
    tag = "exports",
    operation_id = "export_known_verdicts",
    params(CampaignPath),
    responses(
        (status = 200, description = "known-verdicts.csv", content_type = "text/csv", body = String),
    )
)]
pub async fn export_known_verdicts(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Response> {
    let campaign = campaign(&state, &p.campaign).await?;
    Ok(download(
        exports::known_verdicts(&state.store, &campaign).await?,
    ))
}

/// Each decided item's probability of a defect (the review-quality model's, per stage,
/// anchored by the known items) as CSV: stage, item_id, clip_id, task, outcome,
/// retained, defect_probability (empty where the data do not identify the model).
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/export/defect-probabilities",
    tag = "exports",
    operation_id = "export_defect_probabilities",
    params(CampaignPath),
    responses(
        (status = 200, description = "defect-probabilities.csv", content_type = "text/csv", body = String),
    )
)]
pub async fn export_defect_probabilities(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Response> {
    let campaign = campaign(&state, &p.campaign).await?;
    Ok(download(
        exports::defect_probabilities(&state.store, &campaign).await?,
    ))
}

/// The blind study's answers as CSV (participants by pseudonym).
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/export/study-responses",
    tag = "exports",
    operation_id = "export_study_responses",
    params(CampaignPath),
    responses(
        (status = 200, description = "study-responses.csv", content_type = "text/csv", body = String),
    )
)]
pub async fn export_study_responses(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Response> {
    let campaign = campaign(&state, &p.campaign).await?;
    Ok(download(
        exports::study_responses(&state.store, &campaign).await?,
    ))
}

/// The human baseline's answers as CSV, in the format `tandem baseline import` reads:
/// participant, question_id, presentation, shown, chosen.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/export/baseline-answers",
    tag = "exports",
    operation_id = "export_baseline_answers",
    params(CampaignPath),
    responses(
        (status = 200, description = "baseline-answers.csv", content_type = "text/csv", body = String),
    )
)]
pub async fn export_baseline_answers(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Response> {
    let campaign = campaign(&state, &p.campaign).await?;
    Ok(download(
        exports::baseline_answers(&state.store, &campaign).await?,
    ))
}

/// The validator's calibration: state (not_required, in_progress, passed, failed),
/// round, decided, agreed, required, threshold, next item.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/calibration",
    tag = "calibration",
    operation_id = "get_calibration",
    params(CampaignPath),
    responses((status = 200, description = "Where the validator stands", body = crate::domain::calibration::CalibrationStatus))
)]
pub async fn calibration_status(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<crate::domain::calibration::CalibrationStatus>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let s = state.store.calibration_status(&campaign, &user).await?;
    Ok(Json(s))
}

/// A calibration item; once decided in this round, with the known verdict.
///
/// `clip.media_url` (and `clip.strip_url` when the server draws strips) fetch the clip
/// with this same token (byte ranges, ETag, 304).
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/calibration/{stage}/{item}",
    tag = "calibration",
    operation_id = "get_calibration_item",
    params(ItemPath),
    responses((status = 200, description = "The calibration item", body = CalibrationItem))
)]
pub async fn calibration_item(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<ItemPath>,
) -> Result<Json<CalibrationItem>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let mut item = state
        .store
        .calibration_item(&campaign, &user, stage(&p.stage)?, &p.item)
        .await?;
    clip_urls(&state, &user, &mut item.clip)?;
    Ok(Json(item))
}

/// A calibration verdict; answers with the known verdict, its reasons and note, and the
/// calibration state.
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/calibration/{stage}/{item}/verdict",
    tag = "calibration",
    operation_id = "record_calibration_verdict",
    params(ItemPath),
    request_body = VerdictBody,
    responses(
        (status = 200, description = "The verdict beside the known one", body = CalibrationFeedback),
        (status = 409, description = "The item was decided otherwise in this round, or the round is over"),
    )
)]
pub async fn calibration_verdict(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<ItemPath>,
    ApiJson(body): ApiJson<VerdictBody>,
) -> Result<Json<CalibrationFeedback>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let req = body.request()?;
    let feedback = state
        .store
        .record_calibration(&campaign, &user, stage(&p.stage)?, &p.item, &req)
        .await?;
    Ok(Json(feedback))
}

/// Every pool validator's calibration, and the campaign's settings.
#[derive(Serialize, ToSchema)]
pub struct CalibrationScores {
    pub validators: Vec<CalibrationScore>,
    pub settings: Settings,
}

/// Every pool validator's calibration, and the campaign's settings.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/calibration-scores",
    tag = "calibration",
    operation_id = "list_calibration_scores",
    params(CampaignPath),
    responses((status = 200, description = "Per validator", body = CalibrationScores))
)]
pub async fn calibration_scores(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<CalibrationScores>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let validators = state.store.calibration_scores(&campaign).await?;
    Ok(Json(CalibrationScores {
        validators,
        settings: campaign.settings,
    }))
}

/// The campaign's sampled review: each `[[sampling]]` rule of the protocol with its
/// plan (n, c); every lot drawn, with its sample's progress, its state and, once its
/// sample is decided, the exact upper bound on the whole lot's defect rate; the items
/// held for the next draw.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/sampling",
    tag = "sampling",
    operation_id = "get_sampling",
    params(CampaignPath),
    responses((status = 200, description = "Rules, lots and held items", body = crate::app::sampling::SamplingStatus))
)]
pub async fn sampling_status(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<crate::app::sampling::SamplingStatus>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let status = crate::app::sampling::status(&state.store, &campaign).await?;
    Ok(Json(status))
}

/// Run the campaign's sampled review.
///
/// Settles every lot whose drawn items are all decided (at most c defects: its undrawn
/// items are retained by sample; more: they go to full review), releases held items no
/// rule covers any longer, then draws every stratum's held items as a new lot (a fresh
/// seed, stored) and queues its sample to the pair.
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/sampling/run",
    tag = "sampling",
    operation_id = "run_sampling",
    params(CampaignPath),
    responses(
        (status = 200, description = "What the run did", body = crate::store::sampling::SamplingRun),
        (status = 409, description = "The protocol changed during the run: run it again"),
        (status = 422, description = "The protocol has no `[[sampling]]` rule"),
    )
)]
pub async fn sampling_run(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<crate::store::sampling::SamplingRun>> {
    let run = crate::app::sampling::run(&state.store, &p.campaign).await?;
    Ok(Json(run))
}

/// The clips that need a new version.
#[derive(Serialize, ToSchema)]
pub struct Regeneration {
    pub clips: Vec<crate::domain::records::RegenerationItem>,
}

/// The clips rejected in Stage 1 that need a new version, with scene graph, scenario,
/// reasons and notes.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/regeneration",
    tag = "exports",
    operation_id = "list_regeneration",
    params(CampaignPath),
    responses((status = 200, description = "The work list of the generation pipeline", body = Regeneration))
)]
pub async fn regeneration(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<Regeneration>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let clips = state.store.regeneration_list(&campaign).await?;
    Ok(Json(Regeneration { clips }))
}

/// Which events of the audit trail to give.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Only this clip's events
    clip: Option<String>,
    /// Only events of clips or items whose id starts with this
    id: Option<String>,
    /// Only what this person did (their verdicts, resolutions and calibration verdicts)
    validator: Option<String>,
    /// From this day (YYYY-MM-DD, UTC) or RFC 3339 time on
    from: Option<String>,
    /// Up to this day (inclusive) or RFC 3339 time
    to: Option<String>,
    /// Only the latest N events, newest first
    latest: Option<usize>,
}

impl AuditQuery {
    fn filter(&self) -> Result<crate::domain::records::AuditFilter> {
        let mut filter = crate::domain::records::AuditFilter::parse(
            self.clip.as_deref(),
            self.validator.as_deref(),
            self.from.as_deref(),
            self.to.as_deref(),
        )?;
        filter.prefix = crate::domain::paging::prefix("id", self.id.as_deref())?;
        filter.limit = self.latest;
        Ok(filter)
    }
}

/// Events of the audit trail.
#[derive(Serialize, ToSchema)]
pub struct Audit {
    pub events: Vec<crate::domain::records::AuditEvent>,
}

/// The audit trail: every event of a clip, of a person, within days, or the latest N;
/// without filters every event, per clip and version in order.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/audit",
    tag = "exports",
    operation_id = "list_audit_events",
    params(CampaignPath, AuditQuery),
    responses((status = 200, description = "The events", body = Audit))
)]
pub async fn audit(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
    Query(q): Query<AuditQuery>,
) -> Result<Json<Audit>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let filter = q.filter()?;
    let events = state.store.audit(&campaign, &filter).await?;
    Ok(Json(Audit { events }))
}

/// The QC tables (T11, T12, T13), the reasons and the validators' figures, computed
/// from the raw decisions, and the study's T14 and T15 once it has answers; the keys of
/// SPEC section 7, undefined figures null.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/stats",
    tag = "statistics",
    operation_id = "get_stats",
    params(CampaignPath, crate::web::scope::ScopeQuery),
    responses((status = 200, description = "The figures", body = crate::report::StatsReply))
)]
pub async fn stats(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
    Query(q): Query<crate::web::scope::ScopeQuery>,
) -> Result<Json<crate::report::StatsReply>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let reply = crate::app::stats_reply(&state.store, &campaign, &q.scope()?).await?;
    Ok(Json(reply))
}

/// Every route of the JSON API, in the order the OpenAPI document lists them.
pub fn routes() -> Vec<Route> {
    use utoipa_axum::routes;
    vec![
        Route::api(Access::SignedIn, routes!(me)),
        Route::api(ADMIN, routes!(users)),
        Route::api(ADMIN, routes!(disable_user)),
        Route::api(ADMIN, routes!(enable_user)),
        Route::api(ADMIN, routes!(admin::create_user)),
        Route::api(ADMIN, routes!(admin::set_role)),
        Route::api(ADMIN, routes!(admin::create_token)),
        Route::api(ADMIN, routes!(admin::revoke_tokens)),
        // Participants never learn campaign names (they could hint at the sources).
        Route::api(STAFF, routes!(campaigns)),
        Route::api(VALIDATOR, routes!(queue)),
        Route::api(VALIDATOR, routes!(queue_items)),
        Route::api(VALIDATOR, routes!(item)),
        Route::api(VALIDATOR, routes!(verdict)),
        Route::api(VALIDATOR, routes!(blind_answer)),
        Route::api(AUTHOR_OR_ADMIN, routes!(splits)),
        Route::api(AUTHOR_OR_ADMIN, routes!(keys_in_doubt)),
        Route::api(AUTHOR_OR_ADMIN, routes!(split)),
        Route::api(AUTHOR, routes!(resolution)),
        Route::api(STAFF, routes!(protocol)),
        Route::api(ADMIN, routes!(sampling_status)),
        Route::api(ADMIN, routes!(sampling_run)),
        Route::api(ADMIN, routes!(tasks)),
        Route::api(ADMIN, routes!(set_pair)),
        Route::api(ADMIN, routes!(clear_pair)),
        Route::api(ADMIN, routes!(progress)),
        Route::api(ADMIN, routes!(export_decisions)),
        Route::api(ADMIN, routes!(export_resolutions)),
        Route::api(ADMIN, routes!(export_audit)),
        Route::api(ADMIN, routes!(export_regeneration)),
        Route::api(ADMIN, routes!(export_study_responses)),
        Route::api(ADMIN, routes!(export_blind_answers)),
        Route::api(ADMIN, routes!(export_known_verdicts)),
        Route::api(ADMIN, routes!(export_defect_probabilities)),
        Route::api(ADMIN, routes!(export_baseline_answers)),
        // A pipeline's long operations: jobs that any server answers for.
        Route::api(ADMIN, routes!(jobs::import_upload)),
        Route::api(ADMIN, routes!(jobs::import_folder)),
        Route::api(ADMIN, routes!(jobs::export_retained)),
        Route::api(ADMIN, routes!(jobs::export_paper)),
        Route::api(ADMIN, routes!(jobs::list)),
        Route::api(ADMIN, routes!(jobs::get)),
        Route::api(ADMIN, routes!(jobs::result)),
        Route::api(ADMIN, routes!(jobs::delete)),
        Route::api(AUTHOR_OR_ADMIN, routes!(stats)),
        Route::api(VALIDATOR, routes!(calibration_status)),
        Route::api(VALIDATOR, routes!(calibration_item)),
        Route::api(VALIDATOR, routes!(calibration_verdict)),
        Route::api(ADMIN, routes!(calibration_scores)),
        Route::api(ADMIN, routes!(admin::new_round)),
        Route::api(ADMIN, routes!(admin::lift_pause)),
        Route::api(ADMIN, routes!(admin::copy_resolved)),
        Route::api(ADMIN, routes!(admin::known_copies)),
        Route::api(ADMIN, routes!(admin::set_settings)),
        Route::api(ADMIN, routes!(regeneration)),
        Route::api(ADMIN, routes!(audit)),
        Route::api(ADMIN, routes!(study::status)),
        Route::api(ADMIN, routes!(admin::set_study_display)),
        Route::api(PARTICIPANT, routes!(study::studies)),
        Route::api(PARTICIPANT, routes!(study::set)),
        Route::api(PARTICIPANT, routes!(study::answer)),
        Route::api(BASELINE, routes!(baseline::baselines)),
        Route::api(BASELINE, routes!(baseline::baseline)),
        Route::api(BASELINE, routes!(baseline::begin)),
        Route::api(BASELINE, routes!(baseline::question)),
        Route::api(BASELINE, routes!(baseline::answer)),
        Route::api(ADMIN, routes!(baseline::setup)),
        Route::api(ADMIN, routes!(baseline::status)),
        // Invitation links: the token is the credential.
        Route::api(Access::Public, routes!(baseline::join)),
        Route::api(ADMIN, routes!(baseline::invite)),
        Route::api(ADMIN, routes!(baseline::links)),
        Route::api(ADMIN, routes!(baseline::revoke)),
        Route::api(ADMIN, routes!(baseline::set_part)),
    ]
}
