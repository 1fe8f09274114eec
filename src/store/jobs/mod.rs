//! Long operations started through the API: an import, the retained benchmark's zip, the
//! paper bundle. The row is the job's whole state (any server answers a poll); what it
//! made is in the media store. `app::jobs` runs them. Their reads are in `read`, their
//! writes in `write`.

mod read;
mod write;

use std::fmt;

/// What a job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// A manifest and its videos (new clips, new versions of rejected clips)
    Import,
    /// The retained benchmark as a zip
    Retained,
    /// The paper bundle (tables, figures, LaTeX) as a zip
    Paper,
}

impl JobKind {
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Import => "import",
            JobKind::Retained => "retained",
            JobKind::Paper => "paper",
        }
    }

    pub fn parse(s: &str) -> Option<JobKind> {
        [JobKind::Import, JobKind::Retained, JobKind::Paper]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

impl fmt::Display for JobKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Waiting for its turn (a server runs a few jobs at once)
    Queued,
    Running,
    /// Finished; an export's file can be downloaded
    Done,
    /// Stopped with an error; nothing of it was stored
    Failed,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<JobState> {
        [
            JobState::Queued,
            JobState::Running,
            JobState::Done,
            JobState::Failed,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    /// Whether the job still has work to do.
    pub fn unfinished(self) -> bool {
        matches!(self, JobState::Queued | JobState::Running)
    }
}

crate::store::db::row! {
    /// A job's row as stored.
    #[derive(Debug, Clone)]
    pub struct JobRecord {
        pub id: String,
        pub campaign_id: i64,
        pub kind: String,
        pub state: String,
        pub requested_by: String,
        pub created_at: i64,
        pub started_at: Option<i64>,
        pub heartbeat_at: i64,
        pub finished_at: Option<i64>,
        /// JSON: what a finished import stored.
        pub summary: Option<String>,
        /// JSON: the API's error body of a failed job.
        pub error: Option<String>,
        pub file_name: Option<String>,
        pub file_bytes: Option<i64>,
        pub file_sha256: Option<String>,
    }
}

/// The file a finished export made (in the media store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFile {
    pub name: String,
    pub bytes: i64,
    pub sha256: String,
}

/// How a job ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobEnd {
    /// Done: an import's summary (JSON), an export's file.
    Done {
        summary: Option<String>,
        file: Option<JobFile>,
    },
    /// Failed: the API's error body (JSON).
    Failed { error: String },
}
