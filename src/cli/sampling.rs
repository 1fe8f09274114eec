//! `tandem sampling`: the figures of `stats::sampling` (a plan, a bound, a zero-defect
//! sample), which need no data folder, and a campaign's sampled review (`run`,
//! `status`), which opens its store; each in words or JSON.

use super::CampaignArg;
use super::output::json_or_words;
use crate::error::{Error, Result};
use crate::stats::sampling;
use clap::Subcommand;
use serde_json::json;
use std::path::Path;

#[derive(Subcommand, Debug)]
pub enum SamplingCommand {
    /// The single sampling plan: review n items, accept the whole when at most c are
    /// defective; the smallest n (then c) whose risks are at most alpha and beta
    Plan {
        /// The acceptable quality level: a defect rate the whole may have and still be
        /// accepted with probability at least 1 - alpha (0.01 is 1%)
        #[arg(long)]
        aql: f64,
        /// The rejectable quality level: a defect rate at which the whole is accepted
        /// with probability at most beta
        #[arg(long)]
        rql: f64,
        /// The producer's risk: rejecting a whole at the AQL
        #[arg(long, default_value_t = 0.05)]
        alpha: f64,
        /// The consumer's risk: accepting a whole at the RQL
        #[arg(long, default_value_t = 0.10)]
        beta: f64,
        /// Print JSON: {"n", "c", "accept_at_aql", "accept_at_rql", ...}
        #[arg(long)]
        json: bool,
    },
    /// The exact one-sided (Clopper-Pearson) upper bound on the whole's defect rate
    /// after DEFECTS defects among N items drawn at random
    Bound {
        #[arg(long)]
        defects: u64,
        #[arg(long)]
        n: u64,
        #[arg(long, default_value_t = 0.95)]
        confidence: f64,
        /// Print JSON: {"defects", "n", "confidence", "upper"}
        #[arg(long)]
        json: bool,
    },
    /// Run a campaign's sampled review: settle every lot whose sample is reviewed
    /// (accepted: its other items are retained by sample; rejected: they go to full
    /// review), then draw every stratum's held items as a new lot and queue its sample
    Run {
        #[command(flatten)]
        campaign: CampaignArg,
        /// Print JSON: {"settled": [...], "drawn": [...], "released"}
        #[arg(long)]
        json: bool,
    },
    /// A campaign's lots: size, sample, acceptance number, defects, decision and the
    /// upper bound on each whole's defect rate; the items held for the next draw
    Status {
        #[command(flatten)]
        campaign: CampaignArg,
        /// Print JSON: {"rules", "lots", "held"}
        #[arg(long)]
        json: bool,
    },
    /// The smallest sample that, with no defect found, shows a defect rate below P
    Zero {
        #[arg(long)]
        p: f64,
        #[arg(long, default_value_t = 0.95)]
        confidence: f64,
        /// Print JSON: {"p", "confidence", "n"}
        #[arg(long)]
        json: bool,
    },
}

impl SamplingCommand {
    /// The figures at once; a campaign's review in the store of `data_dir` (or of
    /// `database_url`).
    pub(super) async fn run(self, data_dir: &Path, database_url: Option<String>) -> Result<()> {
        let invalid = |e: sampling::SamplingError| Error::Invalid(e.to_string());
        match self {
            SamplingCommand::Plan {
                aql,
                rql,
                alpha,
                beta,
                json,
            } => {
                let p = sampling::plan(aql, rql, alpha, beta).map_err(invalid)?;
                json_or_words(
                    json,
                    || {
                        json!({
                            "aql": aql, "rql": rql, "alpha": alpha, "beta": beta,
                            "n": p.n, "c": p.c,
                            "accept_at_aql": p.accept_at_aql, "accept_at_rql": p.accept_at_rql,
                        })
                    },
                    || {
                        format!(
                            "review {n} items drawn at random; accept the whole when at most {c} of them are defective\n\
                             a whole with {aql_pct}% defects is accepted with probability {a:.4} (at least {min_a:.4})\n\
                             a whole with {rql_pct}% defects is accepted with probability {r:.4} (at most {beta})\n",
                            n = p.n,
                            c = p.c,
                            aql_pct = aql * 100.0,
                            rql_pct = rql * 100.0,
                            a = p.accept_at_aql,
                            min_a = 1.0 - alpha,
                            r = p.accept_at_rql,
                        )
                    },
                )
            }
            SamplingCommand::Bound {
                defects,
                n,
                confidence,
                json,
            } => {
                let upper = sampling::upper_bound(defects, n, confidence).map_err(invalid)?;
                json_or_words(
                    json,
                    || json!({"defects": defects, "n": n, "confidence": confidence, "upper": upper}),
                    || {
                        format!(
                            "{defects} defect(s) in {n} items: the whole's defect rate is at most {:.4}% with {}% confidence\n",
                            upper * 100.0,
                            confidence * 100.0
                        )
                    },
                )
            }
            SamplingCommand::Zero {
                p,
                confidence,
                json,
            } => {
                let n = sampling::zero_defect_n(p, confidence).map_err(invalid)?;
                json_or_words(
                    json,
                    || json!({ "p": p, "confidence": confidence, "n": n }),
                    || {
                        format!(
                            "review {n} items drawn at random: if none is defective, the whole's defect rate is below {}% with {}% confidence\n",
                            p * 100.0,
                            confidence * 100.0
                        )
                    },
                )
            }
            SamplingCommand::Run { campaign, json } => {
                super::in_store(data_dir, database_url, async |_, store| {
                    let run = crate::app::sampling::run(store, &campaign.campaign).await?;
                    json_or_words(json, || &run, || crate::app::sampling::run_words(&run))
                })
                .await
            }
            SamplingCommand::Status { campaign, json } => {
                super::in_store(data_dir, database_url, async |_, store| {
                    let campaign = store.campaign(&campaign.campaign).await?;
                    let status = crate::app::sampling::status(store, &campaign).await?;
                    json_or_words(
                        json,
                        || &status,
                        || crate::app::sampling::status_words(&status),
                    )
                })
                .await
            }
        }
    }
}
