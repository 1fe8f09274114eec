//! `tandem campaign`: a campaign created with a protocol, its protocol grown, and its
//! settings (targets, calibration rules, the blind key check, the known clips' rate).

use super::CampaignArg;
use super::protocol::sizes;
use crate::config::Config;
use crate::error::Result;
use crate::store::Store;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum CampaignCommand {
    /// Create a campaign that reviews by a protocol file's tasks, QA types and levels
    /// (VGenST-Bench's without --protocol). A campaign an import creates has VGenST's.
    Create {
        /// The campaign's name
        name: String,
        /// The protocol file (TOML; `tandem protocol vgenst` prints the shipped one)
        #[arg(long)]
        protocol: Option<PathBuf>,
    },
    /// Give the campaign another protocol file: new names and attributes, tasks added
    /// after the existing ones, new QA types and cells. Refused, with every reason, when
    /// a stored clip or question would lose its task, its cell or its level
    Protocol {
        file: PathBuf,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Show the settings, or change those given
    Settings {
        #[command(flatten)]
        change: SettingsArgs,
        #[command(flatten)]
        campaign: CampaignArg,
    },
}

#[derive(clap::Args, Debug)]
pub struct SettingsArgs {
    /// Retained clips wanted per task
    #[arg(long)]
    target: Option<i64>,
    /// Agreement with the known verdicts needed in calibration (0.8 is 80%)
    #[arg(long)]
    calibration_threshold: Option<f64>,
    /// ... over a round of this many calibration items (drawn anew each round)
    #[arg(long)]
    calibration_min: Option<i64>,
    /// The blind key check: validators answer each question from the video before
    /// its key is shown (on or off)
    #[arg(long, value_parser = ["on", "off"])]
    blind_key_check: Option<String>,
    /// How many of a validator's latest known defects the recent catch rate looks
    /// at (the known items of the live queue; 20 by default)
    #[arg(long)]
    known_window: Option<i64>,
    /// The share of known clips served beside each task's real clips (0.05: 5%; 0:
    /// every known clip)
    #[arg(long)]
    known_rate: Option<f64>,
}

impl CampaignCommand {
    pub(super) async fn run(self, config: &Config, store: &Store) -> Result<()> {
        match self {
            CampaignCommand::Create { name, protocol } => {
                let protocol = match &protocol {
                    Some(path) => crate::io::protocol::read(path, &config.limits)?,
                    None => crate::domain::protocol::vgenst(),
                };
                crate::app::sampling::planned(&protocol.taxonomy.sampling)?;
                let campaign = store.create_campaign(&name, &protocol).await?;
                println!(
                    "campaign `{}` created with protocol `{}` (version {}): {}",
                    campaign.name,
                    protocol.name,
                    protocol.version,
                    sizes(&campaign.taxonomy, None)
                );
            }
            CampaignCommand::Protocol { file, campaign } => {
                let protocol = crate::io::protocol::read(&file, &config.limits)?;
                crate::app::sampling::planned(&protocol.taxonomy.sampling)?;
                let before = store.campaign(&campaign.campaign).await?;
                let after = store
                    .change_protocol(&campaign.campaign, &protocol.taxonomy)
                    .await?;
                let new = (after.taxonomy.tasks.len()).saturating_sub(before.taxonomy.tasks.len());
                println!(
                    "campaign `{}` now reviews by protocol `{}` (version {}): {}",
                    after.name,
                    protocol.name,
                    protocol.version,
                    sizes(&after.taxonomy, Some(new))
                );
                if after.protocol_version == before.protocol_version {
                    println!(
                        "nothing changed: it is the protocol in force (the campaign's version {})",
                        after.protocol_version
                    );
                } else {
                    println!(
                        "the campaign's protocol is now version {} (it was {}): each decision records the version it was made under",
                        after.protocol_version, before.protocol_version
                    );
                }
            }
            CampaignCommand::Settings { change, campaign } => {
                change.run(store, &campaign).await?;
            }
        }
        Ok(())
    }
}

impl SettingsArgs {
    /// `tandem campaign settings`: the settings given changed (stored only when one
    /// differs), then all of them said.
    async fn run(self, store: &Store, campaign: &CampaignArg) -> Result<()> {
        let campaign = store.campaign(&campaign.campaign).await?;
        let mut s = campaign.settings;
        if let Some(t) = self.target {
            s.target_per_task = t;
        }
        if let Some(t) = self.calibration_threshold {
            s.calibration_threshold = t;
        }
        if let Some(m) = self.calibration_min {
            s.calibration_min_items = m;
        }
        if let Some(b) = self.blind_key_check {
            s.blind_key_check = b == "on";
        }
        if let Some(w) = self.known_window {
            s.known_window = w;
        }
        if let Some(r) = self.known_rate {
            s.known_rate = r;
        }
        if s != campaign.settings {
            store.set_settings(&campaign, s).await?;
        }
        println!(
            "campaign `{}`: target {} retained clips per task; calibration needs {:.0}% agreement in rounds of {} items; the blind key check is {}; known clips are served at {}; the recent catch rate on known items looks at the last {} known defects",
            campaign.name,
            s.target_per_task,
            s.calibration_threshold * 100.0,
            s.calibration_min_items,
            if s.blind_key_check { "on" } else { "off" },
            if s.known_rate > 0.0 {
                format!(
                    "{}% of each task's real clips",
                    (s.known_rate * 1e6).round() / 1e4
                )
            } else {
                "every one imported".into()
            },
            s.known_window
        );
        Ok(())
    }
}
