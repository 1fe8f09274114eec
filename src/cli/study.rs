//! `tandem study`: the blind video-quality study's comparison sets, how participants see
//! the clips, its progress, and the responses of an earlier study.

use super::CampaignArg;
use super::imports::{ImportCommand, read_csv};
use crate::config::Config;
use crate::domain::study::Display;
use crate::error::{Error, Result};
use crate::io;
use crate::store::Store;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum StudyCommand {
    /// Import comparison sets (JSON Lines); all or nothing
    Import {
        sets: PathBuf,
        /// The sources every set holds one clip of, in table order, comma-separated
        /// [default: those the file names, in order of appearance]
        #[arg(long, value_delimiter = ',')]
        sources: Option<Vec<String>>,
        /// How participants see the clips: video, or strip (K frames; needs ffmpeg)
        #[arg(long)]
        display: Option<String>,
        /// K, the frames of a strip
        #[arg(long, default_value_t = 8)]
        frames: i64,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Show clips as video or as a strip of K frames (drawn now, with ffmpeg)
    Display {
        /// video or strip
        mode: String,
        /// K, the frames of a strip
        #[arg(long, default_value_t = 8)]
        frames: i64,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// The study's sets, display and each participant's progress
    Status {
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Responses of an earlier study (CSV: set_id,participant,clip_id,axis,value)
    #[command(subcommand)]
    Responses(ImportCommand),
}

impl StudyCommand {
    pub(super) async fn run(self, config: &Config, store: &Store) -> Result<()> {
        match self {
            StudyCommand::Import {
                sets,
                sources,
                display,
                frames,
                campaign,
            } => {
                let display = display
                    .map(|d| Display::parse(&d).map_err(|m| Error::field("display", m)))
                    .transpose()?
                    .map(|d| (d, frames));
                let path = sets.clone();
                let limits = config.limits.clone();
                let checked = tokio::task::spawn_blocking(move || {
                    io::study::check_sets(&path, sources.as_deref(), &limits)
                })
                .await
                .map_err(|e| Error::fault("checking the sets failed", e))??;
                let summary =
                    crate::app::import_study(store, config, &campaign.campaign, &checked, display)
                        .await?;
                println!("imported {}: {summary}", sets.display());
                if !summary.metadata_removed {
                    eprintln!(
                        "note: ffmpeg is not installed, so the clips are served as they are, with any metadata (title, comments) they carry; install ffmpeg and import again to remove it"
                    );
                }
            }
            StudyCommand::Display {
                mode,
                frames,
                campaign,
            } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                let mode = Display::parse(&mode).map_err(|m| Error::field("display", m))?;
                let made =
                    crate::app::set_study_display(store, config, &campaign, mode, frames).await?;
                match mode {
                    Display::Video => println!("participants now see the videos"),
                    Display::Strip => {
                        println!(
                            "participants now see strips of {frames} frames ({made} drawn now)"
                        )
                    }
                }
            }
            StudyCommand::Status { campaign } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                let study = store.require_study(&campaign).await?;
                let (sets, clips) = store.study_size(&study).await?;
                println!(
                    "{sets} set(s), {clips} clip(s); sources {}; display {}{}",
                    study.sources.join(", "),
                    study.display.as_str(),
                    if study.display == Display::Strip {
                        format!(" of {} frames", study.frames)
                    } else {
                        String::new()
                    }
                );
                for p in store.study_participants(&study).await? {
                    println!(
                        "{}\t{} of {} set(s) answered{}",
                        p.name,
                        p.answered,
                        p.total,
                        if p.imported { " (imported)" } else { "" }
                    );
                }
            }
            StudyCommand::Responses(ImportCommand::Import { file, campaign }) => {
                let campaign = store.campaign(&campaign.campaign).await?;
                let Some((rows, problems, what)) =
                    read_csv(config, &file, "responses", io::study::read_responses)?
                else {
                    super::imports::nothing_to_import("responses", &file);
                    return Ok(());
                };
                let summary = store
                    .import_responses(&campaign, &rows, problems, &what)
                    .await?;
                println!("imported {}: {summary}", file.display());
            }
        }
        Ok(())
    }
}
