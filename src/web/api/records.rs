//! What the record says, as JSON: the regeneration work list and the audit trail.

use super::{CampaignPath, campaign};
use crate::error::Result;
use crate::web::routes::api;
use crate::web::routes::{ADMIN, Route};
use crate::web::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

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
    #[param(schema_with = day_or_time)]
    from: Option<String>,
    /// Up to this day (inclusive) or RFC 3339 time
    #[param(schema_with = day_or_time)]
    to: Option<String>,
    /// Only the latest N events, newest first
    #[param(minimum = 0, maximum = 4294967295_u64)]
    latest: Option<u32>,
}

/// A day (`YYYY-MM-DD`) or an RFC 3339 time, as the API's document says it (empty: no
/// bound, as a form sends a blank field).
fn day_or_time() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{
        KnownFormat, ObjectBuilder, OneOfBuilder, Schema, SchemaFormat, Type,
    };
    let string = |f| {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(f)))
    };
    Schema::OneOf(
        OneOfBuilder::new()
            .item(string(KnownFormat::Date))
            .item(string(KnownFormat::DateTime))
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .max_length(Some(0)),
            )
            .build(),
    )
}

impl AuditQuery {
    pub(super) fn filter(&self) -> Result<crate::domain::records::AuditFilter> {
        let mut filter = crate::domain::records::AuditFilter::parse(
            self.clip.as_deref(),
            self.validator.as_deref(),
            self.from.as_deref(),
            self.to.as_deref(),
        )?;
        filter.prefix = crate::domain::paging::prefix("id", self.id.as_deref())?;
        filter.limit = self
            .latest
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
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

/// The regeneration work list and the audit trail, for admins.
pub fn routes() -> Vec<Route> {
    vec![api!(ADMIN, regeneration), api!(ADMIN, audit)]
}
