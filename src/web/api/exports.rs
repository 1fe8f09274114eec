//! The campaign's records as files: decisions, resolutions, the audit trail, the
//! regeneration work list, the study's and the baseline's answers, the known tests.

use super::records::AuditQuery;
use super::{CampaignPath, campaign};
use crate::app::exports;
use crate::error::Result;
use crate::web::media::download;
use crate::web::routes::{ADMIN, Route};
use crate::web::state::AppState;
use axum::extract::{Path, Query, State};
use axum::response::Response;

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

/// Every export, for admins.
pub fn routes() -> Vec<Route> {
    use utoipa_axum::routes;
    vec![
        Route::api(ADMIN, routes!(export_decisions)),
        Route::api(ADMIN, routes!(export_resolutions)),
        Route::api(ADMIN, routes!(export_audit)),
        Route::api(ADMIN, routes!(export_regeneration)),
        Route::api(ADMIN, routes!(export_study_responses)),
        Route::api(ADMIN, routes!(export_blind_answers)),
        Route::api(ADMIN, routes!(export_known_verdicts)),
        Route::api(ADMIN, routes!(export_defect_probabilities)),
        Route::api(ADMIN, routes!(export_baseline_answers)),
    ]
}
