//! The one-shot message a form leaves for the next page ("Saved: C12 is valid."): a
//! short-lived cookie of this browser, read and cleared by the page that shows it, so
//! that no request spends a database statement on it.

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;
use std::cell::RefCell;
use std::future::Future;

pub const COOKIE: &str = "tandem_flash";
/// A message is cut to this many characters.
const MAX_CHARS: usize = 300;

tokio::task_local! {
    /// The message this request brought, and whether a page showed it.
    static INCOMING: RefCell<(Option<(String, Option<String>)>, bool)>;
}

fn encode(message: &str) -> String {
    let short: String = message.chars().take(MAX_CHARS).collect();
    serde_urlencoded::to_string([("m", short)])
        .unwrap_or_default()
        .trim_start_matches("m=")
        .to_string()
}

#[cfg(test)]
fn decode(value: &str) -> Option<String> {
    decode_with_link(value).map(|(m, _)| m)
}

/// A message and, after it (`&l=`), the local page it offers to go back to.
fn decode_with_link(value: &str) -> Option<(String, Option<String>)> {
    let pairs = serde_urlencoded::from_str::<Vec<(String, String)>>(&format!("m={value}")).ok()?;
    let message = pairs
        .iter()
        .find(|(k, _)| k == "m")
        .map(|(_, m)| m.clone())
        .filter(|m| !m.is_empty() && crate::domain::text::check(m).is_ok())?;
    let link = pairs
        .into_iter()
        .find(|(k, _)| k == "l")
        .map(|(_, l)| l)
        .filter(|l| is_local_page(l));
    Some((message, link))
}

/// A path of this site's campaign pages and nothing else, with an encoded query (the
/// queue's filters) at most (the cookie is the browser's: what it sends back is checked
/// like any input).
fn is_local_page(l: &str) -> bool {
    let (path, query) = l.split_once('?').unwrap_or((l, ""));
    l.starts_with("/c/")
        && l.len() < 300
        && path
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'-' | b'.'))
        && !path.contains("..")
        && query.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'=' | b'&' | b'%' | b'+')
        })
}

/// A 303 to a local path that leaves `message` for the page it leads to, with a link
/// back to `link` (a local campaign page, such as the item just saved).
pub fn redirect_with_link(path: &str, message: &str, link: &str) -> Response {
    let mut resp = super::reply::see_other(path);
    let value = format!(
        "{}&{}",
        encode(message),
        serde_urlencoded::to_string([("l", link)]).unwrap_or_default()
    );
    let cookie = format!("{COOKIE}={value}; Path=/; Max-Age=120; HttpOnly; SameSite=Lax");
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
    resp
}

/// A 303 to a local path that leaves `message` for the page it leads to.
pub fn redirect(path: &str, message: &str) -> Response {
    let mut resp = super::reply::see_other(path);
    let cookie = format!(
        "{COOKIE}={}; Path=/; Max-Age=120; HttpOnly; SameSite=Lax",
        encode(message)
    );
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
    resp
}

/// The message left for this page and the page it links back to, if any (the page
/// shows it; it is cleared then).
pub fn take_with_link() -> Option<(String, Option<String>)> {
    INCOMING
        .try_with(|cell| {
            let mut state = cell.borrow_mut();
            state.1 = state.0.is_some();
            state.0.clone()
        })
        .ok()
        .flatten()
}

/// Runs a page's handler with the message its request brought; once a page has shown
/// it, the response clears the cookie (unless it leaves a new message). With `secure`
/// (`--secure-cookies`), every message cookie the page sets or clears is marked
/// `Secure`, as the session cookie is.
pub async fn scope(
    headers: &HeaderMap,
    secure: bool,
    page: impl Future<Output = Response>,
) -> Response {
    let incoming = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .and_then(|(_, v)| decode_with_link(v));
    let had = incoming.is_some();
    let (mut resp, shown) = INCOMING
        .scope(RefCell::new((incoming, false)), async {
            let resp = page.await;
            let shown = INCOMING.with(|c| c.borrow().1);
            (resp, shown)
        })
        .await;
    let sets_new = resp
        .headers()
        .get_all(header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.starts_with(&format!("{COOKIE}=")));
    if had && shown && !sets_new {
        resp.headers_mut().append(
            header::SET_COOKIE,
            HeaderValue::from_static("tandem_flash=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"),
        );
    }
    if secure {
        mark_secure(resp.headers_mut());
    }
    resp
}

/// Adds `Secure` to every message cookie a response sets.
fn mark_secure(headers: &mut HeaderMap) {
    let prefix = format!("{COOKIE}=");
    let values: Vec<HeaderValue> = headers
        .get_all(header::SET_COOKIE)
        .iter()
        .cloned()
        .collect();
    if !values
        .iter()
        .any(|v| v.to_str().is_ok_and(|v| v.starts_with(&prefix)))
    {
        return;
    }
    headers.remove(header::SET_COOKIE);
    for v in values {
        let marked = match v.to_str() {
            Ok(text) if text.starts_with(&prefix) && !text.contains("; Secure") => {
                HeaderValue::from_str(&format!("{text}; Secure")).unwrap_or(v)
            }
            _ => v,
        };
        headers.append(header::SET_COOKIE, marked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_survive_the_cookie() {
        for m in [
            "Saved: C12 is valid.",
            "Imported: 3 clip(s); caf\u{e9} \u{2014} ok",
            "a;b,c=d",
        ] {
            assert_eq!(decode(&encode(m)).as_deref(), Some(m));
        }
        assert_eq!(
            decode(&encode("bad\u{0}")),
            None,
            "control characters are dropped"
        );
        assert_eq!(encode(&"x".repeat(1000)).len(), MAX_CHARS);
    }

    #[test]
    fn a_link_back_is_kept_only_when_it_is_a_local_campaign_page() {
        let value = |m: &str, l: &str| {
            format!(
                "{}&{}",
                encode(m),
                serde_urlencoded::to_string([("l", l)]).unwrap()
            )
        };
        let ok = value("Saved: C12 is valid.", "/c/default/review/1/C12");
        assert_eq!(
            decode_with_link(&ok),
            Some((
                "Saved: C12 is valid.".into(),
                Some("/c/default/review/1/C12".into())
            ))
        );
        // The queue's filters come along.
        let filtered = "/c/default/review/1/C12?task=MC_F&show=undecided&id=C%2B1";
        assert_eq!(
            decode_with_link(&value("m", filtered)).and_then(|(_, l)| l),
            Some(filtered.to_string())
        );
        for bad in [
            "javascript:alert(1)",
            "https://evil.example/c/x",
            "/c/../admin",
            "/c/a b",
            "//evil/c/",
            "/c/x?next=//evil/",
            "/c/x?a=<script>",
            "/c/x?a=1?b=/../",
        ] {
            let (m, l) = decode_with_link(&value("m", bad)).unwrap();
            assert_eq!((m.as_str(), l), ("m", None), "{bad}");
        }
    }
}
