//! Signing in and out (by password, or by an invitation link), the session cookie, and
//! the CSRF check every form goes through.

use super::reply::{PageError, error_page, render, see_other};
use super::routes::{Access, Kind, Route};
use crate::auth;
use crate::error::Error;
use crate::store::sessions::{Admission, Session};
use crate::web::state::AppState;
use askama::Template;
use axum::body::Body;
use axum::extract::{ConnectInfo, FromRequestParts, Path, Query, RawForm, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Form};
use serde::Deserialize;
use std::net::{IpAddr, SocketAddr};
use std::sync::OnceLock;

pub const SESSION_COOKIE: &str = "tandem_session";
pub const PRELOGIN_COOKIE: &str = "tandem_prelogin";
/// A browser a person signed in from before (OWASP's device cookie): a random id whose
/// hash the database keeps with the account.
pub const DEVICE_COOKIE: &str = "tandem_device";
/// How long a browser is remembered.
const DEVICE_SECONDS: i64 = 365 * 24 * 3600;
/// Failed sign-ins allowed per account name in the throttle's window before each
/// further attempt doubles the wait (not counted for a browser the account signed in
/// from before: such a browser counts its own).
pub const MAX_FAILURES_PER_NAME: i64 = 10;
/// ... per client address and account name, so that one address's failures on one
/// name do not hold the other names from that address ...
pub const MAX_FAILURES_PER_ADDRESS_AND_NAME: i64 = 10;
/// ... per client address over all names (higher: a lab behind one proxy shares an
/// address; this is what holds password spraying) ...
pub const MAX_FAILURES_PER_ADDRESS: i64 = 200;
/// ... and per remembered browser.
pub const MAX_FAILURES_PER_DEVICE: i64 = 10;
/// Largest form body the CSRF check reads.
const MAX_FORM_BYTES: usize = 1024 * 1024;

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    // A cookie header that is not text carries no cookie of ours.
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// The live session named by the request's cookie, if any.
pub async fn from_cookie(state: &AppState, headers: &HeaderMap) -> Result<Option<Session>, Error> {
    match cookie(headers, SESSION_COOKIE) {
        Some(id) if !id.is_empty() => state.store.session(&id).await,
        _ => Ok(None),
    }
}

/// The session behind the cookie, from a copy at most two seconds old (clip files).
pub async fn from_cookie_for_media(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Option<Session>, Error> {
    match cookie(headers, SESSION_COOKIE) {
        Some(id) if !id.is_empty() => state.store.session_for_media(&id).await,
        _ => Ok(None),
    }
}

pub fn prelogin_token(headers: &HeaderMap) -> Option<String> {
    cookie(headers, PRELOGIN_COOKIE).filter(|t| !t.is_empty())
}

fn equal_in_constant_time(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn forged() -> Response {
    error_page(
        StatusCode::FORBIDDEN,
        "This form has expired or did not come from this site. Go back, reload the page and try again.",
    )
}

/// Checks the `_csrf` token of a form against `expected`: the field of a urlencoded
/// body, or the first field of a multipart one (an upload: the form puts its hidden
/// token first, so the token is checked before any of the file is read). The body read
/// is put back for the handler. Never from the URL, which logs and `Referer`s keep.
pub async fn check_csrf(req: Request, expected: Option<&str>) -> Result<Request, Response> {
    let Some(expected) = expected else {
        return Err(forged());
    };
    // A content type that is not text is neither form kind: refused below.
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    if content_type.starts_with("multipart/form-data") {
        return check_multipart_csrf(req, &content_type, expected).await;
    }
    if !content_type.starts_with("application/x-www-form-urlencoded") {
        return Err(forged());
    }
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_FORM_BYTES)
        .await
        .map_err(|_| error_page(StatusCode::PAYLOAD_TOO_LARGE, "The form is too large."))?;
    // A body that is no form carries no token: refused as a missing one.
    let token = serde_urlencoded::from_bytes::<Vec<(String, String)>>(&bytes)
        .ok()
        .and_then(|pairs| {
            pairs
                .into_iter()
                .find(|(k, _)| k == "_csrf")
                .map(|(_, v)| v)
        });
    match token {
        Some(t) if equal_in_constant_time(t.as_bytes(), expected.as_bytes()) => {
            Ok(Request::from_parts(parts, Body::from(bytes)))
        }
        _ => Err(forged()),
    }
}

/// Bytes of a multipart body read to find its first field (the token).
const MULTIPART_HEAD: usize = 4096;

/// The first field of a multipart body must be `_csrf` with the expected token: the
/// body's first bytes are read (at most [`MULTIPART_HEAD`]), checked, and put back in
/// front of the rest, which streams on to the handler untouched.
async fn check_multipart_csrf(
    req: Request,
    content_type: &str,
    expected: &str,
) -> Result<Request, Response> {
    use futures_util::StreamExt;
    let Some(boundary) = content_type
        .split(';')
        .filter_map(|p| p.trim().strip_prefix("boundary="))
        .map(|b| b.trim_matches('"').to_string())
        .next()
        .filter(|b| !b.is_empty() && b.len() <= 200)
    else {
        return Err(forged());
    };
    let (parts, body) = req.into_parts();
    let mut stream = body.into_data_stream();
    let mut head: Vec<u8> = Vec::new();
    let token = loop {
        if let Some(t) = first_field(&head, &boundary, "_csrf") {
            break t;
        }
        if head.len() >= MULTIPART_HEAD {
            return Err(forged());
        }
        match stream.next().await {
            Some(Ok(chunk)) => head.extend_from_slice(&chunk),
            Some(Err(_)) | None => return Err(forged()),
        }
    };
    let Some(token) = token else {
        return Err(forged());
    };
    if !equal_in_constant_time(token.as_bytes(), expected.as_bytes()) {
        return Err(forged());
    }
    let rest =
        futures_util::stream::once(
            async move { Ok::<_, axum::Error>(axum::body::Bytes::from(head)) },
        )
        .chain(stream);
    Ok(Request::from_parts(parts, Body::from_stream(rest)))
}

/// The value of the first field of a multipart body when it is named `name`: `None`
/// while `head` does not hold the whole field yet, `Some(None)` when the body does not
/// start with that field.
fn first_field(head: &[u8], boundary: &str, name: &str) -> Option<Option<String>> {
    let opening = format!("--{boundary}\r\n");
    if head.len() < opening.len() {
        return None;
    }
    if !head.starts_with(opening.as_bytes()) {
        return Some(None);
    }
    let after = &head[opening.len()..];
    let end_of_headers = find(after, b"\r\n\r\n")?;
    let headers = String::from_utf8_lossy(&after[..end_of_headers]).to_ascii_lowercase();
    let named = headers.lines().any(|l| {
        l.starts_with("content-disposition:")
            && l.contains("form-data")
            && l.split(';').any(|p| p.trim() == format!("name=\"{name}\""))
            && !l.contains("filename")
    });
    if !named {
        return Some(None);
    }
    let value = &after[end_of_headers + 4..];
    let end = find(value, format!("\r\n--{boundary}").as_bytes())?;
    // A field that is not UTF-8 is `Some(None)`: present, unreadable; the caller refuses it.
    Some(String::from_utf8(value[..end].to_vec()).ok())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Sends an anonymous visitor to the sign-in page, to come back afterwards.
pub fn to_login(uri: &Uri) -> Response {
    let back = uri.path_and_query().map_or("/", |p| p.as_str());
    let q = serde_urlencoded::to_string([("next", back)]).unwrap_or_default();
    see_other(&format!("/login?{q}"))
}

/// A local path to go to after signing in; anything else becomes `/`.
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n)
            if n.starts_with('/')
                && !n.starts_with("//")
                && !n.contains('\\')
                && !n.chars().any(|c| c.is_control() || c.is_whitespace()) =>
        {
            n.to_string()
        }
        _ => "/".to_string(),
    }
}

fn secure_suffix(state: &AppState) -> &'static str {
    if state.config.secure_cookies {
        "; Secure"
    } else {
        ""
    }
}

/// Gives the browser a session's cookie.
pub(crate) fn set_session_cookie(state: &AppState, resp: &mut Response, id: &str) {
    set_cookie(
        resp,
        format!(
            "{SESSION_COOKIE}={id}; HttpOnly; SameSite=Lax; Path=/; Max-Age={}{}",
            crate::store::sessions::ABSOLUTE_MICROS / 1_000_000,
            secure_suffix(state)
        ),
    );
}

fn set_cookie(resp: &mut Response, value: String) {
    if let Ok(v) = HeaderValue::from_str(&value) {
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
}

/// The client's address, when the server knows it: the connection's peer, or, when
/// the peer is a configured trusted proxy, the last address in `X-Forwarded-For` that
/// is not itself a trusted proxy.
pub struct ClientAddr(pub Option<IpAddr>);

impl FromRequestParts<AppState> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip());
        Ok(ClientAddr(client_addr(
            peer,
            &parts.headers,
            &state.config.trusted_proxies,
        )))
    }
}

fn client_addr(
    peer: Option<IpAddr>,
    headers: &HeaderMap,
    trusted: &[crate::config::IpNet],
) -> Option<IpAddr> {
    let is_trusted = |ip: IpAddr| trusted.iter().any(|n| n.contains(ip));
    let peer = peer?;
    if !is_trusted(peer) {
        return Some(peer);
    }
    // Forwarded addresses that are not text, or not addresses, are not trusted: skipped.
    let forwarded: Vec<IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|a| a.trim().parse::<IpAddr>().ok())
        .collect();
    Some(
        forwarded
            .into_iter()
            .rev()
            .find(|ip| !is_trusted(*ip))
            .unwrap_or(peer),
    )
}

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage {
    css: String,
    js: String,
    csrf: String,
    next: String,
    name: String,
    error: Option<String>,
}

#[derive(Deserialize)]
pub struct LoginQuery {
    next: Option<String>,
}

fn login_response(state: &AppState, status: StatusCode, page: LoginPage, token: &str) -> Response {
    let mut resp = render(&page);
    *resp.status_mut() = status;
    set_cookie(
        &mut resp,
        format!(
            "{PRELOGIN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/login{}",
            secure_suffix(state)
        ),
    );
    resp
}

pub async fn login_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<LoginQuery>,
) -> Result<Response, PageError> {
    let token = match prelogin_token(&headers) {
        Some(t) => t,
        None => auth::random_id(32)?,
    };
    let page = LoginPage {
        css: super::assets::url("app.css"),
        js: super::assets::url("app.js"),
        csrf: token.clone(),
        next: safe_next(q.next.as_deref()),
        name: String::new(),
        error: None,
    };
    Ok(login_response(&state, StatusCode::OK, page, &token))
}

#[derive(Deserialize)]
pub struct LoginForm {
    name: String,
    password: String,
    next: Option<String>,
}

/// A hash to check passwords of unknown accounts against, so that an unknown name and
/// a wrong password take the same time.
fn dummy_hash() -> &'static str {
    static H: OnceLock<String> = OnceLock::new();
    H.get_or_init(|| {
        auth::hash_password("not a real password, only for timing").unwrap_or_default()
    })
}

/// The keys a sign-in attempt is counted under, each with its limit: a browser the
/// account signed in from before on its own; otherwise the name, the address and name,
/// and the address over all names.
struct Throttle {
    keys: Vec<(String, i64)>,
    /// The address's key over all names: a success takes back this attempt only.
    eased: Option<String>,
    /// The keys a success clears: every key but `eased`.
    cleared: Vec<String>,
}

fn throttle(name: &str, trusted_device: Option<&str>, addr: Option<IpAddr>) -> Throttle {
    let (keys, eased): (Vec<(String, i64)>, Option<String>) = match (trusted_device, addr) {
        (Some(h), _) => (vec![(format!("device:{h}"), MAX_FAILURES_PER_DEVICE)], None),
        (None, Some(a)) => (
            vec![
                (format!("user:{name}"), MAX_FAILURES_PER_NAME),
                (
                    format!("addr:{a}|user:{name}"),
                    MAX_FAILURES_PER_ADDRESS_AND_NAME,
                ),
                (format!("addr:{a}"), MAX_FAILURES_PER_ADDRESS),
            ],
            Some(format!("addr:{a}")),
        ),
        (None, None) => (vec![(format!("user:{name}"), MAX_FAILURES_PER_NAME)], None),
    };
    let cleared = keys
        .iter()
        .map(|(k, _)| k.clone())
        .filter(|k| Some(k) != eased.as_ref())
        .collect();
    Throttle {
        keys,
        eased,
        cleared,
    }
}

pub async fn login(
    State(state): State<AppState>,
    headers: HeaderMap,
    ClientAddr(addr): ClientAddr,
    Form(form): Form<LoginForm>,
) -> Result<Response, PageError> {
    let name = form.name.trim().to_string();
    let next = safe_next(form.next.as_deref());
    let token = prelogin_token(&headers).unwrap_or_default();
    let page = |name: &str, error: &str| LoginPage {
        css: super::assets::url("app.css"),
        js: super::assets::url("app.js"),
        csrf: token.clone(),
        next: next.clone(),
        name: name.to_string(),
        error: Some(error.to_string()),
    };
    if crate::domain::text::check(&name).is_err() || name.contains(['\n', '\r', '\t']) {
        return Ok(login_response(
            &state,
            StatusCode::UNPROCESSABLE_ENTITY,
            page("", "The name holds a character that no account name has."),
            &token,
        ));
    }
    // A browser this account signed in from before is throttled on its own: an
    // attacker's failures elsewhere cannot lock the person out of it.
    let device_hash = cookie(&headers, DEVICE_COOKIE)
        .filter(|d| !d.is_empty() && d.len() <= 128)
        .map(|d| auth::sha256_hex(d.as_bytes()));
    let trusted = match &device_hash {
        Some(h) => state.store.device_owner(h).await?.as_deref() == Some(name.as_str()),
        None => false,
    };
    let Throttle {
        keys,
        eased,
        cleared,
    } = throttle(&name, device_hash.as_deref().filter(|_| trusted), addr);
    let wait = |secs: u64| {
        let mut resp = login_response(
            &state,
            StatusCode::TOO_MANY_REQUESTS,
            page(
                &name,
                &format!(
                    "Too many failed sign-ins. Wait {secs} second{} and try again.",
                    if secs == 1 { "" } else { "s" }
                ),
            ),
            &token,
        );
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        resp
    };
    // The attempt is counted before the password is checked, in one transaction: a
    // burst of parallel attempts cannot slip past the limit.
    if let Admission::Wait(secs) = state.store.admit_login(&keys).await? {
        return Ok(wait(secs));
    }
    let found = state.store.credentials(&name).await?;
    let (user, hash, disabled) = match found {
        Some((u, h, d)) => (Some(u), Some(h), d),
        None => (None, None, false),
    };
    let password = form.password;
    // An unknown name is checked against a dummy hash: the same work, the same time.
    let check = move || auth::verify_password(&password, hash.as_deref().unwrap_or(dummy_hash()));
    let ok = match auth::with_hashing_slot(check).await {
        Ok(ok) => ok,
        Err(Error::TooMany { retry_after, .. }) => {
            let mut resp = login_response(
                &state,
                StatusCode::TOO_MANY_REQUESTS,
                page(
                    &name,
                    "The server is busy checking other sign-ins. Try again in a moment.",
                ),
                &token,
            );
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
            return Ok(resp);
        }
        Err(e) => return Err(e.into()),
    };
    let user = match (user, ok) {
        (Some(u), true) if !disabled => u,
        (Some(_), true) => {
            return Ok(login_response(
                &state,
                StatusCode::FORBIDDEN,
                page(
                    &name,
                    "This account is disabled. Ask an admin to enable it.",
                ),
                &token,
            ));
        }
        _ => {
            return Ok(login_response(
                &state,
                StatusCode::UNAUTHORIZED,
                page(&name, "Wrong name or password."),
                &token,
            ));
        }
    };
    state
        .store
        .login_succeeded(&cleared, eased.as_deref())
        .await?;
    // This browser is remembered for this person (a new cookie unless it has theirs).
    let device = if trusted {
        None
    } else {
        let id = auth::random_id(32)?;
        state
            .store
            .trust_device(&user, &auth::sha256_hex(id.as_bytes()))
            .await?;
        Some(id)
    };
    // The browser's earlier session (someone else's, or this person's own) ends: one
    // browser holds one session, and a sign-in as another person does not leave the
    // first one valid on the server.
    if let Some(earlier) = from_cookie(&state, &headers).await? {
        state.store.end_session(&earlier).await?;
    }
    let id = state.store.create_session(&user).await?;
    tracing::info!(user = %user.name, roles = %user.describe(), "signed in");
    let mut resp = see_other(&next);
    set_session_cookie(&state, &mut resp, &id);
    set_cookie(
        &mut resp,
        format!("{PRELOGIN_COOKIE}=; HttpOnly; SameSite=Strict; Path=/login; Max-Age=0"),
    );
    if let Some(id) = device {
        set_cookie(
            &mut resp,
            format!(
                "{DEVICE_COOKIE}={id}; HttpOnly; SameSite=Strict; Path=/login; Max-Age={DEVICE_SECONDS}{}",
                secure_suffix(&state)
            ),
        );
    }
    Ok(resp)
}

pub async fn logout(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    _form: RawForm,
) -> Result<Response, PageError> {
    state.store.end_session(&session).await?;
    let mut resp = see_other("/login");
    set_cookie(
        &mut resp,
        format!("{SESSION_COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0"),
    );
    Ok(resp.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_the_first_field_of_a_multipart_body_or_nothing() {
        let b = "XyZ";
        let body = "--XyZ\r\nContent-Disposition: form-data; name=\"_csrf\"\r\n\r\nabc123\r\n--XyZ\r\nContent-Disposition: form-data; name=\"archive\"; filename=\"a.zip\"\r\n\r\nPK...";
        assert_eq!(
            first_field(body.as_bytes(), b, "_csrf"),
            Some(Some("abc123".into()))
        );
        assert_eq!(
            first_field(&body.as_bytes()[..30], b, "_csrf"),
            None,
            "not whole yet"
        );
        let file_first = "--XyZ\r\nContent-Disposition: form-data; name=\"archive\"; filename=\"_csrf\"\r\n\r\nabc\r\n--XyZ";
        assert_eq!(first_field(file_first.as_bytes(), b, "_csrf"), Some(None));
        assert_eq!(
            first_field(b"junk that is long enough", b, "_csrf"),
            Some(None)
        );
    }

    #[test]
    fn only_local_paths_are_followed_after_sign_in() {
        assert_eq!(
            safe_next(Some("/c/default/review/1")),
            "/c/default/review/1"
        );
        assert_eq!(safe_next(Some("//evil.example/")), "/");
        assert_eq!(safe_next(Some("https://evil.example/")), "/");
        assert_eq!(safe_next(Some("/\\evil")), "/");
        assert_eq!(
            safe_next(Some("/\t/evil.example")),
            "/",
            "browsers drop tabs: //evil"
        );
        assert_eq!(safe_next(Some("/ /evil")), "/");
        assert_eq!(safe_next(None), "/");
    }

    #[test]
    fn the_client_is_the_peer_unless_a_trusted_proxy_names_it() {
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            HeaderValue::from_static("203.0.113.9, 10.0.0.7"),
        );
        let peer: IpAddr = "10.0.0.2".parse().unwrap();
        assert_eq!(
            client_addr(Some(peer), &h, &[]),
            Some(peer),
            "no proxy trusted"
        );
        let trusted = [crate::config::IpNet::parse("10.0.0.0/8").unwrap()];
        assert_eq!(
            client_addr(Some(peer), &h, &trusted),
            Some("203.0.113.9".parse().unwrap()),
            "the last untrusted hop"
        );
        let stranger: IpAddr = "198.51.100.1".parse().unwrap();
        assert_eq!(
            client_addr(Some(stranger), &h, &trusted),
            Some(stranger),
            "a client cannot name itself by sending the header"
        );
        assert_eq!(
            client_addr(Some(peer), &HeaderMap::new(), &trusted),
            Some(peer)
        );
    }

    #[test]
    fn cookies_are_read_by_name() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; tandem_session=xyz; b=2"),
        );
        assert_eq!(cookie(&h, SESSION_COOKIE).as_deref(), Some("xyz"));
        assert_eq!(cookie(&h, "missing"), None);
    }
}

/// What a link may carry besides its token.
#[derive(Debug, serde::Deserialize)]
pub struct JoinQuery {
    /// An external participant id (a recruitment platform's), kept only when the admin
    /// turned that on.
    pub pid: Option<String>,
}

/// `/join/{token}`: the link's token is exchanged for a session (the link's earlier
/// session ends) and the browser goes to a clean URL, so the token stays out of its
/// history beyond this one step. A link unknown or revoked opens nothing.
pub async fn join(
    State(state): State<AppState>,
    Path(token): Path<String>,
    Query(q): Query<JoinQuery>,
    headers: HeaderMap,
) -> Result<Response, PageError> {
    let Some(joined) =
        crate::app::baseline::join(&state.store, &token, q.pid.as_deref(), false).await?
    else {
        return Err(Error::NotFound(
            "This link opens nothing: it is not known, or it was withdrawn. Ask whoever sent it for a new one."
                .into(),
        )
        .into());
    };
    // This browser's earlier session (someone else's) ends: one browser, one person.
    if let Some(earlier) = from_cookie(&state, &headers).await? {
        state.store.end_session(&earlier).await?;
    }
    let to = match (joined.part, joined.target) {
        (crate::domain::Part::Study, Some(id)) => format!("/study/{id}"),
        (crate::domain::Part::Baseline, Some(id)) => format!("/baseline/{id}"),
        (_, None) => "/".to_string(),
    };
    let mut resp = see_other(&to);
    set_session_cookie(&state, &mut resp, &joined.session);
    Ok(resp)
}

/// Signing in and out, and invitation links (whose token is the credential).
pub fn routes() -> Vec<Route> {
    use Access::{Public, SignedIn};
    use Kind::Page;
    use axum::routing::{get, post};
    vec![
        Route::new("GET", "/login", Public, Page, get(login_page)),
        Route::new("POST", "/login", Public, Page, post(login)),
        Route::new("POST", "/logout", SignedIn, Page, post(logout)),
        Route::new("GET", "/join/{token}", Public, Page, get(join)),
    ]
}
