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
        } else if self.known.is_some() {
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
    use super::known_to_serve;

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
