//! One error type for the whole application; its HTTP mapping lives in one `match`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::fmt;

/// A problem at one place of an input file: its line and, where known, its field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    #[error("database migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
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
            Error::Db(_) | Error::Migrate(_) | Error::Io { .. } | Error::Internal(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Error::NotFound(_) => "not_found",
            Error::Forbidden(_) => "forbidden",
            Error::Unauthorized(_) => "unauthorized",
            Error::Field { .. } | Error::Invalid(_) => "invalid",
            Error::Rejected(_) => "rejected",
            Error::Conflict(_) => "conflict",
            _ => "internal",
        }
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

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    problems: Option<&'a [LineError]>,
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let status = self.status();
        let detail = if status.is_server_error() {
            // The cause is logged inside the request's span; the client learns nothing of it.
            tracing::error!(error = %self, "request failed");
            "internal error; the server log has the details".to_string()
        } else {
            self.to_string()
        };
        let (field, problems) = match &self {
            Error::Field { field, .. } => (Some(field.as_str()), None),
            Error::Rejected(r) => (None, Some(r.problems.as_slice())),
            _ => (None, None),
        };
        let body = ErrorBody {
            error: self.kind(),
            detail,
            field,
            problems,
        };
        (status, axum::Json(body)).into_response()
    }
}
