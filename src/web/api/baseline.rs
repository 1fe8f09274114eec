//! The human baseline and invitation links through the API: a participant's questions
//! and answers (the same rules as the pages: places in their own order, letters and
//! tokens only), a link exchanged for an API token, and for admins the baseline's
//! set-up, the links and what participants read first.

use super::ApiJson;
use crate::domain::Part;
use crate::domain::baseline::{letter, letter_index};
use crate::error::Error;
use crate::store::accounts::User;
use crate::store::baseline::{Baseline, BaselineProgress, PlaceProgress, SetupSummary};
use crate::store::invitations::{LinkLine, NewLink, PartSettings};
use crate::web::routes::api;
use crate::web::routes::{ADMIN, Access, BASELINE, Route};
use crate::web::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// A baseline.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct BaselinePath {
    /// The baseline's number (from `GET /api/v1/baselines`)
    baseline: i64,
}

/// A question of a baseline, at its place in the participant's own order.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct QuestionPath {
    /// The baseline's number
    baseline: i64,
    /// The presentation's place, 1-based, in this participant's own order
    seq: i64,
}

/// A campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct CampaignPath {
    /// The campaign's name
    campaign: String,
}

/// A participant's link in a campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct LinkPath {
    /// The campaign's name
    campaign: String,
    /// The participant's pseudonym
    participant: String,
}

/// A part of a campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct PartPath {
    /// The campaign's name
    campaign: String,
    /// `study` or `baseline`
    #[param(pattern = "^(study|baseline)$")]
    part: String,
}

/// A participant's baseline: progress, what they read first, and at the end their
/// completion code.
#[derive(Serialize, ToSchema)]
pub struct BaselineReply {
    /// The baseline's number
    pub baseline: i64,
    pub progress: BaselineProgress,
    /// The consent text the admin wrote (empty: none)
    pub consent: String,
    /// Shown once every question is answered, to a participant who came by a link
    pub completion_code: Option<String>,
}

async fn reply(state: &AppState, b: &Baseline, user: &User) -> Result<BaselineReply, Error> {
    let progress = state.store.baseline_progress(b, user).await?;
    Ok(BaselineReply {
        baseline: b.id,
        consent: state
            .store
            .part_settings(b.campaign_id, Part::Baseline)
            .await?
            .consent,
        completion_code: crate::app::baseline::completion_code(&state.store, user, &progress)
            .await?,
        progress,
    })
}

/// The baselines this participant takes.
#[derive(Serialize, ToSchema)]
pub struct Baselines {
    pub baselines: Vec<BaselineReply>,
}

/// The baselines this participant takes, with their progress.
#[utoipa::path(
    get,
    path = "/api/v1/baselines",
    tag = "baseline",
    operation_id = "list_baselines",
    responses((status = 200, description = "The participant's baselines", body = Baselines))
)]
pub async fn baselines(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
) -> Result<Json<Baselines>, Error> {
    let mut out = Vec::new();
    for r in user
        .roles
        .iter()
        .filter(|r| r.role == crate::domain::Role::Baseline)
    {
        let campaign = state.store.campaign(&r.campaign).await?;
        if let Some(b) = state.store.baseline(&campaign).await? {
            out.push(reply(&state, &b, &user).await?);
        }
    }
    Ok(Json(Baselines { baselines: out }))
}

/// One baseline of this participant.
#[utoipa::path(
    get,
    path = "/api/v1/baselines/{baseline}",
    tag = "baseline",
    operation_id = "get_baseline",
    params(BaselinePath),
    responses((status = 200, description = "The participant's baseline", body = BaselineReply))
)]
pub async fn baseline(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<BaselinePath>,
) -> Result<Json<BaselineReply>, Error> {
    let b = state.store.baseline_by_id(p.baseline).await?;
    Ok(Json(reply(&state, &b, &user).await?))
}

/// Begin: draws this participant's questions (once: again it changes nothing).
#[utoipa::path(
    post,
    path = "/api/v1/baselines/{baseline}/begin",
    tag = "baseline",
    operation_id = "begin_baseline",
    params(BaselinePath),
    responses((status = 200, description = "The participant's progress", body = BaselineProgress))
)]
pub async fn begin(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<BaselinePath>,
) -> Result<Json<BaselineProgress>, Error> {
    let b = state.store.baseline_by_id(p.baseline).await?;
    Ok(Json(state.store.begin_baseline(&b, &user).await?))
}

/// An option as shown: its letter in this presentation and its text.
#[derive(Serialize, ToSchema)]
pub struct ShownOption {
    #[schema(example = "A")]
    pub letter: String,
    pub text: String,
}

/// One presentation as its participant sees it. Nothing names the question, the clip,
/// its source or the key.
#[derive(Serialize, ToSchema)]
pub struct QuestionReply {
    pub seq: i64,
    pub progress: BaselineProgress,
    pub question: String,
    /// The options in the order shown
    pub options: Vec<ShownOption>,
    /// The clip, under an opaque per-participant URL
    #[schema(format = "uri-reference", example = "/baseline/m/0c2lzcGJ0dG9rZW4")]
    pub video: String,
    /// The letter this participant chose, once answered
    pub chosen: Option<String>,
}

/// One question (a presentation) as this participant sees it.
#[utoipa::path(
    get,
    path = "/api/v1/baselines/{baseline}/questions/{seq}",
    tag = "baseline",
    operation_id = "get_baseline_question",
    params(QuestionPath),
    responses((status = 200, description = "The question", body = QuestionReply))
)]
pub async fn question(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<QuestionPath>,
) -> Result<Json<QuestionReply>, Error> {
    let b = state.store.baseline_by_id(p.baseline).await?;
    let q = state.store.baseline_presentation(&b, &user, p.seq).await?;
    Ok(Json(QuestionReply {
        seq: q.seq,
        progress: q.progress,
        question: q.text,
        options: q
            .options
            .into_iter()
            .enumerate()
            .map(|(i, text)| ShownOption {
                letter: letter(i).to_string(),
                text,
            })
            .collect(),
        video: format!("/baseline/m/{}", q.token),
        chosen: q.chosen.map(|c| letter(c).to_string()),
    }))
}

/// An answer: the letter of the option chosen, as shown.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"chosen": "B"}))]
pub struct ChosenBody {
    pub chosen: String,
}

/// What an answer did.
#[derive(Serialize, ToSchema)]
pub struct ChosenReply {
    pub recorded: bool,
    pub progress: BaselineProgress,
    /// Once every question is answered, for a participant who came by a link
    pub completion_code: Option<String>,
}

/// Answer a question: the letter of the option chosen as shown. Answers are final; the
/// same answer again records nothing more, another is refused (409).
#[utoipa::path(
    post,
    path = "/api/v1/baselines/{baseline}/questions/{seq}",
    tag = "baseline",
    operation_id = "answer_baseline_question",
    params(QuestionPath),
    request_body = ChosenBody,
    responses(
        (status = 200, description = "Recorded; the participant's progress", body = ChosenReply),
        (status = 409, description = "The question was answered otherwise (answers are final)"),
    )
)]
pub async fn answer(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<QuestionPath>,
    ApiJson(body): ApiJson<ChosenBody>,
) -> Result<Json<ChosenReply>, Error> {
    let b = state.store.baseline_by_id(p.baseline).await?;
    let mut c = body.chosen.trim().chars();
    let chosen = match (c.next().and_then(letter_index), c.next()) {
        (Some(i), None) => i,
        _ => {
            return Err(Error::field(
                "chosen",
                format!("`{}` is not an option's letter (A, B, ...)", body.chosen),
            ));
        }
    };
    let progress = state
        .store
        .answer_baseline(&b, &user, p.seq, chosen)
        .await?;
    let completion_code =
        crate::app::baseline::completion_code(&state.store, &user, &progress).await?;
    Ok(Json(ChosenReply {
        recorded: true,
        progress,
        completion_code,
    }))
}

/// A link's token, exchanged for an API token.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"token": "00b3715970dde7737ac0a1b5de9cbec6fe621d06e8d17cfc"}))]
pub struct JoinBody {
    /// The token of the link (`/join/{token}`)
    pub token: String,
    /// An external participant id (a recruitment platform's): kept only when the admin
    /// turned that on for the part
    #[serde(default)]
    pub external_id: Option<String>,
}

/// The API token a link was exchanged for.
#[derive(Serialize, ToSchema)]
pub struct Joined {
    /// Send as `Authorization: Bearer TOKEN`. The link's earlier sessions and tokens
    /// have ended: a link is one client at a time.
    pub token: String,
    pub part: Part,
    /// The baseline's number (part `baseline`), once it is set up
    pub baseline: Option<i64>,
    /// The study's number (part `study`), once it exists
    pub study: Option<i64>,
}

/// Exchange an invitation link's token for an API token (no password: the link is the
/// credential). A link unknown or revoked opens nothing (404).
#[utoipa::path(
    post,
    path = "/api/v1/join",
    tag = "invitations",
    operation_id = "join",
    request_body = JoinBody,
    security(()),
    responses(
        (status = 200, description = "An API token for the link's participant", body = Joined),
        (status = 404, description = "The link opens nothing: unknown, or revoked"),
    )
)]
pub async fn join(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<JoinBody>,
) -> Result<Json<Joined>, Error> {
    let j =
        crate::app::baseline::join(&state.store, &body.token, body.external_id.as_deref(), true)
            .await?
            .ok_or_else(|| {
                Error::NotFound(
                    "this link opens nothing: it is not known, or it was revoked".into(),
                )
            })?;
    Ok(Json(Joined {
        token: j.session,
        part: j.part,
        baseline: j.target.filter(|_| j.part == Part::Baseline),
        study: j.target.filter(|_| j.part == Part::Study),
    }))
}

/// How to set the baseline up.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"per_task": 10}))]
pub struct SetupBody {
    /// k, the videos of each task each participant answers about
    #[schema(minimum = 1)]
    pub per_task: i64,
    /// The draw's seed (a random one when absent)
    #[serde(default)]
    pub seed: Option<i64>,
}

/// Set the campaign's baseline up (again only while nobody has begun): the retained
/// questions now, k videos per task per participant, the seed.
#[utoipa::path(
    put,
    path = "/api/v1/campaigns/{campaign}/baseline",
    tag = "baseline",
    operation_id = "setup_baseline",
    params(CampaignPath),
    request_body = SetupBody,
    responses(
        (status = 200, description = "Set up", body = SetupSummary),
        (status = 409, description = "Participants have begun"),
    )
)]
pub async fn setup(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
    ApiJson(body): ApiJson<SetupBody>,
) -> Result<Json<SetupSummary>, Error> {
    let campaign = state.store.campaign(&p.campaign).await?;
    Ok(Json(
        crate::app::baseline::setup(
            &state.store,
            &state.config,
            &campaign,
            body.per_task,
            body.seed,
        )
        .await?,
    ))
}

/// A campaign's baseline, for its admins.
#[derive(Serialize, ToSchema)]
pub struct BaselineStatus {
    /// The baseline's number (none before it is set up)
    pub baseline: Option<i64>,
    pub per_task: Option<i64>,
    pub seed: Option<i64>,
    /// Every participant who began, in the order they began
    pub participants: Vec<PlaceProgress>,
}

/// The campaign's baseline: its set-up and each participant's progress.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/baseline",
    tag = "baseline",
    operation_id = "get_baseline_status",
    params(CampaignPath),
    responses((status = 200, description = "The baseline", body = BaselineStatus))
)]
pub async fn status(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<BaselineStatus>, Error> {
    let campaign = state.store.campaign(&p.campaign).await?;
    let b = state.store.baseline(&campaign).await?;
    let participants = match &b {
        Some(b) => state.store.baseline_places(b).await?,
        None => Vec::new(),
    };
    Ok(Json(BaselineStatus {
        baseline: b.as_ref().map(|b| b.id),
        per_task: b.as_ref().map(|b| b.per_task),
        seed: b.as_ref().map(|b| b.seed),
        participants,
    }))
}

/// Links to make.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"part": "baseline", "count": 10}))]
pub struct InviteBody {
    pub part: Part,
    /// How many (1 to 1000)
    #[schema(minimum = 1, maximum = 1000)]
    pub count: usize,
}

/// Make participants of a part, each with an invitation link. The links' tokens are in
/// this reply only (the server keeps their digests).
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/invitations",
    tag = "invitations",
    operation_id = "create_invitations",
    params(CampaignPath),
    request_body = InviteBody,
    responses((status = 201, description = "The new links", body = Vec<NewLink>))
)]
pub async fn invite(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
    ApiJson(body): ApiJson<InviteBody>,
) -> Result<(StatusCode, Json<Vec<NewLink>>), Error> {
    let campaign = state.store.campaign(&p.campaign).await?;
    let links =
        crate::app::baseline::invite(&state.store, &campaign, body.part, body.count).await?;
    Ok((StatusCode::CREATED, Json(links)))
}

/// A campaign's links, without their tokens.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/invitations",
    tag = "invitations",
    operation_id = "list_invitations",
    params(CampaignPath),
    responses((status = 200, description = "The links", body = Vec<LinkLine>))
)]
pub async fn links(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<Vec<LinkLine>>, Error> {
    let campaign = state.store.campaign(&p.campaign).await?;
    Ok(Json(state.store.links(&campaign).await?))
}

/// What revoking did.
#[derive(Serialize, ToSchema)]
pub struct LinkRevoked {
    /// False when the link was revoked before
    pub revoked: bool,
}

/// Revoke a participant's link: it opens nothing from now on, and the sessions and
/// tokens it gave end (the account is disabled); the answers stay.
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/invitations/{participant}/revoke",
    tag = "invitations",
    operation_id = "revoke_invitation",
    params(LinkPath),
    responses((status = 200, description = "Revoked", body = LinkRevoked))
)]
pub async fn revoke(
    State(state): State<AppState>,
    Path(p): Path<LinkPath>,
) -> Result<Json<LinkRevoked>, Error> {
    let campaign = state.store.campaign(&p.campaign).await?;
    Ok(Json(LinkRevoked {
        revoked: state.store.revoke_link(&campaign, &p.participant).await?,
    }))
}

/// What a part's participants read first, and whether links keep external ids.
#[utoipa::path(
    put,
    path = "/api/v1/campaigns/{campaign}/parts/{part}",
    tag = "invitations",
    operation_id = "set_part_settings",
    params(PartPath),
    request_body = PartSettingsBody,
    responses((status = 200, description = "Saved", body = PartSettings))
)]
pub async fn set_part(
    State(state): State<AppState>,
    Path(p): Path<PartPath>,
    ApiJson(body): ApiJson<PartSettingsBody>,
) -> Result<Json<PartSettings>, Error> {
    let campaign = state.store.campaign(&p.campaign).await?;
    let part = Part::parse(&p.part).map_err(|m| Error::field("part", m))?;
    let consent = crate::domain::baseline::consent_text(&body.consent)
        .map_err(|m| Error::field("consent", m))?;
    let s = PartSettings {
        consent,
        keep_external_id: body.keep_external_id,
    };
    state.store.set_part_settings(&campaign, part, &s).await?;
    Ok(Json(s))
}

/// A part's settings.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"consent": "This study is run by ...", "keep_external_id": false}))]
pub struct PartSettingsBody {
    #[serde(default)]
    pub consent: String,
    #[serde(default)]
    pub keep_external_id: bool,
}

/// The human baseline: questions and answers for its participants, its set-up for
/// admins, and invitation links (whose token is the credential).
pub fn routes() -> Vec<Route> {
    vec![
        api!(BASELINE, baselines),
        api!(BASELINE, baseline),
        api!(BASELINE, begin),
        api!(BASELINE, question),
        api!(BASELINE, answer),
        api!(ADMIN, setup),
        api!(ADMIN, status),
        // Invitation links: the token is the credential.
        api!(Access::Public, join),
        api!(ADMIN, invite),
        api!(ADMIN, links),
        api!(ADMIN, revoke),
        api!(ADMIN, set_part),
    ]
}
