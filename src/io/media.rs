//! The media folder: videos stored once under their SHA-256 (copied from an import's
//! files, hashed on the way), the copies a study's participants receive (without
//! metadata when ffmpeg is there) and the frame strips drawn from them. Files only: the
//! application layer calls these before and after the store's transaction.

use super::limits::Limits;
use super::manifest::{describe_io, extension_for, sniff_video};
use super::video::{self, StripLayout};
use crate::cores::on_cores;
use crate::domain::import::{CheckedSets, Media, ServedCopy};
use crate::domain::video::{ReadTiming, TimingRead};
use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Where a stored video lives.
pub fn media_path(media_dir: &Path, sha256: &str) -> PathBuf {
    media_dir.join(sha256)
}

/// A video taken into the media folder: what it is, its timing, and (when its content
/// was not stored yet) the new file, still under a temporary name until [`settle`].
#[derive(Debug)]
pub struct Taken {
    pub media: Media,
    pub timing: TimingRead,
    temp: Option<PathBuf>,
}

/// Takes an import's videos into the media folder: each file read once, copied to a
/// temporary file while it is hashed and (MP4, QuickTime) its timing read from its own
/// tables; other containers, and MP4 whose tables do not say, asked of ffprobe when it
/// is there. Nothing is made durable here: [`settle`] does that for the whole batch.
pub struct Intake<'a> {
    pub media_dir: &'a Path,
    pub data_dir: &'a Path,
    pub limits: &'a Limits,
    /// Whether ffprobe may be asked what the tables do not say.
    pub ffprobe: bool,
}

/// Reads a file through, copying and hashing every byte it reads.
struct Tee<'a> {
    src: std::fs::File,
    out: &'a mut std::io::BufWriter<std::fs::File>,
    hasher: &'a mut Sha256,
    size: &'a mut u64,
}

impl Read for Tee<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.src.read(buf)?;
        if n > 0 {
            self.hasher.update(&buf[..n]);
            self.out.write_all(&buf[..n])?;
            *self.size += n as u64;
        }
        Ok(n)
    }
}

impl Intake<'_> {
    /// Takes in every file of `paths`, in parallel on the machine's cores; each result
    /// says what the file is, or why it cannot be taken (in words that follow "video
    /// `FILE` ..."). What the tables do not say is asked of ffprobe afterwards, once per
    /// distinct content (a manifest that names one video many times asks once).
    pub fn take_in(&self, paths: &[PathBuf]) -> Vec<std::result::Result<Taken, String>> {
        let mut taken = on_cores(paths, |p| self.take_one(p));
        if self.ffprobe {
            let mut ask: Vec<(String, PathBuf)> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for t in taken.iter().flatten() {
                if t.timing == TimingRead::NotTried
                    && seen.insert(t.media.sha256.clone())
                    && let Some(temp) = &t.temp
                {
                    ask.push((t.media.sha256.clone(), temp.clone()));
                }
            }
            let answers: HashMap<String, TimingRead> = ask
                .iter()
                .map(|(sha, _)| sha.clone())
                .zip(on_cores(&ask, |(_, path)| match video::probe_read(path) {
                    Ok(t) => TimingRead::Read(t.into()),
                    Err(_) => TimingRead::Unreadable,
                }))
                .collect();
            for t in taken.iter_mut().flatten() {
                if let Some(answer) = answers.get(&t.media.sha256) {
                    t.timing = *answer;
                }
            }
        }
        taken
    }

    fn take_one(&self, path: &Path) -> std::result::Result<Taken, String> {
        let unreadable = |e: std::io::Error| format!("cannot be read: {}", describe_io(&e));
        let meta = std::fs::metadata(path).map_err(unreadable)?;
        if !meta.is_file() {
            return Err("is not a regular file".into());
        }
        if meta.len() == 0 {
            return Err("is empty".into());
        }
        // The copy must leave the database its room.
        super::limits::require_space(self.data_dir, meta.len(), self.limits, "the video")
            .map_err(|e| e.to_string())?;
        let mut src = std::fs::File::open(path).map_err(unreadable)?;
        let mut head = [0u8; 64];
        let mut got = 0;
        while got < head.len() {
            match src.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) => return Err(unreadable(e)),
            }
        }
        let media_type = sniff_video(&head[..got]).ok_or(
            "is not a recognised video (MP4, QuickTime, WebM, Matroska, Ogg or AVI)".to_string(),
        )?;
        // Named so that `sweep_incoming` knows it if this process dies before `settle`.
        let temp = self.media_dir.join(format!(
            ".incoming-{}.partial",
            crate::auth::random_id(8).map_err(|e| e.to_string())?
        ));
        let stored = |e: std::io::Error| format!("cannot be stored: {}", describe_io(&e));
        let file = std::fs::File::create(&temp).map_err(stored)?;
        let mut out = std::io::BufWriter::with_capacity(256 * 1024, file);
        let mut hasher = Sha256::new();
        let mut size = got as u64;
        let copied = (|| -> std::io::Result<Option<ReadTiming>> {
            hasher.update(&head[..got]);
            out.write_all(&head[..got])?;
            let mut tee = Tee {
                src,
                out: &mut out,
                hasher: &mut hasher,
                size: &mut size,
            };
            let timing = if matches!(media_type, "video/mp4" | "video/quicktime") {
                let mut whole = std::io::Cursor::new(&head[..got]).chain(&mut tee);
                super::timing::mp4_timing(&mut whole)
            } else {
                None
            };
            // What the parser did not read is copied and hashed all the same.
            std::io::copy(&mut tee, &mut std::io::sink())?;
            out.flush()?;
            Ok(timing)
        })();
        let native = match copied {
            Ok(t) => t,
            Err(e) => {
                let _ = std::fs::remove_file(&temp);
                return Err(stored(e));
            }
        };
        // What the tables do not say is asked of ffprobe by `take_in`, once per content.
        let timing = native.map_or(TimingRead::NotTried, |t| TimingRead::Read(t.into()));
        Ok(Taken {
            media: Media {
                sha256: crate::auth::hex(&hasher.finalize()),
                size,
                media_type,
            },
            timing,
            temp: Some(temp),
        })
    }
}

/// Makes the new videos of an import durable before the database names them: one
/// `syncfs` for all their contents, then each takes its name (its SHA-256; a video
/// stored already keeps the copy it has), then one `fsync` of the folder for the names.
/// Returns the videos this added (SHA-256, file), for the caller to remove if the
/// database write fails.
pub fn settle(media_dir: &Path, taken: &mut [Taken]) -> Result<Vec<(String, PathBuf)>> {
    let folder = std::fs::File::open(media_dir)
        .map_err(|e| Error::io(format!("cannot open {}", media_dir.display()), e))?;
    if taken.iter().any(|t| t.temp.is_some()) {
        rustix::fs::syncfs(&folder)
            .map_err(|e| Error::io("cannot make the new videos durable", e.into()))?;
    }
    let mut added = Vec::new();
    for t in taken.iter_mut() {
        let Some(temp) = t.temp.take() else { continue };
        let dest = media_path(media_dir, &t.media.sha256);
        if dest.exists() {
            let _ = std::fs::remove_file(&temp);
            continue;
        }
        std::fs::rename(&temp, &dest)
            .map_err(|e| Error::io(format!("cannot store video {}", t.media.sha256), e))?;
        added.push((t.media.sha256.clone(), dest));
    }
    if !added.is_empty() {
        rustix::fs::fsync(&folder)
            .map_err(|e| Error::io("cannot make the new videos' names durable", e.into()))?;
    }
    Ok(added)
}

/// The new videos of an import for a media store elsewhere (a bucket): each content once
/// with the temporary file that holds it (the files of repeats are removed). The caller
/// uploads them before the database names them.
pub fn staged(taken: &mut [Taken]) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for t in taken.iter_mut() {
        let Some(temp) = t.temp.take() else { continue };
        if seen.insert(t.media.sha256.clone()) {
            out.push((t.media.sha256.clone(), temp));
        } else {
            let _ = std::fs::remove_file(&temp);
        }
    }
    out
}

/// The timing of stored videos (by SHA-256), several at once: MP4 and QuickTime from
/// their own tables, the others (and MP4 whose tables do not say) with ffprobe when
/// `ffprobe`, else not tried.
pub fn read_timings(
    media_dir: &Path,
    hashes: &[String],
    ffprobe: bool,
) -> Vec<(String, TimingRead)> {
    on_cores(hashes, |sha| {
        let path = media_path(media_dir, sha);
        // A file that cannot be opened has no timing of its own to read: ffprobe is
        // asked (and says why), or the clip plays by presented frames.
        let native = std::fs::File::open(&path)
            .ok()
            .and_then(|f| super::timing::mp4_timing(&mut std::io::BufReader::new(f)));
        let timing = match native {
            Some(t) => TimingRead::Read(t.into()),
            None if ffprobe => match video::probe_read(&path) {
                Ok(t) => TimingRead::Read(t.into()),
                Err(_) => TimingRead::Unreadable,
            },
            None => TimingRead::NotTried,
        };
        (sha.clone(), timing)
    })
}

/// Removes what imports stopped mid-way (a killed process) left in the media folder:
/// temporary files not written for `age`, long past any running import's last write.
/// Returns how many it removed.
pub fn sweep_incoming(media_dir: &Path, age: std::time::Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(media_dir) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        if !(name.starts_with(".incoming-") && name.ends_with(".partial")) {
            continue;
        }
        // A file whose age cannot be read is not old enough to remove.
        let stale = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|idle| idle >= age);
        if stale && std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Removes the temporary files of videos taken in but not kept (a refused import).
pub fn discard(taken: &mut [Taken]) {
    for t in taken.iter_mut() {
        if let Some(temp) = t.temp.take() {
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// The stored name of the strip of `frames` frames of a stored video (the study's).
pub fn strip_name(sha256: &str, frames: i64) -> String {
    format!("{sha256}.k{frames}.jpg")
}

/// The stored name of a video's reviewers' strip.
pub fn review_strip_name(sha256: &str) -> String {
    format!("{sha256}.strip.jpg")
}

/// Where the strip of `frames` frames of a stored video lives in the media folder.
pub fn strip_path(media_dir: &Path, sha256: &str, frames: i64) -> PathBuf {
    media_dir.join(strip_name(sha256, frames))
}

pub fn sha256_file(path: &Path) -> std::io::Result<(String, u64)> {
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

/// Stores the copy of one video that participants are served (without metadata when
/// `strip_metadata`, else as it is) under its SHA-256: its hash, its size, and its path
/// when this call added the file (none when the same copy was there).
pub fn served_copy(
    src: &Path,
    media_dir: &Path,
    ext: &str,
    strip_metadata: bool,
) -> Result<(String, u64, Option<PathBuf>)> {
    let name = src
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let tmp = media_dir.join(format!(".served-{}.{ext}", crate::auth::random_id(8)?));
    let made = if strip_metadata {
        video::copy_without_metadata(src, &tmp, ext).map_err(|e| Error::Invalid(e.to_string()))
    } else {
        std::fs::copy(src, &tmp)
            .map(|_| ())
            .map_err(|e| Error::io(format!("cannot copy video {name}"), e))
    };
    if let Err(e) = made {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    let (sha, size) = match sha256_file(&tmp) {
        Ok(x) => x,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::io(format!("cannot read the copy of {name}"), e));
        }
    };
    let dest = media_path(media_dir, &sha);
    if dest.exists() {
        let _ = std::fs::remove_file(&tmp);
        return Ok((sha, size, None));
    }
    std::fs::rename(&tmp, &dest).map_err(|e| Error::io(format!("cannot store video {name}"), e))?;
    Ok((sha, size, Some(dest)))
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
                let (sha, size, new) = served_copy(
                    &clip.path,
                    media_dir,
                    extension_for(clip.media.media_type),
                    strip_metadata,
                )
                .map_err(|e| match e {
                    Error::Invalid(m) => Error::Invalid(format!(
                        "set `{}`, clip `{}`: {m}",
                        set.set_id, clip.clip_id
                    )),
                    e => e,
                })?;
                added.extend(new);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    #[test]
    fn only_stale_incoming_files_are_swept() {
        let dir = tempfile::tempdir().expect("temp dir");
        let old = dir.path().join(".incoming-aaaa.partial");
        let fresh = dir.path().join(".incoming-bbbb.partial");
        let video = dir.path().join("0123abcd");
        let strip = dir.path().join("0123abcd.k8.jpg");
        for p in [&old, &fresh, &video, &strip] {
            std::fs::write(p, b"x").expect("write");
        }
        let two_days_ago = SystemTime::now() - Duration::from_secs(48 * 3600);
        for p in [&old, &video, &strip] {
            std::fs::File::options()
                .write(true)
                .open(p)
                .and_then(|f| f.set_modified(two_days_ago))
                .expect("age the file");
        }
        assert_eq!(
            sweep_incoming(dir.path(), Duration::from_secs(24 * 3600)),
            1
        );
        assert!(!old.exists());
        assert!(fresh.exists() && video.exists() && strip.exists());
        assert_eq!(sweep_incoming(&dir.path().join("none"), Duration::ZERO), 0);
    }

    #[test]
    fn a_refused_batch_leaves_nothing_and_a_settled_one_names_each_video_once() {
        let dir = tempfile::tempdir().expect("temp dir");
        let src = dir.path().join("src");
        let media = dir.path().join("media");
        std::fs::create_dir_all(&src).expect("dir");
        std::fs::create_dir_all(&media).expect("dir");
        let webm = crate::demo::CLIPS[0];
        let (a, b, c) = (src.join("a.webm"), src.join("b.webm"), src.join("c.txt"));
        std::fs::write(&a, webm).expect("write");
        std::fs::write(&b, webm).expect("write");
        std::fs::write(&c, b"not a video").expect("write");
        let limits = Limits::default();
        let intake = Intake {
            media_dir: &media,
            data_dir: dir.path(),
            limits: &limits,
            ffprobe: false,
        };
        let results = intake.take_in(&[a.clone(), b.clone(), c]);
        assert!(
            results[2]
                .as_ref()
                .is_err_and(|m| m.contains("not a recognised video"))
        );
        let mut taken: Vec<Taken> = results.into_iter().filter_map(|r| r.ok()).collect();
        assert_eq!(taken.len(), 2);
        assert_eq!(taken[0].media.sha256, taken[1].media.sha256);
        assert_eq!(taken[0].media.size, webm.len() as u64);
        assert_eq!(
            taken[0].timing,
            TimingRead::NotTried,
            "WebM without ffprobe"
        );
        discard(&mut taken);
        assert_eq!(std::fs::read_dir(&media).expect("list").count(), 0);

        let mut taken: Vec<Taken> = intake
            .take_in(&[a, b])
            .into_iter()
            .filter_map(|r| r.ok())
            .collect();
        let added = settle(&media, &mut taken).expect("settle");
        assert_eq!(added.len(), 1, "one content, one file");
        let names: Vec<_> = std::fs::read_dir(&media)
            .expect("list")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from(&taken[0].media.sha256)]);
        assert_eq!(std::fs::read(&added[0].1).expect("read"), webm);

        // With ffprobe, a WebM's timing is asked once for its content, and every file
        // with that content gets the answer.
        if video::ffmpeg_available() {
            let (c, d) = (src.join("c.webm"), src.join("d.webm"));
            std::fs::write(&c, webm).expect("write");
            std::fs::write(&d, webm).expect("write");
            let intake = Intake {
                ffprobe: true,
                ..intake
            };
            let mut taken: Vec<Taken> = intake
                .take_in(&[c, d])
                .into_iter()
                .filter_map(|r| r.ok())
                .collect();
            assert!(matches!(taken[0].timing, TimingRead::Read(t) if t.frames > 0));
            assert_eq!(taken[0].timing, taken[1].timing);
            discard(&mut taken);
        }
    }
}
