//! `tandem calibration`: each validator's calibration, another round, a pause lifted,
//! and the known copies of resolved clips.

use super::CampaignArg;
use crate::error::Result;
use crate::store::Store;
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum CalibrationCommand {
    /// Each validator's calibration round, agreement and state
    Status {
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Start another round for a validator who did not pass
    Reset {
        name: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Open again the queue of a validator the known items paused (their recent catch
    /// rate on known defects was surely below the threshold), without the round the
    /// pause opened
    Lift {
        name: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Make a clip the author resolved a known item for the validators who did not
    /// review it: its video and questions copied under a new id (`--as`), the author's
    /// verdicts the known ones, served to a pair that reviewed none of it
    Copy {
        /// The clip with an item the author resolved
        clip: String,
        /// The copy's clip id, new to the campaign (its questions' ids follow it)
        #[arg(long = "as")]
        copy: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// The known copies of resolved clips: each with its source, known items and pair
    Copies {
        #[command(flatten)]
        campaign: CampaignArg,
    },
}

impl CalibrationCommand {
    pub(super) async fn run(self, store: &Store) -> Result<()> {
        match self {
            CalibrationCommand::Status { campaign } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                for s in store.calibration_scores(&campaign).await? {
                    let st = &s.status;
                    println!(
                        "{}\tround {}\t{} of {} decided\t{} agreed\t{}{}",
                        s.validator,
                        st.round,
                        st.decided,
                        st.total,
                        st.agreed,
                        st.state_words(),
                        st.paused
                            .as_deref()
                            .map(|why| format!("\tpaused by the known items: {why}"))
                            .unwrap_or_default()
                    );
                }
            }
            CalibrationCommand::Reset { name, campaign } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                let draw = store.reset_calibration(&campaign, &name, "cli").await?;
                println!("{}", crate::domain::calibration::round_text(&name, &draw));
            }
            CalibrationCommand::Lift { name, campaign } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                let round = store.lift_pause(&campaign, &name, "cli").await?;
                println!(
                    "{name}'s queue is open again; the pause's calibration round {round} stays on record, lifted"
                );
            }
            CalibrationCommand::Copy {
                clip,
                copy,
                campaign,
            } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                let made = store.copy_resolved(&campaign, &clip, &copy).await?;
                println!("{}", made.words());
            }
            CalibrationCommand::Copies { campaign } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                for k in store.known_copies(&campaign).await? {
                    println!(
                        "{}\tcopy of {}\tknown: {}\tserved to {}",
                        k.clip_id,
                        k.source,
                        k.known_items.join(", "),
                        k.validators.join(" and ")
                    );
                }
            }
        }
        Ok(())
    }
}
