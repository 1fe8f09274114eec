//! What the benches share: real H.264 MP4 clips, made once with ffmpeg, and copies made
//! distinct by a box every reader skips.

use std::path::Path;

/// One small H.264 MP4 (ffmpeg's test source, 160x120, 30 fps, 2 s), whose frame timing
/// an import reads from its own tables; `None` without ffmpeg.
pub fn h264_mp4(dir: &Path) -> Option<Vec<u8>> {
    let out = dir.join("base.mp4");
    let made = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg("testsrc=s=160x120:r=30:d=2")
        .args(["-c:v", "libx264", "-pix_fmt", "yuv420p"])
        .arg(&out)
        .status()
        .is_ok_and(|s| s.success());
    made.then(|| std::fs::read(&out).expect("read the clip ffmpeg made"))
}

/// `base` with a `free` box holding `tag` appended: the same video, another file.
pub fn distinct(base: &[u8], tag: &str) -> Vec<u8> {
    let mut bytes = base.to_vec();
    let size = u32::try_from(8 + tag.len()).expect("a short tag");
    bytes.extend_from_slice(&size.to_be_bytes());
    bytes.extend_from_slice(b"free");
    bytes.extend_from_slice(tag.as_bytes());
    bytes
}
