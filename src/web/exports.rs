//! Every export the pages and the API offer, listed once: a campaign's records as files
//! ([`ExportKind`]: its name in the API's path, its file on the exports page, its type
//! and the `app::exports` function that makes it), and on the exports page also the
//! two archives ([`ExportFile`]; the API makes those as jobs).

use crate::app::exports::{self, Download};
use crate::config::Config;
use crate::domain::records::AuditFilter;
use crate::error::Result;
use crate::store::Store;
use crate::store::catalog::Campaign;

/// A record of a campaign as a file: `GET /api/v1/campaigns/{campaign}/export/{kind}`,
/// and the same file on the exports page (`/c/{campaign}/admin/exports/{kind}.csv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ExportKind {
    Decisions,
    Resolutions,
    Audit,
    Regeneration,
    StudyResponses,
    BlindAnswers,
    KnownVerdicts,
    DefectProbabilities,
    BaselineAnswers,
}

impl ExportKind {
    pub const ALL: [ExportKind; 9] = [
        ExportKind::Decisions,
        ExportKind::Resolutions,
        ExportKind::Audit,
        ExportKind::Regeneration,
        ExportKind::StudyResponses,
        ExportKind::BlindAnswers,
        ExportKind::KnownVerdicts,
        ExportKind::DefectProbabilities,
        ExportKind::BaselineAnswers,
    ];

    /// Its name in the API's path.
    pub fn name(self) -> &'static str {
        match self {
            ExportKind::Decisions => "decisions",
            ExportKind::Resolutions => "resolutions",
            ExportKind::Audit => "audit",
            ExportKind::Regeneration => "regeneration",
            ExportKind::StudyResponses => "study-responses",
            ExportKind::BlindAnswers => "blind-answers",
            ExportKind::KnownVerdicts => "known-verdicts",
            ExportKind::DefectProbabilities => "defect-probabilities",
            ExportKind::BaselineAnswers => "baseline-answers",
        }
    }

    /// The kind a name of the API's path names.
    pub fn parse(name: &str) -> Option<ExportKind> {
        ExportKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The type of its file (the `Content-Type` of the reply, without its charset).
    pub fn media_type(self) -> &'static str {
        match self {
            ExportKind::Regeneration => "application/jsonl",
            _ => "text/csv",
        }
    }

    /// Its file on the exports page: `decisions.csv`, `regeneration.jsonl`, ...
    pub fn file(self) -> String {
        let extension = match self.media_type() {
            "application/jsonl" => "jsonl",
            _ => "csv",
        };
        format!("{}.{extension}", self.name())
    }

    /// Makes the file; `audit` filters the audit trail (the other kinds take no filter).
    pub async fn make(
        self,
        store: &Store,
        campaign: &Campaign,
        audit: &AuditFilter,
    ) -> Result<Download> {
        match self {
            ExportKind::Decisions => exports::decisions(store, campaign).await,
            ExportKind::Resolutions => exports::resolutions(store, campaign).await,
            ExportKind::Audit => exports::audit(store, campaign, audit).await,
            ExportKind::Regeneration => exports::regeneration(store, campaign).await,
            ExportKind::StudyResponses => exports::study_responses(store, campaign).await,
            ExportKind::BlindAnswers => exports::blind_answers(store, campaign).await,
            ExportKind::KnownVerdicts => exports::known_verdicts(store, campaign).await,
            ExportKind::DefectProbabilities => exports::defect_probabilities(store, campaign).await,
            ExportKind::BaselineAnswers => exports::baseline_answers(store, campaign).await,
        }
    }
}

/// A file of the exports page: a record, or an archive made while the page waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFile {
    Record(ExportKind),
    /// The retained benchmark (as `tandem export retained` makes it) in one zip.
    Retained,
    /// Everything a paper needs (as `tandem export paper` makes it) in one zip.
    Paper,
}

impl ExportFile {
    /// The file a page's path names (`decisions.csv`, `retained.zip`, ...).
    pub fn parse(file: &str) -> Option<ExportFile> {
        match file {
            "retained.zip" => Some(ExportFile::Retained),
            "paper.zip" => Some(ExportFile::Paper),
            _ => ExportKind::ALL
                .into_iter()
                .find(|k| k.file() == file)
                .map(ExportFile::Record),
        }
    }

    /// Whether it is an archive of the clips (gigabytes: it may take minutes).
    pub fn is_archive(self) -> bool {
        matches!(self, ExportFile::Retained | ExportFile::Paper)
    }

    /// Makes the file; `audit` filters the audit trail, `now` dates the paper bundle.
    pub async fn make(
        self,
        store: &Store,
        config: &Config,
        campaign: &Campaign,
        audit: &AuditFilter,
        now: i64,
    ) -> Result<Download> {
        match self {
            ExportFile::Record(kind) => kind.make(store, campaign, audit).await,
            ExportFile::Retained => exports::retained_zip(store, config, campaign).await,
            ExportFile::Paper => exports::paper_zip(store, config, campaign, now).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_of_the_exports_page_is_named_once() {
        let files: Vec<String> = ExportKind::ALL.iter().map(|k| k.file()).collect();
        assert_eq!(
            files,
            [
                "decisions.csv",
                "resolutions.csv",
                "audit.csv",
                "regeneration.jsonl",
                "study-responses.csv",
                "blind-answers.csv",
                "known-verdicts.csv",
                "defect-probabilities.csv",
                "baseline-answers.csv",
            ]
        );
        for k in ExportKind::ALL {
            assert_eq!(ExportKind::parse(k.name()), Some(k));
            assert_eq!(ExportFile::parse(&k.file()), Some(ExportFile::Record(k)));
            assert_eq!(
                serde_json::to_value(k).ok(),
                Some(serde_json::json!(k.name()))
            );
        }
        assert_eq!(ExportFile::parse("paper.zip"), Some(ExportFile::Paper));
        assert_eq!(
            ExportFile::parse("retained.zip"),
            Some(ExportFile::Retained)
        );
        for unknown in [
            "decisions",
            "audit.jsonl",
            "nope.csv",
            "",
            "../decisions.csv",
        ] {
            assert_eq!(ExportFile::parse(unknown), None, "{unknown}");
        }
    }
}
