//! A campaign through the API: its protocol, its sampled review, its tasks and pairs,
//! and its progress.

use super::{ApiJson, CampaignPath, TaskPath, campaign};
use crate::domain::Stage;
use crate::error::Result;
use crate::store::catalog::{TaskInfo, TaskProgress};
use crate::web::routes::api;
use crate::web::routes::{ADMIN, Route, STAFF};
use crate::web::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

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

/// A campaign's protocol for its staff; sampling, tasks, pairs and progress for admins.
pub fn routes() -> Vec<Route> {
    vec![
        api!(STAFF, protocol),
        api!(ADMIN, sampling_status),
        api!(ADMIN, sampling_run),
        api!(ADMIN, tasks),
        api!(ADMIN, set_pair),
        api!(ADMIN, clear_pair),
        api!(ADMIN, progress),
    ]
}
