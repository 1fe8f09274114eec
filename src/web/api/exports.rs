//! The campaign's records as files: one route over every kind that `web::exports`
//! lists (decisions, resolutions, the audit trail, the regeneration work list, the
//! study's and the baseline's answers, the known tests). The archives are jobs
//! (`api::jobs`).

use super::campaign;
use super::records::AuditQuery;
use crate::domain::records::AuditFilter;
use crate::error::Error;
use crate::web::exports::ExportKind;
use crate::web::media::download;
use crate::web::routes::api;
use crate::web::routes::{ADMIN, Route};
use crate::web::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use utoipa::IntoParams;

/// One export of a campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ExportPath {
    /// The campaign's name (`default` unless named otherwise at import)
    campaign: String,
    /// Which export
    #[param(value_type = ExportKind, inline)]
    kind: String,
}

/// One of the campaign's records as a file, by `kind`.
///
/// - `decisions`: every decision including changes, as CSV; `final` marks the verdicts
///   that counted.
/// - `resolutions`: every resolution as CSV.
/// - `audit`: the audit trail as CSV, with the same filters as `list_audit_events` (the
///   other kinds take no filter).
/// - `regeneration`: the clips to generate again as JSON lines (one clip per line, as
///   `list_regeneration` gives them): the generation pipeline's input.
/// - `study-responses`: the blind study's answers as CSV (participants by pseudonym).
/// - `blind-answers`: every blind answer (the blind key check) as CSV: question_id,
///   clip_id, qa_type, level, validator, answer, key, agrees, answered_at, outcome.
/// - `known-verdicts`: every verdict on a known item of the live queue beside its known
///   verdict, as CSV: stage, item_id, clip_id, task, validator, verdict, reasons,
///   known_verdict, known_reasons, agrees, decided_at. Kept apart from the decisions.
/// - `defect-probabilities`: each decided item's probability of a defect (the
///   review-quality model's, per stage, anchored by the known items) as CSV: stage,
///   item_id, clip_id, task, outcome, retained, defect_probability (empty where the
///   data do not identify the model).
/// - `baseline-answers`: the human baseline's answers as CSV, in the format `tandem
///   baseline import` reads: participant, question_id, presentation, shown, chosen.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/export/{kind}",
    tag = "exports",
    operation_id = "export_file",
    params(ExportPath, AuditQuery),
    responses(
        (status = 200, description = "The file (`CAMPAIGN-KIND.csv`, or `CAMPAIGN-regeneration.jsonl`)", content(
            (String = "text/csv"),
            (String = "application/jsonl"),
        )),
    )
)]
pub async fn export(
    State(state): State<AppState>,
    Path(p): Path<ExportPath>,
    uri: Uri,
) -> Result<Response, Response> {
    let Some(kind) = ExportKind::parse(&p.kind) else {
        return Err(Error::NotFound("no such route".into()).into_response());
    };
    // Only the audit trail applies the query (its filters), but every kind refuses one
    // it cannot read (400) or whose values are wrong (422), as the document says.
    let query = Query::<AuditQuery>::try_from_uri(&uri)
        .map_err(IntoResponse::into_response)?
        .0;
    let made = async {
        let checked = query.filter()?;
        let campaign = campaign(&state, &p.campaign).await?;
        let filter = match kind {
            ExportKind::Audit => checked,
            _ => AuditFilter::default(),
        };
        kind.make(&state.store, &campaign, &filter).await
    };
    made.await
        .map(download)
        .map_err(IntoResponse::into_response)
}

/// Every export, for admins.
pub fn routes() -> Vec<Route> {
    vec![api!(ADMIN, export)]
}
