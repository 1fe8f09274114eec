//! Imports: a manifest and its videos, uploaded as a zip or read from a folder under an
//! import root.

use crate::app::exports;
use crate::error::{Error, LineError};
use crate::io;
use crate::store::sessions::Session;
use crate::web::pages::{Chrome, FormFields, PageResult, render};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Multipart, Path, RawForm, State};
use axum::http::StatusCode;

#[derive(Template)]
#[template(path = "admin/import.html")]
struct ImportPage {
    chrome: Chrome,
    campaign: String,
    folder: String,
    /// The folders "import from a folder" reads under (none: it is off).
    roots: Vec<String>,
    error: Option<String>,
    problems: Vec<LineError>,
}

async fn import_page_with(
    state: &AppState,
    session: &Session,
    c: &str,
    folder: String,
    failure: Option<Error>,
) -> PageResult {
    let here = format!("/c/{c}/admin/import");
    let chrome = Chrome::new(state, session, Some(c), "Import clips", &here).await?;
    // Said without the server's paths: the upload's scratch folder means nothing to the
    // admin, and a folder on the server is theirs to know already (it is in the form).
    let (error, problems) = match &failure {
        Some(Error::Rejected(r)) => (
            Some(format!(
                "The manifest was refused: {} problem{}; nothing was imported.",
                r.problems.len(),
                if r.problems.len() == 1 { "" } else { "s" }
            )),
            r.problems.clone(),
        ),
        Some(Error::Io { source, .. }) => (
            Some(format!(
                "The manifest or a video could not be read ({}); nothing was imported.",
                io_kind(source)
            )),
            vec![],
        ),
        Some(e) => (Some(crate::web::pages::for_people(e)), vec![]),
        None => (None, vec![]),
    };
    let mut resp = render(&ImportPage {
        chrome,
        campaign: c.to_string(),
        folder,
        roots: state
            .config
            .import_roots
            .iter()
            .map(|r| r.display().to_string())
            .collect(),
        error,
        problems,
    });
    if failure.is_some() {
        *resp.status_mut() = StatusCode::UNPROCESSABLE_ENTITY;
    }
    Ok(resp)
}

/// What went wrong with a file, in words, without its path.
fn io_kind(e: &std::io::Error) -> &'static str {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file",
        std::io::ErrorKind::PermissionDenied => "the server may not read it",
        std::io::ErrorKind::IsADirectory => "a folder, not a file",
        _ => "a read error",
    }
}

pub async fn import_page(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
) -> PageResult {
    import_page_with(&state, &session, &c, String::new(), None).await
}

async fn finish_import(
    state: &AppState,
    session: &Session,
    c: &str,
    manifest: &std::path::Path,
    folder: String,
) -> PageResult {
    match crate::app::import_manifest(&state.store, &state.config, c, manifest).await {
        Ok(summary) => {
            crate::app::media::warm_up(&state.store, &state.config);
            Ok(crate::web::flash::redirect(
                &format!("/c/{c}/admin"),
                &format!("Imported: {summary}."),
            ))
        }
        Err(
            e @ (Error::Rejected(_) | Error::Invalid(_) | Error::Io { .. } | Error::Field { .. }),
        ) => import_page_with(state, session, c, folder, Some(e)).await,
        Err(e) => Err(e.into()),
    }
}

/// Imports a manifest that is already on the server.
pub async fn import_folder(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    RawForm(body): RawForm,
) -> PageResult {
    let form = FormFields::parse(&body)?;
    let path = form.get("manifest").trim().to_string();
    if path.is_empty() {
        return import_page_with(
            &state,
            &session,
            &c,
            path,
            Some(Error::Invalid(
                "give the path of a manifest on the server".into(),
            )),
        )
        .await;
    }
    // Only files under the import roots are read, and a refusal says nothing about
    // whether a file elsewhere exists.
    let Some(manifest) = state.config.manifest_under_import_root(&path).await else {
        let message = if state.config.import_roots.is_empty() {
            "importing from a folder on the server is off: start the server with --import-root DIR, or upload a zip".to_string()
        } else {
            format!(
                "give the absolute path of a manifest file under an import root ({}); nothing else on the server is read",
                state
                    .config
                    .import_roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return import_page_with(&state, &session, &c, path, Some(Error::Invalid(message))).await;
    };
    finish_import(&state, &session, &c, &manifest, path.clone()).await
}

/// Imports an uploaded zip holding a manifest and its videos.
pub async fn import_upload(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    multipart: Multipart,
) -> PageResult {
    // Refuse early when the disk cannot hold even a small upload.
    if let Err(e) =
        io::limits::require_space(&state.config.data_dir, 0, &state.config.limits, "an upload")
    {
        return import_page_with(&state, &session, &c, String::new(), Some(e)).await;
    }
    // The upload and what it unpacks to are gone before the answer leaves, removed on
    // the blocking pool (a dropped request removes them in the background).
    let scratch = exports::Scratch::new(&state.config, "upload")?;
    let answer = upload_into(&state, &session, &c, multipart, scratch.path()).await;
    scratch.remove().await;
    answer
}

/// Stores an upload in `dir`, unpacks it there and imports the manifest it holds.
async fn upload_into(
    state: &AppState,
    session: &Session,
    c: &str,
    mut multipart: Multipart,
    dir: &std::path::Path,
) -> PageResult {
    let (state, session, c) = (state.clone(), session.clone(), c.to_string());
    let limits = state.config.limits.clone();
    let data_dir = state.config.data_dir.clone();
    let zip_path = dir.join("upload.zip");
    let mut got = false;
    while let Some(f) = multipart
        .next_field()
        .await
        .map_err(|e| Error::Invalid(format!("the upload broke off: {e}")))?
    {
        if f.name() != Some("archive") {
            continue;
        }
        match exports::save_upload(&state.config, f, &zip_path).await {
            Ok(_) => got = true,
            Err(e @ (Error::TooLarge(_) | Error::Unavailable(_))) => {
                return import_page_with(&state, &session, &c, String::new(), Some(e)).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
    if !got {
        return import_page_with(
            &state,
            &session,
            &c,
            String::new(),
            Some(Error::Invalid("choose a zip file to upload".into())),
        )
        .await;
    }
    let unpacked = dir.join("files");
    let dest = unpacked.clone();
    let found = tokio::task::spawn_blocking(move || {
        std::fs::create_dir_all(&dest).map_err(|e| Error::io("cannot unpack", e))?;
        io::archive::unpack(&zip_path, &dest, &limits, &data_dir)?;
        io::archive::find_manifest(&dest)
    })
    .await
    .map_err(|e| Error::fault("unpacking failed", e))?;
    match found {
        Ok(manifest) => finish_import(&state, &session, &c, &manifest, String::new()).await,
        Err(e) => import_page_with(&state, &session, &c, String::new(), Some(e)).await,
    }
}
