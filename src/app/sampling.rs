//! Sampled review of a campaign, as the CLI, the admin's page and the API run it: the
//! plan of each protocol rule (from `stats::sampling`), one run (settle, release, draw;
//! `store::areas::sampling`), and the lots with what each sample says of its whole.

use crate::domain::protocol::MAX_SAMPLE;
use crate::domain::sampling::{PlanSpec, SamplingRule};
use crate::error::{Error, Result};
use crate::stats::sampling as stats;
use crate::store::Store;
use crate::store::catalog::Campaign;
use crate::store::sampling::{Lot, PlannedRule, SamplingRun};
use serde::Serialize;

/// The sample size n and acceptance number c of a rule.
pub fn plan_of(rule: &SamplingRule) -> Result<(u64, u64)> {
    let bad = |e: stats::SamplingError| {
        Error::Invalid(format!("the sampling rule of {}: {e}", rule.describe()))
    };
    let (n, c) = match rule.plan {
        PlanSpec::Risks {
            aql,
            rql,
            alpha,
            beta,
        } => {
            let p = stats::plan(aql, rql, alpha, beta).map_err(bad)?;
            (p.n, p.c)
        }
        PlanSpec::ZeroDefect { p } => (stats::zero_defect_n(p, rule.confidence).map_err(bad)?, 0),
        PlanSpec::Fixed { n, c } => (n, c),
    };
    if n > MAX_SAMPLE as u64 {
        return Err(Error::Invalid(format!(
            "the sampling rule of {} asks for a sample of {n}, more than {MAX_SAMPLE}",
            rule.describe()
        )));
    }
    Ok((n, c))
}

/// Every rule of a campaign's protocol with its plan (an error names a rule whose plan
/// cannot be found).
pub fn planned(rules: &[SamplingRule]) -> Result<Vec<PlannedRule>> {
    rules
        .iter()
        .map(|rule| {
            let (n, c) = plan_of(rule)?;
            Ok(PlannedRule {
                rule: rule.clone(),
                n,
                c,
            })
        })
        .collect()
}

/// One run of the campaign's sampled review: every lot whose sample is reviewed is
/// settled, then every stratum's held items are drawn as a new lot, from a fresh seed
/// stored with it.
pub async fn run(store: &Store, campaign: &str) -> Result<SamplingRun> {
    // A copy at most a second old: the write refuses a run planned under another
    // version of the protocol.
    let c = store.campaign(campaign).await?;
    if c.taxonomy.sampling.is_empty() {
        // The campaign's protocol, not the request, is what refuses: 409.
        return Err(Error::Conflict(format!(
            "campaign `{campaign}` reviews every item: its protocol has no [[sampling]] rule"
        )));
    }
    let planned = planned(&c.taxonomy.sampling)?;
    let mut seed = [0u8; 8];
    crate::auth::random_bytes(&mut seed)?;
    store
        .run_sampling(
            campaign,
            c.protocol_version,
            &planned,
            u64::from_le_bytes(seed),
        )
        .await
}

/// A lot with what its sample says of the whole.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct LotReport {
    #[serde(flatten)]
    pub lot: Lot,
    /// "reviewing" (drawn items still open), "ready" (every drawn item decided: the
    /// next run settles it), "accepted" or "rejected".
    pub state: &'static str,
    /// The exact one-sided (Clopper-Pearson) upper bound, at the rule's confidence, on
    /// the defect rate of the whole lot: from the defects found in the sample, once
    /// every drawn item is decided.
    pub upper_bound: Option<f64>,
    pub confidence: f64,
}

/// A campaign's sampled review as it stands.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct SamplingStatus {
    pub campaign: String,
    /// The protocol's rules with their plans.
    pub rules: Vec<RuleReport>,
    pub lots: Vec<LotReport>,
    /// Items held for the next draw.
    pub held: Vec<HeldReport>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct RuleReport {
    pub stratum: String,
    #[serde(flatten)]
    pub rule: SamplingRule,
    pub n: u64,
    pub c: u64,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct HeldReport {
    pub stage: crate::domain::Stage,
    pub task: String,
    pub qa_type: Option<String>,
    pub items: u64,
}

/// The lots of a campaign, each with its state and bound, and the items held.
pub async fn status(store: &Store, campaign: &Campaign) -> Result<SamplingStatus> {
    let (lots, waiting) = store.sampling_lots(campaign).await?;
    let mut rules = Vec::new();
    for p in planned(&campaign.taxonomy.sampling)? {
        rules.push(RuleReport {
            stratum: p.rule.describe(),
            rule: p.rule,
            n: p.n,
            c: p.c,
        });
    }
    let mut reports = Vec::with_capacity(lots.len());
    for lot in lots {
        let confidence = lot.rule.confidence;
        let (state, defects) = match (lot.accepted, lot.defects) {
            (Some(true), Some(d)) => ("accepted", Some(d)),
            (Some(false), Some(d)) => ("rejected", Some(d)),
            _ if lot.reviewed == lot.n => ("ready", Some(lot.rejected)),
            _ => ("reviewing", None),
        };
        let upper_bound = match defects {
            Some(d) => Some(
                stats::upper_bound(d, lot.n, confidence)
                    .map_err(|e| Error::fault(format!("lot {}", lot.id), e))?,
            ),
            None => None,
        };
        reports.push(LotReport {
            lot,
            state,
            upper_bound,
            confidence,
        });
    }
    Ok(SamplingStatus {
        campaign: campaign.name.clone(),
        rules,
        lots: reports,
        held: waiting
            .into_iter()
            .map(|(stage, task, qa_type, items)| HeldReport {
                stage,
                task,
                qa_type,
                items,
            })
            .collect(),
    })
}

/// A run in words, one line per lot.
pub fn run_words(run: &SamplingRun) -> String {
    let mut out = String::new();
    for s in &run.settled {
        out.push_str(&if s.accepted {
            format!(
                "lot {}: accepted ({} defect(s) in its sample); {} unreviewed item(s) retained by sample\n",
                s.lot, s.defects, s.undrawn
            )
        } else {
            format!(
                "lot {}: rejected ({} defect(s) in its sample); {} unreviewed item(s) sent to full review\n",
                s.lot, s.defects, s.undrawn
            )
        });
    }
    for d in &run.drawn {
        out.push_str(&format!(
            "lot {}: drew {} of {} held item(s) for review\n",
            d.lot, d.drawn, d.size
        ));
    }
    if run.released > 0 {
        out.push_str(&format!(
            "{} held item(s) no rule covers any longer went to review\n",
            run.released
        ));
    }
    if out.is_empty() {
        out.push_str(
            "nothing to settle or draw: no lot's sample is fully reviewed and no item is held\n",
        );
    }
    out
}

/// The status in words: the rules, each lot, the held items.
pub fn status_words(s: &SamplingStatus) -> String {
    let mut out = String::new();
    if s.rules.is_empty() {
        out.push_str(&format!(
            "campaign `{}` reviews every item: its protocol has no [[sampling]] rule\n",
            s.campaign
        ));
    }
    for r in &s.rules {
        out.push_str(&format!(
            "rule {}: review {} of each lot, accept with at most {} defect(s)\n",
            r.stratum, r.n, r.c
        ));
    }
    for l in &s.lots {
        let lot = &l.lot;
        let qa = lot
            .qa_type
            .as_deref()
            .map(|q| format!(" {q}"))
            .unwrap_or_default();
        let bound = l
            .upper_bound
            .map(|u| {
                format!(
                    "; defect rate of the whole at most {:.2}% ({}% confidence)",
                    u * 100.0,
                    l.confidence * 100.0
                )
            })
            .unwrap_or_default();
        out.push_str(&format!(
            "lot {} (Stage {}, {}{qa}): {} item(s), {} drawn, c = {}; {} of the sample reviewed, {} defect(s): {}{bound}\n",
            lot.id,
            lot.stage,
            lot.task,
            lot.size,
            lot.n,
            lot.c,
            lot.reviewed,
            lot.rejected,
            l.state,
        ));
    }
    for h in &s.held {
        let qa = h
            .qa_type
            .as_deref()
            .map(|q| format!(" {q}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "held for the next draw: Stage {}, {}{qa}: {} item(s)\n",
            h.stage, h.task, h.items
        ));
    }
    out
}
