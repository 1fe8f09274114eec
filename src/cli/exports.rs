//! `tandem export`: the retained benchmark as a folder, the paper's bundle, and the
//! records (decisions, resolutions, regeneration, study responses, audit trail) to a
//! file or standard output.

use super::CampaignArg;
use super::output::write_download;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::store::Store;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum ExportCommand {
    /// The retained clips and questions with their variants, videos and a README
    Retained {
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Every decision, including changes, as CSV
    Decisions {
        /// File to write [default: standard output]
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Every resolution as CSV
    Resolutions {
        /// File to write [default: standard output]
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// The clips rejected in Stage 1 that need a new version, as JSON Lines
    Regeneration {
        /// File to write [default: standard output]
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Everything a paper needs in one folder: Tables 11-15 as LaTeX, CSV and JSON,
    /// every figure as SVG, PDF and PNG, a LaTeX document with them all, the records
    /// behind them and a README
    Paper {
        /// A new or empty folder
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// The blind study's answers as CSV in the import format (set_id,participant,clip_id,axis,value), with each clip's source and truth
    StudyResponses {
        /// File to write [default: standard output]
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Every event of every clip (or of one), in order, as CSV
    Audit {
        #[command(flatten)]
        filter: AuditArgs,
        /// File to write [default: standard output]
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
}

#[derive(clap::Args, Debug)]
pub struct AuditArgs {
    /// Only this clip
    #[arg(long)]
    clip: Option<String>,
    /// Only clips or items whose id starts with this
    #[arg(long)]
    id: Option<String>,
    /// Only what this person did (verdicts, resolutions, calibration verdicts)
    #[arg(long)]
    validator: Option<String>,
    /// Only from this day (YYYY-MM-DD, UTC) or time (RFC 3339) on
    #[arg(long)]
    from: Option<String>,
    /// Only up to this day (inclusive) or time
    #[arg(long)]
    to: Option<String>,
    /// Only the latest N events, newest first
    #[arg(long)]
    latest: Option<usize>,
}

impl ExportCommand {
    pub(super) async fn run(self, config: &Config, store: &Store) -> Result<()> {
        use crate::app::exports;
        match self {
            ExportCommand::Retained { out, campaign } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                let (summary, counts) =
                    exports::retained_to_folder(store, config, &campaign, &out).await?;
                println!(
                    "exported {} clip(s) and {} question(s) (V1 {}, V2 {}, V3 {}) to {}",
                    summary.clips,
                    summary.questions,
                    summary.v1,
                    summary.v2,
                    summary.v3,
                    out.display()
                );
                if counts.clips_open + counts.questions_open > 0 {
                    eprintln!(
                        "note: review is not finished ({} clip(s) and {} question(s) still open); they are not in the export",
                        counts.clips_open, counts.questions_open
                    );
                }
                Ok(())
            }
            ExportCommand::Paper { out, campaign } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                let now = crate::clock::now_micros() / 1_000_000 * 1_000_000;
                let files = crate::app::paper_bundle(store, &campaign, now).await?;
                crate::report::bundle::write(&out, &files)?;
                println!("wrote {} file(s) to {}", files.len(), out.display());
                Ok(())
            }
            ExportCommand::Decisions { out, campaign } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                write_download(out.as_deref(), exports::decisions(store, &campaign).await?)
            }
            ExportCommand::Resolutions { out, campaign } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                write_download(
                    out.as_deref(),
                    exports::resolutions(store, &campaign).await?,
                )
            }
            ExportCommand::Regeneration { out, campaign } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                write_download(
                    out.as_deref(),
                    exports::regeneration(store, &campaign).await?,
                )
            }
            ExportCommand::StudyResponses { out, campaign } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                write_download(
                    out.as_deref(),
                    exports::study_responses(store, &campaign).await?,
                )
            }
            ExportCommand::Audit {
                filter,
                out,
                campaign,
            } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                let filter = filter.check(store, &campaign).await?;
                write_download(
                    out.as_deref(),
                    exports::audit(store, &campaign, &filter).await?,
                )
            }
        }
    }
}

impl AuditArgs {
    /// The audit filter these flags ask for; refused when the validator has no account
    /// or the clip has no event in the campaign.
    async fn check(
        self,
        store: &Store,
        campaign: &crate::store::catalog::Campaign,
    ) -> Result<crate::domain::records::AuditFilter> {
        let mut filter = crate::domain::records::AuditFilter::parse(
            self.clip.as_deref(),
            self.validator.as_deref(),
            self.from.as_deref(),
            self.to.as_deref(),
        )?;
        filter.prefix = crate::domain::paging::prefix("id", self.id.as_deref())?;
        filter.limit = self.latest;
        if let Some(name) = &filter.who
            && store.user_by_name(name).await?.is_none()
        {
            return Err(Error::field("validator", format!("no account `{name}`")));
        }
        if let Some(c) = &self.clip {
            let mut probe = filter.clone();
            probe.limit = Some(1);
            if store.audit(campaign, &probe).await?.is_empty() {
                return Err(Error::NotFound(format!(
                    "no clip `{c}` in campaign `{}`",
                    campaign.name
                )));
            }
        }
        Ok(filter)
    }
}
