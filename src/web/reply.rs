//! How the web layer answers people: pages rendered never cached, redirects after a
//! form, and errors as a page that says what went wrong in words (the API's JSON errors
//! are `error::Error`'s).

use super::assets;
use crate::error::Error;
use askama::Template;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

/// Renders a page: HTML, never cached (it carries a CSRF token).
pub fn render<T: Template>(page: &T) -> Response {
    match page.render() {
        Ok(html) => (
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            html,
        )
            .into_response(),
        Err(e) => {
            tracing::error!(error = %e, "a page failed to render");
            error_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The page could not be shown.",
            )
        }
    }
}

/// A 303 to a local path.
pub fn see_other(path: &str) -> Response {
    Redirect::to(path).into_response()
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage {
    css: String,
    status: u16,
    reason: String,
    message: String,
}

/// A minimal error page with a way back.
pub fn error_page(status: StatusCode, message: &str) -> Response {
    let page = ErrorPage {
        css: assets::url("app.css"),
        status: status.as_u16(),
        reason: status.canonical_reason().unwrap_or("Error").to_string(),
        message: message.to_string(),
    };
    let mut resp = render(&page);
    *resp.status_mut() = status;
    resp
}

/// An error in a page handler, shown as a page.
pub struct PageError(pub Error);

impl From<Error> for PageError {
    fn from(e: Error) -> Self {
        PageError(e)
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let status = self.0.status();
        if let Error::Unavailable(message) = &self.0 {
            // What cannot be done now and why, in Tandem's words, and when to try again.
            tracing::warn!(error = %message, "page refused: unavailable");
            let mut resp = error_page(status, &sentence(message));
            resp.headers_mut().insert(
                header::RETRY_AFTER,
                header::HeaderValue::from(crate::error::UNAVAILABLE_RETRY_AFTER),
            );
            return resp;
        }
        let message = if status.is_server_error() {
            tracing::error!(error = %self.0, "page failed");
            "Something went wrong on the server; the log has the details.".to_string()
        } else {
            for_people(&self.0)
        };
        error_page(status, &message)
    }
}

pub type PageResult = Result<Response, PageError>;

/// An error as a page says it to a person: without the field's id in front (a field
/// error's `reasons: ...` is for scripts, which get the field apart), as a sentence,
/// names in quotation marks rather than a program's backticks.
pub fn for_people(e: &Error) -> String {
    let raw = match e {
        Error::Field { message, .. } => message.clone(),
        other => other.to_string(),
    };
    sentence(&raw)
}

fn sentence(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + 4);
    let mut open = false;
    for ch in raw.trim().chars() {
        if ch == '`' {
            out.push(if open { '\u{201d}' } else { '\u{201c}' });
            open = !open;
        } else {
            out.push(ch);
        }
    }
    let mut chars = out.chars();
    let mut s = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
        None => return out,
    };
    if !s.ends_with(['.', '!', '?', ':', '\u{201d}']) {
        s.push('.');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_as_sentences_without_field_ids() {
        let e = Error::field("reasons", "a reject verdict needs at least one reason");
        assert_eq!(
            for_people(&e),
            "A reject verdict needs at least one reason."
        );
        let e = Error::NotFound("no clip `X_01` in your Stage 1 queue".into());
        assert_eq!(
            for_people(&e),
            "No clip \u{201c}X_01\u{201d} in your Stage 1 queue."
        );
        assert_eq!(sentence("Saved."), "Saved.");
        assert_eq!(sentence(""), "");
    }
}
