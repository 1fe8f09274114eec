//! The blind study: its comparison sets, each participant's stored order with opaque
//! clip tokens, their answers, and responses brought in from an earlier study (the
//! types; the SQL is in `store/areas/study.rs`).
//!
//! Blinding lives in the store: a participant's pages and clip URLs are built only from
//! what its methods return for them (positions, letters and random tokens), never from
//! a set id, clip id, source, file name or import position.

use crate::domain::study::{Display, SetAnswer};
use serde::Serialize;

/// A campaign's study.
#[derive(Debug, Clone, Serialize)]
pub struct Study {
    pub id: i64,
    pub campaign_id: i64,
    /// The declared sources, in table order.
    pub sources: Vec<String>,
    pub display: Display,
    /// K, the frames of a strip.
    pub frames: i64,
    pub seed: i64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct StudyImportSummary {
    pub sets_new: usize,
    pub sets_known: usize,
    pub clips_new: usize,
    /// Whether the served copies had their metadata removed (ffmpeg was there).
    pub metadata_removed: bool,
}

impl std::fmt::Display for StudyImportSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} new set(s) with {} clip(s), {} set(s) already there",
            self.sets_new, self.clips_new, self.sets_known
        )
    }
}

/// A participant's place in the study.
#[derive(Debug, Clone, Serialize)]
pub struct StudyProgress {
    pub total: i64,
    pub answered: i64,
    /// The first set (1-based position in this participant's order) not answered yet.
    pub next: Option<i64>,
}

/// One clip as a participant sees it: a letter and an opaque token.
#[derive(Debug, Clone, Serialize)]
pub struct ShownClip {
    pub label: String,
    pub token: String,
}

/// One set as a participant sees it.
#[derive(Debug, Clone, Serialize)]
pub struct ShownSet {
    pub position: i64,
    pub total: i64,
    pub answered_sets: i64,
    /// The first set of this participant's order not answered yet.
    pub next: Option<i64>,
    pub clips: Vec<ShownClip>,
    /// This participant's own answer, once given.
    pub answer: Option<SetAnswer>,
}

/// A clip file behind a participant's token.
#[derive(Debug, Clone)]
pub struct StudyMedia {
    pub participant_id: i64,
    pub sha256: String,
    pub media_type: String,
    pub frames: i64,
}

/// A participant's progress, for the admin.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ParticipantProgress {
    pub name: String,
    pub answered: i64,
    pub total: i64,
    /// Answers of theirs that came from a file.
    pub imported: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ResponsesSummary {
    pub added: usize,
    pub already_there: usize,
    pub participants: usize,
}

impl std::fmt::Display for ResponsesSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} response(s) added from {} participant(s), {} already there",
            self.added, self.participants, self.already_there
        )
    }
}
