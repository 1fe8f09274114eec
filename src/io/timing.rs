//! A video's frame timing read from its container's own tables, without a decoder or
//! another process: MP4 and QuickTime, through Mozilla's `mp4parse` (the time-to-sample
//! table, `stts`, of the first video track: its frame count, and each frame's duration
//! in the track's time base). Other containers (WebM, Matroska, Ogg, AVI), fragmented
//! MP4 (whose tables are empty) and files whose tables do not say are left to ffprobe
//! (`io::video::probe_read`), which agrees with what is read here: the count exactly,
//! and the rate as the same fraction (a constant rate: the time base over one frame's
//! duration, as ffprobe's `r_frame_rate`; a variable one: the mean spacing of the
//! presented frames, their count but one over the span of their presentation times).

use crate::domain::video::{FrameRate, ReadTiming};
use std::io::Read;

/// More frames than any clip under review has (a day at 100 fps): tables that claim
/// more are left to ffprobe rather than walked frame by frame.
const MAX_FRAMES: u64 = 10_000_000;

/// The timing of an MP4 or QuickTime file read from `src` (which is read to its end or
/// to the first thing the parser cannot read); none when its tables do not say.
pub fn mp4_timing(src: &mut impl Read) -> Option<ReadTiming> {
    // The parser is not ours: a panic on a file someone made is a file we cannot read
    // here (ffprobe is asked instead), not a crashed import.
    let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| mp4parse::read_mp4(src)))
        .ok()?
        .ok()?;
    let track = parsed
        .tracks
        .iter()
        .find(|t| t.track_type == mp4parse::TrackType::Video)?;
    let timescale = track.timescale.as_ref()?.0;
    let stts = track.stts.as_ref()?;
    // Each frame's composition offset (B-frames are presented after they are decoded),
    // one per frame in decoding order.
    let mut offsets = track.ctts.iter().flat_map(|c| {
        c.samples.iter().flat_map(|o| {
            let offset = match o.time_offset {
                mp4parse::TimeOffsetVersion::Version0(v) => i64::from(v),
                mp4parse::TimeOffsetVersion::Version1(v) => i64::from(v),
            };
            std::iter::repeat_n(offset, o.sample_count as usize)
        })
    });
    let mut frames: u64 = 0;
    let mut decode: i64 = 0;
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    let mut delta: Option<u32> = None;
    let mut constant = true;
    for s in stts.samples.iter().filter(|s| s.sample_count > 0) {
        match delta {
            None => delta = Some(s.sample_delta),
            Some(d) if d != s.sample_delta => constant = false,
            Some(_) => {}
        }
        if frames + u64::from(s.sample_count) > MAX_FRAMES {
            return None;
        }
        for _ in 0..s.sample_count {
            let shown = decode.checked_add(offsets.next().unwrap_or(0))?;
            (first, last) = (first.min(shown), last.max(shown));
            decode = decode.checked_add(i64::from(s.sample_delta))?;
            frames += 1;
        }
    }
    let rate = if constant {
        FrameRate::new(timescale, u64::from(delta?))?
    } else {
        // The mean spacing of the presented frames, as `io::video::probe_read` takes it.
        let span = u64::try_from(last.checked_sub(first)?).ok()?;
        FrameRate::new(timescale.checked_mul(frames.checked_sub(1)?)?, span)?
    };
    (frames > 0).then_some(ReadTiming {
        rate,
        constant,
        frames,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn native(path: &Path) -> Option<ReadTiming> {
        mp4_timing(&mut std::io::BufReader::new(
            std::fs::File::open(path).expect("open"),
        ))
    }

    /// Clips at constant and variable rates, H.264 with B-frames and without, MP4 and
    /// QuickTime: what the tables say is what ffprobe says, to the frame and the
    /// fraction.
    #[test]
    fn the_tables_give_what_ffprobe_gives() {
        let dir = tempfile::tempdir().expect("temp dir");
        let x264 = ["-c:v", "libx264", "-pix_fmt", "yuv420p"];
        let cases: Vec<(&str, Vec<&str>, bool)> = vec![
            (
                "cfr30.mp4",
                [
                    &["-f", "lavfi", "-i", "testsrc=s=64x48:r=30:d=2"][..],
                    &x264,
                ]
                .concat(),
                true,
            ),
            (
                "ntsc.mp4",
                [
                    &["-f", "lavfi", "-i", "testsrc=s=64x48:r=30000/1001:d=2"][..],
                    &x264,
                ]
                .concat(),
                true,
            ),
            (
                "pal-nob.mov",
                [
                    &["-f", "lavfi", "-i", "testsrc=s=64x48:r=25:d=3"][..],
                    &x264,
                    &["-bf", "0"],
                ]
                .concat(),
                true,
            ),
            (
                "vfr.mp4",
                [
                    &[
                        "-f",
                        "lavfi",
                        "-i",
                        "testsrc=s=64x48:r=25:d=2",
                        "-vf",
                        "setpts='if(lt(N,10),N/10,1+(N-10)/25)/TB'",
                        "-fps_mode",
                        "vfr",
                    ][..],
                    &x264,
                ]
                .concat(),
                false,
            ),
            (
                "mpeg4.mp4",
                vec![
                    "-f",
                    "lavfi",
                    "-i",
                    "testsrc=s=64x48:r=12:d=2",
                    "-c:v",
                    "mpeg4",
                ],
                true,
            ),
        ];
        for (name, args, constant) in cases {
            let Some(v) = crate::io::video::test_clip(dir.path(), name, &args) else {
                return;
            };
            let ours = native(&v).unwrap_or_else(|| panic!("{name}: no timing from its tables"));
            let theirs = crate::io::video::probe_read(&v).expect("ffprobe");
            assert_eq!(ours, theirs, "{name}");
            assert_eq!(ours.constant, constant, "{name}");
        }
    }

    #[test]
    fn a_file_that_is_not_mp4_has_no_timing_from_tables() {
        assert_eq!(mp4_timing(&mut &b"plain text, not a video"[..]), None);
        assert_eq!(
            mp4_timing(&mut &b"\0\0\0\x18ftypisom\0\0\0\0isommp41"[..]),
            None,
            "a header without tracks"
        );
        let webm = crate::demo::CLIPS[0];
        assert_eq!(mp4_timing(&mut &webm[..]), None);
    }
}
