//! Clip files, served under opaque per-person URLs with HTTP byte ranges (so that
//! seeking works), and strips of 8 evenly spaced frames when `ffmpeg` is installed.
//! The file on disk is found from the database (by its SHA-256), never from a path
//! the client sends.

use crate::AppState;
use crate::error::Error;
use crate::io::media::media_path;
use crate::io::video::StripLayout;
use crate::store::sessions::{GrantedMedia, Session};
use axum::Extension;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::path::PathBuf;
use std::sync::OnceLock;
use tokio::io::{AsyncReadExt, AsyncSeekExt};

/// The reviewers' strip: 8 small frames side by side.
pub const REVIEW_STRIP: StripLayout = StripLayout {
    k: 8,
    columns: 8,
    width: 160,
};

/// Whether this server can draw frame strips (ffmpeg and ffprobe are installed).
pub fn strips_possible() -> bool {
    crate::io::video::ffmpeg_available()
}

/// A body that streams `len` bytes of `file` from `start`.
pub fn file_body(file: tokio::fs::File, start: u64, len: u64) -> Body {
    let stream = futures_util::stream::unfold(
        (file, start, len, false),
        |(mut file, pos, left, sought)| async move {
            if left == 0 {
                return None;
            }
            if !sought && let Err(e) = file.seek(std::io::SeekFrom::Start(pos)).await {
                return Some((Err(e), (file, pos, 0, true)));
            }
            let mut buf = vec![0u8; usize::try_from(left.min(64 * 1024)).unwrap_or(64 * 1024)];
            match file.read(&mut buf).await {
                Ok(0) => None,
                Ok(n) => {
                    buf.truncate(n);
                    Some((Ok(buf), (file, pos + n as u64, left - n as u64, true)))
                }
                Err(e) => Some((Err(e), (file, pos, 0, true))),
            }
        },
    );
    Body::from_stream(stream)
}

/// A `Range` header that no byte of the file satisfies (answered with 416).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsatisfiable;

/// A byte range of a file of `size` bytes, from the `Range` header: `Ok(None)` for the
/// whole file, `Err(Unsatisfiable)` when the range cannot be satisfied. One range only.
pub fn parse_range(header: Option<&str>, size: u64) -> Result<Option<(u64, u64)>, Unsatisfiable> {
    let Some(h) = header else { return Ok(None) };
    let Some(spec) = h.trim().strip_prefix("bytes=") else {
        return Ok(None);
    };
    if spec.contains(',') {
        // Several ranges: answer with the whole file, which is allowed.
        return Ok(None);
    }
    let (a, b) = spec.split_once('-').ok_or(Unsatisfiable)?;
    let (a, b) = (a.trim(), b.trim());
    if size == 0 {
        return Err(Unsatisfiable);
    }
    let (start, end) = if a.is_empty() {
        let n: u64 = b.parse().map_err(|_| Unsatisfiable)?;
        if n == 0 {
            return Err(Unsatisfiable);
        }
        (size.saturating_sub(n), size - 1)
    } else {
        let start: u64 = a.parse().map_err(|_| Unsatisfiable)?;
        let end = if b.is_empty() {
            size - 1
        } else {
            b.parse::<u64>().map_err(|_| Unsatisfiable)?.min(size - 1)
        };
        (start, end)
    };
    if start > end || start >= size {
        return Err(Unsatisfiable);
    }
    Ok(Some((start, end)))
}

/// Serves a stored file, honouring a single byte range.
pub async fn serve_file(path: PathBuf, content_type: &str, headers: &HeaderMap) -> Response {
    let file = match tokio::fs::File::open(&path).await {
        Ok(f) => f,
        Err(e) => {
            tracing::error!(error = %e, path = %path.display(), "a stored video is missing");
            return (StatusCode::NOT_FOUND, "the video is missing on the server").into_response();
        }
    };
    let size = match file.metadata().await {
        Ok(m) => m.len(),
        Err(_) => return (StatusCode::INTERNAL_SERVER_ERROR, "unreadable video").into_response(),
    };
    let range = headers.get(header::RANGE).and_then(|v| v.to_str().ok());
    let ct = HeaderValue::from_str(content_type)
        .unwrap_or(HeaderValue::from_static("application/octet-stream"));
    let common = [
        (header::CONTENT_TYPE, ct),
        (header::ACCEPT_RANGES, HeaderValue::from_static("bytes")),
        (
            header::CACHE_CONTROL,
            HeaderValue::from_static("private, max-age=3600"),
        ),
    ];
    match parse_range(range, size) {
        Ok(None) => {
            let mut resp = (common, file_body(file, 0, size)).into_response();
            if let Ok(v) = HeaderValue::from_str(&size.to_string()) {
                resp.headers_mut().insert(header::CONTENT_LENGTH, v);
            }
            resp
        }
        Ok(Some((start, end))) => {
            let len = end - start + 1;
            let mut resp = (
                StatusCode::PARTIAL_CONTENT,
                common,
                file_body(file, start, len),
            )
                .into_response();
            if let (Ok(cr), Ok(cl)) = (
                HeaderValue::from_str(&format!("bytes {start}-{end}/{size}")),
                HeaderValue::from_str(&len.to_string()),
            ) {
                resp.headers_mut().insert(header::CONTENT_RANGE, cr);
                resp.headers_mut().insert(header::CONTENT_LENGTH, cl);
            }
            resp
        }
        Err(Unsatisfiable) => {
            let mut resp = StatusCode::RANGE_NOT_SATISFIABLE.into_response();
            if let Ok(v) = HeaderValue::from_str(&format!("bytes */{size}")) {
                resp.headers_mut().insert(header::CONTENT_RANGE, v);
            }
            resp
        }
    }
}

/// The clip behind a token, if it is this person's and they may still see it.
async fn granted(
    state: &AppState,
    session: &Session,
    token: &str,
) -> Result<GrantedMedia, Response> {
    let not_found = || (StatusCode::NOT_FOUND, "no such clip").into_response();
    if token.len() > 100 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(not_found());
    }
    let grant = match state.store.granted_media(token).await {
        Ok(Some(g)) => g,
        Ok(None) => return Err(not_found()),
        Err(e) => return Err(crate::web::pages::PageError(e).into_response()),
    };
    if grant.user_id != session.user.id {
        return Err(not_found());
    }
    match state
        .store
        .may_see_clip(&session.user, grant.clip_version_id)
        .await
    {
        Ok(true) => Ok(grant),
        Ok(false) => Err((StatusCode::FORBIDDEN, "this clip is not in your work").into_response()),
        Err(e) => Err(crate::web::pages::PageError(e).into_response()),
    }
}

pub async fn clip(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Response {
    match granted(&state, &session, &token).await {
        Ok(g) => serve_stored(&state, &g.sha256, &g.media_type, &headers).await,
        Err(resp) => resp,
    }
}

/// Serves a stored video by its SHA-256.
async fn serve_stored(
    state: &AppState,
    sha256: &str,
    media_type: &str,
    headers: &HeaderMap,
) -> Response {
    serve_file(
        media_path(&state.config.media_dir, sha256),
        media_type,
        headers,
    )
    .await
}

/// At most this many ffmpeg runs at once, whoever asks (two cores).
fn strip_permits() -> &'static tokio::sync::Semaphore {
    static S: OnceLock<tokio::sync::Semaphore> = OnceLock::new();
    S.get_or_init(|| tokio::sync::Semaphore::new(2))
}

/// Makes the strip of `video` at `out` unless it is there, within the ffmpeg limit.
async fn ensure_strip(video: PathBuf, out: PathBuf) -> Result<(), Error> {
    let _permit = strip_permits()
        .acquire()
        .await
        .map_err(|e| Error::Internal(format!("strip limit closed: {e}")))?;
    if out.exists() {
        return Ok(());
    }
    tokio::task::spawn_blocking(move || crate::io::video::make_strip(&video, &out, REVIEW_STRIP))
        .await
        .map_err(|e| Error::Internal(format!("frame strip task failed: {e}")))?
}

/// Draws, one after another in the background, the strips that are missing, so that
/// reviewers do not wait for them. Does nothing without ffmpeg.
pub fn warm_strips(state: &AppState) {
    if !strips_possible() {
        return;
    }
    let store = state.store.clone();
    let media_dir = state.config.media_dir.clone();
    tokio::spawn(async move {
        let hashes = match store.media_hashes().await {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!(error = %e, "cannot list the clips for frame strips");
                return;
            }
        };
        let mut made = 0usize;
        for sha in hashes {
            let out = media_dir.join(format!("{sha}.strip.jpg"));
            let video = media_path(&media_dir, &sha);
            if out.exists() || !video.exists() {
                continue;
            }
            match ensure_strip(video, out).await {
                Ok(()) => made += 1,
                Err(e) => tracing::debug!(error = %e, %sha, "no frame strip"),
            }
        }
        if made > 0 {
            tracing::info!(made, "frame strips drawn");
        }
    });
}

pub async fn strip(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Response {
    let g = match granted(&state, &session, &token).await {
        Ok(g) => g,
        Err(resp) => return resp,
    };
    if !strips_possible() {
        return (
            StatusCode::NOT_FOUND,
            "this server cannot draw frame strips (no ffmpeg)",
        )
            .into_response();
    }
    let video = media_path(&state.config.media_dir, &g.sha256);
    let out = state
        .config
        .media_dir
        .join(format!("{}.strip.jpg", g.sha256));
    if !out.exists()
        && let Err(e) = ensure_strip(video, out.clone()).await
    {
        tracing::warn!(error = %e, "no frame strip");
        return (StatusCode::NOT_FOUND, "no frame strip for this clip").into_response();
    }
    serve_file(out, "image/jpeg", &headers).await
}

/// A study clip behind a participant's token: only its participant may fetch it, and
/// nothing of the answer (no file name, date or hash) names where it came from.
async fn study_grant(
    state: &AppState,
    session: &Session,
    token: &str,
) -> Result<crate::store::study::StudyMedia, Response> {
    let not_found = || (StatusCode::NOT_FOUND, "no such clip").into_response();
    if token.len() > 100 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(not_found());
    }
    match state.store.study_media(token).await {
        Ok(Some(m)) if m.participant_id == session.user.id => Ok(m),
        Ok(_) => Err(not_found()),
        Err(e) => Err(crate::web::pages::PageError(e).into_response()),
    }
}

pub async fn study_clip(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Response {
    match study_grant(&state, &session, &token).await {
        Ok(m) => serve_stored(&state, &m.sha256, &m.media_type, &headers).await,
        Err(resp) => resp,
    }
}

pub async fn study_frames(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Response {
    match study_grant(&state, &session, &token).await {
        Ok(m) => {
            let path = crate::io::media::strip_path(&state.config.media_dir, &m.sha256, m.frames);
            if !path.exists() {
                return (StatusCode::NOT_FOUND, "no frames for this clip").into_response();
            }
            serve_file(path, "image/jpeg", &headers).await
        }
        Err(resp) => resp,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_range(None, 100), Ok(None));
        assert_eq!(parse_range(Some("bytes=0-9"), 100), Ok(Some((0, 9))));
        assert_eq!(parse_range(Some("bytes=90-"), 100), Ok(Some((90, 99))));
        assert_eq!(parse_range(Some("bytes=-10"), 100), Ok(Some((90, 99))));
        assert_eq!(parse_range(Some("bytes=50-500"), 100), Ok(Some((50, 99))));
        assert_eq!(parse_range(Some("bytes=100-"), 100), Err(Unsatisfiable));
        assert_eq!(parse_range(Some("bytes=9-3"), 100), Err(Unsatisfiable));
        assert_eq!(parse_range(Some("bytes=x-3"), 100), Err(Unsatisfiable));
        assert_eq!(parse_range(Some("bytes=0-1,4-5"), 100), Ok(None));
        assert_eq!(parse_range(Some("items=0-1"), 100), Ok(None));
    }
}
