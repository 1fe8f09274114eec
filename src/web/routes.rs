//! The words of the route tables: who may use a route ([`Access`]), where a request
//! acts ([`Scope`]), how a route authenticates and answers refusals ([`Kind`]), and one
//! route with its handler and, for the API, the OpenAPI operation its handler documents
//! ([`Route`]). Each area of `web` lists its own routes with these; `web::routes` puts
//! the lists together.

use super::state::AppState;
use crate::domain::Role;
use crate::store::accounts::User;
use axum::handler::Handler;
use axum::routing::MethodRouter;
use std::collections::BTreeSet;
use std::sync::{LazyLock, Mutex};
use utoipa::openapi::path::{HttpMethod, Paths};
use utoipa_axum::PathItemExt;

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

/// One route: its rule, its handler and, for an API route, what makes the OpenAPI path
/// item and schemas that its handler's `#[utoipa::path]` documents (its method and path
/// are read from there, so that the route and its documentation cannot differ).
pub struct Route {
    pub spec: RouteSpec,
    pub handler: MethodRouter<AppState>,
    pub doc: Option<fn() -> ApiDoc>,
}

/// What an API route adds to the OpenAPI document.
pub struct ApiDoc {
    pub schemas: Vec<(
        String,
        utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
    )>,
    pub paths: Paths,
}

/// A route of the JSON API: `api!(ACCESS, handler)`, for a handler documented by its
/// `#[utoipa::path]`. The route's method and path come from the two cheap parts of that
/// documentation (`utoipa::Path::methods` and `path`); its operation and schemas are made
/// only when the OpenAPI document is, since making them for every route at each start
/// took most of the server's start-up memory (a 5.2 MB peak that the allocator kept).
macro_rules! api {
    ($access:expr, $handler:ident) => {
        $crate::web::routes::Route::api(
            $access,
            &utoipa_axum::routes!(@path [path()] of $handler),
            &utoipa_axum::routes!(@path [methods()] of $handler),
            $handler,
            || {
                let (schemas, paths, _): utoipa_axum::router::UtoipaMethodRouter<
                    $crate::web::state::AppState,
                > = utoipa_axum::routes!($handler);
                $crate::web::routes::ApiDoc { schemas, paths }
            },
        )
    };
}
pub(crate) use api;

impl Route {
    /// A route of the pages, the clips or the static files.
    pub fn new(
        method: &'static str,
        path: &'static str,
        access: Access,
        kind: Kind,
        handler: MethodRouter<AppState>,
    ) -> Route {
        Route {
            spec: RouteSpec {
                method,
                path,
                access,
                kind,
            },
            handler,
            doc: None,
        }
    }

    /// A route of the JSON API (made by [`api!`]): `path` and `methods` are what the
    /// handler documents, exactly one operation (a test builds every route).
    pub fn api<H, T>(
        access: Access,
        path: &str,
        methods: &[HttpMethod],
        handler: H,
        doc: fn() -> ApiDoc,
    ) -> Route
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        let [method] = methods else {
            panic!(
                "an API handler must document exactly one operation: {path} has {}",
                methods.len()
            )
        };
        Route {
            spec: RouteSpec {
                method: method_name(method),
                path: intern(path),
                access,
                kind: Kind::Api,
            },
            handler: MethodRouter::new().on(method.to_method_filter(), handler),
            doc: Some(doc),
        }
    }
}

/// An operation's method as the route table writes it.
fn method_name(method: &HttpMethod) -> &'static str {
    match method {
        HttpMethod::Get => "GET",
        HttpMethod::Post => "POST",
        HttpMethod::Put => "PUT",
        HttpMethod::Delete => "DELETE",
        HttpMethod::Patch => "PATCH",
        HttpMethod::Head => "HEAD",
        HttpMethod::Options => "OPTIONS",
        HttpMethod::Trace => "TRACE",
    }
}

/// A route's path as a `&'static str`, kept once however often the table is built.
fn intern(path: &str) -> &'static str {
    static PATHS: LazyLock<Mutex<BTreeSet<&'static str>>> = LazyLock::new(Default::default);
    let mut paths = PATHS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = paths.get(path) {
        return p;
    }
    let p: &'static str = Box::leak(path.to_string().into_boxed_str());
    paths.insert(p);
    p
}
