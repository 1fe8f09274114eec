//! What a generation pipeline starts and polls: an import by upload (a zip holding a
//! manifest and its videos: new clips, or new versions of rejected ones) or from a
//! folder under an import root, the retained benchmark's zip and the paper bundle. Each
//! answers at once (202) with a job (`app::jobs`), whose state any server gives.

use super::{ApiJson, CampaignPath, campaign};
use crate::app::exports;
use crate::app::jobs::{self, Job, Work};
use crate::error::{Error, Result};
use crate::store::accounts::User;
use crate::web::routes::api;
use crate::web::routes::{ADMIN, Route};
use crate::web::state::AppState;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// One job of a campaign.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct JobPath {
    /// The campaign's name (`default` unless named otherwise at import)
    campaign: String,
    /// The job's id
    job: String,
}

/// A file's bytes (a zip).
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
pub struct FileBytes(#[allow(dead_code)] Vec<u8>);

/// The reply to a job's start: 202, the job, and where to poll it.
fn accepted(job: Job) -> Response {
    let location = format!("/api/v1/campaigns/{}/jobs/{}", job.campaign, job.id);
    (
        StatusCode::ACCEPTED,
        [(header::LOCATION, location)],
        Json(job),
    )
        .into_response()
}

/// The types an upload may come as.
const ZIP_TYPES: [&str; 3] = [
    "application/zip",
    "application/x-zip-compressed",
    "application/octet-stream",
];

/// Import by upload: a zip holding one manifest (`.jsonl`, as SPEC section 4 describes)
/// and the videos it names, as `tandem import` reads a folder.
///
/// A line with a known `clip_id` and a new `file` is a new version of that clip (the
/// regeneration loop); re-importing the same manifest changes nothing. The upload is
/// stored, then the job unpacks it, checks every line, takes the videos in and stores
/// the manifest in one write: a manifest with problems fails the job with each problem's
/// line and field (`error.problems`), and nothing is stored.
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/imports",
    tag = "imports",
    operation_id = "import_upload",
    params(CampaignPath),
    request_body(
        description = "The zip (sent as `application/zip`, or as `application/octet-stream`)",
        content = inline(FileBytes),
        content_type = "application/zip"
    ),
    responses(
        (status = 202, description = "The job, queued or running: poll it (`Location`)", body = Job,
         headers(("Location" = String, description = "The job"))),
        (status = 429, description = "The server holds 16 jobs already: try again after `Retry-After` seconds"),
    )
)]
pub async fn import_upload(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<CampaignPath>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response> {
    let campaign = campaign(&state, &p.campaign).await?;
    // A content type that is not text matches no accepted type: refused below.
    let given = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        });
    if !given.as_deref().is_some_and(|t| ZIP_TYPES.contains(&t)) {
        return Err(Error::Unsupported(format!(
            "send the zip with `Content-Type: application/zip` (not {})",
            given.map_or("none".to_string(), |t| format!("`{t}`"))
        )));
    }
    // The upload is the job's until it ends (a refused one is removed here).
    let scratch = exports::Scratch::new(&state.config, "upload")?;
    let zip = scratch.path().join("upload.zip");
    let bytes = exports::save_upload(&state.config, body.into_data_stream(), &zip).await?;
    if bytes == 0 {
        return Err(Error::Invalid(
            "the body is empty: send the zip holding the manifest and its videos".into(),
        ));
    }
    if !starts_like_a_zip(&zip).await {
        return Err(Error::Invalid(
            "the body is not a zip archive: send the zip holding the manifest and its videos"
                .into(),
        ));
    }
    let job = jobs::start(
        &state.store,
        &state.config,
        &campaign,
        &user.name,
        Work::ImportZip(scratch),
    )
    .await?;
    Ok(accepted(job))
}

/// Whether a file starts as a zip archive does (a local file header, or the end record
/// of an empty archive).
async fn starts_like_a_zip(path: &std::path::Path) -> bool {
    use tokio::io::AsyncReadExt;
    let mut head = [0u8; 4];
    match tokio::fs::File::open(path).await {
        Ok(mut f) => {
            f.read_exact(&mut head).await.is_ok()
                && (head == *b"PK\x03\x04" || head == *b"PK\x05\x06")
        }
        Err(_) => false,
    }
}

/// A manifest on the server.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"manifest": "/srv/benchmark/round2/manifest.jsonl"}))]
pub struct FolderImport {
    /// The absolute path of a manifest under one of the server's import roots
    /// (`--import-root`); its videos' paths are relative to it
    manifest: String,
}

/// Import a manifest that is on the server already, under an import root
/// (`--import-root DIR`); nothing else on the server is read. As the upload, a job.
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/imports/folder",
    tag = "imports",
    operation_id = "import_folder",
    params(CampaignPath),
    request_body = FolderImport,
    responses(
        (status = 202, description = "The job, queued or running: poll it (`Location`)", body = Job,
         headers(("Location" = String, description = "The job"))),
        (status = 429, description = "The server holds 16 jobs already: try again after `Retry-After` seconds"),
    )
)]
pub async fn import_folder(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<CampaignPath>,
    ApiJson(body): ApiJson<FolderImport>,
) -> Result<Response> {
    let campaign = campaign(&state, &p.campaign).await?;
    let Some(manifest) = state
        .config
        .manifest_under_import_root(body.manifest.trim())
        .await
    else {
        if state.config.import_roots.is_empty() {
            // Not the request's fault: this server does not allow it (403).
            return Err(Error::Forbidden(
                "importing from a folder on the server is off: start the server with --import-root DIR, or upload a zip".to_string(),
            ));
        }
        let message = {
            "give the absolute path of a manifest file under one of the server's import roots; nothing else on the server is read".to_string()
        };
        return Err(Error::field("manifest", message));
    };
    let job = jobs::start(
        &state.store,
        &state.config,
        &campaign,
        &user.name,
        Work::ImportManifest(manifest),
    )
    .await?;
    Ok(accepted(job))
}

/// Make the retained benchmark's zip (as `tandem export retained` writes a folder: the
/// retained clips' videos, their retained questions, the counts): a job whose file is
/// downloaded from `result.url` once it is done.
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/exports/retained",
    tag = "exports",
    operation_id = "export_retained",
    params(CampaignPath),
    responses(
        (status = 202, description = "The job, queued or running: poll it (`Location`)", body = Job,
         headers(("Location" = String, description = "The job"))),
        (status = 429, description = "The server holds 16 jobs already: try again after `Retry-After` seconds"),
    )
)]
pub async fn export_retained(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<CampaignPath>,
) -> Result<Response> {
    let campaign = campaign(&state, &p.campaign).await?;
    let job = jobs::start(
        &state.store,
        &state.config,
        &campaign,
        &user.name,
        Work::Retained,
    )
    .await?;
    Ok(accepted(job))
}

/// Make the paper bundle's zip (as `tandem export paper` writes a folder: the tables as
/// LaTeX and CSV, the figures, the statistics as JSON, the records): a job whose file is
/// downloaded from `result.url` once it is done.
#[utoipa::path(
    post,
    path = "/api/v1/campaigns/{campaign}/exports/paper",
    tag = "exports",
    operation_id = "export_paper",
    params(CampaignPath),
    responses(
        (status = 202, description = "The job, queued or running: poll it (`Location`)", body = Job,
         headers(("Location" = String, description = "The job"))),
        (status = 429, description = "The server holds 16 jobs already: try again after `Retry-After` seconds"),
    )
)]
pub async fn export_paper(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(p): Path<CampaignPath>,
) -> Result<Response> {
    let campaign = campaign(&state, &p.campaign).await?;
    let computed = crate::web::pages::stats::now_seconds();
    let job = jobs::start(
        &state.store,
        &state.config,
        &campaign,
        &user.name,
        Work::Paper { computed },
    )
    .await?;
    Ok(accepted(job))
}

/// A campaign's jobs, newest first.
#[derive(Serialize, ToSchema)]
pub struct Jobs {
    pub jobs: Vec<Job>,
}

/// The campaign's jobs, newest first (the latest 100; a finished job is kept 7 days).
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/jobs",
    tag = "jobs",
    operation_id = "list_jobs",
    params(CampaignPath),
    responses((status = 200, description = "The jobs", body = Jobs))
)]
pub async fn list(
    State(state): State<AppState>,
    Path(p): Path<CampaignPath>,
) -> Result<Json<Jobs>> {
    let campaign = campaign(&state, &p.campaign).await?;
    let jobs = jobs::jobs(&state.store, &campaign).await?;
    Ok(Json(Jobs { jobs }))
}

/// One job: where it stands; once done, an import's summary or an export's file; once
/// failed, why (with the lines of a rejected manifest). A job whose server stopped is
/// failed, and nothing of it was stored.
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/jobs/{job}",
    tag = "jobs",
    operation_id = "get_job",
    params(JobPath),
    responses((status = 200, description = "The job", body = Job))
)]
pub async fn get(State(state): State<AppState>, Path(p): Path<JobPath>) -> Result<Json<Job>> {
    let campaign = campaign(&state, &p.campaign).await?;
    jobs::job(&state.store, &campaign, &p.job).await.map(Json)
}

/// The file a finished export made (its SHA-256 is in the job).
#[utoipa::path(
    get,
    path = "/api/v1/campaigns/{campaign}/jobs/{job}/result",
    tag = "jobs",
    operation_id = "download_job_result",
    params(JobPath),
    responses(
        (status = 200, description = "The zip", content_type = "application/zip", body = inline(FileBytes)),
        (status = 409, description = "The job has not finished, failed, or makes no file (an import)"),
    )
)]
pub async fn result(State(state): State<AppState>, Path(p): Path<JobPath>) -> Result<Response> {
    let campaign = campaign(&state, &p.campaign).await?;
    let file = jobs::result_file(&state.store, &state.config, &campaign, &p.job).await?;
    Ok(crate::web::media::download(file))
}

/// Forget a finished job and remove its file.
#[utoipa::path(
    delete,
    path = "/api/v1/campaigns/{campaign}/jobs/{job}",
    tag = "jobs",
    operation_id = "delete_job",
    params(JobPath),
    responses(
        (status = 204, description = "Forgotten"),
        (status = 409, description = "The job has not ended yet"),
    )
)]
pub async fn delete(State(state): State<AppState>, Path(p): Path<JobPath>) -> Result<StatusCode> {
    let campaign = campaign(&state, &p.campaign).await?;
    jobs::delete(&state.store, &state.config, &campaign, &p.job).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A pipeline's long operations: jobs that any server answers for, for admins.
pub fn routes() -> Vec<Route> {
    vec![
        api!(ADMIN, import_upload),
        api!(ADMIN, import_folder),
        api!(ADMIN, export_retained),
        api!(ADMIN, export_paper),
        api!(ADMIN, list),
        api!(ADMIN, get),
        api!(ADMIN, result),
        api!(ADMIN, delete),
    ]
}
