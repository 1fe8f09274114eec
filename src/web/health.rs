//! Whether this server can do its work: `/healthz` (the process answers, the database
//! reads and writes) and `/readyz` (the same, and not shutting down: a load balancer
//! stops sending requests as soon as shutdown starts). A write is probed at most once
//! a second, so frequent checks cost almost nothing.

use super::routes::{ADMIN, Access, Route};
use super::state::AppState;
use crate::web::routes::api;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use std::time::Duration;

/// How long a health check waits for the database's answer: a load balancer's check
/// gets its 503 well within its own time-out, not after the requests' connection wait.
const PING_WAIT: Duration = Duration::from_secs(2);
/// How long a write probe's result is reused.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// Reads and writes the database (the write at most once a second). A failure is said
/// in fixed words (anyone may ask); the database's own words go to the log.
/// Whether the disk of a SQLite database has room for writes that need new space (the
/// write probe rewrites one row in pages SQLite already holds, and passes on a full disk).
fn disk_has_room(state: &AppState) -> Result<(), &'static str> {
    let Some(dir) = state.store.database_file().and_then(|f| f.parent()) else {
        return Ok(());
    };
    let floor = state.config.limits.health_free_bytes;
    match crate::io::limits::available_space(dir) {
        Ok(free) if free < floor => {
            tracing::error!(
                free,
                floor,
                "health check: the database's disk has less free space than TANDEM_HEALTH_MIN_FREE_BYTES"
            );
            Err("the database's disk is full")
        }
        Ok(_) => Ok(()),
        // Not known: the probe's answer stands.
        Err(e) => {
            tracing::warn!(error = %e, "health check: cannot read the database disk's free space");
            Ok(())
        }
    }
}

async fn check(state: &AppState) -> Result<(), &'static str> {
    match tokio::time::timeout(PING_WAIT, state.store.ping()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            tracing::error!(error = %e, "health check: the database does not answer");
            return Err("the database does not answer");
        }
        Err(_) => {
            tracing::error!("health check: the database did not answer within {PING_WAIT:?}");
            return Err("the database does not answer");
        }
    }
    let cached = state
        .life
        .last_probe
        .lock()
        // A poisoned lock is a missing answer: the probe runs again.
        .ok()
        .and_then(|g| *g)
        .filter(|(at, _)| {
            state.store.clock().instant().saturating_duration_since(*at) < PROBE_EVERY
        });
    if let Some((_, result)) = cached {
        return result;
    }
    let result = match tokio::time::timeout(PING_WAIT, state.store.probe_write()).await {
        Ok(r) => r.map_err(|e| {
            tracing::error!(error = %e, "health check: the database cannot write");
            "the database cannot write"
        }),
        Err(_) => {
            tracing::error!("health check: a write did not end within {PING_WAIT:?}");
            Err("the database cannot write")
        }
    }
    .and_then(|()| disk_has_room(state));
    if let Ok(mut g) = state.life.last_probe.lock() {
        *g = Some((state.store.clock().instant(), result));
    }
    result
}

/// Whether the media store answers (asked at most once a second, within [`PING_WAIT`]).
/// Its failure does not make the server unready: every server shares the store, and
/// everything that does not need it still answers; it is reported for the operator.
async fn media_state(state: &AppState) -> &'static str {
    let cached = state
        .life
        .last_media
        .lock()
        // A poisoned lock is a missing answer: the check runs again.
        .ok()
        .and_then(|g| *g)
        .filter(|(at, _)| {
            state.store.clock().instant().saturating_duration_since(*at) < PROBE_EVERY
        });
    if let Some((_, said)) = cached {
        return said;
    }
    let asked = async {
        let media = crate::app::media::media_store(&state.store, &state.config).await?;
        media.check().await
    };
    let said = match tokio::time::timeout(PING_WAIT, asked).await {
        Ok(Ok(())) => "answers",
        Ok(Err(e)) => {
            tracing::error!(error = %e, "readiness: the media store does not answer");
            "does not answer"
        }
        Err(_) => {
            tracing::error!("readiness: the media store did not answer within {PING_WAIT:?}");
            "does not answer"
        }
    };
    if let Ok(mut g) = state.life.last_media.lock() {
        *g = Some((state.store.clock().instant(), said));
    }
    said
}

/// Whether the server can serve.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    /// `ok`, `failing` or `shutting down`
    #[schema(example = "ok")]
    pub status: &'static str,
    /// With `ok`: what was checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<&'static str>,
    /// With `failing`: what fails.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<&'static str>,
    /// `/readyz` only: whether the media store (the media folder or the bucket) answers,
    /// `answers` or `does not answer`. A media store that does not answer leaves the
    /// server ready (clips answer 503, everything else as usual).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub media: Option<&'static str>,
}

/// A health answer; a 503 says when to ask again, as the API's do.
fn answer(status: StatusCode, body: Health) -> Response {
    let mut resp = (status, axum::Json(body)).into_response();
    if status == StatusCode::SERVICE_UNAVAILABLE {
        resp.headers_mut().insert(
            axum::http::header::RETRY_AFTER,
            axum::http::HeaderValue::from(crate::error::UNAVAILABLE_RETRY_AFTER),
        );
    }
    resp
}

/// Health: the database reads and writes (503 when it cannot, e.g. a full disk).
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    operation_id = "healthz",
    responses(
        (status = 200, description = "The database reads and writes", body = Health),
        (status = 503, description = "It cannot (`Retry-After` says when to ask again)", body = Health),
    )
)]
pub async fn healthz(State(state): State<AppState>) -> Response {
    match check(&state).await {
        Ok(()) => answer(
            StatusCode::OK,
            Health {
                status: "ok",
                database: Some("reads and writes"),
                problem: None,
                media: None,
            },
        ),
        Err(problem) => answer(
            StatusCode::SERVICE_UNAVAILABLE,
            Health {
                status: "failing",
                database: None,
                problem: Some(problem),
                media: None,
            },
        ),
    }
}

/// Readiness for a load balancer: as `/healthz`, and 503 as soon as the server starts
/// shutting down; the body also says whether the media store answers.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    operation_id = "readyz",
    responses(
        (status = 200, description = "Ready", body = Health),
        (status = 503, description = "Not ready: shutting down, or the database cannot serve", body = Health),
    )
)]
pub async fn readyz(State(state): State<AppState>) -> Response {
    if state.life.draining() {
        return answer(
            StatusCode::SERVICE_UNAVAILABLE,
            Health {
                status: "shutting down",
                database: None,
                problem: None,
                media: None,
            },
        );
    }
    match check(&state).await {
        Ok(()) => answer(
            StatusCode::OK,
            Health {
                status: "ok",
                database: Some("reads and writes"),
                problem: None,
                media: Some(media_state(&state).await),
            },
        ),
        Err(problem) => answer(
            StatusCode::SERVICE_UNAVAILABLE,
            Health {
                status: "failing",
                database: None,
                problem: Some(problem),
                media: None,
            },
        ),
    }
}

/// The server's metrics in the OpenMetrics text format Prometheus reads: requests,
/// latency and SQL statements per route, the SQLite writer's batches and commit
/// times, retried writes, waits for a database connection (a scraper uses an admin's
/// API token).
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    operation_id = "metrics",
    responses((status = 200, description = "The metrics", content_type = "application/openmetrics-text", body = String))
)]
pub async fn metrics(State(state): State<AppState>) -> Response {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.encode(),
    )
        .into_response()
}

/// Health and readiness for anyone (a load balancer), the metrics for admins.
pub fn routes() -> Vec<Route> {
    vec![
        api!(Access::Public, healthz),
        api!(Access::Public, readyz),
        api!(ADMIN, metrics),
    ]
}
