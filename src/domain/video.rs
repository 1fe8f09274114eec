//! What Tandem knows of a video beyond its bytes.

/// A video's frame rate and frame count, as the review player needs them to step to
/// the middle of each frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameTiming {
    /// Frames per second: the rate of a constant-rate video, the average rate otherwise.
    pub fps: f64,
    /// Whether every frame lasts as long as the others (within the container's time
    /// base, which rounds: WebM counts milliseconds, so 30 fps is 33 and 34 ms).
    pub constant: bool,
    /// How many frames the video shows.
    pub frames: u64,
}
