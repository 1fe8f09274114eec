//! The guard in front of every route: who is asking (a bearer token, or the session
//! cookie), where the request acts (the campaign its path names), whether the route's
//! rule lets them (a refusal in the route's own kind of answer), and the CSRF token of
//! every form. It hands the handler the signed-in account (and session).

use super::reply::{PageError, error_page};
use super::routes::{Access, Kind, RouteSpec, Scope};
use super::state::AppState;
use super::{flash, session};
use crate::domain::Role;
use crate::error::Error;
use crate::store::accounts::User;
use axum::extract::{FromRequestParts, RawPathParams, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

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
/// into.) A lookup that fails for another reason (the database cannot be reached) is
/// that error, answered as such (503), never a refusal.
async fn scope_of(
    state: &AppState,
    spec: RouteSpec,
    user: &User,
    req: Request,
) -> (Request, Result<Scope, Error>) {
    if user.admin
        || (!spec.path.contains("{campaign}")
            && !spec.path.contains("{study}")
            && !spec.path.contains("{baseline}"))
    {
        return (req, Ok(Scope::Server));
    }
    let (mut parts, body) = req.into_parts();
    let params = RawPathParams::from_request_parts(&mut parts, state).await;
    let req = Request::from_parts(parts, body);
    let Ok(params) = params else {
        return (req, Ok(Scope::Campaign(None)));
    };
    for (key, value) in &params {
        let found = match key {
            "campaign" => found(state.store.campaign(value).await).map(|c| c.map(|c| c.id)),
            "study" => match value.parse::<i64>() {
                Ok(id) => {
                    found(state.store.study_by_id(id).await).map(|s| s.map(|s| s.campaign_id))
                }
                Err(_) => Ok(None),
            },
            "baseline" => match value.parse::<i64>() {
                Ok(id) => {
                    found(state.store.baseline_by_id(id).await).map(|b| b.map(|b| b.campaign_id))
                }
                Err(_) => Ok(None),
            },
            _ => continue,
        };
        return (req, found.map(Scope::Campaign));
    }
    (req, Ok(Scope::Campaign(None)))
}

/// A lookup's record, `None` when there is none; any other failure stays an error.
fn found<T>(r: Result<T, Error>) -> Result<Option<T>, Error> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(Error::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
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
pub async fn guard(
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
            let scope = match scope {
                Ok(scope) => scope,
                Err(e) => return e.into_response(),
            };
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
                Err(e) => return PageError(e).into_response(),
            };
            let scope;
            (req, scope) = scope_of(&state, spec, &user, req).await;
            let scope = match scope {
                Ok(scope) => scope,
                Err(e) => return PageError(e).into_response(),
            };
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
                Err(e) => return PageError(e).into_response(),
            };
            let refuse = |status: StatusCode, message: &str| -> Response {
                if spec.kind == Kind::Page {
                    error_page(status, message)
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
                    let scope = match scope {
                        Ok(scope) => scope,
                        Err(e) => return PageError(e).into_response(),
                    };
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
