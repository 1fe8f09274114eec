//! What Tandem asks of the `ffmpeg` and `ffprobe` programs: strips of K evenly spaced
//! frames, copies of a video without its metadata (for the blind study), and a video's
//! frame rate and frame count (for frame-exact stepping). All are optional: without
//! them, reviewers get no strip, the player steps from frame to frame as the browser
//! presents them, and the study shows videos only.

pub use crate::domain::video::FrameTiming;
use crate::domain::video::{FrameRate, ReadTiming};
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
    // ffprobe's count, when it gives one; without it the frames are sampled by time.
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

fn ffprobe_json(args: &[&str], video: &Path) -> Result<serde_json::Value> {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-select_streams", "v:0", "-of", "json"])
        .args(args)
        .arg(video)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::io("cannot run ffprobe", e))?;
    if !out.status.success() {
        return Err(Error::Invalid(
            "ffprobe cannot read the video's frames".into(),
        ));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| Error::Invalid(format!("ffprobe said something unreadable: {e}")))
}

/// A rate as ffprobe writes it (`30000/1001`, `8/1`, `25`), exactly; `None` for `0/0`
/// and the like.
fn parse_rational(s: &str) -> Option<FrameRate> {
    let (n, d) = s.trim().split_once('/').unwrap_or((s.trim(), "1"));
    FrameRate::new(n.parse().ok()?, d.parse().ok()?)
}

/// How a video's presented frames are spaced: their mean rate exactly (the frames but
/// one over the span from the first presentation time to the last, both in ticks of
/// `time_base`), and whether every gap is that mean to within one tick (timestamps are
/// whole ticks, so a rate the time base cannot hold exactly is still even).
struct Spacing {
    rate: FrameRate,
    even: bool,
    mean_seconds: f64,
    tick_seconds: f64,
}

/// [`Spacing`] of sorted presentation times; none for fewer than two frames.
fn presented_spacing(sorted_pts: &[i64], time_base: FrameRate) -> Option<Spacing> {
    let (first, last) = (*sorted_pts.first()?, *sorted_pts.last()?);
    let gaps = u64::try_from(sorted_pts.len().checked_sub(1)?).ok()?;
    // No frames, or time running backwards: no rate can be said.
    let span = u64::try_from(last.checked_sub(first)?).ok()?;
    let rate = FrameRate::new(
        gaps.checked_mul(time_base.den)?,
        span.checked_mul(time_base.num)?,
    )?;
    let mean_ticks = span as f64 / gaps as f64;
    let even = sorted_pts
        .windows(2)
        .all(|w| ((w[1] - w[0]) as f64 - mean_ticks).abs() <= 1.0 + 1e-9);
    let tick_seconds = time_base.num as f64 / time_base.den as f64;
    Some(Spacing {
        rate,
        even,
        mean_seconds: mean_ticks * tick_seconds,
        tick_seconds: tick_seconds + 1e-9,
    })
}

/// Reads the frame rate (and whether it is constant) and the frame count of the first
/// video stream of `video` with ffprobe. The count is the container's when it states one
/// (MP4 does), else the frames are counted by decoding them (WebM often states none).
/// Whether the rate is constant is judged from every frame's presentation time; the
/// rate of a constant-rate video is the one ffprobe states that its frames keep, of a
/// variable one the mean of the frames' spacing, exactly (ffprobe's `avg_frame_rate`
/// only when it gives no timestamps).
pub fn probe_timing(video: &Path) -> Result<FrameTiming> {
    probe_read(video).map(FrameTiming::from)
}

/// [`probe_timing`], the rate exactly as ffprobe states it.
pub fn probe_read(video: &Path) -> Result<ReadTiming> {
    let v = ffprobe_json(
        &[
            "-show_entries",
            "stream=r_frame_rate,avg_frame_rate,time_base,nb_frames:packet=pts",
        ],
        video,
    )?;
    let stream = v["streams"]
        .get(0)
        .ok_or_else(|| Error::Invalid("the file has no video stream".into()))?;
    let field = |k: &str| stream[k].as_str().unwrap_or_default().to_string();
    // Presentation times in ticks of the time base, in presentation order.
    let mut pts: Vec<i64> = v["packets"]
        .as_array()
        .map(|ps| ps.iter().filter_map(|p| p["pts"].as_i64()).collect())
        .unwrap_or_default();
    pts.sort_unstable();
    let time_base = parse_rational(&field("time_base"));
    let r_rate = parse_rational(&field("r_frame_rate"));
    let avg_rate = parse_rational(&field("avg_frame_rate"));
    let spacing = time_base.and_then(|tb| presented_spacing(&pts, tb));
    let constant = match &spacing {
        Some(s) => s.even,
        None => r_rate.is_some() && r_rate == avg_rate,
    };
    // A stated rate is taken only when the frames keep it, to within one tick.
    let kept = |rate: Option<FrameRate>| {
        rate.filter(|r| {
            spacing
                .as_ref()
                .is_none_or(|s| (1.0 / r.fps() - s.mean_seconds).abs() <= s.tick_seconds)
        })
    };
    let mean = spacing.as_ref().map(|s| s.rate);
    let rate = if constant {
        kept(r_rate).or(kept(avg_rate)).or(mean)
    } else {
        // A container may state a nominal rate as its average (WebM does): the frames'
        // own mean spacing is the average, as `io::timing` reads it from MP4's tables.
        mean.or(avg_rate)
    }
    .ok_or_else(|| Error::Invalid("ffprobe found no frame rate".into()))?;
    // A container that does not state its frame count: counted below.
    let stated = field("nb_frames").parse::<u64>().ok().filter(|n| *n > 0);
    let frames = match stated {
        Some(n) => n,
        None => {
            let counted = ffprobe_json(
                &["-count_frames", "-show_entries", "stream=nb_read_frames"],
                video,
            )?;
            // A count ffprobe did not give: none.
            counted["streams"][0]["nb_read_frames"]
                .as_str()
                .and_then(|s| s.parse::<u64>().ok())
                .filter(|n| *n > 0)
                .ok_or_else(|| Error::Invalid("ffprobe counted no frames".into()))?
        }
    };
    Ok(ReadTiming {
        rate,
        constant,
        frames,
    })
}

/// Makes a clip with ffmpeg's test source in `dir` (ffmpeg's `args`, then the file);
/// `None` (and a note) without ffmpeg, or a failure when the run must have it
/// (`TANDEM_REQUIRE_FFMPEG`, as `.ci/run` sets). For the tests of the video readers.
#[cfg(test)]
pub(crate) fn test_clip(dir: &Path, name: &str, args: &[&str]) -> Option<std::path::PathBuf> {
    if !ffmpeg_available() {
        assert!(
            std::env::var_os("TANDEM_REQUIRE_FFMPEG").is_none(),
            "ffmpeg is required here (TANDEM_REQUIRE_FFMPEG) but is not installed"
        );
        eprintln!("note: a video test was SKIPPED: ffmpeg is not installed");
        return None;
    }
    let out = dir.join(name);
    let status = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-y"])
        .args(args)
        .arg(&out)
        .status()
        .expect("run ffmpeg");
    assert!(status.success(), "ffmpeg made no {name}");
    Some(out)
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

    fn states_frame_count(video: &Path) -> bool {
        let v = ffprobe_json(&["-show_entries", "stream=nb_frames"], video).expect("ffprobe");
        v["streams"][0]["nb_frames"].as_str().is_some()
    }

    #[test]
    fn a_webm_clip_at_8_fps_has_its_frames_counted() {
        let dir = tempfile::tempdir().expect("temp dir");
        let Some(v) = test_clip(
            dir.path(),
            "eight.webm",
            &[
                "-f",
                "lavfi",
                "-i",
                "testsrc=s=64x48:r=8:d=4",
                "-c:v",
                "libvpx-vp9",
                "-g",
                "8",
            ],
        ) else {
            return;
        };
        assert!(
            !states_frame_count(&v),
            "WebM states no frame count: it must be counted"
        );
        let t = probe_timing(&v).expect("timing");
        assert_eq!(t.frames, 32);
        assert!(t.constant);
        assert!((t.fps - 8.0).abs() < 1e-9, "{t:?}");
    }

    #[test]
    fn an_mp4_clip_at_ntsc_rate_gives_the_exact_rate_and_its_stated_count() {
        let dir = tempfile::tempdir().expect("temp dir");
        let Some(v) = test_clip(
            dir.path(),
            "ntsc.mp4",
            &[
                "-f",
                "lavfi",
                "-i",
                "testsrc=s=64x48:r=30000/1001:d=2",
                "-c:v",
                "libx264",
                "-pix_fmt",
                "yuv420p",
            ],
        ) else {
            return;
        };
        assert!(states_frame_count(&v));
        let t = probe_timing(&v).expect("timing");
        assert_eq!(t.frames, 60);
        assert!(t.constant);
        assert!((t.fps - 30000.0 / 1001.0).abs() < 1e-9, "{t:?}");
    }

    #[test]
    fn a_webm_clip_at_30_fps_is_constant_despite_millisecond_timestamps() {
        let dir = tempfile::tempdir().expect("temp dir");
        let Some(v) = test_clip(
            dir.path(),
            "thirty.webm",
            &[
                "-f",
                "lavfi",
                "-i",
                "testsrc=s=64x48:r=30:d=3",
                "-c:v",
                "libvpx-vp9",
            ],
        ) else {
            return;
        };
        let t = probe_timing(&v).expect("timing");
        assert_eq!(t.frames, 90);
        assert!(t.constant, "33 and 34 ms are one rate rounded: {t:?}");
        assert!((t.fps - 30.0).abs() < 1e-9, "{t:?}");
    }

    #[test]
    fn a_clip_whose_frames_last_unequally_is_variable_rate() {
        let dir = tempfile::tempdir().expect("temp dir");
        // Ten frames at 10 fps, then the rest at 25 fps.
        let Some(v) = test_clip(
            dir.path(),
            "vfr.webm",
            &[
                "-f",
                "lavfi",
                "-i",
                "testsrc=s=64x48:r=25:d=2",
                "-vf",
                "setpts='if(lt(N,10),N/10,1+(N-10)/25)/TB'",
                "-fps_mode",
                "passthrough",
                "-c:v",
                "libvpx-vp9",
            ],
        ) else {
            return;
        };
        let t = probe_timing(&v).expect("timing");
        assert_eq!(t.frames, 50);
        assert!(!t.constant, "{t:?}");
        assert!(t.fps > 10.0 && t.fps < 25.0, "an average rate: {t:?}");
    }

    #[test]
    fn a_file_that_is_no_video_has_no_timing() {
        let dir = tempfile::tempdir().expect("temp dir");
        if !ffmpeg_available() {
            assert!(std::env::var_os("TANDEM_REQUIRE_FFMPEG").is_none());
            return;
        }
        let p = dir.path().join("not-a-video.webm");
        std::fs::write(&p, b"plain text, not a video").expect("write");
        assert!(probe_timing(&p).is_err());
    }

    #[test]
    fn rates_are_read_as_ffprobe_writes_them() {
        let r = |n, d| FrameRate::new(n, d);
        assert_eq!(parse_rational("8/1"), r(8, 1));
        assert_eq!(parse_rational("25"), r(25, 1));
        assert_eq!(parse_rational("0/0"), None);
        assert_eq!(parse_rational("N/A"), None);
        assert_eq!(parse_rational("60000/2002"), r(30000, 1001));
    }

    #[test]
    fn spacing_is_the_exact_mean_and_even_to_one_tick() {
        let ms = FrameRate::new(1, 1000).expect("time base");
        // 30 fps in milliseconds: gaps of 33 and 34 ticks are one rate rounded.
        let s = presented_spacing(&[0, 33, 67, 100], ms).expect("spacing");
        assert_eq!(s.rate, FrameRate::new(30, 1).expect("rate"));
        assert!(s.even);
        // Ten frames a second, then twenty-five: uneven, the mean over the span.
        let pts = [0, 100, 200, 240, 280];
        let s = presented_spacing(&pts, ms).expect("spacing");
        assert!(!s.even);
        assert_eq!(s.rate, FrameRate::new(4 * 1000, 280).expect("rate"));
        assert!(presented_spacing(&[5], ms).is_none());
        assert!(presented_spacing(&[5, 5], ms).is_none(), "no span");
    }
}
