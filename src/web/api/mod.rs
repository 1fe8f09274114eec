//! The JSON API under `/api/v1`. Handlers parse the request into domain types and
//! call the store; they hold no rules of their own.

pub mod accounts;
pub mod baseline;
pub mod calibration;
pub mod campaigns;
pub mod exports;
pub mod jobs;
pub mod records;
pub mod review;
pub mod splits;
pub mod stats;
pub mod study;

use super::routes::Route;
use crate::domain::Stage;
use crate::error::{Error, Result};
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::web::state::AppState;
use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use utoipa::IntoParams;

/// A JSON body whose errors come back in the API's error format.
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        // Read as plain JSON first, so that text no field may hold (NUL, control
        // characters) is refused by name before anything is decoded or stored.
        let value = match Json::<serde_json::Value>::from_request(req, state).await {
            Ok(Json(v)) => v,
            Err(rejection) => {
                return Err(match rejection {
                    JsonRejection::MissingJsonContentType(_) => Error::Invalid(
                        "send the body as JSON with `Content-Type: application/json`".into(),
                    ),
                    other if other.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE => {
                        Error::TooLarge(format!(
                            "the JSON body is larger than the {} bytes a request may send",
                            crate::web::API_BODY_LIMIT
                        ))
                    }
                    other => match crate::error::too_slow(&other) {
                        Some(slow) => Error::TooSlow(slow.to_string()),
                        None => Error::Invalid(format!("invalid JSON body: {}", other.body_text())),
                    },
                });
            }
        };
        // Every body of the API is an object: serde would also read a struct from an
        // array of its fields in order, which the API's document does not allow.
        if !value.is_object() {
            return Err(Error::Invalid(
                "invalid JSON body: it must be an object (`{...}`) with the fields the API's document names".into(),
            ));
        }
        crate::domain::text::check_json(&value)
            .map_err(|(field, message)| Error::Field { field, message })?;
        let mut value = value;
        whole_numbers(&mut value);
        serde_json::from_value::<T>(value)
            .map(ApiJson)
            .map_err(|e| Error::Invalid(format!("invalid JSON body: {e}")))
    }
}

/// Writes each number with no fraction (`80.0`) as the integer it is: JSON Schema's
/// `integer`, which the document gives, takes it, and serde's integers would not.
fn whole_numbers(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f.abs() < 9.0e15
            {
                *v = Value::from(f as i64);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(whole_numbers),
        Value::Object(o) => o.values_mut().for_each(whole_numbers),
        _ => {}
    }
}

async fn campaign(state: &AppState, name: &str) -> Result<Campaign> {
    state.store.campaign(name).await
}

/// The stage of a path, as a 404 when it is not one.
fn stage(s: &str) -> Result<Stage> {
    Stage::parse(s).map_err(|m| Error::NotFound(format!("no such stage: {m}")))
}

// The path parameters of the API's routes, with what they name.

/// A campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct CampaignPath {
    /// The campaign's name (`default` unless named otherwise at import)
    campaign: String,
}

/// A stage of a campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct StagePath {
    /// The campaign's name (`default` unless named otherwise at import)
    campaign: String,
    /// 1 (clips) or 2 (questions)
    #[param(value_type = Stage)]
    stage: String,
}

/// One item of a stage of a campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ItemPath {
    /// The campaign's name (`default` unless named otherwise at import)
    campaign: String,
    /// 1 (clips) or 2 (questions)
    #[param(value_type = Stage)]
    stage: String,
    /// A clip_id in Stage 1, a question_id in Stage 2 (of the clip's newest version)
    item: String,
}

/// One question of a campaign (Stage 2, the clip's newest version).
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct QuestionPath {
    /// The campaign's name (`default` unless named otherwise at import)
    campaign: String,
    /// The question's id
    question: String,
}

/// One task of a campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct TaskPath {
    /// The campaign's name (`default` unless named otherwise at import)
    campaign: String,
    /// The task's code, e.g. MC_F_EGO_STA
    task: String,
}

/// An account.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct UserPath {
    /// The account's name
    name: String,
}

/// Puts the URLs of a clip's file and strip, made for `user`, into an API reply.
/// They answer to this user's token (or session) only, under the pages' rules.
fn clip_urls(
    state: &AppState,
    user: &User,
    clip: &mut crate::store::review::ClipView,
) -> Result<()> {
    let token = state.store.media_grant(user, clip.version_id)?;
    clip.media_url = Some(format!("/media/{token}"));
    clip.strip_url = crate::web::media::strips_possible().then(|| format!("/media/{token}/strip"));
    Ok(())
}

/// Every route of the JSON API, each area's in turn, in the order the OpenAPI document
/// lists them.
pub fn routes() -> Vec<Route> {
    [
        accounts::routes(),
        review::routes(),
        splits::routes(),
        campaigns::routes(),
        exports::routes(),
        jobs::routes(),
        stats::routes(),
        calibration::routes(),
        records::routes(),
        study::routes(),
        baseline::routes(),
    ]
    .into_iter()
    .flatten()
    .collect()
}
