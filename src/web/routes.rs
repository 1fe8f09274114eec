//! The words of the route tables: who may use a route ([`Access`]), where a request
//! acts ([`Scope`]), how a route authenticates and answers refusals ([`Kind`]), and one
//! route with its handler and, for the API, the OpenAPI operation its handler documents
//! ([`Route`]). Each area of `web` lists its own routes with these; `web::routes` puts
//! the lists together.

use super::state::AppState;
use crate::domain::Role;
use crate::store::accounts::User;
use axum::routing::MethodRouter;
use std::collections::BTreeSet;
use std::sync::{LazyLock, Mutex};
use utoipa::openapi::path::{Operation, PathItem, Paths};
use utoipa_axum::router::UtoipaMethodRouter;

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
    pub paths: Paths,
}

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

    /// A route of the JSON API, from `utoipa_axum::routes!(handler)`: its method and
    /// path are the one operation the handler documents.
    pub fn api(access: Access, (schemas, paths, handler): UtoipaMethodRouter<AppState>) -> Route {
        let (path, method) = only_operation(&paths);
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
    }
}

/// The path and method of the one operation an API handler documents, as the route
/// table keeps them. A handler documents exactly one (a test builds every route).
fn only_operation(paths: &Paths) -> (&'static str, &'static str) {
    let mut found = paths.paths.iter().flat_map(|(path, item)| {
        methods(item)
            .into_iter()
            .map(move |(method, _)| (path.as_str(), method))
    });
    match (found.next(), found.next()) {
        (Some((path, method)), None) => (intern(path), method),
        _ => panic!("an API handler must document exactly one operation"),
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

fn methods(item: &PathItem) -> Vec<(&'static str, &Operation)> {
    [
        ("GET", &item.get),
        ("POST", &item.post),
        ("PUT", &item.put),
        ("DELETE", &item.delete),
        ("PATCH", &item.patch),
        ("HEAD", &item.head),
        ("OPTIONS", &item.options),
        ("TRACE", &item.trace),
    ]
    .into_iter()
    .filter_map(|(m, op)| op.as_ref().map(|op| (m, op)))
    .collect()
}
