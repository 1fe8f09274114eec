//! The known items of the live queue: each validator's catch rate on known defects
//! (sensitivity) and pass rate on known sound items (specificity), per stage, with
//! Wilson 95% intervals, over the whole campaign and over their last K known defects;
//! and whether that recent catch rate is surely below the calibration threshold (the
//! rule that pauses a queue). Pure: the store gives the verdicts, in the order given.

use super::format::{Col, CsvTable};
use crate::domain::records::KnownRecord;
use crate::stats::quality::{KnownRates, known_item_rates};
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// A share with its Wilson 95% interval; both null without a rating behind it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct Rate {
    pub estimate: Option<f64>,
    pub ci95: Option<[f64; 2]>,
}

impl Rate {
    fn of(r: Option<[f64; 3]>) -> Rate {
        Rate {
            estimate: r.map(|r| r[0]),
            ci95: r.map(|r| [r[1], r[2]]),
        }
    }

    /// "0.85 [0.64, 0.95]", or "--" without ratings.
    pub fn words(&self) -> String {
        match (self.estimate, self.ci95) {
            (Some(e), Some([a, b])) => format!("{e:.2} [{a:.2}, {b:.2}]"),
            _ => "--".into(),
        }
    }
}

/// One validator's record on the known items of one stage.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct KnownRow {
    pub validator: String,
    pub stage: i64,
    /// Known defects they decided, and of them rejected.
    pub defects: usize,
    pub caught: usize,
    /// The share of known defects rejected.
    pub sensitivity: Rate,
    /// Known sound items they decided, and of them passed.
    pub sound: usize,
    pub passed: usize,
    /// The share of known sound items passed.
    pub specificity: Rate,
    /// Over their last `window` known defects (since their queue's last pause).
    pub recent_defects: usize,
    pub recent_caught: usize,
    pub recent_sensitivity: Rate,
    /// The recent catch rate's interval lies wholly below the threshold.
    pub below_threshold: bool,
}

/// `known_items` in the statistics.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct KnownItemsReply {
    /// How many known defects the recent rate looks at.
    pub window: i64,
    /// The calibration threshold the recent rate is held to.
    pub threshold: f64,
    /// Known items decided (at least one verdict), and verdicts on them.
    pub items: usize,
    pub verdicts: usize,
    /// Per validator and stage, by name.
    pub validators: Vec<KnownRow>,
    pub method: String,
}

/// The fewest known defects in the recent window (or the whole window, when it is
/// smaller) before the recent catch rate can pause a queue: one miss on a first known
/// defect gives 0 of 1, whose interval ends at 0.79, below a threshold of 0.8; a good
/// validator (catching 90%) misses it one time in ten. With five, pausing takes at most
/// 2 of 5 caught (at 0.8), which such a validator shows less than once in a hundred.
pub const MIN_RECENT_DEFECTS: usize = 5;

/// The rates of one validator's verdicts on one stage's known items, in the order
/// given; `since` (µs) leaves out of the recent window what came before their queue's
/// last pause.
pub fn rates(records: &[&KnownRecord], window: usize, threshold: f64, since: i64) -> KnownRates {
    let all: Vec<(bool, bool)> = records.iter().map(|r| (r.defect(), r.rejected())).collect();
    let mut out = known_item_rates(&all, window, threshold);
    let recent: Vec<(bool, bool)> = records
        .iter()
        .filter(|r| r.decided_at > since)
        .map(|r| (r.defect(), r.rejected()))
        .collect();
    let fresh = known_item_rates(&recent, window, threshold);
    out.recent_caught = fresh.recent_caught;
    out.recent_defects = fresh.recent_defects;
    out.recent_sensitivity = fresh.recent_sensitivity;
    out.below_threshold =
        fresh.below_threshold && fresh.recent_defects >= MIN_RECENT_DEFECTS.min(window);
    out
}

/// The verdicts of one validator on one stage, in the order given.
pub fn of<'a>(records: &'a [KnownRecord], validator: &str, stage: i64) -> Vec<&'a KnownRecord> {
    records
        .iter()
        .filter(|r| r.validator == validator && r.stage == stage)
        .collect()
}

/// The figures of every validator; `None` when no known item has a verdict. `since`
/// gives each validator's last pause (µs), when they had one.
pub fn build(
    records: &[KnownRecord],
    window: i64,
    threshold: f64,
    since: &BTreeMap<String, i64>,
) -> Option<KnownItemsReply> {
    if records.is_empty() {
        return None;
    }
    let mut groups: BTreeMap<(&str, i64), Vec<&KnownRecord>> = BTreeMap::new();
    for r in records {
        groups
            .entry((r.validator.as_str(), r.stage))
            .or_default()
            .push(r);
    }
    let w = usize::try_from(window).unwrap_or(1).max(1);
    let validators = groups
        .into_iter()
        .map(|((name, stage), rs)| {
            let k = rates(
                &rs,
                w,
                threshold,
                since.get(name).copied().unwrap_or(i64::MIN),
            );
            KnownRow {
                validator: name.to_string(),
                stage,
                defects: k.defects,
                caught: k.caught,
                sensitivity: Rate::of(k.sensitivity),
                sound: k.sound,
                passed: k.passed,
                specificity: Rate::of(k.specificity),
                recent_defects: k.recent_defects,
                recent_caught: k.recent_caught,
                recent_sensitivity: Rate::of(k.recent_sensitivity),
                below_threshold: k.below_threshold,
            }
        })
        .collect();
    let mut items: Vec<(i64, &str)> = records
        .iter()
        .map(|r| (r.stage, r.item_id.as_str()))
        .collect();
    items.sort_unstable();
    items.dedup();
    Some(KnownItemsReply {
        window,
        threshold,
        items: items.len(),
        verdicts: records.len(),
        validators,
        method: format!(
            "each validator's latest verdict on each known item of the live queue against its \
             known verdict; sensitivity: known defects rejected, specificity: known sound items \
             passed; Wilson 95% intervals; recent: the last {window} known defects since the \
             validator's queue was last paused, held to the calibration threshold {threshold}"
        ),
    })
}

/// Why a validator's queue pauses, in words for the admin, when their recent catch rate
/// in some stage is surely below the threshold; else `None`.
pub fn pause_reason(
    records: &[KnownRecord],
    validator: &str,
    window: i64,
    threshold: f64,
    since: i64,
) -> Option<String> {
    let w = usize::try_from(window).unwrap_or(1).max(1);
    [1, 2].into_iter().find_map(|stage| {
        let rs = of(records, validator, stage);
        let k = rates(&rs, w, threshold, since);
        k.below_threshold.then(|| {
            format!(
                "Stage {stage}: {} of the last {} known defects caught, {} (Wilson 95%), wholly below the threshold of {:.0}%",
                k.recent_caught,
                k.recent_defects,
                Rate::of(k.recent_sensitivity).words(),
                threshold * 100.0
            )
        })
    })
}

/// Every verdict on a known item, beside the known verdict (`known-verdicts.csv`).
pub fn verdicts_csv(records: &[KnownRecord]) -> CsvTable {
    let mut t = CsvTable::new(&[
        ("stage", Col::Num),
        ("item_id", Col::Text),
        ("clip_id", Col::Text),
        ("task", Col::Text),
        ("validator", Col::Text),
        ("verdict", Col::Text),
        ("reasons", Col::Text),
        ("known_verdict", Col::Text),
        ("known_reasons", Col::Text),
        ("agrees", Col::Num),
        ("decided_at", Col::Text),
        ("known_from", Col::Text),
    ]);
    for r in records {
        t.rows.push(vec![
            r.stage.to_string(),
            r.item_id.clone(),
            r.clip_id.clone(),
            r.task.clone(),
            r.validator.clone(),
            r.verdict.clone(),
            r.reasons.clone(),
            r.known_verdict.clone(),
            r.known_reasons.clone(),
            u8::from(r.rejected() == r.defect()).to_string(),
            crate::clock::to_rfc3339(r.decided_at),
            r.known_from.clone().unwrap_or_default(),
        ]);
    }
    t
}

/// The per-validator table as CSV.
pub fn rates_csv(k: &KnownItemsReply) -> CsvTable {
    let mut t = CsvTable::new(&[
        ("validator", Col::Text),
        ("stage", Col::Num),
        ("defects", Col::Num),
        ("caught", Col::Num),
        ("sensitivity", Col::Num),
        ("sensitivity_ci95_low", Col::Num),
        ("sensitivity_ci95_high", Col::Num),
        ("sound", Col::Num),
        ("passed", Col::Num),
        ("specificity", Col::Num),
        ("specificity_ci95_low", Col::Num),
        ("specificity_ci95_high", Col::Num),
        ("recent_defects", Col::Num),
        ("recent_caught", Col::Num),
        ("recent_sensitivity", Col::Num),
        ("recent_ci95_low", Col::Num),
        ("recent_ci95_high", Col::Num),
        ("below_threshold", Col::Num),
    ]);
    let num = |x: Option<f64>| x.map_or_else(String::new, |v| format!("{v}"));
    let rate = |r: &Rate| {
        [
            num(r.estimate),
            num(r.ci95.map(|c| c[0])),
            num(r.ci95.map(|c| c[1])),
        ]
    };
    for v in &k.validators {
        let mut row = vec![
            v.validator.clone(),
            v.stage.to_string(),
            v.defects.to_string(),
            v.caught.to_string(),
        ];
        row.extend(rate(&v.sensitivity));
        row.extend([v.sound.to_string(), v.passed.to_string()]);
        row.extend(rate(&v.specificity));
        row.extend([v.recent_defects.to_string(), v.recent_caught.to_string()]);
        row.extend(rate(&v.recent_sensitivity));
        row.push(u8::from(v.below_threshold).to_string());
        t.rows.push(row);
    }
    t
}

/// The per-validator table as LaTeX (booktabs), with a caption a paper can use: the
/// whole campaign's rates (the recent window is for running the review, in the CSV).
pub fn latex_table(k: &KnownItemsReply) -> String {
    use super::format::tex;
    let mut out = String::new();
    out.push_str(
        "% Known items of the live queue: each validator's record. Generated by Tandem.\n",
    );
    out.push_str("% Needs \\usepackage{booktabs}.\n");
    out.push_str("\\begin{table}[t]\n\\centering\n");
    out.push_str(&format!(
        "\\caption{{Validators' record on known items: items whose verdict was known beforehand, served among the real items of each validator's queue exactly as they are. Catch rate: the share of known defective items a validator rejected (sensitivity); pass rate: the share of known sound items passed (specificity); each with a Wilson 95\\% interval. {} known item(s), {} verdict(s); these verdicts count in no other table.}}\n",
        k.items, k.verdicts
    ));
    out.push_str("\\label{tab:known-items}\n");
    out.push_str("\\begin{tabular}{llrlrl}\n\\toprule\nStage & Validator & Caught & Catch rate [95\\% CI] & Passed & Pass rate [95\\% CI] \\\\\n\\midrule\n");
    // By stage, then validator: one block per stage.
    let mut rows: Vec<&KnownRow> = k.validators.iter().collect();
    rows.sort_by(|a, b| (a.stage, &a.validator).cmp(&(b.stage, &b.validator)));
    let mut stage = None;
    for v in rows {
        if stage.is_some_and(|s| s != v.stage) {
            out.push_str("\\midrule\n");
        }
        stage = Some(v.stage);
        out.push_str(&format!(
            "{} & {} & {}/{} & {} & {}/{} & {} \\\\\n",
            v.stage,
            tex(&v.validator),
            v.caught,
            v.defects,
            v.sensitivity.words(),
            v.passed,
            v.sound,
            v.specificity.words()
        ));
    }
    out.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(
        validator: &str,
        stage: i64,
        item: usize,
        defect: bool,
        rejected: bool,
        at: i64,
    ) -> KnownRecord {
        let v = |r: bool| if r { "reject" } else { "valid" }.to_string();
        KnownRecord {
            stage,
            item_id: format!("k{item}"),
            clip_id: format!("k{item}"),
            task: "T1".into(),
            validator: validator.into(),
            verdict: v(rejected),
            reasons: String::new(),
            known_verdict: v(defect),
            known_reasons: String::new(),
            decided_at: at,
            known_from: None,
        }
    }

    #[test]
    fn rates_per_validator_and_stage_with_wilson_intervals() {
        // ann: 9 of 10 defects caught, 4 of 5 sound items passed in Stage 1.
        let mut rs = Vec::new();
        for i in 0..10 {
            rs.push(rec("ann", 1, i, true, i != 3, i as i64));
        }
        for i in 10..15 {
            rs.push(rec("ann", 1, i, false, i == 12, i as i64));
        }
        rs.push(rec("bob", 2, 20, true, false, 30));
        let k = build(&rs, 20, 0.8, &BTreeMap::new()).expect("figures");
        assert_eq!(k.items, 16);
        assert_eq!(k.verdicts, 16);
        let ann = &k.validators[0];
        assert_eq!((ann.validator.as_str(), ann.stage), ("ann", 1));
        assert_eq!(
            (ann.defects, ann.caught, ann.sound, ann.passed),
            (10, 9, 5, 4)
        );
        assert_eq!(ann.sensitivity.estimate, Some(0.9));
        // Wilson 95% for 9/10, worked by hand (z = 1.959964): centre 0.788985, half
        // width 0.193137.
        let [lo, hi] = ann.sensitivity.ci95.expect("interval");
        assert!(
            (lo - 0.595_85).abs() < 1e-5 && (hi - 0.982_12).abs() < 1e-5,
            "{lo} {hi}"
        );
        assert_eq!(ann.specificity.estimate, Some(0.8));
        assert!(!ann.below_threshold);
        let bob = &k.validators[1];
        assert_eq!((bob.defects, bob.caught, bob.sound), (1, 0, 0));
        assert_eq!(
            bob.specificity,
            Rate {
                estimate: None,
                ci95: None
            }
        );
        // One miss does not pause: 0 of 1 ends at 0.79, below 0.8, but one known
        // defect is too few to judge by.
        assert_eq!(bob.recent_sensitivity.ci95.map(|c| c[1] < 0.8), Some(true));
        assert!(!bob.below_threshold);
        assert!(build(&[], 20, 0.8, &BTreeMap::new()).is_none());
    }

    #[test]
    fn a_queue_pauses_only_when_the_recent_rate_is_surely_below_and_counts_after_the_pause() {
        // 20 defects, 8 caught: 0.40 [0.22, 0.61], wholly below 0.8.
        let rs: Vec<KnownRecord> = (0..20)
            .map(|i| rec("cy", 1, i, true, i % 5 < 2, i as i64))
            .collect();
        let why = pause_reason(&rs, "cy", 20, 0.8, i64::MIN).expect("paused");
        assert!(
            why.contains("8 of the last 20 known defects caught"),
            "{why}"
        );
        assert!(why.contains("0.40 [0.22, 0.61]"), "{why}");
        // A window of the last 5 alone: 2 of 5, [0.12, 0.77]: still below 0.8.
        assert!(pause_reason(&rs, "cy", 5, 0.8, i64::MIN).is_some());
        // ... but not below 0.7: chance alone could give 2 of 5.
        assert!(pause_reason(&rs, "cy", 5, 0.7, i64::MIN).is_none());
        // After a pause at 14 only five defects count: 2 of 5 again, not surely below 0.7.
        assert!(pause_reason(&rs, "cy", 20, 0.7, 14).is_none());
        // Another validator, or a stage without known defects, is never paused.
        assert!(pause_reason(&rs, "dee", 20, 0.8, i64::MIN).is_none());
        let csv = verdicts_csv(&rs);
        assert_eq!(csv.rows.len(), 20);
        let k = build(&rs, 20, 0.8, &BTreeMap::new()).expect("figures");
        assert!(k.validators[0].below_threshold);
        assert_eq!(rates_csv(&k).rows[0].len(), 18);
        let tex = latex_table(&k);
        assert!(
            tex.contains("1 & cy & 8/20 & 0.40 [0.22, 0.61] & 0/0 & -- \\\\\n"),
            "{tex}"
        );
        assert!(tex.contains("20 known item(s), 20 verdict(s)"), "{tex}");
    }
}
