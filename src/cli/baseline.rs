//! `tandem baseline`: the human baseline under circular evaluation. Answers gathered
//! elsewhere in and out, its set-up for the browser, its participants' links and
//! consent, and its tables.

use super::CampaignArg;
use super::imports::read_csv;
use super::output::{pretty_json, write_out};
use crate::config::Config;
use crate::domain::Part;
use crate::error::{Error, Result};
use crate::io;
use crate::report::format::Format;
use crate::stats::circular::IntervalMethod;
use crate::store::Store;
use crate::store::catalog::Campaign;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum BaselineCommand {
    /// Import answers (CSV: participant,question_id,presentation,shown,chosen; one row
    /// per presentation), checked whole against the retained questions and the
    /// baseline's participants; all or nothing, and final
    Import {
        file: PathBuf,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Export every answer in the import's format
    Export {
        /// File to write [default: standard output]
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Each baseline participant and the presentations they answered
    Status {
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Set the baseline up for the browser: the retained questions now, k videos of each
    /// task per participant drawn from a seed (again only while nobody has begun)
    Setup {
        /// k, the videos of each task each participant answers about
        #[arg(long, default_value_t = 10)]
        per_task: i64,
        /// The seed of the draw [default: a random one, printed]
        #[arg(long)]
        seed: Option<i64>,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Make participants of the study or the baseline, each with an invitation link
    /// (printed once as `participant,link`: only the token's digest is kept)
    Invite {
        /// How many
        #[arg(long, default_value_t = 1)]
        count: usize,
        /// baseline or study
        #[arg(long, default_value = "baseline")]
        part: String,
        /// The server's address, put before each link's path (e.g. https://qc.example.org)
        #[arg(long, default_value = "")]
        base_url: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Every link of the campaign: participant, part, first use, revoked, completion code
    Links {
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Revoke a participant's link: it opens nothing, their sessions end, answers stay
    Revoke {
        participant: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// What a part's participants read before they begin, and whether links keep an
    /// external participant id
    Consent {
        /// baseline or study
        #[arg(long, default_value = "baseline")]
        part: String,
        /// A text file with the consent text (at most 4000 characters)
        #[arg(long)]
        file: Option<PathBuf>,
        /// Keep an external participant id given with a link (`?pid=`)
        #[arg(long)]
        keep_external_id: bool,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// The baseline's tables: accuracy (vanilla and circular, overall, per
    /// level, task, QA type and participant, linked pairs) or the position bias
    Stats {
        /// accuracy or positions
        #[arg(long, default_value = "accuracy")]
        table: String,
        /// csv, latex or json (json holds every table)
        #[arg(long, default_value = "csv")]
        format: String,
        /// The accuracies' 95% interval: clopper-pearson (exact binomial) or wilson
        #[arg(long, default_value = "clopper-pearson")]
        interval: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
}

impl BaselineCommand {
    pub(super) async fn run(self, config: &Config, store: &Store) -> Result<()> {
        match self {
            BaselineCommand::Import { file, campaign } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                let Some((rows, problems, what)) =
                    read_csv(config, &file, "answers", io::baseline::read_answers)?
                else {
                    super::imports::nothing_to_import("answers", &file);
                    return Ok(());
                };
                let summary =
                    crate::app::baseline::import_answers(store, &campaign, &rows, problems, &what)
                        .await?;
                println!("imported {}: {summary}", file.display());
            }
            BaselineCommand::Export { out, campaign } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                let rows = crate::app::baseline::answer_rows(store, &campaign).await?;
                write_out(out.as_deref(), |w| io::baseline::write_answers(w, &rows))?;
            }
            BaselineCommand::Status { campaign } => {
                status(store, &store.campaign(&campaign.campaign).await?).await?;
            }
            BaselineCommand::Setup {
                per_task,
                seed,
                campaign,
            } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                let s =
                    crate::app::baseline::setup(store, config, &campaign, per_task, seed).await?;
                println!("{s}");
                if !s.metadata_removed {
                    println!(
                        "ffmpeg is not installed: the clips are served as they are, metadata included"
                    );
                }
            }
            BaselineCommand::Invite {
                count,
                part,
                base_url,
                campaign,
            } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                let links =
                    crate::app::baseline::invite(store, &campaign, parse_part(&part)?, count)
                        .await?;
                println!("participant,link");
                for l in links {
                    println!(
                        "{},{}{}",
                        l.participant,
                        base_url.trim_end_matches('/'),
                        l.path
                    );
                }
            }
            BaselineCommand::Links { campaign } => {
                links(store, &store.campaign(&campaign.campaign).await?).await?;
            }
            BaselineCommand::Revoke {
                participant,
                campaign,
            } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                if store.revoke_link(&campaign, &participant).await? {
                    println!("revoked {participant}'s link; their answers stay");
                } else {
                    println!("{participant}'s link was revoked already");
                }
            }
            BaselineCommand::Consent {
                part,
                file,
                keep_external_id,
                campaign,
            } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                let part = parse_part(&part)?;
                let consent = match file {
                    Some(f) => io::baseline::read_consent(&f)?,
                    None => String::new(),
                };
                let s = crate::store::invitations::PartSettings {
                    consent,
                    keep_external_id,
                };
                store.set_part_settings(&campaign, part, &s).await?;
                println!(
                    "the {part}'s participants read {} character(s) first; external ids are {}",
                    s.consent.chars().count(),
                    if keep_external_id { "kept" } else { "not kept" }
                );
            }
            BaselineCommand::Stats {
                table,
                format,
                interval,
                campaign,
            } => {
                let campaign = store.campaign(&campaign.campaign).await?;
                print!(
                    "{}",
                    stats(store, &campaign, &table, &format, &interval).await?
                );
            }
        }
        Ok(())
    }
}

fn parse_part(part: &str) -> Result<Part> {
    Part::parse(part).map_err(|m| Error::field("part", m))
}

/// `tandem baseline status`: the participants and what each answered.
async fn status(store: &Store, campaign: &Campaign) -> Result<()> {
    let answers = store.baseline_answers(campaign).await?;
    let participants = store.baseline_participants(campaign).await?;
    println!(
        "{} baseline participant(s), {} presentation(s) answered",
        participants.len(),
        answers.len()
    );
    for p in participants {
        let mine: Vec<_> = answers.iter().filter(|a| a.participant == p).collect();
        let questions: std::collections::HashSet<&str> =
            mine.iter().map(|a| a.question_key.as_str()).collect();
        println!(
            "{p}\t{} presentation(s) of {} question(s)",
            mine.len(),
            questions.len()
        );
    }
    Ok(())
}

/// `tandem baseline links`: every link of the campaign, one per line.
async fn links(store: &Store, campaign: &Campaign) -> Result<()> {
    println!("participant\tpart\tfirst used\tstate\tcompletion code");
    for l in store.links(campaign).await? {
        println!(
            "{}\t{}\t{}\t{}\t{}",
            l.participant,
            l.part,
            l.first_used_at
                .map_or_else(|| "never".into(), crate::clock::to_rfc3339),
            if l.revoked_at.is_some() {
                "revoked"
            } else {
                "open"
            },
            l.completion_code
        );
    }
    Ok(())
}

/// `tandem baseline stats`: one table in CSV or LaTeX, or every one as JSON.
async fn stats(
    store: &Store,
    campaign: &Campaign,
    table: &str,
    format: &str,
    interval: &str,
) -> Result<String> {
    use crate::report::baseline as b;
    let method = match interval {
        "clopper-pearson" => IntervalMethod::ClopperPearson,
        "wilson" => IntervalMethod::Wilson,
        other => {
            return Err(Error::field(
                "interval",
                format!("must be clopper-pearson or wilson, not `{other}`"),
            ));
        }
    };
    let format = Format::parse(format).map_err(|m| Error::field("format", m))?;
    let report = crate::app::baseline::report(store, campaign, method)
        .await?
        .ok_or_else(|| {
            Error::NotFound(format!(
                "campaign `{}` has no baseline answers yet (tandem baseline import FILE)",
                campaign.name
            ))
        })?;
    match (table, format) {
        (_, Format::Json) => pretty_json(&report),
        ("accuracy", Format::Csv) => b::accuracy_table(&report).to_csv(),
        ("accuracy", Format::Latex) => Ok(b::latex(&report)),
        ("positions", Format::Csv) => b::position_table(&report).to_csv(),
        ("positions", Format::Latex) => Err(Error::field(
            "format",
            "the position bias is a CSV table (or JSON); its test is in the accuracy table's LaTeX caption",
        )),
        (other, _) => Err(Error::field(
            "table",
            format!("must be accuracy or positions, not `{other}`"),
        )),
    }
}
