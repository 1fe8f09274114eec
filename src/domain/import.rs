//! Imports as they are checked: a clip manifest and a study's comparison sets read
//! whole by `io` (every problem found with its line and field), then stored by the
//! store. Plain data, no I/O.

use super::Level;
use super::rules::CheckedVerdict;
use super::study::{Axis, Truth};
use std::path::PathBuf;

/// A video file as found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Media {
    pub sha256: String,
    pub size: u64,
    pub media_type: &'static str,
}

#[derive(Debug, Clone)]
pub struct ManifestQuestion {
    pub question_id: String,
    pub qa_type: String,
    pub level: Level,
    pub question: String,
    pub options: Vec<String>,
    pub answer: usize,
    /// The known verdict of a calibration question.
    pub calibration: Option<CheckedVerdict>,
    /// The known verdict of a known item of the live queue (`"known": {...}`).
    pub known: Option<CheckedVerdict>,
}

#[derive(Debug, Clone)]
pub struct ManifestClip {
    pub line: usize,
    pub clip_id: String,
    pub task: String,
    /// The `file` as written in the manifest.
    pub file: String,
    /// Where the video is on disk (canonical).
    pub source_path: PathBuf,
    pub media: Media,
    /// The line without `file`, as canonical JSON (keys sorted at every depth).
    pub fields: String,
    pub questions: Vec<ManifestQuestion>,
    /// The known verdict of a held-out calibration clip (`"calibration": {...}`).
    pub calibration: Option<CheckedVerdict>,
    /// The known verdict of a known item of the live queue (`"known": {...}`): served
    /// to its pair among the real clips, scored, never counted in the benchmark.
    pub known: Option<CheckedVerdict>,
    /// The video's frame rate and count, as read when it was taken in.
    pub timing: super::video::TimingRead,
    /// The stored clip version this known clip copies (a clip the author resolved, served
    /// to validators who did not review it: `known_copy`); none for a manifest's clips.
    pub copy_of: Option<i64>,
}

impl ManifestClip {
    /// Whether the clip is held out for calibration: it has a known verdict, or (in a
    /// protocol without clip review, where a clip has none) its questions have.
    pub fn is_calibration(&self) -> bool {
        self.calibration.is_some() || self.questions.iter().any(|q| q.calibration.is_some())
    }

    /// What the clip's Stage 1 item is, as `items.calibration` stores it.
    pub fn kind(&self) -> ItemKind {
        if self.is_calibration() {
            ItemKind::Calibration
        } else if self.known.is_some() || self.copy_of.is_some() {
            ItemKind::Known
        } else {
            ItemKind::Real
        }
    }

    /// What one of its questions' Stage 2 item is: a known clip's questions are known
    /// items too (counted only where they carry their own known verdict).
    pub fn question_kind(&self, q: &ManifestQuestion) -> ItemKind {
        match self.kind() {
            ItemKind::Real if q.known.is_some() => ItemKind::Known,
            k => k,
        }
    }
}

/// What an item is, as `items.calibration` (and `clips.calibration`) store it: a real
/// item of the benchmark (0), a held-out calibration item (1), or a known item of the
/// live queue (2): served like a real one, scored against its known verdict, and left
/// out of the outcomes, the tables and the exports of the benchmark like a calibration
/// item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Real,
    Calibration,
    Known,
}

/// Which known clips of one task to serve at `rate` (a share of the task's `real` clips;
/// 0: every one), given each as `(id, served now, started)` in import order: the started
/// ones always (a verdict is never taken back), then the earliest others until
/// `ceil(rate * real)` are served. Answers `(id, serve)` for each, in the order given.
pub fn known_to_serve(rate: f64, real: usize, known: &[(i64, bool, bool)]) -> Vec<(i64, bool)> {
    let target = if rate <= 0.0 {
        usize::MAX
    } else {
        (rate * real as f64).ceil() as usize
    };
    let mut room = target.saturating_sub(known.iter().filter(|k| k.2).count());
    known
        .iter()
        .map(|&(id, _, started)| {
            let serve = started || room > 0;
            if serve && !started {
                room -= 1;
            }
            (id, serve)
        })
        .collect()
}

/// The media types an import recognises (`io::manifest` sniffs a video as one of them).
pub const MEDIA_TYPES: [&str; 6] = [
    "video/mp4",
    "video/quicktime",
    "video/webm",
    "video/x-matroska",
    "video/ogg",
    "video/x-msvideo",
];

/// A stored media type as one an import recognises.
pub fn media_type(stored: &str) -> Option<&'static str> {
    MEDIA_TYPES.iter().copied().find(|t| *t == stored)
}

/// The id a copy gives one of its source's ids (`source` the source clip's, `copy` the
/// copy's): the clip's own id becomes the copy's, and a question id that starts with
/// its clip's id keeps what follows (`MC_0001_OE` of `MC_0001` is `MC_0003_OE` of
/// `MC_0003`); any other gets the copy's id in front, joined by `_`.
pub fn copied_id(source: &str, copy: &str, id: &str) -> String {
    if id == source {
        copy.to_string()
    } else if let Some(rest) = id.strip_prefix(source) {
        format!("{copy}{rest}")
    } else {
        format!("{copy}_{id}")
    }
}

/// A stored clip's line (`clip_versions.fields`, canonical JSON) as its copy's: its
/// `clip_id` and every `question_id` under `questions` renamed by `copied_id`, the
/// `known` and `calibration` verdicts of a manifest left out (the copy's are the
/// author's); every other field as it was, in the same order.
pub fn copied_fields(fields: &str, source: &str, copy: &str) -> Result<String, String> {
    let mut line: serde_json::Value =
        serde_json::from_str(fields).map_err(|e| format!("the stored line of `{source}`: {e}"))?;
    let obj = line
        .as_object_mut()
        .ok_or_else(|| format!("the stored line of `{source}` is not an object"))?;
    obj.remove("known");
    obj.remove("calibration");
    obj.insert("clip_id".into(), copy.into());
    if let Some(questions) = obj.get_mut("questions").and_then(|q| q.as_array_mut()) {
        for q in questions.iter_mut().filter_map(|q| q.as_object_mut()) {
            q.remove("known");
            q.remove("calibration");
            if let Some(id) = q.get("question_id").and_then(|v| v.as_str()) {
                let renamed = copied_id(source, copy, id);
                q.insert("question_id".into(), renamed.into());
            }
        }
    }
    Ok(line.to_string())
}

impl ItemKind {
    pub fn stored(self) -> i64 {
        match self {
            ItemKind::Real => 0,
            ItemKind::Calibration => 1,
            ItemKind::Known => 2,
        }
    }
}

#[derive(Debug, Clone)]
pub struct CheckedManifest {
    pub path: PathBuf,
    pub sha256: String,
    pub clips: Vec<ManifestClip>,
}

/// One clip of a comparison set, checked.
#[derive(Debug, Clone)]
pub struct SetClip {
    pub clip_id: String,
    pub source: String,
    pub truth: Truth,
    /// The `file` as written.
    pub file: String,
    /// Where the video is on disk (canonical).
    pub path: PathBuf,
    pub media: Media,
}

/// One comparison set, its clips in the order of the declared sources.
#[derive(Debug, Clone)]
pub struct StudySet {
    pub line: usize,
    pub set_id: String,
    pub clips: Vec<SetClip>,
}

#[derive(Debug, Clone)]
pub struct CheckedSets {
    pub path: PathBuf,
    /// The declared sources, in table order.
    pub sources: Vec<String>,
    pub sets: Vec<StudySet>,
}

/// One row of a responses file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseRow {
    pub line: usize,
    pub set_id: String,
    pub participant: String,
    pub clip_id: String,
    pub axis: Axis,
    pub value: ResponseValue,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseValue {
    Rank(i64),
    Label(Truth),
}

impl ResponseValue {
    /// As stored.
    pub fn text(self) -> String {
        match self {
            ResponseValue::Rank(r) => r.to_string(),
            ResponseValue::Label(t) => t.as_str().to_string(),
        }
    }
}

/// The copy of a clip that participants receive, prepared before the transaction.
#[derive(Debug, Clone)]
pub struct ServedCopy {
    pub clip_key: String,
    pub sha256: String,
    pub media_type: String,
    pub size: i64,
}

#[cfg(test)]
mod tests {
    use super::{copied_fields, copied_id, known_to_serve, media_type};

    #[test]
    fn a_copy_renames_its_clip_and_questions_and_keeps_every_other_field() {
        assert_eq!(copied_id("MC_0001", "MC_0131", "MC_0001"), "MC_0131");
        assert_eq!(copied_id("MC_0001", "MC_0131", "MC_0001_OE"), "MC_0131_OE");
        assert_eq!(copied_id("MC_0001", "MC_0131", "Q77"), "MC_0131_Q77");
        let stored = r#"{"clip_id":"MC_0001","known":{"verdict":"valid"},"questions":[{"calibration":null,"pair":"P1","question_id":"MC_0001_OE"},{"question_id":"Q77"}],"task":"MC","theme":"a cup"}"#;
        assert_eq!(
            copied_fields(stored, "MC_0001", "MC_0131").unwrap(),
            r#"{"clip_id":"MC_0131","questions":[{"pair":"P1","question_id":"MC_0131_OE"},{"question_id":"MC_0131_Q77"}],"task":"MC","theme":"a cup"}"#
        );
        assert!(copied_fields("[1]", "MC_0001", "MC_0131").is_err());
        assert!(copied_fields("{", "MC_0001", "MC_0131").is_err());
        assert_eq!(media_type("video/webm"), Some("video/webm"));
        assert_eq!(media_type("text/plain"), None);
    }

    #[test]
    fn known_clips_are_served_at_the_rate_started_ones_always() {
        let none_started: Vec<(i64, bool, bool)> = (1..=4).map(|i| (i, true, false)).collect();
        // 5% of 30 real clips: ceil(1.5) = 2, the earliest.
        assert_eq!(
            known_to_serve(0.05, 30, &none_started),
            [(1, true), (2, true), (3, false), (4, false)]
        );
        // No rate: every one.
        assert!(known_to_serve(0.0, 30, &none_started).iter().all(|k| k.1));
        // A started one stays served and takes its place in the count.
        let started = [
            (1, true, false),
            (2, false, false),
            (3, true, true),
            (4, true, false),
        ];
        assert_eq!(
            known_to_serve(0.05, 30, &started),
            [(1, true), (2, false), (3, true), (4, false)]
        );
        // Started beyond the rate: still served, no other added.
        let over = [
            (1, true, true),
            (2, true, true),
            (3, true, true),
            (4, true, false),
        ];
        assert_eq!(
            known_to_serve(0.05, 10, &over),
            [(1, true), (2, true), (3, true), (4, false)]
        );
        // No real clip yet: nothing unstarted is served.
        assert!(known_to_serve(0.05, 0, &none_started).iter().all(|k| !k.1));
    }
}
