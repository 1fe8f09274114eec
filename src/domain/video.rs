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

/// Where in a clip a known flaw is (a calibration item's): a range of frames as the
/// player numbers them (from 1, both ends included), or a time span in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flaw {
    Frames { first: i64, last: i64 },
    Millis { from: i64, to: i64 },
}

/// The longest clip a flaw's place may point into: a day.
const MAX_FLAW_MS: i64 = 86_400_000;

impl Flaw {
    /// From a manifest's `flaw`: `{"frames": [first, last]}` (from 1) or
    /// `{"seconds": [from, to]}`. Errors name the sub-field (`.frames`, ...).
    pub fn parse(v: &serde_json::Value) -> Result<Flaw, (String, String)> {
        use serde_json::Value;
        let Value::Object(o) = v else {
            return Err((
                String::new(),
                "`flaw` must be an object: {\"frames\": [first, last]} or {\"seconds\": [from, to]}"
                    .into(),
            ));
        };
        let pair = |field: &str| -> Result<Option<(f64, f64)>, (String, String)> {
            match o.get(field) {
                None => Ok(None),
                Some(Value::Array(a)) if a.len() == 2 => match (a[0].as_f64(), a[1].as_f64()) {
                    (Some(x), Some(y)) => Ok(Some((x, y))),
                    _ => Err((format!(".{field}"), "both ends must be numbers".into())),
                },
                Some(_) => Err((
                    format!(".{field}"),
                    format!("`{field}` must be a list of two numbers: [start, end]"),
                )),
            }
        };
        if let Some(k) = o.keys().find(|k| *k != "frames" && *k != "seconds") {
            return Err((
                format!(".{k}"),
                format!("`{k}` is not a field of `flaw`: give `frames` or `seconds`"),
            ));
        }
        match (pair("frames")?, pair("seconds")?) {
            (Some(_), Some(_)) => {
                Err((String::new(), "give `frames` or `seconds`, not both".into()))
            }
            (None, None) => Err((String::new(), "missing `frames` or `seconds`".into())),
            (Some((a, b)), None) => {
                let whole = |x: f64| x.fract() == 0.0 && (1.0..=1e9).contains(&x);
                if !whole(a) || !whole(b) {
                    return Err((
                        ".frames".into(),
                        "frames are whole numbers from 1, as the player numbers them".into(),
                    ));
                }
                if a > b {
                    return Err((".frames".into(), format!("frame {a} comes after frame {b}")));
                }
                Ok(Flaw::Frames {
                    first: a as i64,
                    last: b as i64,
                })
            }
            (None, Some((a, b))) => {
                let ms = |x: f64| (x * 1000.0).round();
                let (a, b) = (ms(a), ms(b));
                if !(0.0..=MAX_FLAW_MS as f64).contains(&a)
                    || !(0.0..=MAX_FLAW_MS as f64).contains(&b)
                {
                    return Err((
                        ".seconds".into(),
                        "seconds run from 0 to a day (86400)".into(),
                    ));
                }
                if a > b {
                    return Err((".seconds".into(), "the span ends before it starts".into()));
                }
                Ok(Flaw::Millis {
                    from: a as i64,
                    to: b as i64,
                })
            }
        }
    }

    /// As stored: the unit (`frames` or `ms`) and both ends.
    pub fn columns(self) -> (&'static str, i64, i64) {
        match self {
            Flaw::Frames { first, last } => ("frames", first, last),
            Flaw::Millis { from, to } => ("ms", from, to),
        }
    }

    /// From the stored columns (none when there is no flaw or the unit is unknown).
    pub fn from_columns(unit: Option<&str>, from: Option<i64>, to: Option<i64>) -> Option<Flaw> {
        match (unit?, from?, to?) {
            ("frames", first, last) => Some(Flaw::Frames { first, last }),
            ("ms", from, to) => Some(Flaw::Millis { from, to }),
            _ => None,
        }
    }

    /// In words: "frames 12 to 18" or "1.200 s to 1.800 s".
    pub fn words(self) -> String {
        match self {
            Flaw::Frames { first, last } if first == last => format!("frame {first}"),
            Flaw::Frames { first, last } => format!("frames {first} to {last}"),
            Flaw::Millis { from, to } => format!(
                "{:.3} s to {:.3} s",
                from as f64 / 1000.0,
                to as f64 / 1000.0
            ),
        }
    }

    /// Where it starts and ends in seconds, given the clip's frame rate for a frame
    /// range (the start of its first frame, the end of its last); none for frames
    /// without a known rate.
    pub fn seconds(self, fps: Option<f64>) -> Option<(f64, f64)> {
        match self {
            Flaw::Millis { from, to } => Some((from as f64 / 1000.0, to as f64 / 1000.0)),
            Flaw::Frames { first, last } => {
                let fps = fps.filter(|f| *f > 0.0 && f.is_finite())?;
                Some(((first - 1) as f64 / fps, last as f64 / fps))
            }
        }
    }
}

impl serde::Serialize for Flaw {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(1))?;
        match *self {
            Flaw::Frames { first, last } => m.serialize_entry("frames", &[first, last])?,
            Flaw::Millis { from, to } => {
                m.serialize_entry("seconds", &[from as f64 / 1000.0, to as f64 / 1000.0])?
            }
        }
        m.end()
    }
}

impl utoipa::PartialSchema for Flaw {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Type};
        let pair = |t: Type, what: &str| {
            ObjectBuilder::new()
                .property(
                    what,
                    ArrayBuilder::new()
                        .items(ObjectBuilder::new().schema_type(t))
                        .min_items(Some(2))
                        .max_items(Some(2)),
                )
                .required(what)
        };
        OneOfBuilder::new()
            .item(pair(Type::Integer, "frames"))
            .item(pair(Type::Number, "seconds"))
            .description(Some(
                "Where the known flaw is: frames as the player numbers them (from 1, both ends included), or seconds",
            ))
            .into()
    }
}

impl utoipa::ToSchema for Flaw {}

#[cfg(test)]
mod flaw_tests {
    use super::Flaw;
    use serde_json::json;

    #[test]
    fn a_flaw_reads_frames_or_seconds_and_names_what_is_wrong() {
        assert_eq!(
            Flaw::parse(&json!({"frames": [12, 18]})),
            Ok(Flaw::Frames {
                first: 12,
                last: 18
            })
        );
        assert_eq!(
            Flaw::parse(&json!({"seconds": [1.2, 1.8]})),
            Ok(Flaw::Millis {
                from: 1200,
                to: 1800
            })
        );
        for (v, field) in [
            (json!({"frames": [0, 3]}), ".frames"),
            (json!({"frames": [4, 3]}), ".frames"),
            (json!({"frames": [1.5, 3]}), ".frames"),
            (json!({"seconds": [2, 1]}), ".seconds"),
            (json!({"seconds": [-1, 1]}), ".seconds"),
            (json!({"seconds": "1-2"}), ".seconds"),
            (json!({"frames": [1, 2], "seconds": [0, 1]}), ""),
            (json!({}), ""),
            (json!({"frame": [1, 2]}), ".frame"),
            (json!([1, 2]), ""),
        ] {
            let e = Flaw::parse(&v).unwrap_err();
            assert_eq!(e.0, field, "{v}: {}", e.1);
        }
    }

    #[test]
    fn a_flaw_keeps_its_place_through_the_columns_and_in_seconds() {
        for f in [
            Flaw::Frames { first: 3, last: 3 },
            Flaw::Millis { from: 0, to: 250 },
        ] {
            let (u, a, b) = f.columns();
            assert_eq!(Flaw::from_columns(Some(u), Some(a), Some(b)), Some(f));
        }
        assert_eq!(Flaw::from_columns(None, None, None), None);
        assert_eq!(
            Flaw::Frames {
                first: 13,
                last: 24
            }
            .seconds(Some(12.0)),
            Some((1.0, 2.0))
        );
        assert_eq!(Flaw::Frames { first: 1, last: 2 }.seconds(None), None);
        assert_eq!(Flaw::Frames { first: 3, last: 3 }.words(), "frame 3");
        assert_eq!(
            Flaw::Millis {
                from: 1200,
                to: 1800
            }
            .words(),
            "1.200 s to 1.800 s"
        );
        assert_eq!(
            serde_json::to_value(Flaw::Millis {
                from: 1200,
                to: 1800
            })
            .unwrap(),
            json!({"seconds": [1.2, 1.8]})
        );
    }
}
