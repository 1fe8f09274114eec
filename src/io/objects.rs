//! Where an installation's media live: the data folder's `media/` (the default) or a
//! bucket of S3-compatible object storage (AWS S3, MinIO, Ceph, Garage, SeaweedFS, ...),
//! chosen once for the whole installation and stored in the database, so that every
//! server agrees. The endpoint, region and credentials of a bucket are each server's
//! own, from the standard `AWS_*` variables (`AWS_ENDPOINT`, `AWS_REGION`,
//! `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_ALLOW_HTTP` for a plain-HTTP
//! endpoint), never from the database.
//!
//! Stored files are named by what they hold (a video by its SHA-256, a strip by its
//! video's hash and its frame count), so a name never changes what it means and an
//! object, once complete, never changes: S3 makes a PUT or a multipart upload visible
//! only when it completes, so no reader sees half an object.

use crate::error::{Error, Result};
use axum::body::Bytes;
use futures_util::stream::{BoxStream, StreamExt};
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload, WriteMultipart};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Files up to this size go up in one PUT; larger ones in parts of this size.
pub const PART_BYTES: usize = 8 * 1024 * 1024;
/// Parts in flight at once for one upload (a bound on the memory one upload holds).
const PARTS_IN_FLIGHT: usize = 4;
/// Objects are cached in aligned blocks of this size (see [`Blocks`]).
pub const BLOCK_BYTES: u64 = 256 * 1024;
/// How long a request to the bucket may wait for its answer to begin.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// Where the media live, as the database stores it: `local`, or `s3://BUCKET/PREFIX`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Local,
    S3 { bucket: String, prefix: String },
}

impl Location {
    /// Reads `local` or `s3://BUCKET[/PREFIX]`; anything else is refused with what is
    /// accepted.
    pub fn parse(text: &str) -> Result<Location> {
        let t = text.trim();
        if t == "local" {
            return Ok(Location::Local);
        }
        let refuse = |why: &str| {
            Error::field(
                "media",
                format!("{why}: give `local` or `s3://BUCKET/PREFIX`, not {t:?}"),
            )
        };
        let Some(rest) = t.strip_prefix("s3://") else {
            return Err(refuse("unknown media store"));
        };
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        // S3's bucket naming rules: 3-63 characters, lower-case letters, digits, dots
        // and hyphens, beginning and ending with a letter or digit.
        let edge_ok =
            |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        if !(3..=63).contains(&bucket.len())
            || !bucket
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
            || !edge_ok(bucket.chars().next())
            || !edge_ok(bucket.chars().last())
        {
            return Err(refuse("not a bucket name (3-63 of a-z, 0-9, '.', '-')"));
        }
        let prefix = prefix.trim_matches('/');
        if prefix.len() > 512
            || !prefix.split('/').all(|part| {
                !part.is_empty()
                    && part != "."
                    && part != ".."
                    && part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            }) && !prefix.is_empty()
        {
            return Err(refuse(
                "not a prefix (folders of letters, digits, '-', '_' and '.')",
            ));
        }
        Ok(Location::S3 {
            bucket: bucket.to_string(),
            prefix: prefix.to_string(),
        })
    }

    /// The text the database stores and the CLI shows.
    pub fn as_text(&self) -> String {
        match self {
            Location::Local => "local".into(),
            Location::S3 { bucket, prefix } if prefix.is_empty() => format!("s3://{bucket}"),
            Location::S3 { bucket, prefix } => format!("s3://{bucket}/{prefix}"),
        }
    }
}

/// A stored file as a local file (see [`MediaStore::local_copy`]); a fetched copy is
/// removed when this is dropped.
#[derive(Debug)]
pub struct LocalCopy {
    path: PathBuf,
    temporary: bool,
}

impl LocalCopy {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for LocalCopy {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A stored file's size and date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    pub size: u64,
    pub modified: SystemTime,
}

/// The media store: the data folder's `media/`, or a bucket. Cheap to clone.
#[derive(Clone)]
pub enum MediaStore {
    Local(PathBuf),
    Bucket(Arc<Bucket>),
}

/// A bucket with the prefix the installation's files live under, and the local folder
/// where files are staged before they go up and fetched to when a program (ffmpeg, the
/// archive writer) needs them on disk.
pub struct Bucket {
    store: Arc<dyn ObjectStore>,
    location: Location,
    prefix: String,
    scratch: PathBuf,
    blocks: Option<Blocks>,
}

/// Recently read blocks of objects, the least recently used dropped first, within a
/// memory bound. An object never changes once complete (its name is its content's
/// hash), so a block is never stale; a missing or failed read is not cached. A small
/// reply (a browser's range, a frame step) read again by the second validator, the
/// author or a seek back costs no request to the bucket.
struct Blocks {
    lru: std::sync::Mutex<hashlink::LruCache<(String, u64), Bytes>>,
}

impl Blocks {
    fn new(bytes: u64) -> Option<Blocks> {
        let n = usize::try_from(bytes / BLOCK_BYTES).unwrap_or(usize::MAX);
        (n > 0).then(|| Blocks {
            lru: std::sync::Mutex::new(hashlink::LruCache::new(n)),
        })
    }

    fn get(&self, name: &str, block: u64) -> Option<Bytes> {
        // A poisoned lock is a cache miss: the bucket answers.
        let mut lru = self.lru.lock().ok()?;
        lru.get(&(name.to_string(), block)).cloned()
    }

    fn put(&self, name: &str, block: u64, bytes: Bytes) {
        if let Ok(mut lru) = self.lru.lock() {
            lru.insert((name.to_string(), block), bytes);
        }
    }
}

impl std::fmt::Debug for MediaStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MediaStore::Local(dir) => write!(f, "MediaStore::Local({})", dir.display()),
            MediaStore::Bucket(b) => write!(f, "MediaStore::Bucket({})", b.location.as_text()),
        }
    }
}

/// What a bucket request's failure means to the one who asked: a missing object is
/// `NotFound`; anything else (no answer, refused credentials, a server error) is
/// `Unavailable`, with the bucket named. The full error goes to the log.
fn bucket_error(location: &Location, name: &str, e: object_store::Error) -> Error {
    match e {
        object_store::Error::NotFound { .. } => Error::NotFound(format!(
            "the stored file {name} is missing from the media store"
        )),
        e => {
            tracing::error!(store = %location.as_text(), file = name, error = %e, "the media store failed");
            Error::Unavailable(format!(
                "the media store ({}) cannot be reached or refused the request; try again later",
                location.as_text()
            ))
        }
    }
}

async fn within<T>(
    location: &Location,
    name: &str,
    f: impl std::future::Future<Output = object_store::Result<T>>,
) -> Result<T> {
    match tokio::time::timeout(ANSWER_WITHIN, f).await {
        Ok(r) => r.map_err(|e| bucket_error(location, name, e)),
        Err(_) => Err(late(location, name)),
    }
}

fn late(location: &Location, name: &str) -> Error {
    tracing::error!(store = %location.as_text(), file = name, "the media store did not answer in time");
    Error::Unavailable(format!(
        "the media store ({}) did not answer within {} s; try again later",
        location.as_text(),
        ANSWER_WITHIN.as_secs()
    ))
}

impl MediaStore {
    /// The media store at `location`; `media_dir` is the data folder's media folder
    /// (the store itself when local, the staging folder otherwise); `aws`, the `AWS_*`
    /// variables of this process (`Config::aws`). Nothing is asked of
    /// the bucket yet: [`MediaStore::check`] does.
    /// `cache_bytes` bounds the memory kept for recently read blocks of objects (0: none).
    pub fn open(
        location: &Location,
        media_dir: &Path,
        aws: &[(String, String)],
        cache_bytes: u64,
    ) -> Result<MediaStore> {
        match location {
            Location::Local => Ok(MediaStore::Local(media_dir.to_path_buf())),
            Location::S3 { bucket, prefix } => {
                use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
                use object_store::{ClientOptions, RetryConfig};
                // Short waits: a bucket that does not answer is a 503 within seconds,
                // not a request held for the crate's default three minutes of retries.
                let mut builder = AmazonS3Builder::new()
                    .with_client_options(
                        ClientOptions::new()
                            .with_connect_timeout(Duration::from_secs(3))
                            .with_timeout(Duration::from_secs(600)),
                    )
                    .with_retry(RetryConfig {
                        max_retries: 2,
                        retry_timeout: Duration::from_secs(8),
                        ..RetryConfig::default()
                    });
                for (key, value) in aws {
                    if key.starts_with("AWS_")
                        && let Ok(k) = key.to_ascii_lowercase().parse::<AmazonS3ConfigKey>()
                    {
                        builder = builder.with_config(k, value);
                    }
                }
                let store = builder.with_bucket_name(bucket).build().map_err(|e| {
                    Error::Invalid(format!(
                        "cannot use the media store {}: {e} (set AWS_ENDPOINT, AWS_REGION, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)",
                        location.as_text()
                    ))
                })?;
                Ok(MediaStore::Bucket(Arc::new(Bucket {
                    store: Arc::new(store),
                    location: location.clone(),
                    prefix: prefix.clone(),
                    scratch: media_dir.to_path_buf(),
                    blocks: Blocks::new(cache_bytes),
                })))
            }
        }
    }

    pub fn location(&self) -> Location {
        match self {
            MediaStore::Local(_) => Location::Local,
            MediaStore::Bucket(b) => b.location.clone(),
        }
    }

    /// The local folder: the store when local, else where files are staged and fetched.
    pub fn scratch(&self) -> &Path {
        match self {
            MediaStore::Local(dir) => dir,
            MediaStore::Bucket(b) => &b.scratch,
        }
    }

    /// Whether the store answers: the media folder can be read, or the bucket answers
    /// a request for an object (that it does not hold one of that name is an answer).
    pub async fn check(&self) -> Result<()> {
        match self {
            // A folder not made yet (nothing imported) is fine: the first import makes it.
            MediaStore::Local(dir) => match std::fs::metadata(dir) {
                Ok(_) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(Error::io(format!("cannot read {}", dir.display()), e)),
            },
            MediaStore::Bucket(b) => {
                let probe = ".tandem-probe";
                match tokio::time::timeout(ANSWER_WITHIN, b.store.head(&b.key(probe))).await {
                    Ok(Ok(_)) | Ok(Err(object_store::Error::NotFound { .. })) => Ok(()),
                    Ok(Err(e)) => Err(bucket_error(&b.location, probe, e)),
                    Err(_) => Err(late(&b.location, probe)),
                }
            }
        }
    }

    /// The size and date of a stored file; `NotFound` when there is none.
    pub async fn meta(&self, name: &str) -> Result<Meta> {
        match self {
            MediaStore::Local(dir) => {
                let path = dir.join(name);
                let m = tokio::fs::metadata(&path).await.map_err(|e| {
                    if e.kind() == std::io::ErrorKind::NotFound {
                        Error::NotFound(format!("the stored file {name} is missing"))
                    } else {
                        Error::io(format!("cannot read {}", path.display()), e)
                    }
                })?;
                Ok(Meta {
                    size: m.len(),
                    modified: m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                })
            }
            MediaStore::Bucket(b) => {
                let m = within(&b.location, name, b.store.head(&b.key(name))).await?;
                Ok(Meta {
                    size: m.size,
                    modified: m.last_modified.into(),
                })
            }
        }
    }

    /// The size of a stored file, or `None` when there is none.
    pub async fn size_of(&self, name: &str) -> Result<Option<u64>> {
        match self.meta(name).await {
            Ok(m) => Ok(Some(m.size)),
            Err(Error::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Stores the local file `file` as `name`. In a bucket, a file larger than
    /// [`PART_BYTES`] goes up in parts (at most [`PARTS_IN_FLIGHT`] at once), and an
    /// upload that fails is aborted: the object appears whole or not at all. Locally the
    /// file is renamed into place (the caller makes it durable).
    pub async fn put_file(&self, name: &str, file: &Path) -> Result<()> {
        match self {
            MediaStore::Local(dir) => {
                let dest = dir.join(name);
                tokio::fs::rename(file, &dest)
                    .await
                    .map_err(|e| Error::io(format!("cannot store {name}"), e))
            }
            MediaStore::Bucket(b) => b.upload(name, file).await,
        }
    }

    /// Bytes `range` of a stored file of `size` bytes, read whole (for small replies;
    /// from a bucket, through its block cache when it has one).
    pub async fn read_range(&self, name: &str, range: Range<u64>, size: u64) -> Result<Bytes> {
        match self {
            MediaStore::Local(dir) => {
                let path = dir.join(name);
                tokio::task::spawn_blocking(move || -> Result<Bytes> {
                    use std::os::unix::fs::FileExt;
                    let f = std::fs::File::open(&path)
                        .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
                    let len = usize::try_from(range.end.saturating_sub(range.start))
                        .map_err(|_| Error::Invalid("range too large".into()))?;
                    let mut buf = vec![0u8; len];
                    f.read_exact_at(&mut buf, range.start)
                        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
                    Ok(Bytes::from(buf))
                })
                .await
                .map_err(|e| Error::Internal(e.to_string()))?
            }
            MediaStore::Bucket(b) => b.read_range(name, range, size).await,
        }
    }

    /// Bytes `range` of an object, as a stream (one ranged GET, never held whole).
    pub async fn stream_range(
        &self,
        name: &str,
        range: Range<u64>,
    ) -> Result<BoxStream<'static, std::io::Result<Bytes>>> {
        match self {
            MediaStore::Local(_) => {
                let size = range.end;
                let bytes = self.read_range(name, range, size).await?;
                Ok(futures_util::stream::once(async move { Ok(bytes) }).boxed())
            }
            MediaStore::Bucket(b) => {
                let opts = object_store::GetOptions {
                    range: Some(object_store::GetRange::Bounded(range)),
                    ..Default::default()
                };
                let got = within(&b.location, name, b.store.get_opts(&b.key(name), opts)).await?;
                let location = b.location.as_text();
                Ok(got
                    .into_stream()
                    .map(move |r| {
                        r.map_err(|e| {
                            tracing::error!(store = %location, error = %e, "reading from the media store failed");
                            std::io::Error::other(e.to_string())
                        })
                    })
                    .boxed())
            }
        }
    }

    /// A local file holding the stored file `name`, for the programs that need one
    /// (ffmpeg): the file itself when local; else a copy fetched into the staging
    /// folder, removed when the returned guard is dropped (so that drawing the strips of
    /// a whole benchmark never keeps a copy of it).
    pub async fn local_copy(&self, name: &str) -> Result<LocalCopy> {
        match self {
            MediaStore::Local(dir) => Ok(LocalCopy {
                path: dir.join(name),
                temporary: false,
            }),
            MediaStore::Bucket(b) => {
                tokio::fs::create_dir_all(&b.scratch)
                    .await
                    .map_err(|e| Error::io(format!("cannot create {}", b.scratch.display()), e))?;
                let copy = LocalCopy {
                    path: b
                        .scratch
                        .join(format!(".fetch-{}-{name}", crate::auth::random_id(6)?)),
                    temporary: true,
                };
                b.fetch(name, &copy.path).await?;
                Ok(copy)
            }
        }
    }

    /// Copies the stored file `name` to `dest` (a bucket's object fetched; a local file
    /// copied), complete and synced before this returns.
    pub async fn fetch_to(&self, name: &str, dest: &Path) -> Result<()> {
        match self {
            MediaStore::Local(dir) => tokio::fs::copy(dir.join(name), dest)
                .await
                .map(drop)
                .map_err(|e| Error::io(format!("cannot copy {name}"), e)),
            MediaStore::Bucket(b) => b.fetch(name, dest).await,
        }
    }

    /// Every stored file (name and size): the files of the media folder that Tandem
    /// names (a SHA-256, or a strip of one), or the objects under the bucket's prefix.
    pub async fn list(&self) -> Result<Vec<(String, u64)>> {
        match self {
            MediaStore::Local(dir) => {
                let dir = dir.clone();
                tokio::task::spawn_blocking(move || -> Result<Vec<(String, u64)>> {
                    let mut out = Vec::new();
                    let entries = match std::fs::read_dir(&dir) {
                        Ok(e) => e,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
                        Err(e) => {
                            return Err(Error::io(format!("cannot read {}", dir.display()), e));
                        }
                    };
                    for e in entries {
                        let e =
                            e.map_err(|e| Error::io(format!("cannot read {}", dir.display()), e))?;
                        let name = e.file_name().to_string_lossy().into_owned();
                        let meta = e
                            .metadata()
                            .map_err(|err| Error::io(format!("cannot read {name}"), err))?;
                        if meta.is_file() && is_stored_name(&name) {
                            out.push((name, meta.len()));
                        }
                    }
                    out.sort();
                    Ok(out)
                })
                .await
                .map_err(|e| Error::Internal(e.to_string()))?
            }
            MediaStore::Bucket(b) => {
                let prefix = (!b.prefix.is_empty()).then(|| Key::from(b.prefix.as_str()));
                let mut listing = b.store.list(prefix.as_ref());
                let mut out = Vec::new();
                let lead = if b.prefix.is_empty() {
                    String::new()
                } else {
                    format!("{}/", b.prefix)
                };
                loop {
                    let next = tokio::time::timeout(ANSWER_WITHIN, listing.next())
                        .await
                        .map_err(|_| late(&b.location, "(listing)"))?;
                    let Some(meta) = next else { break };
                    let meta = meta.map_err(|e| bucket_error(&b.location, "(listing)", e))?;
                    let key = meta.location.as_ref();
                    if let Some(name) = key.strip_prefix(lead.as_str())
                        && is_stored_name(name)
                    {
                        out.push((name.to_string(), meta.size));
                    }
                }
                out.sort();
                Ok(out)
            }
        }
    }

    /// Removes a stored file (one that is not there is not an error).
    pub async fn remove(&self, name: &str) -> Result<()> {
        match self {
            MediaStore::Local(dir) => match tokio::fs::remove_file(dir.join(name)).await {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(Error::io(format!("cannot remove {name}"), e)),
            },
            MediaStore::Bucket(b) => {
                match within(&b.location, name, b.store.delete(&b.key(name))).await {
                    Ok(()) | Err(Error::NotFound(_)) => Ok(()),
                    Err(e) => Err(e),
                }
            }
        }
    }
}

impl Bucket {
    /// Bytes `range` of the object `name` of `size` bytes: from the cached blocks that
    /// cover it, each missing block fetched whole (one ranged GET for the run of them)
    /// and kept; without a cache, one ranged GET of exactly the range.
    async fn read_range(&self, name: &str, range: Range<u64>, size: u64) -> Result<Bytes> {
        let end = range.end.min(size);
        let Some(blocks) = self.blocks.as_ref().filter(|_| range.start < end) else {
            return within(
                &self.location,
                name,
                self.store.get_range(&self.key(name), range),
            )
            .await;
        };
        let (first, last) = (range.start / BLOCK_BYTES, (end - 1) / BLOCK_BYTES);
        let mut have: Vec<Option<Bytes>> = (first..=last).map(|i| blocks.get(name, i)).collect();
        if let Some(miss) = have.iter().position(Option::is_none) {
            let miss_last = have.iter().rposition(Option::is_none).unwrap_or(miss);
            let (from, to) = (first + miss as u64, first + miss_last as u64);
            let fetched = within(
                &self.location,
                name,
                self.store.get_range(
                    &self.key(name),
                    from * BLOCK_BYTES..((to + 1) * BLOCK_BYTES).min(size),
                ),
            )
            .await?;
            let wanted = ((to + 1) * BLOCK_BYTES).min(size) - from * BLOCK_BYTES;
            if fetched.len() as u64 != wanted {
                return Err(Error::Internal(format!(
                    "the media store sent {} bytes of {name} for {wanted} asked",
                    fetched.len()
                )));
            }
            for i in from..=to {
                let at = usize::try_from((i - from) * BLOCK_BYTES).unwrap_or(usize::MAX);
                let piece = fetched.slice(
                    at.min(fetched.len())
                        ..(at.saturating_add(BLOCK_BYTES as usize)).min(fetched.len()),
                );
                // Each block its own allocation when several came in one reply, so
                // that dropping one frees it (the cache's bound holds).
                let block = if from == to {
                    piece
                } else {
                    Bytes::copy_from_slice(&piece)
                };
                blocks.put(name, i, block.clone());
                have[(i - first) as usize] = Some(block);
            }
        }
        let mut out = Vec::with_capacity(usize::try_from(end - range.start).unwrap_or(0));
        for (i, block) in (first..=last).zip(have) {
            let block = block.unwrap_or_default();
            let base = i * BLOCK_BYTES;
            let from = usize::try_from(range.start.max(base) - base).unwrap_or(usize::MAX);
            let to = usize::try_from(end.min(base + BLOCK_BYTES) - base).unwrap_or(usize::MAX);
            let piece = block.get(from..to).ok_or_else(|| {
                Error::Internal(format!("the stored file {name} is shorter than its size"))
            })?;
            out.extend_from_slice(piece);
        }
        Ok(Bytes::from(out))
    }

    fn key(&self, name: &str) -> Key {
        if self.prefix.is_empty() {
            Key::from(name)
        } else {
            Key::from(format!("{}/{name}", self.prefix))
        }
    }

    async fn upload(&self, name: &str, file: &Path) -> Result<()> {
        use tokio::io::AsyncReadExt;
        let key = self.key(name);
        let mut f = tokio::fs::File::open(file)
            .await
            .map_err(|e| Error::io(format!("cannot open {}", file.display()), e))?;
        let size = f
            .metadata()
            .await
            .map_err(|e| Error::io(format!("cannot read {}", file.display()), e))?
            .len();
        if size <= PART_BYTES as u64 {
            let mut buf = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
            f.read_to_end(&mut buf)
                .await
                .map_err(|e| Error::io(format!("cannot read {}", file.display()), e))?;
            within(
                &self.location,
                name,
                self.store.put(&key, PutPayload::from(buf)),
            )
            .await?;
            return Ok(());
        }
        let upload = within(&self.location, name, self.store.put_multipart(&key)).await?;
        let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
        let sent: Result<()> = async {
            let mut buf = vec![0u8; 1024 * 1024];
            loop {
                let n = f
                    .read(&mut buf)
                    .await
                    .map_err(|e| Error::io(format!("cannot read {}", file.display()), e))?;
                if n == 0 {
                    return Ok(());
                }
                within(
                    &self.location,
                    name,
                    writer.wait_for_capacity(PARTS_IN_FLIGHT),
                )
                .await?;
                writer.write(&buf[..n]);
            }
        }
        .await;
        match sent {
            Ok(()) => within(&self.location, name, writer.finish())
                .await
                .map(|_| ()),
            Err(e) => {
                // Parts already sent are discarded; the object never appears.
                if let Err(abort) = writer.abort().await {
                    tracing::warn!(file = name, error = %abort, "an upload could not be aborted; the bucket's lifecycle rules remove its parts");
                }
                Err(e)
            }
        }
    }

    async fn fetch(&self, name: &str, dest: &Path) -> Result<()> {
        use tokio::io::AsyncWriteExt;
        let got = within(&self.location, name, self.store.get(&self.key(name))).await?;
        let mut out = tokio::fs::File::create(dest)
            .await
            .map_err(|e| Error::io(format!("cannot create {}", dest.display()), e))?;
        let mut stream = got.into_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| bucket_error(&self.location, name, e))?;
            out.write_all(&chunk)
                .await
                .map_err(|e| Error::io(format!("cannot write {}", dest.display()), e))?;
        }
        out.sync_all()
            .await
            .map_err(|e| Error::io(format!("cannot write {}", dest.display()), e))
    }
}

/// Whether `name` is one Tandem stores: a SHA-256 in hex (a video, a served copy), or
/// a strip of one (`HASH.strip.jpg`, `HASH.kN.jpg`).
pub fn is_stored_name(name: &str) -> bool {
    let (Some(hash), Some(rest)) = (name.get(..64), name.get(64..)) else {
        return false;
    };
    hash.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && (rest.is_empty()
            || rest == ".strip.jpg"
            || rest
                .strip_prefix(".k")
                .and_then(|r| r.strip_suffix(".jpg"))
                .is_some_and(|k| {
                    !k.is_empty() && k.len() <= 3 && k.bytes().all(|b| b.is_ascii_digit())
                }))
}

/// Whether a stored file's name is the SHA-256 of its content (videos and served
/// copies; strips are named by their video's).
pub fn named_by_content(name: &str) -> bool {
    name.len() == 64 && is_stored_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_names_are_hashes_and_their_strips() {
        let h = "0123456789abcdef".repeat(4);
        assert!(is_stored_name(&h) && named_by_content(&h));
        assert!(is_stored_name(&format!("{h}.strip.jpg")));
        assert!(is_stored_name(&format!("{h}.k12.jpg")));
        assert!(!named_by_content(&format!("{h}.k12.jpg")));
        for bad in [
            String::new(),
            h[..63].to_string(),
            h.to_uppercase(),
            format!("{h}.k.jpg"),
            format!("{h}.tmp"),
            format!(".incoming-{h}.partial"),
            "cache".into(),
            format!("é{h}"),
        ] {
            assert!(!is_stored_name(&bad), "{bad}");
        }
    }

    /// A bucket in memory with a block cache of `blocks` blocks, holding `bytes` as `v`.
    async fn in_memory(blocks: u64, bytes: &[u8]) -> Bucket {
        let store = object_store::memory::InMemory::new();
        store
            .put(&Key::from("p/v"), PutPayload::from(bytes.to_vec()))
            .await
            .unwrap();
        Bucket {
            store: Arc::new(store),
            location: Location::parse("s3://lab/p").unwrap(),
            prefix: "p".into(),
            scratch: PathBuf::from("/nonexistent"),
            blocks: Blocks::new(blocks * BLOCK_BYTES),
        }
    }

    #[tokio::test]
    async fn ranges_read_through_the_block_cache_are_the_objects_bytes_and_the_cache_stays_bounded()
    {
        let size = 5 * BLOCK_BYTES as usize + 1234;
        let bytes: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
        let bucket = in_memory(3, &bytes).await;
        let plain = in_memory(0, &bytes).await;
        assert!(plain.blocks.is_none(), "0: no cache");
        let b = BLOCK_BYTES;
        let s = size as u64;
        let mut ranges = vec![
            0..1,
            0..b,
            b - 1..b + 1,
            b..2 * b,
            s - 1..s,
            s - 1300..s,
            10..s,
        ];
        let mut x: u64 = 99;
        for _ in 0..300 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let start = (x >> 20) % s;
            let len = 1 + (x >> 7) % (2 * b);
            ranges.push(start..(start + len).min(s));
        }
        for r in ranges {
            let want = &bytes[r.start as usize..r.end as usize];
            let got = bucket.read_range("v", r.clone(), s).await.unwrap();
            assert!(got[..] == *want, "{r:?} through the cache");
            let got = plain.read_range("v", r.clone(), s).await.unwrap();
            assert!(got[..] == *want, "{r:?} without");
            let held = bucket.blocks.as_ref().unwrap().lru.lock().unwrap().len();
            assert!(held <= 3, "{held} blocks held");
        }
        // A missing object is NotFound, and nothing is kept for it.
        let e = bucket.read_range("gone", 0..10, 100).await.unwrap_err();
        assert!(matches!(e, Error::NotFound(_)), "{e}");
        // An object shorter than the size asked for is an error, not a short block kept.
        let e = bucket
            .read_range("v", s - 10..s + 10, s + 10)
            .await
            .unwrap_err();
        assert!(matches!(e, Error::Internal(_)), "{e}");
    }

    #[test]
    fn locations_read_and_print_back() {
        assert_eq!(Location::parse("local").unwrap(), Location::Local);
        let s3 = Location::parse("s3://lab-clips/tandem/v1/").unwrap();
        assert_eq!(
            s3,
            Location::S3 {
                bucket: "lab-clips".into(),
                prefix: "tandem/v1".into()
            }
        );
        assert_eq!(s3.as_text(), "s3://lab-clips/tandem/v1");
        assert_eq!(
            Location::parse("s3://clips").unwrap().as_text(),
            "s3://clips"
        );
        for bad in [
            "",
            "s3://",
            "s3://Ab",
            "s3://a",
            "s3://-clips",
            "s3://clips/../x",
            "s3://clips/a//b",
            "gs://clips",
            "/srv/media",
        ] {
            let e = Location::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("media: "), "{bad}: {e}");
        }
    }
}
