//! HTTP: the router made from every area's routes (each states which roles may use
//! it: `routes`), the guard in front of each (`guard`), and the shared layers (security
//! headers, tracing, timeouts, the API's errors as JSON).
//!
//! What it holds, part by part:
//!
//! `routes()`: every route with its access rule and kind (API, page, media, asset), each
//! area's own list in turn (the words of the tables in `routes`, `AppState` in `state`);
//! the `guard` layer that authenticates (bearer token or session cookie),
//! `api_errors_as_json` (every API error in the one JSON shape, those axum answers before a
//! handler included: 400, 405, 408, 413, 415, a panic's 500), checks the role the person
//! holds in the campaign the path names (admins everywhere) and checks the CSRF token of
//! every page POST; `api` (every JSON handler, a file per area, each handler with its
//! `#[utoipa::path]`: path, parameters, body, every reply typed; `api::study` for the
//! study's, `api::baseline` for the baseline's and the links'), `doc` (the OpenAPI
//! document: the handlers' annotations, their reply schemas, and per route from the table
//! who may call it and the one error reply under each status it can answer; Swagger UI's
//! files from the binary), `exports` (every export the pages and the API offer, listed
//! once: `ExportKind`, one API route `.../export/{kind}` and one page route
//! `.../admin/exports/{file}` over it), `pages` (askama: `review`, `resolve`, `admin` (a
//! file per area), `calibration`, `stats`, `study`, `baseline`: the human baseline's
//! figures and Table 16, `participate`: the baseline taken question by question,
//! `participants`: the admin's groups, set-up, consent texts and links), `reply` (pages
//! rendered never cached, the redirect after a form, errors as a page for people), `scope`
//! (the tables' scope from a query string), `session` (sign-in with throttling, sign-in by
//! invitation link (`join`), sign-out, CSRF, the client address behind trusted proxies),
//! `health` (`/healthz`, `/readyz`), `media` (clip files from the media folder or the
//! bucket (`serve_stored`; from a bucket a small reply through the block cache, a larger
//! range one ranged GET, streamed; a bucket that cannot answer a 503 with `Retry-After`):
//! the answer decided by `plan`, a pure function of the conditional and range headers, the
//! size and the validators; 304 by ETag or date, `If-Range`, one range or a multipart 206
//! of up to 16; a short-lived cache of open files, reads from the page cache on the async
//! thread with `preadv2(RWF_NOWAIT)` and from the blocking pool only when the bytes are not
//! cached; frame strips; the study's and the baseline's clips under participants' tokens,
//! `Identity::Blind`; `download`, the one reply of every export), `assets` (embedded static
//! files under content-hashed URLs: `static/app.js` is the player, the forms' checks, the
//! time spent and the keys; `static/app.css`)

pub mod api;
pub mod assets;
pub mod doc;
pub mod exports;
pub mod flash;
pub mod guard;
pub mod health;
pub mod media;
pub mod pages;
pub mod reply;
pub mod routes;
pub mod scope;
pub mod session;
pub mod state;

pub use routes::{Access, Kind, Route, RouteSpec, Scope};
pub use state::AppState;

use crate::error::Error;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use std::sync::LazyLock;
use std::time::Duration;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// Every route of the service with its access rule, each area's list in turn. The
/// router is built from this list, so the authorization matrix can be read off it (and
/// a test walks it); the OpenAPI document lists the API's paths in this order.
pub fn routes() -> Vec<Route> {
    [
        health::routes(),
        doc::routes(document_json),
        assets::routes(),
        api::routes(),
        session::routes(),
        pages::routes(),
        media::routes(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The OpenAPI document of every API route.
pub fn document() -> utoipa::openapi::OpenApi {
    doc::document(routes())
}

/// The document as served, made once.
fn document_json() -> &'static str {
    static JSON: LazyLock<String> = LazyLock::new(|| doc::to_json(&document()));
    &JSON
}

/// The route list without the handlers.
pub fn route_table() -> Vec<RouteSpec> {
    routes().into_iter().map(|r| r.spec).collect()
}

/// The Content-Security-Policy of every response: nothing but this origin, no inline
/// script or style, no framing.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/// The largest JSON body of an API request, in bytes: axum's default limit of a body it
/// reads whole, which the API keeps (`tests/it/hardening.rs` sends one byte more).
pub const API_BODY_LIMIT: usize = 2 * 1024 * 1024;

/// The service the server runs: the routes, and what every request passes through once
/// around them.
pub type App = tower::util::BoxCloneSyncService<Request, Response, std::convert::Infallible>;

pub fn app(state: AppState) -> App {
    let postgres = state.store.backend() == crate::store::Backend::Postgres;
    let mut router = Router::new();
    for Route { spec, handler, .. } in routes() {
        let guarded = handler.route_layer(middleware::from_fn_with_state(
            (state.clone(), spec),
            guard::guard,
        ));
        // The export files' route limits each request by the file it asks for; every
        // other route has one limit, set once (a layer of its own per request costs
        // every hot path a boxed clone and an allocation).
        let timed = if spec.path == pages::admin::EXPORT_FILE {
            guarded.layer(middleware::from_fn_with_state(spec, limit_time))
        } else {
            guarded.layer(TimeoutLayer::with_status_code(
                StatusCode::REQUEST_TIMEOUT,
                time_limit(spec.path, spec.path),
            ))
        };
        // On PostgreSQL a request of a short route waits for the database only until its
        // deadline (`store::deadline`); an import or an archive may take long.
        let timed = if postgres && time_limit(spec.path, spec.path) <= SHORT_TIME_LIMIT {
            timed.layer(middleware::from_fn(within_deadline))
        } else {
            timed
        };
        let guarded = timed.layer(middleware::from_fn_with_state(
            (state.clone(), spec),
            measure,
        ));
        router = router.route(spec.path, guarded);
    }
    let router = router.fallback(fallback).with_state(state);
    let header =
        |name, value| SetResponseHeaderLayer::if_not_present(name, HeaderValue::from_static(value));
    // Around the whole router, not each route (`Router::layer` would wrap every route
    // in each, and a request clones its route's whole stack of boxed layers: some
    // seventy allocations a verdict).
    let service = tower::ServiceBuilder::new()
        .map_response(|r: Response<_>| r.map(axum::body::Body::new))
        .layer(TraceLayer::new_for_http())
        // (A body's least rate is kept by the server loop, `server::open`.)
        .layer(CatchPanicLayer::new())
        .layer(header(header::X_FRAME_OPTIONS, "DENY"))
        .layer(header(header::REFERRER_POLICY, "no-referrer"))
        .layer(header(header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .layer(header(header::CONTENT_SECURITY_POLICY, CSP))
        .layer(middleware::from_fn(api_errors_as_json))
        .service(router);
    tower::util::BoxCloneSyncService::new(service)
}

/// Every error the API answers comes in its one JSON shape (`{"error", "detail"}`), those
/// that axum and tower-http answer before a handler runs included: a path or query that
/// does not parse (400), a method the route does not take (405, its `Allow` kept), a
/// request that took too long (408), a body too large (413), one of a type the route does
/// not take (415), a panic (500). Their headers stay; the detail is the words axum gave,
/// bounded, or a fixed sentence.
async fn api_errors_as_json(req: Request, next: Next) -> Response {
    if !req.uri().path().starts_with("/api/") {
        return next.run(req).await;
    }
    let method = req.method().clone();
    let resp = next.run(req).await;
    let status = resp.status();
    // A content type that is not text is no JSON: the JSON rule does not apply.
    let json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if json || !(status.is_client_error() || status.is_server_error()) {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let said = axum::body::to_bytes(body, 2048)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let or = |fixed: &str| {
        if said.is_empty() {
            fixed.to_string()
        } else {
            said.clone()
        }
    };
    use crate::error::ErrorKind;
    let (kind, detail) = match status {
        StatusCode::BAD_REQUEST => (ErrorKind::BadRequest, or("the request could not be read")),
        // (axum adds the `Allow` header after this layer has run.)
        StatusCode::METHOD_NOT_ALLOWED => (
            ErrorKind::MethodNotAllowed,
            format!("this route does not take {method}; its `Allow` header lists what it takes"),
        ),
        StatusCode::REQUEST_TIMEOUT => (
            ErrorKind::Timeout,
            "the request took too long and was not carried out; send it again".to_string(),
        ),
        StatusCode::PAYLOAD_TOO_LARGE => (ErrorKind::TooLarge, or("the request body is too large")),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (
            ErrorKind::UnsupportedMediaType,
            or("send the body as JSON with `Content-Type: application/json`"),
        ),
        s if s.is_server_error() => (
            ErrorKind::Internal,
            "internal error; the server log has the details".to_string(),
        ),
        _ => (ErrorKind::Invalid, or("the request was refused")),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let body = crate::error::ErrorBody {
        error: kind,
        detail,
        field: None,
        problems: None,
    };
    let body = serde_json::to_string(&body).unwrap_or_default();
    Response::from_parts(parts, axum::body::Body::from(body))
}

/// Records a request in the metrics: its route (as the route table names it), the
/// class of its answer, its time until the answer's head, and the SQL statements it
/// sent (the guard's included, and those of the write jobs it waited for).
async fn measure(
    State((state, spec)): State<(AppState, RouteSpec)>,
    req: Request,
    next: Next,
) -> Response {
    let started = std::time::Instant::now();
    let (resp, statements) = crate::store::count::measure(next.run(req)).await;
    state.metrics.web.answered(
        spec.method,
        spec.path,
        resp.status().as_u16(),
        started.elapsed(),
        statements,
    );
    resp
}

/// Runs the request with its deadline for the database (`store::deadline`).
async fn within_deadline(req: Request, next: Next) -> Response {
    crate::store::deadline::within(next.run(req)).await
}

/// Answers 408 (without a body) when a route's handler has not answered within the
/// request's time limit.
async fn limit_time(State(spec): State<RouteSpec>, req: Request, next: Next) -> Response {
    let limit = time_limit(spec.path, req.uri().path());
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(resp) => resp,
        Err(_) => StatusCode::REQUEST_TIMEOUT.into_response(),
    }
}

/// How long a request to `route` (its path: `path`) may take before it is answered 408:
/// imports and the archives of the clips handle gigabytes, and switching a study to strips
/// draws one with ffmpeg for each of its clips; everything else answers in far less than
/// two minutes. (A response's body, such as a video, streams after this and is not
/// limited.) A route with a long limit has no shared deadline for the database either:
/// each of its waits has its own (`store::deadline`).
fn time_limit(route: &str, path: &str) -> Duration {
    let archive = route == pages::admin::EXPORT_FILE
        && path
            .rsplit('/')
            .next()
            .and_then(exports::ExportFile::parse)
            .is_some_and(exports::ExportFile::is_archive);
    if route.ends_with("/import/upload") || route.ends_with("/imports") {
        Duration::from_secs(2 * 3600)
    } else if route.ends_with("/import/folder") || route.ends_with("/study/display") || archive {
        Duration::from_secs(30 * 60)
    } else {
        SHORT_TIME_LIMIT
    }
}

/// The time limit of every route but imports and archives.
const SHORT_TIME_LIMIT: Duration = Duration::from_secs(120);

async fn fallback(req: Request) -> Response {
    if req.uri().path().starts_with("/api/") {
        Error::NotFound("no such route".into()).into_response()
    } else {
        reply::error_page(StatusCode::NOT_FOUND, "There is no such page.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archives_alone_of_the_export_files_have_the_long_time_limit() {
        let route = pages::admin::EXPORT_FILE;
        let limit = |path| time_limit(route, path).as_secs();
        assert_eq!(limit("/c/default/admin/exports/retained.zip"), 30 * 60);
        assert_eq!(limit("/c/default/admin/exports/paper.zip"), 30 * 60);
        assert_eq!(limit("/c/default/admin/exports/decisions.csv"), 120);
        assert_eq!(limit("/c/default/admin/exports/other.zip"), 120);
        let upload = "/c/{campaign}/admin/import/upload";
        assert_eq!(
            time_limit(upload, "/c/x/admin/import/upload").as_secs(),
            2 * 3600
        );
        assert_eq!(
            time_limit("/c/{campaign}/stats/{file}", "/c/x/stats/paper.zip").as_secs(),
            120
        );
    }

    /// Switching a study to strips runs ffmpeg for every clip before its one write: the
    /// drawing must not use up the request's deadline for the database (a 503 after the
    /// strips were drawn), on the page and in the API alike.
    #[test]
    fn drawing_a_study_s_strips_is_a_long_request() {
        for route in routes().iter().map(|r| r.spec.path) {
            if route.ends_with("/study/display") {
                assert!(time_limit(route, route) > SHORT_TIME_LIMIT, "{route}");
            }
        }
        let drawing = routes()
            .iter()
            .filter(|r| r.spec.path.ends_with("/study/display"))
            .count();
        assert_eq!(drawing, 2, "the page's route and the API's");
    }
}
