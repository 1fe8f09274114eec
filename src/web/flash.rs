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
    static INCOMING: RefCell<(Option<String>, bool)>;
}

fn encode(message: &str) -> String {
    let short: String = message.chars().take(MAX_CHARS).collect();
    serde_urlencoded::to_string([("m", short)])
        .unwrap_or_default()
        .trim_start_matches("m=")
        .to_string()
}

fn decode(value: &str) -> Option<String> {
    serde_urlencoded::from_str::<Vec<(String, String)>>(&format!("m={value}"))
        .ok()?
        .into_iter()
        .next()
        .map(|(_, m)| m)
        .filter(|m| !m.is_empty() && crate::domain::text::check(m).is_ok())
}

/// A 303 to a local path that leaves `message` for the page it leads to.
pub fn redirect(path: &str, message: &str) -> Response {
    let mut resp = super::see_other(path);
    let cookie = format!(
        "{COOKIE}={}; Path=/; Max-Age=120; HttpOnly; SameSite=Lax",
        encode(message)
    );
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        resp.headers_mut().append(header::SET_COOKIE, v);
    }
    resp
}

/// The message left for this page, if any (the page shows it; it is cleared then).
pub fn take() -> Option<String> {
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
/// it, the response clears the cookie (unless it leaves a new message).
pub async fn scope(headers: &HeaderMap, page: impl Future<Output = Response>) -> Response {
    let incoming = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .and_then(|(_, v)| decode(v));
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
    resp
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
}
