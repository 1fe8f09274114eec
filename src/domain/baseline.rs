//! The human baseline under circular evaluation: the questions it asks and the answers
//! given, as plain data. Read and checked by `io::baseline`, scored by `report::baseline`
//! with `stats::circular`.

/// The most options a question may have (`A` to `Z`).
pub const MAX_OPTIONS: usize = 26;

/// One row of an answers file, read and checked on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerRow {
    pub line: usize,
    pub participant: String,
    pub question_id: String,
    pub presentation: usize,
    /// The options shown, as indexes in the manifest's order.
    pub shown: Vec<usize>,
    /// The shown position picked.
    pub chosen: usize,
}

/// A question the baseline may ask: retained, with its options and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineQuestion {
    pub question_id: String,
    pub task: String,
    pub qa_type: String,
    pub level: String,
    pub options: usize,
    /// The keyed option, an index in the manifest's order.
    pub key: usize,
    /// The key of its linked pair (one question asked in both directions), if any.
    pub pair: Option<String>,
}

/// Answers checked whole: participants and questions as indexes for the statistics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedAnswers {
    /// The participants named, in the order they first appear.
    pub participants: Vec<String>,
    pub answers: Vec<BaselineAnswer>,
}

/// One answered presentation, its participant and question as indexes (into
/// [`CheckedAnswers::participants`] and the question list it was checked against).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineAnswer {
    pub participant: usize,
    pub question: usize,
    /// The rotation: 0 shows the options in the manifest's order.
    pub presentation: usize,
    /// The options shown, as indexes in the manifest's order.
    pub shown: Vec<usize>,
    /// The shown position picked.
    pub chosen: usize,
}

impl BaselineAnswer {
    /// The option picked, as an index in the manifest's order.
    pub fn option(&self) -> Option<usize> {
        self.shown.get(self.chosen).copied()
    }
}
