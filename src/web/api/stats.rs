//! The QC tables and the study's tables as JSON.

use super::{CampaignPath, campaign};
use crate::error::Result;
use crate::web::routes::api;
use crate::web::routes::{AUTHOR_OR_ADMIN, Route};
use crate::web::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, State};

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

/// The figures, for authors and admins.
pub fn routes() -> Vec<Route> {
    vec![api!(AUTHOR_OR_ADMIN, stats)]
}
