//! The human baseline in the store: its participants (the campaign members whose role
//! is `baseline`) and every presentation they answered, final once stored.

use serde::Serialize;

/// One presentation to store: a checked row of an answers file (or, later, a page's
/// answer), its participant by name and its question by the manifest's id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAnswer {
    /// The file's line, for the errors.
    pub line: usize,
    pub participant: String,
    pub question_key: String,
    pub presentation: i64,
    /// The options' letters in the order shown (`CDAB`).
    pub shown: String,
    /// The letter of the shown position chosen.
    pub chosen: String,
}

crate::store::db::row! {
    /// One stored presentation, as read back (`origin`: `web` or `import`).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct StoredAnswer {
        pub participant: String,
        pub question_key: String,
        pub presentation: i64,
        pub shown: String,
        pub chosen: String,
        pub origin: String,
        pub answered_at: i64,
    }
}

/// What an import of answers stored.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct AnswersSummary {
    pub added: usize,
    /// Rows equal to an answer stored before (an import run twice).
    pub already_there: usize,
    pub participants: usize,
}

impl std::fmt::Display for AnswersSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} answer(s) added from {} participant(s), {} already there",
            self.added, self.participants, self.already_there
        )
    }
}
