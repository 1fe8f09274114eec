//! What Tandem knows of a video beyond its bytes.

/// A video's frame rate and frame count, as the review player needs them to step to
/// the middle of each frame (and as they are stored with each clip version).
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

/// A frame rate as a fraction in lowest terms (`30000/1001`), as containers and ffprobe
/// state it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrameRate {
    pub num: u64,
    pub den: u64,
}

impl FrameRate {
    /// `num/den` in lowest terms; none for a zero part.
    pub fn new(num: u64, den: u64) -> Option<FrameRate> {
        if num == 0 || den == 0 {
            return None;
        }
        let g = gcd(num, den);
        Some(FrameRate {
            num: num / g,
            den: den / g,
        })
    }

    pub fn fps(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl std::fmt::Display for FrameRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.num, self.den)
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A video's timing as read from its file: the rate exactly (a constant rate is the
/// time base over one frame's duration; a variable one, the mean spacing of the
/// presented frames), whether it is constant, and the frame count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadTiming {
    pub rate: FrameRate,
    pub constant: bool,
    pub frames: u64,
}

impl From<ReadTiming> for FrameTiming {
    fn from(t: ReadTiming) -> FrameTiming {
        FrameTiming {
            fps: t.rate.fps(),
            constant: t.constant,
            frames: t.frames,
        }
    }
}

/// What an import learnt of a video's timing.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum TimingRead {
    /// Not asked (no reader for the container and no ffprobe): asked later, by the
    /// server's background job or `tandem probe`.
    #[default]
    NotTried,
    /// Neither the container's tables nor ffprobe tell.
    Unreadable,
    Read(FrameTiming),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_kept_in_lowest_terms() {
        assert_eq!(
            FrameRate::new(15360, 512),
            Some(FrameRate { num: 30, den: 1 })
        );
        assert_eq!(
            FrameRate::new(30000, 1001),
            Some(FrameRate {
                num: 30000,
                den: 1001
            })
        );
        assert_eq!(FrameRate::new(0, 1), None);
        assert_eq!(
            FrameRate::new(25, 1).map(|r| r.to_string()),
            Some("25/1".into())
        );
    }
}
