//! Clip files, served under opaque per-person URLs with HTTP byte ranges (so that
//! seeking works), and strips of 8 evenly spaced frames when `ffmpeg` is installed.
//! The file on disk is found from the store (by its SHA-256), never from a path the
//! client sends.
//!
//! A range costs one blocking task: it opens the file, reads its size and date,
//! decides the answer ([`plan`], a pure function) and, for a reply of up to
//! [`INLINE_BYTES`], reads the bytes with one positioned read straight into the
//! buffer that becomes the body. Larger replies stream in [`CHUNK_BYTES`] positioned
//! reads. Review clips carry their SHA-256 as a strong `ETag` and the file's date as
//! `Last-Modified`, so a browser revalidates with a 304; study clips carry neither
//! (a hash could name a public real clip).

use super::routes::{Access, Kind, Route};
use crate::app::exports::{Download, DownloadBody};
use crate::io::objects::MediaStore;
use crate::store::accounts::User;
use crate::store::sessions::GrantedMedia;
use crate::web::state::AppState;
use axum::Extension;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::collections::VecDeque;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Replies up to this size are read whole in the task that opens the file.
pub const INLINE_BYTES: u64 = 256 * 1024;
/// Larger replies are read in positioned reads of this size.
pub const CHUNK_BYTES: u64 = 256 * 1024;
pub use crate::app::media::{REVIEW_STRIP, strips_possible};

mod decide;
use decide::seconds;
pub use decide::{
    Conditions, Identity, MAX_NAMED_RANGES, MAX_RANGES, Plan, Unsatisfiable, Validators,
    parse_ranges, plan,
};

/// The URLs of a participant's clip: the video, or the frame strip, as the study shows
/// it (random per-participant tokens, nothing else).
pub fn study_clip_urls(
    display: crate::domain::study::Display,
    token: &str,
) -> (Option<String>, Option<String>) {
    use crate::domain::study::Display;
    (
        (display == Display::Video).then(|| format!("/study/m/{token}")),
        (display == Display::Strip).then(|| format!("/study/m/{token}/frames")),
    )
}

/// One piece of a body: text made here, or bytes of the file.
#[derive(Debug, Clone)]
enum Piece {
    Text(Bytes),
    File { at: u64, len: u64 },
}

fn pieces_len(pieces: &[Piece]) -> u64 {
    pieces
        .iter()
        .map(|p| match p {
            Piece::Text(t) => t.len() as u64,
            Piece::File { len, .. } => *len,
        })
        .sum()
}

/// Reads `buf.len()` bytes at `at` from the page cache only: `Ok(false)` when some of
/// them would have to come from the disk (or the file system cannot tell), so that the
/// caller reads them on the blocking pool instead of stalling the async thread.
fn read_cached(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<bool> {
    let mut done = 0usize;
    while done < buf.len() {
        let mut slices = [std::io::IoSliceMut::new(&mut buf[done..])];
        match rustix::io::preadv2(
            file,
            &mut slices,
            at + done as u64,
            rustix::io::ReadWriteFlags::NOWAIT,
        ) {
            Ok(0) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the file is shorter than it was",
                ));
            }
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return Ok(false),
        }
    }
    Ok(true)
}

/// Reads `buf.len()` bytes at `at`: from the page cache on this thread when they are
/// all there (no thread switch), else on the blocking pool.
async fn read_at(file: &Arc<std::fs::File>, mut buf: Vec<u8>, at: u64) -> std::io::Result<Vec<u8>> {
    if read_cached(file, &mut buf, at)? {
        return Ok(buf);
    }
    let f = file.clone();
    tokio::task::spawn_blocking(move || {
        f.read_exact_at(&mut buf, at)?;
        Ok(buf)
    })
    .await
    .map_err(|e| std::io::Error::other(e.to_string()))?
}

/// A media store's failure as an I/O error: `NetworkUnreachable` when the store cannot
/// answer now (the reply is a 503), else what it was.
fn store_io(e: crate::error::Error) -> std::io::Error {
    match e {
        crate::error::Error::Unavailable(m) => {
            std::io::Error::new(std::io::ErrorKind::NetworkUnreachable, m)
        }
        crate::error::Error::NotFound(m) => std::io::Error::new(std::io::ErrorKind::NotFound, m),
        e => std::io::Error::other(e.to_string()),
    }
}

/// All the pieces in one buffer (a small reply: one allocation, the file's bytes read
/// in place, one positioned read per range; from a bucket, one ranged GET per range).
async fn read_inline(reader: &Reader, size: u64, pieces: &[Piece]) -> std::io::Result<Bytes> {
    let file = match reader {
        Reader::File(f) => f,
        Reader::Object(media, name) => {
            let mut buf = Vec::with_capacity(usize::try_from(pieces_len(pieces)).unwrap_or(0));
            for p in pieces {
                match p {
                    Piece::Text(t) => buf.extend_from_slice(t),
                    Piece::File { at, len } => buf.extend_from_slice(
                        &media
                            .read_range(name, *at..at + len, size)
                            .await
                            .map_err(store_io)?,
                    ),
                }
            }
            return Ok(Bytes::from(buf));
        }
    };
    let total = usize::try_from(pieces_len(pieces))
        .map_err(|_| std::io::Error::other("reply too large"))?;
    let mut buf = vec![0u8; total];
    let mut pos = 0usize;
    let mut cached = true;
    for p in pieces {
        match p {
            Piece::Text(t) => {
                buf[pos..pos + t.len()].copy_from_slice(t);
                pos += t.len();
            }
            Piece::File { at, len } => {
                let n = usize::try_from(*len).map_err(|_| std::io::Error::other("range"))?;
                cached = cached && read_cached(file, &mut buf[pos..pos + n], *at)?;
                pos += n;
            }
        }
    }
    if !cached {
        let (f, pieces) = (file.clone(), pieces.to_vec());
        buf = tokio::task::spawn_blocking(move || {
            let mut pos = 0usize;
            for p in &pieces {
                match p {
                    Piece::Text(t) => pos += t.len(),
                    Piece::File { at, len } => {
                        let n =
                            usize::try_from(*len).map_err(|_| std::io::Error::other("range"))?;
                        f.read_exact_at(&mut buf[pos..pos + n], *at)?;
                        pos += n;
                    }
                }
            }
            Ok::<_, std::io::Error>(buf)
        })
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))??;
    }
    Ok(Bytes::from(buf))
}

/// A body that streams `pieces`: a file's in positioned reads of at most
/// [`CHUNK_BYTES`] (from the page cache when there, else on the blocking pool); an
/// object's each by one ranged GET whose bytes pass through as they arrive.
fn stream_pieces(reader: Reader, pieces: Vec<Piece>) -> Body {
    match reader {
        Reader::File(file) => stream_file(file, pieces),
        Reader::Object(media, name) => {
            use futures_util::stream::StreamExt;
            let stream = futures_util::stream::iter(pieces)
                .then(move |p| {
                    let (media, name) = (media.clone(), name.clone());
                    async move {
                        match p {
                            Piece::Text(t) => {
                                futures_util::stream::once(async move { Ok(t) }).boxed()
                            }
                            Piece::File { at, len } => {
                                match media.stream_range(&name, at..at + len).await {
                                    Ok(s) => s,
                                    Err(e) => {
                                        let e = store_io(e);
                                        futures_util::stream::once(async move { Err(e) }).boxed()
                                    }
                                }
                            }
                        }
                    }
                })
                .flatten();
            Body::from_stream(stream)
        }
    }
}

fn stream_file(file: Arc<std::fs::File>, pieces: Vec<Piece>) -> Body {
    let queue: VecDeque<Piece> = pieces.into();
    let stream = futures_util::stream::unfold((file, queue), |(file, mut queue)| async move {
        let piece = queue.pop_front()?;
        match piece {
            Piece::Text(t) => Some((Ok(t), (file, queue))),
            Piece::File { at, len } => {
                let n = len.min(CHUNK_BYTES);
                if len > n {
                    queue.push_front(Piece::File {
                        at: at + n,
                        len: len - n,
                    });
                }
                let buf = vec![0u8; usize::try_from(n).unwrap_or(0)];
                match read_at(&file, buf, at).await {
                    Ok(bytes) => Some((Ok(Bytes::from(bytes)), (file, queue))),
                    Err(e) => {
                        queue.clear();
                        Some((Err(e), (file, queue)))
                    }
                }
            }
        }
    });
    Body::from_stream(stream)
}

/// A body of `len` bytes of `file` from `start` (exports use it for their archives).
pub fn file_body(file: std::fs::File, start: u64, len: u64) -> Body {
    stream_file(Arc::new(file), vec![Piece::File { at: start, len }])
}

/// A download as an attachment, never cached (exports hold the campaign's records): every
/// export, from the pages and the API alike, answers with this.
pub fn download(d: Download) -> Response {
    let body = match d.body {
        DownloadBody::Bytes(b) => Body::from(b),
        DownloadBody::File { file, len } => file_body(file, 0, len),
        DownloadBody::Stored { media, name, len } => stream_pieces(
            Reader::Object(media, name),
            vec![Piece::File { at: 0, len }],
        ),
    };
    (
        [
            (header::CONTENT_TYPE, d.content_type.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}\"", d.file_name),
            ),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
        body,
    )
        .into_response()
}

/// The multipart/byteranges body of `ranges` and its boundary.
fn multipart(ranges: &[(u64, u64)], size: u64, content_type: &str) -> (Vec<Piece>, String) {
    // Random, so that no file's bytes can be crafted to contain it.
    let boundary = format!(
        "tandem-{}",
        crate::auth::random_id(12).unwrap_or_else(|_| "3d6b6a416f9b2e5c".into())
    );
    let mut pieces = Vec::with_capacity(ranges.len() * 2 + 1);
    for (i, (s, e)) in ranges.iter().enumerate() {
        let lead = if i == 0 { "" } else { "\r\n" };
        pieces.push(Piece::Text(Bytes::from(format!(
            "{lead}--{boundary}\r\nContent-Type: {content_type}\r\nContent-Range: bytes {s}-{e}/{size}\r\n\r\n"
        ))));
        pieces.push(Piece::File {
            at: *s,
            len: e - s + 1,
        });
    }
    pieces.push(Piece::Text(Bytes::from(format!("\r\n--{boundary}--\r\n"))));
    (pieces, boundary)
}

/// Where a stored file's bytes are read from: an open file, or an object in the
/// installation's bucket (each range one ranged GET, streamed).
#[derive(Clone)]
enum Reader {
    File(Arc<std::fs::File>),
    Object(MediaStore, String),
}

/// An open stored file with its size and date.
#[derive(Clone)]
struct OpenFile {
    reader: Reader,
    size: u64,
    modified: SystemTime,
}

/// Open files kept at most (then all are closed and the cache starts again).
const OPEN_FILES_MAX: usize = 256;

type OpenFiles =
    std::sync::Mutex<std::collections::HashMap<PathBuf, (std::time::Instant, OpenFile)>>;

fn open_files() -> &'static OpenFiles {
    static FILES: OnceLock<OpenFiles> = OnceLock::new();
    FILES.get_or_init(Default::default)
}

/// The file at `path`, open: reused for `reuse` (stored clips never change, they are
/// named by their hash; a strip drawn again is seen within that time), so that a range
/// costs no open and no stat; opened on the blocking pool otherwise.
async fn open_file(path: &std::path::Path, reuse: Duration) -> std::io::Result<OpenFile> {
    if let Ok(map) = open_files().lock()
        && let Some((at, f)) = map.get(path)
        && at.elapsed() < reuse
    {
        return Ok(f.clone());
    }
    let p = path.to_path_buf();
    let opened = tokio::task::spawn_blocking(move || -> std::io::Result<OpenFile> {
        let file = std::fs::File::open(&p)?;
        let meta = file.metadata()?;
        Ok(OpenFile {
            reader: Reader::File(Arc::new(file)),
            size: meta.len(),
            // HTTP dates are whole seconds: what is sent is what is compared.
            modified: UNIX_EPOCH
                + Duration::from_secs(seconds(meta.modified().unwrap_or(UNIX_EPOCH))),
        })
    })
    .await
    .map_err(|e| std::io::Error::other(e.to_string()))??;
    if let Ok(mut map) = open_files().lock() {
        if map.len() >= OPEN_FILES_MAX {
            map.clear();
        }
        map.insert(
            path.to_path_buf(),
            (std::time::Instant::now(), opened.clone()),
        );
    }
    Ok(opened)
}

/// A stored object's size and date, asked of the bucket (one HEAD) and reused as an
/// open file is: objects are named by what they hold and never change.
async fn open_object(
    media: &MediaStore,
    name: &str,
    reuse: Duration,
) -> crate::error::Result<OpenFile> {
    let key = object_key(media, name);
    if let Ok(map) = open_files().lock()
        && let Some((at, f)) = map.get(&key)
        && at.elapsed() < reuse
    {
        return Ok(f.clone());
    }
    let meta = media.meta(name).await?;
    let opened = OpenFile {
        reader: Reader::Object(media.clone(), name.to_string()),
        size: meta.size,
        modified: UNIX_EPOCH + Duration::from_secs(seconds(meta.modified)),
    };
    if let Ok(mut map) = open_files().lock() {
        if map.len() >= OPEN_FILES_MAX {
            map.clear();
        }
        map.insert(key, (std::time::Instant::now(), opened.clone()));
    }
    Ok(opened)
}

/// The open files' key of the object `name` in the bucket of `media`.
fn object_key(media: &MediaStore, name: &str) -> PathBuf {
    PathBuf::from(format!("{}/{name}", media.location().as_text()))
}

/// Serves the stored file `name` from the installation's media store: from the media
/// folder as [`serve_file`] does, or from the bucket (a missing object is a 404; a
/// bucket that cannot be reached a 503 with `Retry-After`, and the rest of the service
/// answers as before).
pub async fn serve_stored(
    state: &AppState,
    name: &str,
    content_type: &str,
    method: &Method,
    headers: &HeaderMap,
    identity: Identity,
) -> Response {
    let media = match crate::app::media::media_store(&state.store, &state.config).await {
        Ok(m) => m,
        Err(e) => return super::reply::PageError(e).into_response(),
    };
    match &media {
        MediaStore::Local(dir) => {
            let (path, reuse) = (dir.join(name), state.config.open_file_reuse);
            serve_file(path, reuse, content_type, method, headers, identity).await
        }
        MediaStore::Bucket(_) => {
            match open_object(&media, name, state.config.open_file_reuse).await {
                Ok(f) => {
                    let resp = answer(f, content_type, method, headers, identity).await;
                    if resp.status() == StatusCode::NOT_FOUND {
                        // Gone from the bucket since it was opened: asked again next time.
                        if let Ok(mut map) = open_files().lock() {
                            map.remove(&object_key(&media, name));
                        }
                    }
                    resp
                }
                Err(crate::error::Error::NotFound(_)) => {
                    tracing::error!(file = name, "a stored file is missing from the bucket");
                    (StatusCode::NOT_FOUND, "the video is missing on the server").into_response()
                }
                Err(e) => unavailable(e),
            }
        }
    }
}

/// A 503 with `Retry-After` for a media store that cannot answer now.
fn unavailable(e: crate::error::Error) -> Response {
    let mut resp = (StatusCode::SERVICE_UNAVAILABLE, e.to_string()).into_response();
    set(&mut resp, header::RETRY_AFTER, "5");
    resp
}

fn set(resp: &mut Response, name: header::HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        resp.headers_mut().insert(name, v);
    }
}

/// Serves a stored file: whole, by one or several byte ranges, or 304 when the
/// client's copy is current.
pub async fn serve_file(
    path: PathBuf,
    reuse: Duration,
    content_type: &str,
    method: &Method,
    headers: &HeaderMap,
    identity: Identity,
) -> Response {
    let unreadable = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::NotFound {
            tracing::error!(path = %path.display(), "a stored file is missing");
            (StatusCode::NOT_FOUND, "the video is missing on the server").into_response()
        } else {
            tracing::error!(error = %e, path = %path.display(), "a stored file cannot be read");
            (StatusCode::INTERNAL_SERVER_ERROR, "unreadable video").into_response()
        }
    };
    let f = match open_file(&path, reuse).await {
        Ok(f) => f,
        Err(e) => return unreadable(e),
    };
    answer(f, content_type, method, headers, identity).await
}

/// The answer for an open stored file: whole, by ranges, or 304.
async fn answer(
    f: OpenFile,
    content_type: &str,
    method: &Method,
    headers: &HeaderMap,
    identity: Identity,
) -> Response {
    let unreadable = |e: std::io::Error| {
        tracing::error!(error = %e, "a stored file cannot be read");
        if e.kind() == std::io::ErrorKind::NetworkUnreachable {
            let mut resp = (
                StatusCode::SERVICE_UNAVAILABLE,
                "the media store cannot be reached; try again later",
            )
                .into_response();
            set(&mut resp, header::RETRY_AFTER, "5");
            resp
        } else if e.kind() == std::io::ErrorKind::NotFound {
            // An object removed from the bucket after it was opened.
            (StatusCode::NOT_FOUND, "the video is missing on the server").into_response()
        } else {
            (StatusCode::INTERNAL_SERVER_ERROR, "unreadable video").into_response()
        }
    };
    let head = *method == Method::HEAD;
    let validators = match identity {
        Identity::Tagged(tag) => Some(Validators {
            etag: format!("\"{tag}\""),
            modified: f.modified,
        }),
        Identity::Stamped(prefix) => Some(Validators {
            etag: format!("\"{prefix}-{:x}-{:x}\"", f.size, seconds(f.modified)),
            modified: f.modified,
        }),
        Identity::Blind => None,
    };
    let plan = plan(
        &Conditions::from_headers(headers),
        f.size,
        validators.as_ref(),
    );
    let (pieces, boundary) = match &plan {
        Plan::Whole => (vec![Piece::File { at: 0, len: f.size }], None),
        Plan::Ranges(r) if r.len() == 1 => (
            vec![Piece::File {
                at: r[0].0,
                len: r[0].1 - r[0].0 + 1,
            }],
            None,
        ),
        Plan::Ranges(r) => {
            let (p, b) = multipart(r, f.size, content_type);
            (p, Some(b))
        }
        _ => (Vec::new(), None),
    };
    let inline = if !head && !pieces.is_empty() && pieces_len(&pieces) <= INLINE_BYTES {
        match read_inline(&f.reader, f.size, &pieces).await {
            Ok(b) => Some(b),
            Err(e) => return unreadable(e),
        }
    } else {
        None
    };
    let length = pieces_len(&pieces);
    let body = match (inline, head) {
        (_, true) => Body::empty(),
        (Some(bytes), false) => Body::from(bytes),
        (None, false) => stream_pieces(f.reader, pieces),
    };
    let mut resp = match &plan {
        Plan::NotModified => StatusCode::NOT_MODIFIED.into_response(),
        Plan::Whole => (StatusCode::OK, body).into_response(),
        Plan::Ranges(_) => (StatusCode::PARTIAL_CONTENT, body).into_response(),
        Plan::Unsatisfiable => StatusCode::RANGE_NOT_SATISFIABLE.into_response(),
        Plan::TooManyRanges => (
            StatusCode::RANGE_NOT_SATISFIABLE,
            format!("at most {MAX_RANGES} ranges in one request (after merging those that overlap or touch)"),
        )
            .into_response(),
    };
    set(&mut resp, header::ACCEPT_RANGES, "bytes");
    set(&mut resp, header::CACHE_CONTROL, "private, max-age=3600");
    if let Some(v) = &validators {
        set(&mut resp, header::ETAG, &v.etag);
        set(
            &mut resp,
            header::LAST_MODIFIED,
            &httpdate::fmt_http_date(v.modified),
        );
    }
    match &plan {
        Plan::Whole => {
            set(&mut resp, header::CONTENT_TYPE, content_type);
            set(&mut resp, header::CONTENT_LENGTH, &length.to_string());
        }
        Plan::Ranges(r) => {
            match &boundary {
                None => {
                    set(&mut resp, header::CONTENT_TYPE, content_type);
                    set(
                        &mut resp,
                        header::CONTENT_RANGE,
                        &format!("bytes {}-{}/{}", r[0].0, r[0].1, f.size),
                    );
                }
                Some(b) => set(
                    &mut resp,
                    header::CONTENT_TYPE,
                    &format!("multipart/byteranges; boundary={b}"),
                ),
            }
            set(&mut resp, header::CONTENT_LENGTH, &length.to_string());
        }
        Plan::Unsatisfiable | Plan::TooManyRanges => {
            set(
                &mut resp,
                header::CONTENT_RANGE,
                &format!("bytes */{}", f.size),
            );
        }
        Plan::NotModified => {}
    }
    resp
}

/// The clip behind a token, if it is this person's and they may still see it.
async fn granted(state: &AppState, user: &User, token: &str) -> Result<GrantedMedia, Response> {
    let not_found = || (StatusCode::NOT_FOUND, "no such clip").into_response();
    if token.len() > 100 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(not_found());
    }
    let grant = match state.store.granted_media(token).await {
        Ok(Some(g)) => g,
        Ok(None) => return Err(not_found()),
        Err(e) => return Err(super::reply::PageError(e).into_response()),
    };
    if grant.user_id != user.id {
        return Err(not_found());
    }
    match state.store.may_see_clip(user, grant.clip_version_id).await {
        Ok(true) => Ok(grant),
        Ok(false) => Err((StatusCode::FORBIDDEN, "this clip is not in your work").into_response()),
        Err(e) => Err(super::reply::PageError(e).into_response()),
    }
}

pub async fn clip(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(token): Path<String>,
    method: Method,
    headers: HeaderMap,
) -> Response {
    match granted(&state, &user, &token).await {
        Ok(g) => {
            serve_stored(
                &state,
                &g.sha256,
                &g.media_type,
                &method,
                &headers,
                Identity::Tagged(g.sha256.clone()),
            )
            .await
        }
        Err(resp) => resp,
    }
}

pub async fn strip(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(token): Path<String>,
    method: Method,
    headers: HeaderMap,
) -> Response {
    let g = match granted(&state, &user, &token).await {
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
    let name = crate::io::media::review_strip_name(&g.sha256);
    let drawn = match crate::app::media::media_store(&state.store, &state.config).await {
        Ok(media) => {
            crate::app::media::ensure_stored_strip(&media, &g.sha256, &name, REVIEW_STRIP).await
        }
        Err(e) => Err(e),
    };
    match drawn {
        Ok(_) => {}
        Err(e @ crate::error::Error::Unavailable(_)) => return unavailable(e),
        Err(e) => {
            tracing::warn!(error = %e, "no frame strip");
            return (StatusCode::NOT_FOUND, "no frame strip for this clip").into_response();
        }
    }
    serve_stored(
        &state,
        &name,
        "image/jpeg",
        &method,
        &headers,
        Identity::Stamped(format!("{}-strip", g.sha256)),
    )
    .await
}

/// A clip behind a participant's token (the study's or the baseline's): a token of the
/// right form whose clip the store finds and that belongs to this participant, else the
/// same 404 as for no clip at all.
async fn participant_grant<M>(
    user: &User,
    token: &str,
    owner: impl Fn(&M) -> i64,
    find: impl std::future::Future<Output = crate::error::Result<Option<M>>>,
) -> Result<M, Response> {
    let not_found = || (StatusCode::NOT_FOUND, "no such clip").into_response();
    if token.len() > 100 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(not_found());
    }
    match find.await {
        Ok(Some(m)) if owner(&m) == user.id => Ok(m),
        Ok(_) => Err(not_found()),
        Err(e) => Err(super::reply::PageError(e).into_response()),
    }
}

/// A participant's video: nothing of the answer (no file name, date or hash) names
/// where it came from.
async fn serve_blind(
    state: &AppState,
    sha256: &str,
    media_type: &str,
    method: &Method,
    headers: &HeaderMap,
) -> Response {
    serve_stored(state, sha256, media_type, method, headers, Identity::Blind).await
}

async fn study_grant(
    state: &AppState,
    user: &User,
    token: &str,
) -> Result<crate::store::study::StudyMedia, Response> {
    participant_grant(
        user,
        token,
        |m: &crate::store::study::StudyMedia| m.participant_id,
        state.store.study_media(token),
    )
    .await
}

pub async fn study_clip(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(token): Path<String>,
    method: Method,
    headers: HeaderMap,
) -> Response {
    match study_grant(&state, &user, &token).await {
        Ok(m) => serve_blind(&state, &m.sha256, &m.media_type, &method, &headers).await,
        Err(resp) => resp,
    }
}

pub async fn study_frames(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(token): Path<String>,
    method: Method,
    headers: HeaderMap,
) -> Response {
    match study_grant(&state, &user, &token).await {
        Ok(m) => {
            let name = crate::io::media::strip_name(&m.sha256, m.frames);
            serve_stored(
                &state,
                &name,
                "image/jpeg",
                &method,
                &headers,
                Identity::Blind,
            )
            .await
        }
        Err(resp) => resp,
    }
}

/// A baseline clip behind a participant's token.
pub async fn baseline_clip(
    State(state): State<AppState>,
    Extension(user): Extension<User>,
    Path(token): Path<String>,
    method: Method,
    headers: HeaderMap,
) -> Response {
    let found = participant_grant(
        &user,
        &token,
        |m: &crate::store::baseline::BaselineMedia| m.participant_id,
        state.store.baseline_media(&token),
    )
    .await;
    match found {
        Ok(m) => serve_blind(&state, &m.sha256, &m.media_type, &method, &headers).await,
        Err(resp) => resp,
    }
}

/// Clip files, under opaque per-person URLs.
pub fn routes() -> Vec<Route> {
    use super::routes::{BASELINE, PARTICIPANT};
    use Access::SignedIn;
    use Kind::Media;
    use axum::routing::get;
    vec![
        Route::new("GET", "/media/{token}", SignedIn, Media, get(clip)),
        Route::new("GET", "/media/{token}/strip", SignedIn, Media, get(strip)),
        Route::new(
            "GET",
            "/study/m/{token}",
            PARTICIPANT,
            Media,
            get(study_clip),
        ),
        Route::new(
            "GET",
            "/study/m/{token}/frames",
            PARTICIPANT,
            Media,
            get(study_frames),
        ),
        Route::new(
            "GET",
            "/baseline/m/{token}",
            BASELINE,
            Media,
            get(baseline_clip),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(h: &str, size: u64) -> Result<Option<Vec<(u64, u64)>>, Unsatisfiable> {
        parse_ranges(h, size)
    }

    #[test]
    fn single_ranges() {
        assert_eq!(ranges("bytes=0-9", 100), Ok(Some(vec![(0, 9)])));
        assert_eq!(ranges("bytes=90-", 100), Ok(Some(vec![(90, 99)])));
        assert_eq!(ranges("bytes=-10", 100), Ok(Some(vec![(90, 99)])));
        assert_eq!(ranges("bytes=-500", 100), Ok(Some(vec![(0, 99)])));
        assert_eq!(ranges("bytes=50-500", 100), Ok(Some(vec![(50, 99)])));
        assert_eq!(ranges("bytes=100-", 100), Err(Unsatisfiable));
        assert_eq!(ranges("bytes=9-3", 100), Err(Unsatisfiable));
        assert_eq!(ranges("bytes=x-3", 100), Err(Unsatisfiable));
        assert_eq!(ranges("bytes=+1-3", 100), Err(Unsatisfiable));
        assert_eq!(ranges("bytes=-0", 100), Err(Unsatisfiable));
        assert_eq!(ranges("bytes=0-0", 0), Err(Unsatisfiable));
        assert_eq!(ranges("items=0-1", 100), Ok(None));
    }

    #[test]
    fn several_ranges_are_sorted_and_merged_and_past_the_end_dropped() {
        assert_eq!(
            ranges("bytes=50-59, 0-9,200-300", 100),
            Ok(Some(vec![(0, 9), (50, 59)]))
        );
        assert_eq!(ranges("bytes=0-9,10-19,5-12", 100), Ok(Some(vec![(0, 19)])));
        assert_eq!(ranges("bytes=0-1,-2", 4), Ok(Some(vec![(0, 3)])));
        assert_eq!(ranges("bytes=200-,300-", 100), Err(Unsatisfiable));
    }

    fn v() -> Validators {
        Validators {
            etag: "\"abc\"".into(),
            modified: UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        }
    }

    fn c(range: Option<&str>) -> Conditions {
        Conditions {
            range: range.map(str::to_string),
            ..Conditions::default()
        }
    }

    #[test]
    fn conditional_requests() {
        let date = httpdate::fmt_http_date(v().modified);
        let later = httpdate::fmt_http_date(v().modified + Duration::from_secs(5));
        let earlier = httpdate::fmt_http_date(v().modified - Duration::from_secs(1));
        let with = |f: fn(&mut Conditions, String), s: &str| {
            let mut x = c(None);
            f(&mut x, s.to_string());
            x
        };
        let inm = |x: &mut Conditions, s: String| x.if_none_match = Some(s);
        let ims = |x: &mut Conditions, s: String| x.if_modified_since = Some(s);
        assert_eq!(
            plan(&with(inm, "\"abc\""), 10, Some(&v())),
            Plan::NotModified
        );
        assert_eq!(
            plan(&with(inm, "W/\"abc\""), 10, Some(&v())),
            Plan::NotModified
        );
        assert_eq!(
            plan(&with(inm, "\"x\", \"abc\""), 10, Some(&v())),
            Plan::NotModified
        );
        assert_eq!(plan(&with(inm, "*"), 10, Some(&v())), Plan::NotModified);
        assert_eq!(plan(&with(inm, "\"abd\""), 10, Some(&v())), Plan::Whole);
        assert_eq!(plan(&with(ims, &date), 10, Some(&v())), Plan::NotModified);
        assert_eq!(plan(&with(ims, &later), 10, Some(&v())), Plan::NotModified);
        assert_eq!(plan(&with(ims, &earlier), 10, Some(&v())), Plan::Whole);
        assert_eq!(plan(&with(ims, "not a date"), 10, Some(&v())), Plan::Whole);
        // If-None-Match decides alone when both are sent.
        let mut both = with(inm, "\"old\"");
        both.if_modified_since = Some(later.clone());
        assert_eq!(plan(&both, 10, Some(&v())), Plan::Whole);
        // Without validators (study clips) nothing is ever "not modified".
        assert_eq!(plan(&with(inm, "*"), 10, None), Plan::Whole);
        assert_eq!(plan(&with(ims, &later), 10, None), Plan::Whole);
    }

    #[test]
    fn if_range_applies_the_range_only_to_the_same_file() {
        let date = httpdate::fmt_http_date(v().modified);
        let mut x = c(Some("bytes=0-3"));
        x.if_range = Some("\"abc\"".into());
        assert_eq!(plan(&x, 10, Some(&v())), Plan::Ranges(vec![(0, 3)]));
        x.if_range = Some("\"stale\"".into());
        assert_eq!(plan(&x, 10, Some(&v())), Plan::Whole);
        x.if_range = Some("W/\"abc\"".into());
        assert_eq!(plan(&x, 10, Some(&v())), Plan::Whole, "weak never matches");
        x.if_range = Some(date);
        assert_eq!(plan(&x, 10, Some(&v())), Plan::Ranges(vec![(0, 3)]));
        x.if_range = Some(httpdate::fmt_http_date(
            v().modified + Duration::from_secs(1),
        ));
        assert_eq!(plan(&x, 10, Some(&v())), Plan::Whole);
        x.if_range = Some("\"abc\"".into());
        assert_eq!(plan(&x, 10, None), Plan::Whole);
    }

    #[test]
    fn too_many_ranges_are_refused() {
        let many: Vec<String> = (0..=MAX_RANGES as u64)
            .map(|i| format!("{}-{}", i * 10, i * 10 + 1))
            .collect();
        let h = format!("bytes={}", many.join(","));
        assert_eq!(plan(&c(Some(&h)), 1000, None), Plan::TooManyRanges);
        let fine: Vec<String> = (0..MAX_RANGES as u64)
            .map(|i| format!("{}-{}", i * 10, i * 10 + 1))
            .collect();
        let h = format!("bytes={}", fine.join(","));
        assert!(matches!(plan(&c(Some(&h)), 1000, None), Plan::Ranges(r) if r.len() == MAX_RANGES));
        // Thousands of identical or overlapping ranges merge into one and are answered:
        // the limit counts ranges after merging.
        for n in [100, 1000, MAX_NAMED_RANGES] {
            let h = format!("bytes={}", vec!["0-5"; n].join(","));
            assert_eq!(plan(&c(Some(&h)), 1000, None), Plan::Ranges(vec![(0, 5)]));
        }
        let h = format!("bytes={}", vec!["0-5"; 2000].join(",") + ",1-9,7-20");
        assert_eq!(plan(&c(Some(&h)), 1000, None), Plan::Ranges(vec![(0, 20)]));
        // Past what a request may name, refused however they would merge.
        let h = format!("bytes={}", vec!["0-5"; MAX_NAMED_RANGES + 1].join(","));
        assert_eq!(plan(&c(Some(&h)), 1000, None), Plan::TooManyRanges);
    }

    #[tokio::test]
    async fn multipart_bodies_hold_each_range() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        std::fs::write(&path, &data).unwrap();
        let file = Arc::new(std::fs::File::open(&path).unwrap());
        let (pieces, boundary) = multipart(&[(0, 9), (500, 509)], 1000, "video/mp4");
        let body = read_inline(&Reader::File(file), 0, &pieces).await.unwrap();
        assert_eq!(body.len() as u64, pieces_len(&pieces));
        let text = String::from_utf8_lossy(&body);
        assert!(text.starts_with(&format!("--{boundary}\r\n")));
        assert!(text.contains("Content-Range: bytes 500-509/1000\r\n\r\n"));
        assert!(text.ends_with(&format!("\r\n--{boundary}--\r\n")));
        let at = body.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        assert_eq!(&body[at..at + 10], &data[0..10]);
    }
}
