//! HTTP: the router, the one place where every route states which roles may use it,
//! and the shared layers.

pub mod api;

use crate::AppState;
use crate::domain::Role;
use crate::error::Error;
use crate::store::accounts::User;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::MethodRouter;
use std::time::Duration;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// Who may use a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone, signed in or not.
    Public,
    /// Any signed-in account.
    SignedIn,
    /// Signed-in accounts with one of these roles.
    Roles(&'static [Role]),
}

impl Access {
    pub fn allows(self, role: Option<Role>) -> bool {
        match (self, role) {
            (Access::Public, _) => true,
            (_, None) => false,
            (Access::SignedIn, Some(_)) => true,
            (Access::Roles(rs), Some(r)) => rs.contains(&r),
        }
    }
}

pub const ADMIN: Access = Access::Roles(&[Role::Admin]);
pub const VALIDATOR: Access = Access::Roles(&[Role::Validator]);
pub const AUTHOR: Access = Access::Roles(&[Role::Author]);
pub const AUTHOR_OR_ADMIN: Access = Access::Roles(&[Role::Author, Role::Admin]);

/// One route: its method, path and who may use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteSpec {
    pub method: &'static str,
    pub path: &'static str,
    pub access: Access,
}

/// Every route of the service with its access rule. The router is built from this
/// list, so the authorization matrix can be read off it (and tests walk it).
pub fn routes() -> Vec<(RouteSpec, MethodRouter<AppState>)> {
    use axum::routing::{delete, get, post, put};
    let r = |method, path, access, m| {
        (
            RouteSpec {
                method,
                path,
                access,
            },
            m,
        )
    };
    vec![
        r("GET", "/healthz", Access::Public, get(healthz)),
        r(
            "GET",
            "/api/v1/openapi.json",
            Access::Public,
            get(api::openapi),
        ),
        r("GET", "/api/v1/me", Access::SignedIn, get(api::me)),
        r(
            "GET",
            "/api/v1/campaigns",
            Access::SignedIn,
            get(api::campaigns),
        ),
        r(
            "GET",
            "/api/v1/campaigns/{campaign}/queue/{stage}",
            VALIDATOR,
            get(api::queue),
        ),
        r(
            "GET",
            "/api/v1/campaigns/{campaign}/queue/{stage}/items",
            VALIDATOR,
            get(api::queue_items),
        ),
        r(
            "GET",
            "/api/v1/campaigns/{campaign}/items/{stage}/{item}",
            VALIDATOR,
            get(api::item),
        ),
        r(
            "POST",
            "/api/v1/campaigns/{campaign}/items/{stage}/{item}/verdict",
            VALIDATOR,
            post(api::verdict),
        ),
        r(
            "GET",
            "/api/v1/campaigns/{campaign}/splits/{stage}",
            AUTHOR_OR_ADMIN,
            get(api::splits),
        ),
        r(
            "GET",
            "/api/v1/campaigns/{campaign}/splits/{stage}/{item}",
            AUTHOR_OR_ADMIN,
            get(api::split),
        ),
        r(
            "POST",
            "/api/v1/campaigns/{campaign}/splits/{stage}/{item}/resolution",
            AUTHOR,
            post(api::resolution),
        ),
        r(
            "GET",
            "/api/v1/campaigns/{campaign}/tasks",
            ADMIN,
            get(api::tasks),
        ),
        r(
            "PUT",
            "/api/v1/campaigns/{campaign}/tasks/{task}/pair",
            ADMIN,
            put(api::set_pair),
        ),
        r(
            "DELETE",
            "/api/v1/campaigns/{campaign}/tasks/{task}/pair",
            ADMIN,
            delete(api::clear_pair),
        ),
        r(
            "GET",
            "/api/v1/campaigns/{campaign}/progress",
            ADMIN,
            get(api::progress),
        ),
        r(
            "GET",
            "/api/v1/campaigns/{campaign}/export/decisions",
            ADMIN,
            get(api::export_decisions),
        ),
        r(
            "GET",
            "/api/v1/campaigns/{campaign}/export/resolutions",
            ADMIN,
            get(api::export_resolutions),
        ),
    ]
}

/// The route list without the handlers.
pub fn route_table() -> Vec<RouteSpec> {
    routes().into_iter().map(|(s, _)| s).collect()
}

/// The whole application.
pub fn app(state: AppState) -> Router {
    let mut router = Router::new();
    for (spec, method_router) in routes() {
        let guarded = method_router.route_layer(middleware::from_fn_with_state(
            (state.clone(), spec.access),
            guard,
        ));
        router = router.route(spec.path, guarded);
    }
    router
        .fallback(|| async { Error::NotFound("no such page".into()) })
        .layer(RequestBodyLimitLayer::new(2 * 1024 * 1024))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_secs(60),
        ))
        .layer(CatchPanicLayer::new())
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// The account behind a request, from its bearer token.
pub async fn authenticate(state: &AppState, headers: &HeaderMap) -> Result<Option<User>, Error> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let value = value
        .to_str()
        .map_err(|_| Error::Unauthorized("the Authorization header is not text".into()))?;
    let token = value
        .strip_prefix("Bearer ")
        .ok_or_else(|| Error::Unauthorized("use `Authorization: Bearer TOKEN`".into()))?;
    match state.store.user_by_token(token.trim()).await? {
        Some(u) => Ok(Some(u)),
        None => Err(Error::Unauthorized("unknown or revoked API token".into())),
    }
}

/// Checks a route's access rule before its handler runs, and hands the handler the
/// signed-in account.
async fn guard(
    State((state, access)): State<(AppState, Access)>,
    mut req: Request,
    next: Next,
) -> Response {
    if access == Access::Public {
        return next.run(req).await;
    }
    let user = match authenticate(&state, req.headers()).await {
        Ok(Some(u)) => u,
        Ok(None) => {
            return Error::Unauthorized("send an API token: `Authorization: Bearer TOKEN`".into())
                .into_response();
        }
        Err(e) => return e.into_response(),
    };
    if !access.allows(Some(user.role)) {
        return Error::Forbidden(format!("a {} may not use this", user.role)).into_response();
    }
    req.extensions_mut().insert(user);
    next.run(req).await
}

async fn healthz(State(state): State<AppState>) -> Response {
    match state.store.ping().await {
        Ok(()) => axum::Json(serde_json::json!({"status": "ok"})).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "health check failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(serde_json::json!({"status": "database unavailable"})),
            )
                .into_response()
        }
    }
}
