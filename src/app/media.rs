//! The media work that runs beside the requests: frame strips drawn within a limit of
//! ffmpeg runs, and, after a start or an import, the strips and frame timings that are
//! missing (started by `cli`, the demo and the import page).

use crate::config::Config;
use crate::error::{Error, Result};
use crate::io::media::media_path;
use crate::io::video::StripLayout;
use crate::store::Store;
use std::path::PathBuf;
use std::sync::OnceLock;

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
pub async fn ensure_strip(video: PathBuf, out: PathBuf) -> Result<()> {
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
    let store = store.clone();
    let media_dir = config.media_dir.clone();
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

/// Starts both background jobs: the missing frame strips and frame timings.
pub fn warm_up(store: &Store, config: &Config) {
    warm_strips(store, config);
    warm_timings(store, config);
}
