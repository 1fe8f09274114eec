//! The study's tables (Tables 14 and 15 of VGenST-Bench, Appendix E) from the raw
//! responses, with the extras a lab needs beside them: Kendall's W and the Friedman
//! test per axis, Krippendorff's alpha beside Fleiss' kappa, the human error rate with
//! a seeded bootstrap interval over clips, and each participant's hit and false-alarm
//! rates with exact intervals and d'. Pure: no database, no HTTP.

use super::format::{Col, CsvTable, Format, TableId, dec, num, pct, pretty, tex};
use super::svg::Caption;
use crate::domain::facts::StudyData;
use crate::domain::study::{Axis, RANK_AXES, Truth};
use crate::domain::taxonomy::{Table, Tables};
use crate::error::{Error, Result};
use crate::stats::binomial::clopper_pearson;
use crate::stats::bootstrap::percentile_bootstrap_ci;
use crate::stats::multi::{AlphaLevel, Ratings, fleiss_gwet, fleiss_kappa, krippendorff_alpha};
use crate::stats::ranks::{Friedman, ranking_summary};
use crate::stats::signal::{RateCorrection, d_prime};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;

mod figures;
pub use figures::{figures, t14_ranks, t15_bars};

/// Resamples of the human error rate's bootstrap interval.
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;
/// Its seed: the same responses always give the same interval.
pub const BOOTSTRAP_SEED: u64 = 20_260_101;

/// Mean rank of one source on one axis.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankCell {
    pub mean: Option<f64>,
    /// Sample standard deviation (ddof = 1).
    pub std: Option<f64>,
    pub n: usize,
}

/// Kendall's W and the Friedman test of one axis, over (set, participant) blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AxisTest {
    pub n_blocks: usize,
    pub kendall_w: Option<f64>,
    pub friedman: Option<Friedman>,
}

/// Agreement on the real/fake labels of a group of clips.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelAgreement {
    /// Fleiss' kappa; only when every clip has a label from every participant.
    pub fleiss_kappa: Option<f64>,
    /// Fleiss' kappa generalised to missing labels (irrCAC `fleiss()`); equals
    /// `fleiss_kappa` on complete data.
    pub fleiss_kappa_missing_data: Option<f64>,
    pub krippendorff_alpha: Option<f64>,
}

/// One source of Table 15.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceJudgment {
    pub source: String,
    /// `None` when the source's clips do not share one truth.
    pub truth: Option<Truth>,
    /// The source's clips in the study (declared, whether labelled or not).
    pub items: usize,
    /// Of those, the clips nobody has labelled yet (left out of the agreement figures).
    pub items_unlabelled: usize,
    pub judgments: usize,
    pub fake: usize,
    pub judged_fake: Option<f64>,
    /// Each participant's count of fake labels on this source.
    pub fake_counts: BTreeMap<String, usize>,
    /// Each participant's count of labels given on this source (the denominator of
    /// their fake count).
    pub labels: BTreeMap<String, usize>,
    pub agreement: LabelAgreement,
}

/// One participant's detection of generated clips (signal detection).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Detection {
    pub participant: String,
    /// Generated clips labelled, and those labelled fake.
    pub fakes: u64,
    pub hits: u64,
    pub hit_rate: Option<f64>,
    pub hit_rate_ci95: Option<(f64, f64)>,
    /// Real clips labelled, and those labelled fake.
    pub reals: u64,
    pub false_alarms: u64,
    pub false_alarm_rate: Option<f64>,
    pub false_alarm_rate_ci95: Option<(f64, f64)>,
    /// d' with the log-linear correction (Hautus 1995) for rates of 0 or 1.
    pub d_prime: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyReport {
    pub sources: Vec<String>,
    pub participants: Vec<String>,
    pub sets: usize,
    pub responses: usize,
    /// Each participant's sets answered completely (every clip ranked on every axis and
    /// labelled real or fake).
    pub complete_sets: BTreeMap<String, usize>,
    /// `t14[source][axis]`, axes in the order of [`RANK_AXES`].
    pub t14: Vec<[RankCell; 3]>,
    pub tests: [AxisTest; 3],
    pub t15: Vec<SourceJudgment>,
    pub pooled: LabelAgreement,
    /// Whether every clip has a real/fake label from every participant.
    pub complete: bool,
    pub human_error_rate: Option<f64>,
    pub human_error_rate_ci95: Option<(f64, f64)>,
    pub detection: Vec<Detection>,
}

/// Agreement over clips x participants (`None` = no label).
fn label_agreement(rows: Vec<Vec<Option<usize>>>) -> LabelAgreement {
    let none = LabelAgreement {
        fleiss_kappa: None,
        fleiss_kappa_missing_data: None,
        krippendorff_alpha: None,
    };
    let Ok(r) = Ratings::new(2, rows) else {
        return none;
    };
    LabelAgreement {
        fleiss_kappa: fleiss_kappa(&r).and_then(|f| f.kappa),
        fleiss_kappa_missing_data: fleiss_gwet(&r).map(|f| f.value),
        krippendorff_alpha: krippendorff_alpha(&r, AlphaLevel::Nominal),
    }
}

/// Builds both tables from the raw responses.
pub fn build(data: &StudyData) -> StudyReport {
    let sources = data.sources.clone();
    let participants: Vec<String> = data
        .responses
        .iter()
        .map(|r| r.participant.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let clip_index: HashMap<i64, usize> = data
        .clips
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id, i))
        .collect();
    let source_of = |s: &str| sources.iter().position(|x| x == s);
    let who: HashMap<&str, usize> = participants
        .iter()
        .enumerate()
        .map(|(i, p)| (p.as_str(), i))
        .collect();

    // Ranks: (axis, set, participant) -> rank per source.
    let mut blocks: BTreeMap<(usize, i64, usize), Vec<Option<f64>>> = BTreeMap::new();
    // Labels: labels[clip][participant].
    let mut labels: Vec<Vec<Option<usize>>> =
        vec![vec![None; participants.len()]; data.clips.len()];
    for r in &data.responses {
        let (Some(&ci), Some(&pi)) = (clip_index.get(&r.clip_id), who.get(r.participant.as_str()))
        else {
            continue;
        };
        let clip = &data.clips[ci];
        if r.axis == Axis::RealFake {
            labels[ci][pi] = match Truth::parse(&r.value) {
                Ok(Truth::Real) => Some(0),
                Ok(Truth::Fake) => Some(1),
                Err(_) => None,
            };
        } else if let (Some(a), Some(s), Ok(v)) = (
            RANK_AXES.iter().position(|x| *x == r.axis),
            source_of(&clip.source),
            r.value.parse::<f64>(),
        ) {
            blocks
                .entry((a, clip.set_id, pi))
                .or_insert_with(|| vec![None; sources.len()])[s] = Some(v);
        }
    }

    let mut t14: Vec<[RankCell; 3]> = sources
        .iter()
        .map(|_| {
            std::array::from_fn(|_| RankCell {
                mean: None,
                std: None,
                n: 0,
            })
        })
        .collect();
    let tests: [AxisTest; 3] = std::array::from_fn(|a| {
        let complete: Vec<Vec<f64>> = blocks
            .iter()
            .filter(|((axis, _, _), _)| *axis == a)
            .filter_map(|(_, v)| v.iter().copied().collect::<Option<Vec<f64>>>())
            .collect();
        match ranking_summary(&complete) {
            Ok(s) => {
                for (i, p) in s.per_source.iter().enumerate() {
                    if let Some(row) = t14.get_mut(i) {
                        row[a] = RankCell {
                            mean: p.mean,
                            std: p.std,
                            n: p.n,
                        };
                    }
                }
                AxisTest {
                    n_blocks: s.n_blocks,
                    kendall_w: s.kendall_w,
                    friedman: s.friedman,
                }
            }
            Err(_) => AxisTest {
                n_blocks: 0,
                kendall_w: None,
                friedman: None,
            },
        }
    });

    let complete = !data.clips.is_empty()
        && !participants.is_empty()
        && labels.iter().all(|row| row.iter().all(Option::is_some));
    let t15 = judgments_by_source(&sources, data, &participants, &labels);
    let pooled = label_agreement(labels.clone());

    // The human error rate, and its bootstrap interval over clips.
    let clusters: Vec<(u64, u64)> = data
        .clips
        .iter()
        .zip(&labels)
        .map(|(c, row)| {
            let truth = usize::from(c.truth == Truth::Fake);
            let given = row.iter().flatten().count() as u64;
            let wrong = row.iter().flatten().filter(|l| **l != truth).count() as u64;
            (wrong, given)
        })
        .filter(|(_, given)| *given > 0)
        .collect();
    let rate = |sample: &[&(u64, u64)]| {
        let (w, n) = sample
            .iter()
            .fold((0u64, 0u64), |(w, n), (a, b)| (w + a, n + b));
        (n > 0).then(|| w as f64 / n as f64)
    };
    let all: Vec<&(u64, u64)> = clusters.iter().collect();
    let human_error_rate = rate(&all);
    let human_error_rate_ci95 =
        percentile_bootstrap_ci(&clusters, rate, BOOTSTRAP_RESAMPLES, 0.95, BOOTSTRAP_SEED)
            .map(|ci| (ci.low, ci.high));

    let detection = detection(&participants, data, &labels);

    let complete_sets = complete_sets(data, &participants, &clip_index, &who);
    StudyReport {
        complete_sets,
        sets: data
            .clips
            .iter()
            .map(|c| c.set_id)
            .collect::<BTreeSet<_>>()
            .len(),
        responses: data.responses.len(),
        sources,
        participants,
        t14,
        tests,
        t15,
        pooled,
        complete,
        human_error_rate,
        human_error_rate_ci95,
        detection,
    }
}

/// Table 15's rows: per source, how often its clips were judged fake, by whom, and
/// how far the participants agree.
fn judgments_by_source(
    sources: &[String],
    data: &StudyData,
    participants: &[String],
    labels: &[Vec<Option<usize>>],
) -> Vec<SourceJudgment> {
    sources
        .iter()
        .map(|s| {
            let idx: Vec<usize> = (0..data.clips.len())
                .filter(|&i| &data.clips[i].source == s)
                .collect();
            let truths: BTreeSet<&str> =
                idx.iter().map(|&i| data.clips[i].truth.as_str()).collect();
            let truth = if truths.len() == 1 {
                idx.first().map(|&i| data.clips[i].truth)
            } else {
                None
            };
            let mut fake_counts: BTreeMap<String, usize> =
                participants.iter().map(|p| (p.clone(), 0)).collect();
            let mut given: BTreeMap<String, usize> =
                participants.iter().map(|p| (p.clone(), 0)).collect();
            let (mut judgments, mut fake) = (0, 0);
            for &i in &idx {
                for (p, l) in labels[i].iter().enumerate() {
                    if let Some(l) = l {
                        judgments += 1;
                        *given.entry(participants[p].clone()).or_default() += 1;
                        if *l == 1 {
                            fake += 1;
                            *fake_counts.entry(participants[p].clone()).or_default() += 1;
                        }
                    }
                }
            }
            SourceJudgment {
                source: s.clone(),
                truth,
                items: idx.len(),
                items_unlabelled: idx
                    .iter()
                    .filter(|&&i| labels[i].iter().all(Option::is_none))
                    .count(),
                judgments,
                fake,
                judged_fake: (judgments > 0).then(|| fake as f64 / judgments as f64),
                fake_counts,
                labels: given,
                agreement: label_agreement(idx.iter().map(|&i| labels[i].clone()).collect()),
            }
        })
        .collect()
}

/// Each participant's detection of fakes: hits, false alarms, their rates with
/// Clopper-Pearson intervals, and d' (log-linear correction).
fn detection(
    participants: &[String],
    data: &StudyData,
    labels: &[Vec<Option<usize>>],
) -> Vec<Detection> {
    participants
        .iter()
        .enumerate()
        .map(|(p, name)| {
            let (mut fakes, mut hits, mut reals, mut fas) = (0u64, 0u64, 0u64, 0u64);
            for (c, row) in data.clips.iter().zip(labels) {
                let Some(l) = row[p] else { continue };
                match c.truth {
                    Truth::Fake => {
                        fakes += 1;
                        hits += u64::from(l == 1);
                    }
                    Truth::Real => {
                        reals += 1;
                        fas += u64::from(l == 1);
                    }
                }
            }
            let ratio = |k: u64, n: u64| (n > 0).then(|| k as f64 / n as f64);
            Detection {
                participant: name.clone(),
                fakes,
                hits,
                hit_rate: ratio(hits, fakes),
                hit_rate_ci95: clopper_pearson(hits, fakes, 0.95),
                reals,
                false_alarms: fas,
                false_alarm_rate: ratio(fas, reals),
                false_alarm_rate_ci95: clopper_pearson(fas, reals, 0.95),
                d_prime: d_prime(hits, fakes, fas, reals, RateCorrection::LogLinear)
                    .map(|d| d.d_prime),
            }
        })
        .collect()
}

/// Per participant, the sets they answered whole: every clip of the set with all
/// four answers.
fn complete_sets(
    data: &StudyData,
    participants: &[String],
    clip_index: &HashMap<i64, usize>,
    who: &HashMap<&str, usize>,
) -> BTreeMap<String, usize> {
    let mut answers: HashMap<(usize, i64), usize> = HashMap::new();
    for r in &data.responses {
        if let (Some(&ci), Some(&pi)) =
            (clip_index.get(&r.clip_id), who.get(r.participant.as_str()))
        {
            *answers.entry((pi, data.clips[ci].set_id)).or_default() += 1;
        }
    }
    let mut set_size: HashMap<i64, usize> = HashMap::new();
    for c in &data.clips {
        *set_size.entry(c.set_id).or_default() += 1;
    }
    participants
        .iter()
        .enumerate()
        .map(|(pi, p)| {
            let n = set_size
                .iter()
                .filter(|(set, size)| {
                    answers.get(&(pi, **set)).copied().unwrap_or(0)
                        >= **size * (RANK_AXES.len() + 1)
                })
                .count();
            (p.clone(), n)
        })
        .collect()
}

impl StudyReport {
    /// The scope of the study's figures in words.
    pub fn scope_text(&self) -> String {
        format!(
            "blind study: {} sets, {} participant(s), {} complete set answer(s)",
            self.sets,
            self.participants.len(),
            self.complete_answers()
        )
    }

    /// The caption of the study's figures for `campaign`, computed at `computed`.
    pub fn caption(&self, campaign: &str, computed: i64) -> Caption {
        Caption {
            campaign: campaign.to_string(),
            scope: self.scope_text(),
            computed: crate::clock::to_rfc3339(computed),
        }
    }

    /// Complete set answers over all participants.
    pub fn complete_answers(&self) -> usize {
        self.complete_sets.values().sum()
    }

    /// Plain words on figures that rest on too little data to mean much.
    pub fn thin_data_notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let blocks: Vec<usize> = self.tests.iter().map(|t| t.n_blocks).collect();
        let same = blocks.windows(2).all(|w| w[0] == w[1]);
        for (axis, t) in RANK_AXES.iter().zip(&self.tests) {
            let which = if same {
                "On every axis".to_string()
            } else {
                axis.title().to_string()
            };
            match t.n_blocks {
                0 => {}
                1 => out.push(format!(
                    "{which}, Kendall's W and the Friedman test rest on one block (one set answered by one participant): W is 1 by construction and says nothing yet."
                )),
                n if n < 5 => out.push(format!(
                    "{which}, Kendall's W and the Friedman test rest on {n} blocks only."
                )),
                _ => {}
            }
            if same {
                break;
            }
        }
        match self.participants.len() {
            0 => {}
            1 => out.push(
                "One participant so far: agreement between participants (Fleiss' kappa, Krippendorff's alpha) is undefined, and every rate is one person's."
                    .into(),
            ),
            n if n < 3 => out.push(format!(
                "{n} participants: the agreement figures rest on very few raters."
            )),
            _ => {}
        }
        out
    }
}

/// A p-value as a paper prints it: three decimals, or scientific when tiny.
pub fn p_text(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.2e}")
    }
}

impl StudyReport {
    /// `t14`: `{SOURCE: {AXIS: {mean, std, n}}}` (SPEC section 7).
    pub fn t14_json(&self) -> Value {
        serde_json::to_value(self.t14_reply()).unwrap_or(Value::Null)
    }

    /// Kendall's W and the Friedman test per axis.
    pub fn t14_tests_json(&self) -> Value {
        serde_json::to_value(self.t14_tests_reply()).unwrap_or(Value::Null)
    }

    /// `t15` with the keys of SPEC section 7 and more.
    pub fn t15_json(&self) -> Value {
        serde_json::to_value(self.t15_reply()).unwrap_or(Value::Null)
    }

    /// T14 or T15 as a [`CsvTable`].
    pub fn csv_table(&self, table: TableId) -> Result<CsvTable> {
        match table {
            TableId::T14 => Ok(self.t14_table()),
            TableId::T15 => Ok(self.t15_table()),
            _ => Err(crate::error::Error::Internal(
                "t11 to t13 are drawn from the QC report".into(),
            )),
        }
    }

    pub fn t14_csv(&self) -> Result<String> {
        self.t14_table().to_csv()
    }

    fn t14_table(&self) -> CsvTable {
        use Col::{Num, Text};
        let mut t = CsvTable::new(&[
            ("source", Text),
            ("axis", Text),
            ("mean", Num),
            ("std", Num),
            ("n", Num),
        ]);
        for (s, row) in self.sources.iter().zip(&self.t14) {
            for (axis, c) in RANK_AXES.iter().zip(row) {
                t.rows.push(vec![
                    s.clone(),
                    axis.as_str().into(),
                    num(c.mean),
                    num(c.std),
                    c.n.to_string(),
                ]);
            }
        }
        t
    }

    pub fn t15_csv(&self) -> Result<String> {
        self.t15_table().to_csv()
    }

    fn t15_table(&self) -> CsvTable {
        use Col::{Num, Text};
        let mut columns: Vec<(String, Col)> = vec![
            ("source".into(), Text),
            ("truth".into(), Text),
            ("items".into(), Num),
            ("items_unlabelled".into(), Num),
            ("judgments".into(), Num),
            ("judged_fake".into(), Num),
        ];
        for p in &self.participants {
            columns.push((format!("fake_{p}"), Num));
            columns.push((format!("labels_{p}"), Num));
        }
        for c in [
            "fleiss_kappa",
            "fleiss_kappa_missing_data",
            "krippendorff_alpha",
        ] {
            columns.push((c.into(), Num));
        }
        let mut t = CsvTable {
            columns,
            rows: Vec::new(),
        };
        for j in &self.t15 {
            let mut r = vec![
                j.source.clone(),
                j.truth.map_or("mixed", Truth::as_str).to_string(),
                j.items.to_string(),
                j.items_unlabelled.to_string(),
                j.judgments.to_string(),
                num(j.judged_fake),
            ];
            for p in &self.participants {
                let given = j.labels.get(p).copied().unwrap_or(0);
                // A participant who labelled none of this source's clips has no count.
                r.push(if given > 0 {
                    j.fake_counts.get(p).copied().unwrap_or(0).to_string()
                } else {
                    String::new()
                });
                r.push(given.to_string());
            }
            r.extend([
                num(j.agreement.fleiss_kappa),
                num(j.agreement.fleiss_kappa_missing_data),
                num(j.agreement.krippendorff_alpha),
            ]);
            t.rows.push(r);
        }
        let mut pooled = vec![
            "pooled".to_string(),
            String::new(),
            self.t15.iter().map(|j| j.items).sum::<usize>().to_string(),
            self.t15
                .iter()
                .map(|j| j.items_unlabelled)
                .sum::<usize>()
                .to_string(),
            self.t15
                .iter()
                .map(|j| j.judgments)
                .sum::<usize>()
                .to_string(),
            String::new(),
        ];
        pooled.extend(
            self.participants
                .iter()
                .flat_map(|_| [String::new(), String::new()]),
        );
        pooled.extend([
            num(self.pooled.fleiss_kappa),
            num(self.pooled.fleiss_kappa_missing_data),
            num(self.pooled.krippendorff_alpha),
        ]);
        t.rows.push(pooled);
        t
    }

    /// Table 14 in booktabs, a complete `table` with caption and label: mean rank
    /// +- std per source and axis, with n, Kendall's W and the Friedman test per axis.
    pub fn t14_latex(&self, tables: &Tables) -> String {
        let mut s = String::new();
        let title = tables.titled(Table::T14, ": ", "the blind study's mean ranks");
        let _ = writeln!(s, "% {title}. Generated by Tandem.");
        s.push_str("% Needs \\usepackage{booktabs}.\n");
        s.push_str("\\begin{table}[t]\n\\centering\n");
        let n: Vec<String> = self
            .t14
            .first()
            .map_or(Vec::new(), |r| r.iter().map(|c| c.n.to_string()).collect());
        let _ = writeln!(
            s,
            "\\caption{{Blind video-quality study: mean rank $\\pm$ sample standard deviation per source and axis (1 = best, {} = worst; lower is better), over every (set, participant) observation (n = {} per axis). The last rows give Kendall's $W$ and the Friedman test per axis, each (set, participant) a block.}}",
            self.sources.len(),
            if n.is_empty() {
                "0".to_string()
            } else {
                n.join(", ")
            }
        );
        s.push_str("\\label{tab:study-ranks}\n");
        s.push_str("\\begin{tabular}{lccc}\n\\toprule\n");
        s.push_str("Source & Photorealism & Temporal coherence & Scene comprehensibility \\\\\n\\midrule\n");
        for (src, row) in self.sources.iter().zip(&self.t14) {
            let cells: Vec<String> = row
                .iter()
                .map(|c| match (c.mean, c.std) {
                    (Some(m), Some(sd)) => format!("${m:.2} \\pm {sd:.2}$"),
                    (Some(m), None) => format!("${m:.2}$"),
                    _ => "undefined".into(),
                })
                .collect();
            let _ = writeln!(s, "{} & {} \\\\", tex(src), cells.join(" & "));
        }
        s.push_str("\\midrule\n");
        let w: Vec<String> = self.tests.iter().map(|t| dec(t.kendall_w)).collect();
        let _ = writeln!(s, "Kendall's $W$ & {} \\\\", w.join(" & "));
        let p: Vec<String> = self
            .tests
            .iter()
            .map(|t| {
                t.friedman.as_ref().map_or("undefined".into(), |f| {
                    format!(
                        "$\\chi^2_{{{}}} = {:.2}$, $p = {}$",
                        f.dof,
                        f.chi2,
                        p_text(f.p_value)
                    )
                })
            })
            .collect();
        let _ = writeln!(s, "Friedman & {} \\\\", p.join(" & "));
        let b: Vec<String> = self.tests.iter().map(|t| t.n_blocks.to_string()).collect();
        let _ = writeln!(s, "Blocks & {} \\\\", b.join(" & "));
        s.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n");
        s
    }

    /// Table 15 in booktabs, a complete `table` with caption and label.
    pub fn t15_latex(&self, tables: &Tables) -> String {
        let mut s = String::new();
        let title = tables.titled(Table::T15, ": ", "the blind study's real-vs-fake judgments");
        let _ = writeln!(s, "% {title}. Generated by Tandem.");
        s.push_str("% Needs \\usepackage{booktabs}.\n");
        s.push_str("\\begin{table}[t]\n\\centering\n");
        let unlabelled = self.t15.iter().any(|j| {
            self.participants
                .iter()
                .any(|p| j.labels.get(p).copied().unwrap_or(0) == 0)
        });
        let _ = writeln!(
            s,
            "\\caption{{Blind study: real-vs-fake judgments per source. Judged fake is the share of the labels given that say fake; fake labels are each participant's count{}{}. Agreement between participants: Fleiss' $\\kappa$ (complete data only) and Krippendorff's $\\alpha$ (nominal). Human error rate {} (95\\% percentile bootstrap over clips, {} resamples, seed {}: {}).}}",
            if self.participants.is_empty() {
                " (no participant yet)".to_string()
            } else {
                format!(
                    " ({})",
                    self.participants
                        .iter()
                        .map(|p| tex(p))
                        .collect::<Vec<_>>()
                        .join("/")
                )
            },
            if unlabelled {
                "; n/l: no label given on that source"
            } else {
                ""
            },
            pct(self.human_error_rate),
            BOOTSTRAP_RESAMPLES,
            BOOTSTRAP_SEED,
            self.human_error_rate_ci95
                .map_or("undefined".into(), |(a, b)| format!(
                    "{:.1}--{:.1}\\%",
                    a * 100.0,
                    b * 100.0
                ))
        );
        s.push_str("\\label{tab:study-real-fake}\n");
        s.push_str("\\begin{tabular}{lrlrcrr}\n\\toprule\n");
        s.push_str("Source & Clips & Ground truth & Judged fake & Fake labels & Fleiss' $\\kappa$ & Krippendorff's $\\alpha$ \\\\\n\\midrule\n");
        for j in &self.t15 {
            let counts: Vec<String> = self
                .participants
                .iter()
                .map(|p| match j.labels.get(p).copied().unwrap_or(0) {
                    0 => "n/l".to_string(),
                    _ => j.fake_counts.get(p).copied().unwrap_or(0).to_string(),
                })
                .collect();
            let _ = writeln!(
                s,
                "{} & {} & {} & {} & {} & {} & {} \\\\",
                tex(&j.source),
                j.items,
                j.truth
                    .map_or("mixed", |t| if t == Truth::Real { "Real" } else { "Fake" }),
                pct(j.judged_fake),
                counts.join("/"),
                dec(j.agreement.fleiss_kappa),
                dec(j.agreement.krippendorff_alpha)
            );
        }
        let _ = writeln!(
            s,
            "\\midrule\nPooled & {} & & & & {} & {} \\\\\n\\bottomrule\n\\end{{tabular}}\n\\end{{table}}",
            self.t15.iter().map(|j| j.items).sum::<usize>(),
            dec(self.pooled.fleiss_kappa),
            dec(self.pooled.krippendorff_alpha)
        );
        s
    }

    pub fn t14_pretty(&self) -> Result<String> {
        pretty(&json!({"t14": self.t14_json(), "t14_tests": self.t14_tests_json()}))
    }

    pub fn t15_pretty(&self) -> Result<String> {
        pretty(&self.t15_json())
    }
}

/// One of the study's tables in one format.
pub fn render(
    report: &StudyReport,
    tables: &Tables,
    table: TableId,
    format: Format,
) -> Result<String> {
    match (table, format) {
        (TableId::T14, Format::Json) => report.t14_pretty(),
        (TableId::T15, Format::Json) => report.t15_pretty(),
        (TableId::T14, Format::Csv) => report.t14_csv(),
        (TableId::T15, Format::Csv) => report.t15_csv(),
        (TableId::T14, Format::Latex) => Ok(report.t14_latex(tables)),
        (TableId::T15, Format::Latex) => Ok(report.t15_latex(tables)),
        _ => Err(Error::Internal(
            "t11 to t13 are drawn from the QC report".into(),
        )),
    }
}
