//! What Tandem asks of the `ffmpeg` and `ffprobe` programs: strips of K evenly spaced
//! frames, and copies of a video without its metadata (for the blind study). Both are
//! optional: without them, reviewers get no strip and the study shows videos only.

use crate::error::{Error, Result};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// Whether ffmpeg and ffprobe are installed.
pub fn ffmpeg_available() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    *OK.get_or_init(|| {
        ["ffmpeg", "ffprobe"].iter().all(|tool| {
            Command::new(tool)
                .arg("-version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
    })
}

/// The frame numbers of a strip: the middle frame of each of `k` equal spans of `n`.
pub fn sample_frames(n: u64, k: u64) -> Vec<u64> {
    (0..k).map(|i| ((2 * i + 1) * n) / (2 * k)).collect()
}

/// How a strip is laid out: `k` frames, `columns` per row, each `width` pixels wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StripLayout {
    pub k: u64,
    pub columns: u64,
    pub width: u32,
}

impl StripLayout {
    fn tile(self) -> String {
        let rows = self.k.div_ceil(self.columns.max(1));
        format!("tile={}x{rows}", self.columns.max(1))
    }
}

/// ffmpeg options that keep its version and any metadata out of what it writes.
const BITEXACT: [&str; 6] = [
    "-map_metadata",
    "-1",
    "-fflags",
    "+bitexact",
    "-flags",
    "+bitexact",
];

/// Makes a JPEG of `layout.k` evenly spaced frames of `video`: in one decoding pass
/// when the frames can be counted, else by seeking to each.
pub fn make_strip(video: &Path, out: &Path, layout: StripLayout) -> Result<()> {
    let tmp = out.with_extension(format!("{}.partial.jpg", crate::auth::random_id(4)?));
    let counted = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-count_packets"])
        .args([
            "-show_entries",
            "stream=nb_read_packets",
            "-of",
            "default=nw=1:nk=1",
        ])
        .arg(video)
        .output()
        .map_err(|e| Error::io("cannot run ffprobe", e))?;
    let frames: Option<u64> = String::from_utf8_lossy(&counted.stdout)
        .trim()
        .parse()
        .ok()
        .filter(|n| *n >= layout.k);
    if let Some(n) = frames {
        let select = sample_frames(n, layout.k)
            .iter()
            .map(|f| format!("eq(n\\,{f})"))
            .collect::<Vec<_>>()
            .join("+");
        let status = Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-i"])
            .arg(video)
            .arg("-vf")
            .arg(format!(
                "select='{select}',scale={}:-2,{}",
                layout.width,
                layout.tile()
            ))
            .args(["-frames:v", "1", "-q:v", "4"])
            .args(BITEXACT)
            .arg(&tmp)
            .stderr(Stdio::null())
            .status()
            .map_err(|e| Error::io("cannot run ffmpeg", e))?;
        if status.success() && tmp.exists() {
            return std::fs::rename(&tmp, out)
                .map_err(|e| Error::io("cannot store the frame strip", e));
        }
        let _ = std::fs::remove_file(&tmp);
    }
    strip_by_seeking(video, out, layout)
}

fn strip_by_seeking(video: &Path, out: &Path, layout: StripLayout) -> Result<()> {
    let probe = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_entries",
            "format=duration",
            "-of",
            "default=nw=1:nk=1",
        ])
        .arg(video)
        .output()
        .map_err(|e| Error::io("cannot run ffprobe", e))?;
    let duration: f64 = String::from_utf8_lossy(&probe.stdout)
        .trim()
        .parse()
        .map_err(|_| Error::Invalid("ffprobe found no duration".into()))?;
    if duration.is_nan() || duration <= 0.0 {
        return Err(Error::Invalid("the video has no duration".into()));
    }
    // One frame at the middle of each of k equal spans, t = (i + 0.5) * duration / k,
    // each taken by an accurate seek, then tiled.
    let dir = out.with_extension(format!("frames-{}", crate::auth::random_id(4)?));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io("cannot make the frame strip", e))?;
    let result = (|| {
        for i in 0..layout.k {
            let t = (i as f64 + 0.5) * duration / layout.k as f64;
            let frame = dir.join(format!("{i}.png"));
            let status = Command::new("ffmpeg")
                .args(["-v", "error", "-y", "-ss"])
                .arg(format!("{t:.4}"))
                .arg("-i")
                .arg(video)
                .arg("-frames:v")
                .arg("1")
                .arg("-vf")
                .arg(format!("scale={}:-2", layout.width))
                .arg(&frame)
                .stderr(Stdio::null())
                .status()
                .map_err(|e| Error::io("cannot run ffmpeg", e))?;
            if !status.success() || !frame.exists() {
                return Err(Error::Invalid(format!("ffmpeg found no frame at {t:.2} s")));
            }
        }
        let tmp = out.with_extension(format!("{}.partial.jpg", crate::auth::random_id(4)?));
        let status = Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-start_number", "0", "-i"])
            .arg(dir.join("%d.png"))
            .arg("-vf")
            .arg(layout.tile())
            .args(["-frames:v", "1", "-q:v", "4"])
            .args(BITEXACT)
            .arg(&tmp)
            .stderr(Stdio::null())
            .status()
            .map_err(|e| Error::io("cannot run ffmpeg", e))?;
        if !status.success() || !tmp.exists() {
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::Invalid("ffmpeg could not lay out the frames".into()));
        }
        std::fs::rename(&tmp, out).map_err(|e| Error::io("cannot store the frame strip", e))
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Copies `video` to `out` without its metadata (title, comments, creation time,
/// encoder, chapters), the streams themselves untouched. `ext` names the container.
pub fn copy_without_metadata(video: &Path, out: &Path, ext: &str) -> Result<()> {
    let tmp = out.with_extension(format!("{}.partial.{ext}", crate::auth::random_id(4)?));
    let output = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-i"])
        .arg(video)
        .args(["-map", "0", "-map_chapters", "-1", "-c", "copy"])
        .args(BITEXACT)
        .arg(&tmp)
        .stdout(Stdio::null())
        .output()
        .map_err(|e| Error::io("cannot run ffmpeg", e))?;
    if !output.status.success() || !tmp.exists() {
        let _ = std::fs::remove_file(&tmp);
        let why = String::from_utf8_lossy(&output.stderr);
        return Err(Error::Invalid(format!(
            "ffmpeg cannot copy the video without its metadata: {}",
            why.lines().next().unwrap_or("no reason given")
        )));
    }
    std::fs::rename(&tmp, out).map_err(|e| Error::io("cannot store the cleaned video", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_frames_are_the_middles_of_equal_spans() {
        assert_eq!(sample_frames(36, 8), vec![2, 6, 11, 15, 20, 24, 29, 33]);
        assert_eq!(sample_frames(8, 8), vec![0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(sample_frames(100, 4), vec![12, 37, 62, 87]);
    }

    #[test]
    fn layouts_tile_in_rows() {
        let l = |k, columns| StripLayout {
            k,
            columns,
            width: 100,
        };
        assert_eq!(l(8, 8).tile(), "tile=8x1");
        assert_eq!(l(8, 4).tile(), "tile=4x2");
        assert_eq!(l(6, 4).tile(), "tile=4x2");
    }
}
