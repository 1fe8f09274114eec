//! HTTP: the router, the one place where every route states which roles may use it,
//! the guard that enforces it (and checks the CSRF token of every form), and the
//! shared layers (security headers, tracing, timeouts).

pub mod api;
pub mod assets;
pub mod doc;
pub mod flash;
pub mod health;
pub mod media;
pub mod pages;
pub mod reply;
pub mod scope;
pub mod session;

use crate::AppState;
use crate::domain::Role;
use crate::error::Error;
use crate::store::accounts::User;
use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRequestParts, RawPathParams, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::MethodRouter;
use std::time::Duration;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::{RequestBodyTimeoutLayer, TimeoutLayer};
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

/// Where a request acts: outside any campaign, or in one (`None`: a campaign or study
/// that does not exist).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Server,
    Campaign(Option<i64>),
}

impl Access {
    /// Whether a signed-in person (or no one: `None`) may use a route acting in `scope`.
    /// Admins act as admins everywhere; everyone else in the role they hold in the
    /// campaign (none in a campaign that does not exist), or, outside campaigns, in any
    /// role they hold.
    pub fn permits(self, user: Option<&User>, scope: Scope) -> bool {
        match (self, user) {
            (Access::Public, _) => true,
            (_, None) => false,
            (Access::SignedIn, Some(_)) => true,
            (Access::Roles(rs), Some(u)) => match scope {
                _ if u.admin => rs.contains(&Role::Admin),
                Scope::Campaign(c) => c
                    .and_then(|c| u.role_in(c))
                    .is_some_and(|r| rs.contains(&r)),
                Scope::Server => u.roles.iter().any(|r| rs.contains(&r.role)),
            },
        }
    }
}

/// Why a route refused a signed-in person, in words.
fn refusal(user: &User, scope: Scope) -> String {
    let role = match scope {
        _ if user.admin => Some(Role::Admin),
        Scope::Campaign(c) => c.and_then(|c| user.role_in(c)),
        Scope::Server => None,
    };
    match (role, scope) {
        (Some(r), Scope::Campaign(_)) if !user.admin => format!(
            "{} of this campaign may not use this.",
            capitalized(&r.with_article())
        ),
        (Some(r), _) => format!("{} may not use this.", capitalized(&r.with_article())),
        (None, Scope::Campaign(_)) => "You hold no role in this campaign.".into(),
        (None, Scope::Server) => "None of your roles may use this.".into(),
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Where a request acts, read from its path: `{campaign}` names the campaign and
/// `{study}` or `{baseline}` is one of its studies or its baseline (read from the store's copies, no statement).
/// A campaign or study that does not exist is `Campaign(None)`, which only admins pass
/// (to the handler's 404), so that a member cannot tell an unknown campaign from one
/// that is not theirs. (Admins act as admins everywhere: their requests are not looked
/// into.)
async fn scope_of(
    state: &AppState,
    spec: RouteSpec,
    user: &User,
    req: Request,
) -> (Request, Scope) {
    if user.admin
        || (!spec.path.contains("{campaign}")
            && !spec.path.contains("{study}")
            && !spec.path.contains("{baseline}"))
    {
        return (req, Scope::Server);
    }
    let (mut parts, body) = req.into_parts();
    let params = RawPathParams::from_request_parts(&mut parts, state).await;
    let req = Request::from_parts(parts, body);
    let Ok(params) = params else {
        return (req, Scope::Campaign(None));
    };
    for (key, value) in &params {
        let found = match key {
            "campaign" => state.store.campaign(value).await.ok().map(|c| c.id),
            "study" => match value.parse::<i64>() {
                Ok(id) => state
                    .store
                    .study_by_id(id)
                    .await
                    .ok()
                    .map(|s| s.campaign_id),
                Err(_) => None,
            },
            "baseline" => match value.parse::<i64>() {
                Ok(id) => state
                    .store
                    .baseline_by_id(id)
                    .await
                    .ok()
                    .map(|b| b.campaign_id),
                Err(_) => None,
            },
            _ => continue,
        };
        return (req, Scope::Campaign(found));
    }
    (req, Scope::Campaign(None))
}

/// How a route authenticates and answers refusals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// JSON under /api/v1: bearer tokens; refusals are JSON 401/403.
    Api,
    /// HTML pages: the session cookie; anonymous visitors are sent to the sign-in page,
    /// other refusals are an HTML 403; every form (POST) must carry the CSRF token.
    Page,
    /// Clip files: the session cookie; refusals are bare 401/403/404.
    Media,
    /// Embedded static files.
    Asset,
}

pub const ADMIN: Access = Access::Roles(&[Role::Admin]);
pub const VALIDATOR: Access = Access::Roles(&[Role::Validator]);
pub const AUTHOR: Access = Access::Roles(&[Role::Author]);
pub const AUTHOR_OR_ADMIN: Access = Access::Roles(&[Role::Author, Role::Admin]);
pub const PARTICIPANT: Access = Access::Roles(&[Role::Participant]);
pub const BASELINE: Access = Access::Roles(&[Role::Baseline]);
/// Everyone who works on campaigns: not study participants.
pub const STAFF: Access = Access::Roles(&[Role::Admin, Role::Validator, Role::Author]);

/// One route: its method, path, who may use it and how it authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteSpec {
    pub method: &'static str,
    pub path: &'static str,
    pub access: Access,
    pub kind: Kind,
}

/// One route: its rule, its handler and, for an API route, the OpenAPI path item and
/// schemas that its handler's `#[utoipa::path]` made (its method and path are read from
/// there, so that the route and its documentation cannot differ).
pub struct Route {
    pub spec: RouteSpec,
    pub handler: MethodRouter<AppState>,
    pub doc: Option<ApiDoc>,
}

/// What an API route adds to the OpenAPI document.
pub struct ApiDoc {
    pub schemas: Vec<(
        String,
        utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
    )>,
    pub paths: utoipa::openapi::path::Paths,
}

/// Every route of the service with its access rule. The router is built from this
/// list, so the authorization matrix can be read off it (and a test walks it).
pub fn routes() -> Vec<Route> {
    use Access::{Public, SignedIn};
    use Kind::{Asset, Media, Page};
    use axum::routing::{get, post};
    let r = |method, path, access, kind, handler| Route {
        spec: RouteSpec {
            method,
            path,
            access,
            kind,
        },
        handler,
        doc: None,
    };
    let a =
        |access, (schemas, paths, handler): utoipa_axum::router::UtoipaMethodRouter<AppState>| {
            let (path, method) = doc::only_operation(&paths);
            Route {
                spec: RouteSpec {
                    method,
                    path,
                    access,
                    kind: Kind::Api,
                },
                handler,
                doc: Some(ApiDoc { schemas, paths }),
            }
        };
    vec![
        // Health, documentation and static files.
        a(Public, utoipa_axum::routes!(health::healthz)),
        a(Public, utoipa_axum::routes!(health::readyz)),
        a(ADMIN, utoipa_axum::routes!(health::metrics)),
        a(Public, utoipa_axum::routes!(api::openapi)),
        // The API's documentation for people (Swagger UI, its files in the binary).
        r("GET", "/api/v1/docs", Public, Asset, get(doc::docs_root)),
        r(
            "GET",
            "/api/v1/docs/{*file}",
            Public,
            Asset,
            get(doc::docs_file),
        ),
        r(
            "GET",
            "/static/{hash}/{file}",
            Public,
            Asset,
            get(assets::serve),
        ),
        // The JSON API.
        a(SignedIn, utoipa_axum::routes!(api::me)),
        a(ADMIN, utoipa_axum::routes!(api::users)),
        a(ADMIN, utoipa_axum::routes!(api::disable_user)),
        a(ADMIN, utoipa_axum::routes!(api::enable_user)),
        a(ADMIN, utoipa_axum::routes!(api::admin::create_user)),
        a(ADMIN, utoipa_axum::routes!(api::admin::set_role)),
        a(ADMIN, utoipa_axum::routes!(api::admin::create_token)),
        a(ADMIN, utoipa_axum::routes!(api::admin::revoke_tokens)),
        // Participants never learn campaign names (they could hint at the sources).
        a(STAFF, utoipa_axum::routes!(api::campaigns)),
        a(VALIDATOR, utoipa_axum::routes!(api::queue)),
        a(VALIDATOR, utoipa_axum::routes!(api::queue_items)),
        a(VALIDATOR, utoipa_axum::routes!(api::item)),
        a(VALIDATOR, utoipa_axum::routes!(api::verdict)),
        a(VALIDATOR, utoipa_axum::routes!(api::blind_answer)),
        a(AUTHOR_OR_ADMIN, utoipa_axum::routes!(api::splits)),
        a(AUTHOR_OR_ADMIN, utoipa_axum::routes!(api::keys_in_doubt)),
        a(AUTHOR_OR_ADMIN, utoipa_axum::routes!(api::split)),
        a(AUTHOR, utoipa_axum::routes!(api::resolution)),
        a(STAFF, utoipa_axum::routes!(api::protocol)),
        a(ADMIN, utoipa_axum::routes!(api::sampling_status)),
        a(ADMIN, utoipa_axum::routes!(api::sampling_run)),
        a(ADMIN, utoipa_axum::routes!(api::tasks)),
        a(ADMIN, utoipa_axum::routes!(api::set_pair)),
        a(ADMIN, utoipa_axum::routes!(api::clear_pair)),
        a(ADMIN, utoipa_axum::routes!(api::progress)),
        a(ADMIN, utoipa_axum::routes!(api::export_decisions)),
        a(ADMIN, utoipa_axum::routes!(api::export_resolutions)),
        a(ADMIN, utoipa_axum::routes!(api::export_audit)),
        a(ADMIN, utoipa_axum::routes!(api::export_regeneration)),
        a(ADMIN, utoipa_axum::routes!(api::export_study_responses)),
        a(ADMIN, utoipa_axum::routes!(api::export_blind_answers)),
        a(ADMIN, utoipa_axum::routes!(api::export_known_verdicts)),
        a(
            ADMIN,
            utoipa_axum::routes!(api::export_defect_probabilities),
        ),
        a(ADMIN, utoipa_axum::routes!(api::export_baseline_answers)),
        // A pipeline's long operations: jobs that any server answers for.
        a(ADMIN, utoipa_axum::routes!(api::jobs::import_upload)),
        a(ADMIN, utoipa_axum::routes!(api::jobs::import_folder)),
        a(ADMIN, utoipa_axum::routes!(api::jobs::export_retained)),
        a(ADMIN, utoipa_axum::routes!(api::jobs::export_paper)),
        a(ADMIN, utoipa_axum::routes!(api::jobs::list)),
        a(ADMIN, utoipa_axum::routes!(api::jobs::get)),
        a(ADMIN, utoipa_axum::routes!(api::jobs::result)),
        a(ADMIN, utoipa_axum::routes!(api::jobs::delete)),
        a(AUTHOR_OR_ADMIN, utoipa_axum::routes!(api::stats)),
        a(VALIDATOR, utoipa_axum::routes!(api::calibration_status)),
        a(VALIDATOR, utoipa_axum::routes!(api::calibration_item)),
        a(VALIDATOR, utoipa_axum::routes!(api::calibration_verdict)),
        a(ADMIN, utoipa_axum::routes!(api::calibration_scores)),
        a(ADMIN, utoipa_axum::routes!(api::admin::new_round)),
        a(ADMIN, utoipa_axum::routes!(api::admin::lift_pause)),
        a(ADMIN, utoipa_axum::routes!(api::admin::copy_resolved)),
        a(ADMIN, utoipa_axum::routes!(api::admin::known_copies)),
        a(ADMIN, utoipa_axum::routes!(api::admin::set_settings)),
        a(ADMIN, utoipa_axum::routes!(api::regeneration)),
        a(ADMIN, utoipa_axum::routes!(api::audit)),
        a(ADMIN, utoipa_axum::routes!(api::study::status)),
        a(ADMIN, utoipa_axum::routes!(api::admin::set_study_display)),
        a(PARTICIPANT, utoipa_axum::routes!(api::study::studies)),
        a(PARTICIPANT, utoipa_axum::routes!(api::study::set)),
        a(PARTICIPANT, utoipa_axum::routes!(api::study::answer)),
        a(BASELINE, utoipa_axum::routes!(api::baseline::baselines)),
        a(BASELINE, utoipa_axum::routes!(api::baseline::baseline)),
        a(BASELINE, utoipa_axum::routes!(api::baseline::begin)),
        a(BASELINE, utoipa_axum::routes!(api::baseline::question)),
        a(BASELINE, utoipa_axum::routes!(api::baseline::answer)),
        a(ADMIN, utoipa_axum::routes!(api::baseline::setup)),
        a(ADMIN, utoipa_axum::routes!(api::baseline::status)),
        // Invitation links: the token is the credential.
        a(Public, utoipa_axum::routes!(api::baseline::join)),
        a(ADMIN, utoipa_axum::routes!(api::baseline::invite)),
        a(ADMIN, utoipa_axum::routes!(api::baseline::links)),
        a(ADMIN, utoipa_axum::routes!(api::baseline::revoke)),
        a(ADMIN, utoipa_axum::routes!(api::baseline::set_part)),
        // Signing in and out.
        r("GET", "/login", Public, Page, get(session::login_page)),
        r("POST", "/login", Public, Page, post(session::login)),
        r("POST", "/logout", SignedIn, Page, post(session::logout)),
        r("GET", "/", SignedIn, Page, get(pages::home)),
        // Validators.
        r(
            "GET",
            "/c/{campaign}/review/{stage}",
            VALIDATOR,
            Page,
            get(pages::review::queue),
        ),
        r(
            "GET",
            "/c/{campaign}/review/{stage}/{item}",
            VALIDATOR,
            Page,
            get(pages::review::item),
        ),
        r(
            "POST",
            "/c/{campaign}/review/{stage}/{item}",
            VALIDATOR,
            Page,
            post(pages::review::decide),
        ),
        r(
            "POST",
            "/c/{campaign}/review/{stage}/{item}/blind",
            VALIDATOR,
            Page,
            post(pages::review::blind_answer),
        ),
        // Authors.
        r(
            "GET",
            "/c/{campaign}/splits/{stage}",
            AUTHOR_OR_ADMIN,
            Page,
            get(pages::resolve::queue),
        ),
        r(
            "GET",
            "/c/{campaign}/splits/{stage}/{item}",
            AUTHOR_OR_ADMIN,
            Page,
            get(pages::resolve::item),
        ),
        r(
            "POST",
            "/c/{campaign}/splits/{stage}/{item}",
            AUTHOR,
            Page,
            post(pages::resolve::decide),
        ),
        // Calibration.
        r(
            "GET",
            "/c/{campaign}/calibration",
            VALIDATOR,
            Page,
            get(pages::calibration::status),
        ),
        r(
            "GET",
            "/c/{campaign}/calibration/{stage}/{item}",
            VALIDATOR,
            Page,
            get(pages::calibration::item),
        ),
        r(
            "POST",
            "/c/{campaign}/calibration/{stage}/{item}",
            VALIDATOR,
            Page,
            post(pages::calibration::decide),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/calibration",
            ADMIN,
            Page,
            get(pages::calibration::admin),
        ),
        r(
            "POST",
            "/c/{campaign}/admin/calibration/reset",
            ADMIN,
            Page,
            post(pages::calibration::reset),
        ),
        r(
            "POST",
            "/c/{campaign}/admin/calibration/lift",
            ADMIN,
            Page,
            post(pages::calibration::lift),
        ),
        r(
            "POST",
            "/c/{campaign}/admin/calibration/copy",
            ADMIN,
            Page,
            post(pages::calibration::copy),
        ),
        r(
            "POST",
            "/c/{campaign}/admin/calibration/mark",
            ADMIN,
            Page,
            post(pages::calibration::mark),
        ),
        r(
            "POST",
            "/c/{campaign}/admin/settings",
            ADMIN,
            Page,
            post(pages::calibration::settings),
        ),
        // Sampled review.
        r(
            "GET",
            "/c/{campaign}/admin/sampling",
            ADMIN,
            Page,
            get(pages::admin::sampling),
        ),
        r(
            "POST",
            "/c/{campaign}/admin/sampling/run",
            ADMIN,
            Page,
            post(pages::admin::sampling_run),
        ),
        // The life of the clips.
        r(
            "GET",
            "/c/{campaign}/admin/audit",
            ADMIN,
            Page,
            get(pages::admin::audit),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/items",
            ADMIN,
            Page,
            get(pages::admin::items),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/exports/audit.csv",
            ADMIN,
            Page,
            get(pages::admin::export_audit),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/exports/regeneration.jsonl",
            ADMIN,
            Page,
            get(pages::admin::export_regeneration),
        ),
        // The QC dashboard.
        r(
            "GET",
            "/c/{campaign}/stats",
            AUTHOR_OR_ADMIN,
            Page,
            get(pages::stats::dashboard),
        ),
        r(
            "GET",
            "/c/{campaign}/stats/{file}",
            AUTHOR_OR_ADMIN,
            Page,
            get(pages::stats::download),
        ),
        // The blind study.
        r(
            "GET",
            "/study/{study}",
            PARTICIPANT,
            Page,
            get(pages::study::start),
        ),
        r(
            "GET",
            "/study/{study}/{position}",
            PARTICIPANT,
            Page,
            get(pages::study::set),
        ),
        r(
            "POST",
            "/study/{study}/{position}",
            PARTICIPANT,
            Page,
            post(pages::study::answer),
        ),
        // The human baseline, taken question by question.
        r(
            "GET",
            "/baseline/{baseline}",
            BASELINE,
            Page,
            get(pages::participate::start),
        ),
        r(
            "POST",
            "/baseline/{baseline}/begin",
            BASELINE,
            Page,
            post(pages::participate::begin),
        ),
        r(
            "GET",
            "/baseline/{baseline}/{seq}",
            BASELINE,
            Page,
            get(pages::participate::item),
        ),
        r(
            "POST",
            "/baseline/{baseline}/{seq}",
            BASELINE,
            Page,
            post(pages::participate::answer),
        ),
        // Invitation links: the token is the credential.
        r("GET", "/join/{token}", Public, Page, get(session::join)),
        r(
            "GET",
            "/c/{campaign}/admin/participants",
            ADMIN,
            Page,
            get(pages::participants::page),
        ),
        r(
            "POST",
            "/c/{campaign}/admin/participants/baseline",
            ADMIN,
            Page,
            post(pages::participants::setup),
        ),
        r(
            "POST",
            "/c/{campaign}/admin/participants/settings",
            ADMIN,
            Page,
            post(pages::participants::settings),
        ),
        r(
            "POST",
            "/c/{campaign}/admin/participants/links",
            ADMIN,
            Page,
            post(pages::participants::invite),
        ),
        r(
            "POST",
            "/c/{campaign}/admin/participants/revoke",
            ADMIN,
            Page,
            post(pages::participants::revoke),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/study",
            ADMIN,
            Page,
            get(pages::study::admin),
        ),
        r(
            "POST",
            "/c/{campaign}/admin/study/display",
            ADMIN,
            Page,
            post(pages::study::set_display),
        ),
        r(
            "GET",
            "/c/{campaign}/study/results",
            AUTHOR_OR_ADMIN,
            Page,
            get(pages::study::results),
        ),
        r(
            "GET",
            "/c/{campaign}/baseline/results",
            AUTHOR_OR_ADMIN,
            Page,
            get(pages::baseline::results),
        ),
        // Admins.
        r(
            "GET",
            "/c/{campaign}/admin",
            ADMIN,
            Page,
            get(pages::admin::overview),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/pairs",
            ADMIN,
            Page,
            get(pages::admin::pairs),
        ),
        r(
            "POST",
            "/c/{campaign}/admin/pairs",
            ADMIN,
            Page,
            post(pages::admin::set_pair),
        ),
        r("GET", "/admin/users", ADMIN, Page, get(pages::admin::users)),
        r(
            "GET",
            "/admin/campaigns",
            ADMIN,
            Page,
            get(pages::admin::campaigns),
        ),
        r(
            "POST",
            "/admin/campaigns",
            ADMIN,
            Page,
            post(pages::admin::create_campaign),
        ),
        r(
            "POST",
            "/admin/users",
            ADMIN,
            Page,
            post(pages::admin::create_user),
        ),
        r(
            "POST",
            "/admin/roles",
            ADMIN,
            Page,
            post(pages::admin::set_role),
        ),
        r(
            "POST",
            "/admin/users/{name}/token",
            ADMIN,
            Page,
            post(pages::admin::create_token),
        ),
        r(
            "POST",
            "/admin/users/{name}/revoke-tokens",
            ADMIN,
            Page,
            post(pages::admin::revoke_tokens),
        ),
        r(
            "POST",
            "/admin/users/{name}/{action}",
            ADMIN,
            Page,
            post(pages::admin::set_disabled),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/import",
            ADMIN,
            Page,
            get(pages::admin::import_page),
        ),
        r(
            "POST",
            "/c/{campaign}/admin/import/upload",
            ADMIN,
            Page,
            // The upload's size limit (TANDEM_MAX_UPLOAD_BYTES) and the free space
            // are enforced by the handler while it streams the body to disk.
            post(pages::admin::import_upload).layer(DefaultBodyLimit::disable()),
        ),
        r(
            "POST",
            "/c/{campaign}/admin/import/folder",
            ADMIN,
            Page,
            post(pages::admin::import_folder),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/exports",
            ADMIN,
            Page,
            get(pages::admin::exports),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/exports/decisions.csv",
            ADMIN,
            Page,
            get(pages::admin::export_decisions),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/exports/resolutions.csv",
            ADMIN,
            Page,
            get(pages::admin::export_resolutions),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/exports/retained.zip",
            ADMIN,
            Page,
            get(pages::admin::export_retained),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/exports/paper.zip",
            ADMIN,
            Page,
            get(pages::admin::export_paper),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/exports/study-responses.csv",
            ADMIN,
            Page,
            get(pages::admin::export_study_responses),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/exports/blind-answers.csv",
            ADMIN,
            Page,
            get(pages::admin::export_blind_answers),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/exports/known-verdicts.csv",
            ADMIN,
            Page,
            get(pages::admin::export_known_verdicts),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/exports/defect-probabilities.csv",
            ADMIN,
            Page,
            get(pages::admin::export_defect_probabilities),
        ),
        r(
            "GET",
            "/c/{campaign}/admin/exports/baseline-answers.csv",
            ADMIN,
            Page,
            get(pages::admin::export_baseline_answers),
        ),
        // Clip files, under opaque per-person URLs.
        r("GET", "/media/{token}", SignedIn, Media, get(media::clip)),
        r(
            "GET",
            "/media/{token}/strip",
            SignedIn,
            Media,
            get(media::strip),
        ),
        r(
            "GET",
            "/study/m/{token}",
            PARTICIPANT,
            Media,
            get(media::study_clip),
        ),
        r(
            "GET",
            "/study/m/{token}/frames",
            PARTICIPANT,
            Media,
            get(media::study_frames),
        ),
        r(
            "GET",
            "/baseline/m/{token}",
            BASELINE,
            Media,
            get(media::baseline_clip),
        ),
    ]
}

/// The route list without the handlers.
pub fn route_table() -> Vec<RouteSpec> {
    routes().into_iter().map(|r| r.spec).collect()
}

/// The Content-Security-Policy of every response: nothing but this origin, no inline
/// script or style, no framing.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/// The whole application.
pub fn app(state: AppState) -> Router {
    let mut router = Router::new();
    for Route { spec, handler, .. } in routes() {
        let guarded = handler
            .route_layer(middleware::from_fn_with_state((state.clone(), spec), guard))
            .layer(TimeoutLayer::with_status_code(
                StatusCode::REQUEST_TIMEOUT,
                time_limit(spec.path),
            ))
            .layer(middleware::from_fn_with_state(
                (state.clone(), spec),
                measure,
            ));
        router = router.route(spec.path, guarded);
    }
    let header =
        |name, value| SetResponseHeaderLayer::if_not_present(name, HeaderValue::from_static(value));
    router
        .fallback(fallback)
        .layer(middleware::from_fn(api_errors_as_json))
        .layer(header(header::CONTENT_SECURITY_POLICY, CSP))
        .layer(header(header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .layer(header(header::REFERRER_POLICY, "no-referrer"))
        .layer(header(header::X_FRAME_OPTIONS, "DENY"))
        .layer(CatchPanicLayer::new())
        // A body that sends nothing for this long is cut (a stalled upload or form).
        .layer(RequestBodyTimeoutLayer::new(
            state.config.server.body_idle_timeout,
        ))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
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

/// How long a request may take before it is answered 408: imports and the retained
/// export handle gigabytes; everything else answers in far less than two minutes.
/// (A response's body, such as a video, streams after this and is not limited.)
fn time_limit(path: &str) -> Duration {
    if path.ends_with("/import/upload") || path.ends_with("/imports") {
        Duration::from_secs(2 * 3600)
    } else if path.ends_with("/import/folder")
        || path.ends_with("/retained.zip")
        || path.ends_with("/paper.zip")
    {
        Duration::from_secs(30 * 60)
    } else {
        Duration::from_secs(120)
    }
}

async fn fallback(req: Request) -> Response {
    if req.uri().path().starts_with("/api/") {
        Error::NotFound("no such route".into()).into_response()
    } else {
        pages::error_page(StatusCode::NOT_FOUND, "There is no such page.")
    }
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

fn is_unsafe(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// Checks a route's access rule before its handler runs, checks the CSRF token of
/// every form, and hands the handler the signed-in account (and session).
async fn guard(
    State((state, spec)): State<(AppState, RouteSpec)>,
    mut req: Request,
    next: Next,
) -> Response {
    match spec.kind {
        Kind::Asset => next.run(req).await,
        Kind::Api => {
            if spec.access == Access::Public {
                return next.run(req).await;
            }
            let user = match authenticate(&state, req.headers()).await {
                Ok(Some(u)) => u,
                Ok(None) => {
                    return Error::Unauthorized(
                        "send an API token: `Authorization: Bearer TOKEN`".into(),
                    )
                    .into_response();
                }
                Err(e) => return e.into_response(),
            };
            let scope;
            (req, scope) = scope_of(&state, spec, &user, req).await;
            if !spec.access.permits(Some(&user), scope) {
                return Error::Forbidden(refusal(&user, scope)).into_response();
            }
            req.extensions_mut().insert(user);
            next.run(req).await
        }
        Kind::Media if req.headers().contains_key(header::AUTHORIZATION) => {
            // An API client fetches the clips its replies name with its bearer token,
            // under the same rules as the pages.
            let user = match authenticate(&state, req.headers()).await {
                Ok(Some(u)) => u,
                Ok(None) => return (StatusCode::UNAUTHORIZED, "sign in first").into_response(),
                // A refused token (401) or a database that cannot answer (503).
                Err(e) => return pages::PageError(e).into_response(),
            };
            let scope;
            (req, scope) = scope_of(&state, spec, &user, req).await;
            if !spec.access.permits(Some(&user), scope) {
                return (StatusCode::FORBIDDEN, refusal(&user, scope)).into_response();
            }
            req.extensions_mut().insert(user);
            next.run(req).await
        }
        Kind::Page | Kind::Media => {
            let session = if spec.kind == Kind::Media {
                session::from_cookie_for_media(&state, req.headers()).await
            } else {
                session::from_cookie(&state, req.headers()).await
            };
            let session = match session {
                Ok(s) => s,
                Err(e) => return pages::PageError(e).into_response(),
            };
            let refuse = |status: StatusCode, message: &str| -> Response {
                if spec.kind == Kind::Page {
                    pages::error_page(status, message)
                } else {
                    (status, message.to_string()).into_response()
                }
            };
            match &session {
                None if spec.access != Access::Public => {
                    if spec.kind == Kind::Media {
                        return refuse(StatusCode::UNAUTHORIZED, "sign in first");
                    }
                    return session::to_login(req.uri());
                }
                Some(s) if !matches!(spec.access, Access::Public | Access::SignedIn) => {
                    let scope;
                    (req, scope) = scope_of(&state, spec, &s.user, req).await;
                    if !spec.access.permits(Some(&s.user), scope) {
                        return refuse(StatusCode::FORBIDDEN, &refusal(&s.user, scope));
                    }
                }
                _ => {}
            }
            if spec.kind == Kind::Page && is_unsafe(req.method()) {
                // Public forms (signing in) carry the sign-in form's own token, even
                // when the browser still holds someone's session.
                let expected = match &session {
                    Some(s) if spec.access != Access::Public => Some(s.csrf_token.clone()),
                    _ => session::prelogin_token(req.headers()),
                };
                req = match session::check_csrf(req, expected.as_deref()).await {
                    Ok(r) => r,
                    Err(resp) => return resp,
                };
            }
            if let Some(s) = session {
                req.extensions_mut().insert(s.user.clone());
                req.extensions_mut().insert(s);
            }
            if spec.kind == Kind::Page {
                let headers = req.headers().clone();
                let secure = state.config.secure_cookies;
                return flash::scope(&headers, secure, next.run(req)).await;
            }
            next.run(req).await
        }
    }
}

/// A 303 to a local path.
pub fn see_other(path: &str) -> Response {
    Redirect::to(path).into_response()
}
