//! The media folder: videos stored once under their SHA-256 (copied from an import's
//! files, hashed on the way), the copies a study's participants receive (without
//! metadata when ffmpeg is there) and the frame strips drawn from them. Files only: the
//! application layer calls these before and after the store's transaction.

use super::manifest::extension_for;
use super::video::{self, StripLayout};
use crate::domain::import::{CheckedSets, ServedCopy};
use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// A video to store: its SHA-256 and where the manifest has it.
pub struct MediaSource {
    pub sha256: String,
    pub path: PathBuf,
    pub file: String,
    pub line: usize,
}

/// Where a stored video lives.
pub fn media_path(media_dir: &Path, sha256: &str) -> PathBuf {
    media_dir.join(sha256)
}

/// Copies the videos not stored yet into `media_dir` under their SHA-256, checking each
/// copy's hash; returns the files it added.
pub fn copy_media(sources: &[MediaSource], media_dir: &Path) -> Result<Vec<(String, PathBuf)>> {
    std::fs::create_dir_all(media_dir)
        .map_err(|e| Error::io(format!("cannot create {}", media_dir.display()), e))?;
    let mut added: Vec<(String, PathBuf)> = Vec::new();
    let mut done = HashSet::new();
    let result = (|| {
        for src in sources {
            if !done.insert(src.sha256.clone()) {
                continue;
            }
            let dest = media_path(media_dir, &src.sha256);
            if dest.exists() {
                continue;
            }
            let tmp = media_dir.join(format!(
                ".{}.{}.partial",
                src.sha256,
                crate::auth::random_id(4)?
            ));
            let copy = || -> std::io::Result<String> {
                let mut from = std::fs::File::open(&src.path)?;
                let mut out = std::fs::File::create(&tmp)?;
                let mut hasher = Sha256::new();
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = from.read(&mut buf)?;
                    if n == 0 {
                        break;
                    }
                    hasher.update(&buf[..n]);
                    out.write_all(&buf[..n])?;
                }
                out.sync_all()?;
                Ok(crate::auth::hex(&hasher.finalize()))
            };
            let sha = copy().map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                Error::io(format!("cannot copy video {}", src.file), e)
            })?;
            if sha != src.sha256 {
                let _ = std::fs::remove_file(&tmp);
                return Err(Error::Invalid(format!(
                    "video `{}` (line {}) changed while it was being imported; run the import again",
                    src.file, src.line
                )));
            }
            std::fs::rename(&tmp, &dest)
                .map_err(|e| Error::io(format!("cannot store video {}", src.file), e))?;
            added.push((src.sha256.clone(), dest));
        }
        Ok(())
    })();
    match result {
        Ok(()) => Ok(added),
        Err(e) => {
            for (_, f) in added {
                let _ = std::fs::remove_file(f);
            }
            Err(e)
        }
    }
}

/// Where the strip of `frames` frames of a stored video lives.
pub fn strip_path(media_dir: &Path, sha256: &str, frames: i64) -> PathBuf {
    media_dir.join(format!("{sha256}.k{frames}.jpg"))
}

fn sha256_file(path: &Path) -> std::io::Result<(String, u64)> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        h.update(&buf[..n]);
    }
    Ok((crate::auth::hex(&h.finalize()), size))
}

/// Stores the served copy of every clip (without metadata when ffmpeg is there, else
/// as it is) under its SHA-256; returns them with the files this call added.
pub fn prepare_study_media(
    sets: &CheckedSets,
    media_dir: &Path,
    strip_metadata: bool,
) -> Result<(Vec<ServedCopy>, Vec<PathBuf>)> {
    std::fs::create_dir_all(media_dir)
        .map_err(|e| Error::io(format!("cannot create {}", media_dir.display()), e))?;
    let mut added = Vec::new();
    let mut out = Vec::new();
    // Source file hash -> its served copy (sha, size): one copy per distinct video.
    let mut done: HashMap<String, (String, u64)> = HashMap::new();
    let result = (|| {
        for set in &sets.sets {
            for clip in &set.clips {
                if let Some((sha, size)) = done.get(&clip.media.sha256) {
                    out.push(ServedCopy {
                        clip_key: clip.clip_id.clone(),
                        sha256: sha.clone(),
                        media_type: clip.media.media_type.to_string(),
                        size: i64::try_from(*size).unwrap_or(i64::MAX),
                    });
                    continue;
                }
                let ext = extension_for(clip.media.media_type);
                let tmp = media_dir.join(format!(".study-{}.{ext}", crate::auth::random_id(8)?));
                if strip_metadata {
                    video::copy_without_metadata(&clip.path, &tmp, ext).map_err(|e| {
                        Error::Invalid(format!(
                            "set `{}`, clip `{}`: {e}",
                            set.set_id, clip.clip_id
                        ))
                    })?;
                } else {
                    std::fs::copy(&clip.path, &tmp)
                        .map_err(|e| Error::io(format!("cannot copy video {}", clip.file), e))?;
                }
                let (sha, size) = sha256_file(&tmp)
                    .map_err(|e| Error::io(format!("cannot read the copy of {}", clip.file), e))?;
                let dest = media_path(media_dir, &sha);
                if dest.exists() {
                    let _ = std::fs::remove_file(&tmp);
                } else {
                    std::fs::rename(&tmp, &dest)
                        .map_err(|e| Error::io(format!("cannot store video {}", clip.file), e))?;
                    added.push(dest);
                }
                done.insert(clip.media.sha256.clone(), (sha.clone(), size));
                out.push(ServedCopy {
                    clip_key: clip.clip_id.clone(),
                    sha256: sha,
                    media_type: clip.media.media_type.to_string(),
                    size: i64::try_from(size).unwrap_or(i64::MAX),
                });
            }
        }
        Ok(())
    })();
    match result {
        Ok(()) => Ok((out, added)),
        Err(e) => {
            for f in added {
                let _ = std::fs::remove_file(f);
            }
            Err(e)
        }
    }
}

/// Draws the strips of `frames` frames that are missing; returns how many it drew.
pub fn draw_strips(hashes: &[String], media_dir: &Path, layout: StripLayout) -> Result<usize> {
    let mut made = 0;
    for sha in hashes {
        let frames = i64::try_from(layout.k).unwrap_or(8);
        let out = strip_path(media_dir, sha, frames);
        if out.exists() {
            continue;
        }
        video::make_strip(&media_path(media_dir, sha), &out, layout)?;
        made += 1;
    }
    Ok(made)
}
