//! One error type for the whole application; its HTTP mapping lives in one `match`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A problem at one place of an input file: its line and, where known, its field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LineError {
    pub line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub message: String,
}

impl LineError {
    pub fn new(line: usize, field: Option<&str>, message: impl Into<String>) -> Self {
        LineError {
            line,
            field: field.map(str::to_string),
            message: message.into(),
        }
    }
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "line {}, field `{}`: {}", self.line, field, self.message),
            None => write!(f, "line {}: {}", self.line, self.message),
        }
    }
}

/// All the problems found in one input file. Nothing of the file was stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    pub what: String,
    pub problems: Vec<LineError>,
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        write!(
            f,
            "{} refused, nothing was stored: {} problem{}",
            self.what,
            n,
            if n == 1 { "" } else { "s" }
        )?;
        for p in &self.problems {
            write!(f, "\n  {p}")?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("authentication required: {0}")]
    Unauthorized(String),
    #[error("{field}: {message}")]
    Field { field: String, message: String },
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Rejected(Rejected),
    /// The service cannot do it now (a full disk, a database that cannot write); the
    /// message says what to do.
    #[error("{0}")]
    Unavailable(String),
    /// A body of a type the route does not read; the message names the types it reads.
    #[error("{0}")]
    Unsupported(String),
    /// A body larger than its limit (an upload); the message names the limit.
    #[error("{0}")]
    TooLarge(String),
    /// A request that came too slowly (a body below the least rate); the message says
    /// what the rule was.
    #[error("{0}")]
    TooSlow(String),
    /// Too many attempts: wait `retry_after` seconds.
    #[error("{message}")]
    TooMany { message: String, retry_after: u64 },
    #[error("database: {0}")]
    Db(sqlx::Error),
    #[error("database migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    /// A fault of the server's own, without a cause to keep.
    #[error("{0}")]
    Internal(String),
    /// A fault of the server's own: what failed, and why (the cause is kept, and logged
    /// with the request that met it).
    #[error("{context}: {source}")]
    Fault {
        context: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// A fault of the server's own, `context` saying what failed, its cause kept.
    pub fn fault(
        context: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Error {
        Error::Fault {
            context: context.into(),
            source: source.into(),
        }
    }

    pub fn field(field: &str, message: impl Into<String>) -> Error {
        Error::Field {
            field: field.to_string(),
            message: message.into(),
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            Error::NotFound(_) => StatusCode::NOT_FOUND,
            Error::Forbidden(_) => StatusCode::FORBIDDEN,
            Error::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Error::Field { .. } | Error::Invalid(_) | Error::Rejected(_) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            Error::Conflict(_) => StatusCode::CONFLICT,
            Error::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Error::TooMany { .. } => StatusCode::TOO_MANY_REQUESTS,
            Error::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Error::TooSlow(_) => StatusCode::REQUEST_TIMEOUT,
            Error::Unsupported(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Error::Db(_)
            | Error::Migrate(_)
            | Error::Io { .. }
            | Error::Internal(_)
            | Error::Fault { .. } => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::NotFound(_) => ErrorKind::NotFound,
            Error::Forbidden(_) => ErrorKind::Forbidden,
            Error::Unauthorized(_) => ErrorKind::Unauthorized,
            Error::Field { .. } | Error::Invalid(_) => ErrorKind::Invalid,
            Error::Rejected(_) => ErrorKind::Rejected,
            Error::Conflict(_) => ErrorKind::Conflict,
            Error::Unavailable(_) => ErrorKind::Unavailable,
            Error::TooMany { .. } => ErrorKind::TooManyRequests,
            Error::TooLarge(_) => ErrorKind::TooLarge,
            Error::TooSlow(_) => ErrorKind::Timeout,
            Error::Unsupported(_) => ErrorKind::UnsupportedMediaType,
            _ => ErrorKind::Internal,
        }
    }
}

/// What kind of error an API reply is: the `error` of [`ErrorBody`]. Those of
/// [`Error`], and those that the router answers before a handler runs
/// (`web::api_errors_as_json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(
    description = "What kind of error: not_found (404), forbidden (403), unauthorized (401), bad_request (400: a path, query or body that could not be read), invalid (422: a value breaks a rule; `field` names it), rejected (422: a file with problems, each with its line; nothing stored), conflict (409), method_not_allowed (405), timeout (408), too_large (413), unsupported_media_type (415), too_many_requests (429), unavailable (503: try again after `Retry-After`), internal (500)"
)]
pub enum ErrorKind {
    /// 404: no such campaign, item, stage, user, ... (or one that is not the caller's)
    NotFound,
    /// 403: the caller's role may not do this
    Forbidden,
    /// 401: no valid token or session
    Unauthorized,
    /// 400: a path, query or body that could not be read at all
    BadRequest,
    /// 422: a value that breaks a rule; `field` names it
    Invalid,
    /// 422: an input file with problems, each with its line and field; nothing was stored
    Rejected,
    /// 409: the request conflicts with the record (a final verdict, a newer version)
    Conflict,
    /// 405: the route does not take this method (`Allow` lists what it takes)
    MethodNotAllowed,
    /// 408: the request took too long and was not carried out
    Timeout,
    /// 413: the body is too large
    TooLarge,
    /// 415: the body is not JSON
    UnsupportedMediaType,
    /// 429: too many attempts; `Retry-After` says when to try again
    TooManyRequests,
    /// 503: the database or the disk cannot serve now; `Retry-After` says when to try again
    Unavailable,
    /// 500: a fault of the server, in its log
    Internal,
}

impl From<sqlx::Error> for Error {
    /// A unique violation is a conflict with what another request stored at the same
    /// moment; a database that cannot write (a full disk) or cannot be reached is
    /// unavailable, not broken.
    fn from(e: sqlx::Error) -> Self {
        // The database cannot be reached (it stopped, the network, no free connection
        // within the wait): unavailable for now, not a broken request.
        if matches!(e, sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed) {
            tracing::error!(error = %e, "the database cannot be reached");
            return Error::Unavailable(
                "the database cannot be reached right now; nothing was stored: try again later"
                    .into(),
            );
        }
        // The connection broke while the request was in the database: what it sent may
        // or may not have been committed (a verdict sent again is recorded once).
        if matches!(e, sqlx::Error::Io(_) | sqlx::Error::Protocol(_)) {
            tracing::error!(error = %e, "the connection to the database broke");
            return Error::Unavailable(
                "the database cannot be reached right now: try again shortly".into(),
            );
        }
        if let Some(d) = e.as_database_error() {
            if unreachable(d.code().as_deref()) {
                tracing::error!(error = %e, "the database ended the connection");
                return Error::Unavailable(
                    "the database cannot be reached right now: try again shortly".into(),
                );
            }
            if d.is_unique_violation() {
                return Error::Conflict(
                    "another request stored the same thing at the same moment; reload and try again"
                        .into(),
                );
            }
            if cannot_write(d.code().as_deref()) {
                tracing::error!(error = %e, "the database cannot write");
                return Error::Unavailable(
                    "the database cannot write right now (the disk may be full); nothing was stored: try again later"
                        .into(),
                );
            }
        }
        Error::Db(e)
    }
}

/// Whether a PostgreSQL error code says the database went away, not that the request
/// was wrong: a connection exception (class 08) or the server shutting down, crashed
/// or starting up (57P01, 57P02, 57P03).
fn unreachable(code: Option<&str>) -> bool {
    code.is_some_and(|c| c.len() == 5 && (c.starts_with("08") || c.starts_with("57P0")))
}

/// Whether a database error code says the database cannot write: SQLite's
/// SQLITE_FULL (13) and SQLITE_IOERR (10, with its extended codes), PostgreSQL's
/// disk_full and out-of-memory classes (53xxx).
pub fn cannot_write(code: Option<&str>) -> bool {
    let Some(code) = code else { return false };
    if code.starts_with("53") && code.len() == 5 {
        return true;
    }
    match code.parse::<i64>() {
        Ok(n) => n == 13 || n & 0xff == 10,
        Err(_) => false,
    }
}

impl From<crate::domain::rules::FieldError> for Error {
    fn from(e: crate::domain::rules::FieldError) -> Self {
        Error::Field {
            field: e.field.to_string(),
            message: e.message,
        }
    }
}

/// Every error of the API: what kind, in words, and where (a field, or the lines of a
/// file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ErrorBody {
    pub error: ErrorKind,
    /// What went wrong, in words a person can act on.
    pub detail: String,
    /// The field of the request that is wrong, when one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Every problem of a rejected file, each with its line (and field).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problems: Option<Vec<LineError>>,
}

/// The seconds a client is asked to wait before trying again a request refused as
/// unavailable (a full disk, a database that cannot write).
pub const UNAVAILABLE_RETRY_AFTER: u64 = 5;

impl Error {
    /// The error as the API tells it: a server error's cause is logged (inside the
    /// current span) and the client learns nothing of it.
    pub fn body(&self) -> ErrorBody {
        let detail = match self {
            // Written by Tandem for the client: what cannot be done now and why (the
            // database cannot write, the disk is full), never the database's own words.
            Error::Unavailable(message) => {
                tracing::warn!(error = %message, "request refused: unavailable");
                message.clone()
            }
            _ if self.status().is_server_error() => {
                tracing::error!(error = %self, "request failed");
                "internal error; the server log has the details".to_string()
            }
            _ => self.to_string(),
        };
        let (field, problems) = match self {
            Error::Field { field, .. } => (Some(field.clone()), None),
            Error::Rejected(r) => (None, Some(r.problems.clone())),
            _ => (None, None),
        };
        ErrorBody {
            error: self.kind(),
            detail,
            field,
            problems,
        }
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = self.body();
        let mut resp = (status, axum::Json(body)).into_response();
        let retry_after = match &self {
            Error::TooMany { retry_after, .. } => Some(*retry_after),
            Error::Unavailable(_) => Some(UNAVAILABLE_RETRY_AFTER),
            _ => None,
        };
        if let Some(secs) = retry_after {
            resp.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(secs),
            );
        }
        resp
    }
}

/// A request body that came slower than its least rate (`server::open::RateBody` ends
/// the body with it; the API answers 408 with its words).
#[derive(Debug)]
pub struct TooSlow {
    pub min_rate: u64,
    pub grace: std::time::Duration,
}

impl std::fmt::Display for TooSlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the request body came slower than {} bytes a second (after {} s); send it again, faster",
            self.min_rate,
            self.grace.as_secs()
        )
    }
}

impl std::error::Error for TooSlow {}

/// The [`TooSlow`] behind an error that reading a body gave, if that was the cause.
pub fn too_slow<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a TooSlow> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(slow) = c.downcast_ref::<TooSlow>() {
            return Some(slow);
        }
        cause = c.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_keeps_its_cause_and_says_both() {
        let cause = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        let said = format!("stored fields: {cause}");
        let e = Error::fault("stored fields", cause);
        assert_eq!(e.to_string(), said);
        assert_eq!(e.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(e.kind(), ErrorKind::Internal);
        let source = std::error::Error::source(&e).expect("the cause is kept");
        assert!(source.is::<serde_json::Error>(), "{source:?}");
        // The client learns nothing of it.
        assert!(!e.body().detail.contains("stored fields"));
    }

    #[test]
    fn a_database_out_of_reach_is_unavailable_with_a_time_to_retry() {
        for e in [
            sqlx::Error::PoolTimedOut,
            sqlx::Error::PoolClosed,
            sqlx::Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
            sqlx::Error::Protocol("unexpected end of stream".into()),
        ] {
            let e = Error::from(e);
            assert!(matches!(e, Error::Unavailable(_)), "{e:?}");
            let resp = e.into_response();
            assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(resp.headers()["retry-after"], "5");
        }
        // PostgreSQL shutting down, crashed, starting up, or a connection exception.
        for code in ["57P01", "57P02", "57P03", "08006", "08001"] {
            assert!(unreachable(Some(code)), "{code}");
        }
        for code in ["23505", "40001", "57014", "42P01", "0800", "5"] {
            assert!(!unreachable(Some(code)), "{code}");
        }
        assert!(!unreachable(None));
        // Anything else the database says stays internal, its words in the log only.
        let resp = Error::from(sqlx::Error::RowNotFound).into_response();
        assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(resp.headers().get("retry-after").is_none());
    }
}
