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

/// A campaign's baseline as participants take it in the browser.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Baseline {
    pub id: i64,
    pub campaign_id: i64,
    /// k, the videos of each task a participant answers about.
    pub per_task: i64,
    pub seed: i64,
}

/// A question the baseline asks, as fixed when it was set up: what participants see,
/// and the served copy of its clip. Its key is not here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupQuestion {
    pub question_key: String,
    pub clip_key: String,
    pub task: String,
    pub text: String,
    pub options: Vec<String>,
    pub media_sha256: String,
    pub media_type: String,
}

/// What setting a baseline up did.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct SetupSummary {
    /// Questions it asks (the retained ones when it was set up).
    pub questions: usize,
    /// Clips with a question to ask.
    pub clips: usize,
    /// The tasks those clips belong to.
    pub tasks: usize,
    /// k: the videos of each task each participant answers about (all of a task's
    /// videos when it has fewer).
    pub per_task: i64,
    pub seed: i64,
    /// Whether the served copies had their metadata removed (ffmpeg was there).
    pub metadata_removed: bool,
}

impl std::fmt::Display for SetupSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the baseline asks {} question(s) of {} clip(s) in {} task(s); each participant answers about {} clip(s) of each task (seed {})",
            self.questions, self.clips, self.tasks, self.per_task, self.seed
        )
    }
}

/// A participant's place in the baseline.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct BaselineProgress {
    /// Presentations drawn for them (0 before they begin).
    pub total: i64,
    pub answered: i64,
    /// The first presentation (1-based) not answered yet.
    pub next: Option<i64>,
    /// Whether their presentations have been drawn.
    pub begun: bool,
}

/// One presentation as a participant sees it: the question, its options in the order
/// shown (by letter), a random clip token, and their answer once given.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ShownPresentation {
    pub seq: i64,
    pub progress: BaselineProgress,
    pub text: String,
    pub options: Vec<String>,
    pub token: String,
    /// The shown position they chose, once answered.
    pub chosen: Option<usize>,
}

/// A clip behind a participant's baseline token.
#[derive(Debug, Clone)]
pub struct BaselineMedia {
    pub participant_id: i64,
    pub sha256: String,
    pub media_type: String,
}

crate::store::db::row! {
    /// Where a participant of the baseline stands, for the admin.
    #[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
    pub struct PlaceProgress {
        pub name: String,
        pub place: i64,
        pub answered: i64,
        pub total: i64,
    }
}
