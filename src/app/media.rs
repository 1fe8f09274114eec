//! The media work that runs beside the requests: frame strips drawn within a limit of
//! ffmpeg runs, and, after a start or an import, the strips and frame timings that are
//! missing (started by `cli`, the demo and the import page).

use crate::config::Config;
use crate::error::{Error, Result};
use crate::io::media::media_path;
use crate::io::objects::{Location, MediaStore};
use crate::io::video::StripLayout;
use crate::store::Store;
use std::path::PathBuf;
use std::sync::OnceLock;

/// How long a server trusts the media store's location it read: another server's
/// `tandem media migrate` is seen within this time, without a restart.
const LOCATION_TTL: std::time::Duration = std::time::Duration::from_secs(2);

type Opened =
    std::sync::Mutex<std::collections::HashMap<PathBuf, (std::time::Instant, String, MediaStore)>>;

/// The installation's media store, as the database names it: read again at most every
/// [`LOCATION_TTL`], opened again only when it changed (a bucket's client is kept, with
/// its connections).
pub async fn media_store(store: &Store, config: &Config) -> Result<MediaStore> {
    static OPENED: OnceLock<Opened> = OnceLock::new();
    let opened = OPENED.get_or_init(Default::default);
    let key = config.media_dir.clone();
    let now = store.clock().instant();
    if let Ok(map) = opened.lock()
        && let Some((at, _, media)) = map.get(&key)
        && now.saturating_duration_since(*at) < LOCATION_TTL
    {
        return Ok(media.clone());
    }
    let text = store.media_location().await?;
    // A poisoned lock reuses nothing: the media store is opened afresh.
    let reuse = opened.lock().ok().and_then(|map| {
        map.get(&key)
            .filter(|(_, t, _)| *t == text)
            .map(|e| e.2.clone())
    });
    let media = match reuse {
        Some(m) => m,
        None => {
            let location = Location::parse(&text).map_err(|e| {
                Error::Internal(format!("the stored media location is unreadable: {e}"))
            })?;
            MediaStore::open(
                &location,
                &config.media_dir,
                &config.aws,
                config.media_cache_bytes,
            )?
        }
    };
    if let Ok(mut map) = opened.lock() {
        map.insert(key, (now, text, media.clone()));
    }
    Ok(media)
}

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

/// At most this many ffmpeg runs at once, whoever asks (two cores).
fn strip_permits() -> &'static tokio::sync::Semaphore {
    static S: OnceLock<tokio::sync::Semaphore> = OnceLock::new();
    S.get_or_init(|| tokio::sync::Semaphore::new(2))
}

/// Makes the strip of `video` at `out` unless it is there, within the ffmpeg limit.
async fn draw(video: PathBuf, out: PathBuf, layout: StripLayout) -> Result<()> {
    let _permit = strip_permits()
        .acquire()
        .await
        .map_err(|e| Error::fault("strip limit closed", e))?;
    if out.exists() {
        return Ok(());
    }
    tokio::task::spawn_blocking(move || crate::io::video::make_strip(&video, &out, layout))
        .await
        .map_err(|e| Error::fault("frame strip task failed", e))?
}

/// A temporary name in a media store's local folder (for a file made here before it
/// goes up to a bucket).
fn scratch_file(media: &MediaStore, ext: &str) -> Result<PathBuf> {
    Ok(media
        .scratch()
        .join(format!(".made-{}.{ext}", crate::auth::random_id(8)?)))
}

/// Draws a strip of the stored video `sha` as the stored file `name` unless it is
/// there: in the media folder in place; for a bucket, from a fetched copy of the video,
/// drawn here and uploaded. Returns whether it drew one.
pub async fn ensure_stored_strip(
    media: &MediaStore,
    sha: &str,
    name: &str,
    layout: StripLayout,
) -> Result<bool> {
    match media {
        MediaStore::Local(dir) => {
            let out = dir.join(name);
            if out.exists() {
                return Ok(false);
            }
            draw(media_path(dir, sha), out, layout).await?;
            Ok(true)
        }
        MediaStore::Bucket(_) => {
            if media.size_of(name).await?.is_some() {
                return Ok(false);
            }
            let video = media.local_copy(sha).await?;
            let out = scratch_file(media, "jpg")?;
            let drawn = draw(video.path().to_path_buf(), out.clone(), layout).await;
            drop(video);
            let stored = match drawn {
                Ok(()) => media.put_file(name, &out).await,
                Err(e) => Err(e),
            };
            let _ = tokio::fs::remove_file(&out).await;
            stored.map(|()| true)
        }
    }
}

/// Puts files made in the media folder (served copies, named by their SHA-256) into the
/// media store: nothing to do when it is that folder; for a bucket each is uploaded
/// (skipped when the bucket holds one of that name and size) and its local file
/// removed. Returns the names this added, for [`unpublish`] if the database write that
/// follows fails. When one upload fails, those added are removed again.
pub async fn publish(media: &MediaStore, files: Vec<PathBuf>) -> Result<Vec<String>> {
    let mut added = Vec::new();
    let mut failed = None;
    for file in &files {
        let Some(name) = file
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if failed.is_none() {
            match media {
                MediaStore::Local(_) => added.push(name),
                MediaStore::Bucket(_) => {
                    // A size that cannot be read matches nothing held: sent again.
                    let size = tokio::fs::metadata(file).await.map(|m| m.len()).ok();
                    let done = match media.size_of(&name).await {
                        Ok(held) if held.is_some() && held == size => Ok(false),
                        Ok(_) => media.put_file(&name, file).await.map(|()| true),
                        Err(e) => Err(e),
                    };
                    match done {
                        Ok(true) => added.push(name),
                        Ok(false) => {}
                        Err(e) => failed = Some(e),
                    }
                }
            }
        }
        if matches!(media, MediaStore::Bucket(_)) || failed.is_some() {
            let _ = tokio::fs::remove_file(file).await;
        }
    }
    match failed {
        None => Ok(added),
        Some(e) => {
            unpublish(media, &added).await;
            Err(e)
        }
    }
}

/// Removes stored files that [`publish`] added (a database write that failed).
pub async fn unpublish(media: &MediaStore, names: &[String]) {
    for name in names {
        if let Err(e) = media.remove(name).await {
            tracing::warn!(error = %e, file = %name, "a file no record names could not be removed");
        }
    }
}

/// Draws the strips of `hashes` in `layout` that are missing; returns how many it drew.
pub async fn draw_strips(
    media: &MediaStore,
    hashes: &[String],
    layout: StripLayout,
) -> Result<usize> {
    let frames = i64::try_from(layout.k).unwrap_or(8);
    let mut made = 0;
    for sha in hashes {
        let name = crate::io::media::strip_name(sha, frames);
        if ensure_stored_strip(media, sha, &name, layout).await? {
            made += 1;
        }
    }
    Ok(made)
}

/// Reads, in the background, the frame rate and count of the videos not probed yet
/// (`app::probe_timings`), so that the player steps exactly one frame. Does nothing
/// without ffprobe.
pub fn warm_timings(store: &Store, config: &Config) {
    if !strips_possible() {
        return;
    }
    let (store, config) = (store.clone(), config.clone());
    tokio::spawn(async move {
        match super::probe_timings(&store, &config).await {
            Ok(p) if p.timed + p.unreadable > 0 => {
                tracing::info!(
                    timed = p.timed,
                    unreadable = p.unreadable,
                    "frame timings read"
                );
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "cannot read frame timings"),
        }
    });
}

/// Draws, one after another in the background, the strips that are missing, so that
/// reviewers do not wait for them. Does nothing without ffmpeg.
pub fn warm_strips(store: &Store, config: &Config) {
    if !strips_possible() {
        return;
    }
    let (store, config) = (store.clone(), config.clone());
    tokio::spawn(async move {
        let listed = match media_store(&store, &config).await {
            Ok(media) => store.media_hashes().await.map(|h| (media, h)),
            Err(e) => Err(e),
        };
        let (media, hashes) = match listed {
            Ok(x) => x,
            Err(e) => {
                tracing::warn!(error = %e, "cannot list the clips for frame strips");
                return;
            }
        };
        let mut made = 0usize;
        for sha in hashes {
            if let MediaStore::Local(dir) = &media
                && !media_path(dir, &sha).exists()
            {
                continue;
            }
            let name = crate::io::media::review_strip_name(&sha);
            match ensure_stored_strip(&media, &sha, &name, REVIEW_STRIP).await {
                Ok(true) => made += 1,
                Ok(false) => {}
                Err(e) => tracing::debug!(error = %e, %sha, "no frame strip"),
            }
        }
        if made > 0 {
            tracing::info!(made, "frame strips drawn");
        }
    });
}

/// Starts both background jobs: the missing frame strips and frame timings.
pub fn warm_up(store: &Store, config: &Config) {
    warm_strips(store, config);
    warm_timings(store, config);
}

/// What `tandem media migrate` did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Migrated {
    /// Where the media lived, and live now.
    pub from: String,
    pub to: String,
    /// Files copied now, and their bytes.
    pub copied: usize,
    pub bytes: u64,
    /// Files the new place held already (a resumed migration): same name, same size.
    pub present: usize,
    /// Files copied after the switch: added by servers that had not seen it yet.
    pub late: usize,
}

/// Copies every stored file one way, checking each: a file named by its content must
/// hash to its name, and every copy must have the source's size. Files the target
/// holds already with the same size are skipped, so a migration stopped midway resumes
/// where it stopped. Returns (copied, bytes, present).
async fn copy_all(
    from: &MediaStore,
    to: &MediaStore,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<(usize, u64, usize)> {
    let files = from.list().await?;
    let held: std::collections::HashMap<String, u64> = to.list().await?.into_iter().collect();
    let total = files.len();
    let (mut copied, mut bytes, mut present) = (0usize, 0u64, 0usize);
    let staging = to.scratch().to_path_buf();
    tokio::fs::create_dir_all(&staging)
        .await
        .map_err(|e| Error::io(format!("cannot create {}", staging.display()), e))?;
    for (i, (name, size)) in files.into_iter().enumerate() {
        if held.get(&name) == Some(&size) {
            present += 1;
        } else {
            // Through a local file: fetched (or, from the media folder, the file itself),
            // hashed, then stored.
            let (file, temporary) = match from {
                MediaStore::Local(dir) => (dir.join(&name), false),
                MediaStore::Bucket(_) => {
                    let temp = staging.join(format!(".migrate-{}", crate::auth::random_id(8)?));
                    from.fetch_to(&name, &temp).await?;
                    (temp, true)
                }
            };
            let checked = check_copy(&file, &name, size).await;
            let stored = match checked {
                Ok(()) => match to {
                    // Into a media folder: copied under a temporary name, synced, renamed.
                    MediaStore::Local(dir) => {
                        let temp = dir.join(format!(".migrate-{}", crate::auth::random_id(8)?));
                        let copied = if temporary {
                            tokio::fs::rename(&file, &temp).await
                        } else {
                            tokio::fs::copy(&file, &temp).await.map(drop)
                        };
                        match copied {
                            Ok(()) => {
                                let synced = tokio::fs::File::open(&temp).await;
                                let synced = match synced {
                                    Ok(f) => f.sync_all().await,
                                    Err(e) => Err(e),
                                };
                                match synced {
                                    Ok(()) => to.put_file(&name, &temp).await,
                                    Err(e) => Err(Error::io(format!("cannot store {name}"), e)),
                                }
                            }
                            Err(e) => Err(Error::io(format!("cannot store {name}"), e)),
                        }
                    }
                    MediaStore::Bucket(_) => to.put_file(&name, &file).await,
                },
                Err(e) => Err(e),
            };
            if temporary {
                let _ = tokio::fs::remove_file(&file).await;
            }
            stored?;
            if to.size_of(&name).await? != Some(size) {
                return Err(Error::Internal(format!(
                    "the copy of {name} in {} does not have its {size} bytes",
                    to.location().as_text()
                )));
            }
            copied += 1;
            bytes += size;
        }
        progress(i + 1, total);
    }
    Ok((copied, bytes, present))
}

/// A local file about to be copied: its size as listed and, when it is named by its
/// content, its SHA-256 equal to its name.
async fn check_copy(file: &std::path::Path, name: &str, size: u64) -> Result<()> {
    let (f, n) = (file.to_path_buf(), name.to_string());
    let (sha, len) = tokio::task::spawn_blocking(move || crate::io::media::sha256_file(&f))
        .await
        .map_err(|e| Error::Internal(e.to_string()))?
        .map_err(|e| Error::io(format!("cannot read {n}"), e))?;
    if len != size {
        return Err(Error::Invalid(format!(
            "{name} changed while it was copied ({size} bytes listed, {len} read)"
        )));
    }
    if crate::io::objects::named_by_content(name) && sha != name {
        return Err(Error::Invalid(format!(
            "{name} is damaged: its content's SHA-256 is {sha}; nothing was switched, restore the file from a backup and run the migration again"
        )));
    }
    Ok(())
}

/// Chooses where an installation's media will live, before it stores any (`tandem
/// init --media`): the store must answer; an installation that holds files already is
/// refused with the command that moves them.
pub async fn choose(store: &Store, config: &Config, target: &Location) -> Result<()> {
    let current = media_store(store, config).await?;
    if current.location() == *target {
        return Ok(());
    }
    let held = current.list().await?;
    if !held.is_empty() {
        return Err(Error::Invalid(format!(
            "{} file(s) are stored in {} already: move them with `tandem media migrate --to {}`",
            held.len(),
            current.location().as_text(),
            target.as_text()
        )));
    }
    let to = MediaStore::open(target, &config.media_dir, &config.aws, 0)?;
    to.check().await?;
    store.set_media_location(&target.as_text()).await
}

/// Moves the installation's media to `target`: copies every stored file there (each
/// checked), switches the stored location only when all are there (every server sees
/// the switch within [`LOCATION_TTL`], without a restart), then copies what servers
/// that had not seen it yet added meanwhile. Stopped midway, it leaves the old place in
/// use and resumes where it stopped. The old place's files are left as they were.
pub async fn migrate(
    store: &Store,
    config: &Config,
    target: &Location,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Migrated> {
    let from = media_store(store, config).await?;
    let from_text = from.location().as_text();
    if from.location() == *target {
        return Err(Error::Invalid(format!(
            "the media are in {from_text} already; nothing to do"
        )));
    }
    let to = MediaStore::open(target, &config.media_dir, &config.aws, 0)?;
    if let MediaStore::Local(dir) = &to {
        tokio::fs::create_dir_all(dir)
            .await
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
    }
    to.check().await?;
    let (copied, bytes, present) = copy_all(&from, &to, progress).await?;
    store.set_media_location(&target.as_text()).await?;
    // Servers go on with the old place for at most LOCATION_TTL after the switch: what
    // they stored there meanwhile is copied too.
    tokio::time::sleep(LOCATION_TTL * 2).await;
    let (late, late_bytes, _) = copy_all(&from, &to, &|_, _| {}).await?;
    Ok(Migrated {
        from: from_text,
        to: target.as_text(),
        copied: copied + late,
        bytes: bytes + late_bytes,
        present,
        late,
    })
}
