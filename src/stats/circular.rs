//! The human baseline under circular evaluation (MMBench's CircularEval, which
//! VGenST-Bench's Appendix F applies to people as to models).
//!
//! A question with N options is asked N times, its options rotated each time. Each
//! answered presentation is an [`Answer`]: which rotation it was (`presentation`, 0 =
//! the options in the manifest's order), the options in the order shown, and the shown
//! position chosen. Per participant and question ([`Cell`]):
//!
//! * **vanilla**: the answer to presentation 0 alone, wherever it fell in the sequence;
//!   left out when presentation 0 was not answered;
//! * **circular**: correct only if every one of the N presentations was answered and
//!   every answer was correct; a question not answered in all N presentations is
//!   **incomplete**: left out of circular accuracy and counted beside it.
//!
//! Accuracies come with an exact (Clopper-Pearson) or Wilson interval, the method named
//! ([`Proportion`]); the position bias ([`position_bias`]) is the share of answers at
//! each shown position with a chi-square goodness-of-fit test against the shares a
//! position-blind answerer would give (`scipy.stats.chisquare(f_obs, f_exp)`); the
//! agreement between participants ([`content_agreement`]) is over the chosen option's
//! content, not its letter.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use super::StatsError;
use super::binomial::{clopper_pearson, wilson};
use super::chi2_sf;
use super::multi::{AlphaLevel, CacEstimate, Ratings, fleiss_gwet, krippendorff_alpha};

/// A question as asked: its number of options and the keyed option (an index into the
/// options in the manifest's order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Question {
    pub options: usize,
    pub key: usize,
}

/// One answered presentation of a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The participant (an index the caller assigns).
    pub participant: usize,
    /// An index into the question list.
    pub question: usize,
    /// The rotation: 0 shows the options in the manifest's order.
    pub presentation: usize,
    /// The options in the order shown: `shown[i]` is the option (an index in the
    /// manifest's order) at shown position `i`.
    pub shown: Vec<usize>,
    /// The shown position picked (0 = the first shown).
    pub chosen: usize,
}

impl Answer {
    /// The option picked, as an index in the manifest's order; `None` when the chosen
    /// position lies outside the options shown.
    pub fn option(&self) -> Option<usize> {
        self.shown.get(self.chosen).copied()
    }
}

/// Circular evaluation's verdict on one participant's question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Circular {
    /// Every presentation answered, every answer correct.
    Correct,
    /// Every presentation answered, at least one wrongly.
    Wrong,
    /// Not every presentation answered: left out of circular accuracy.
    Incomplete,
}

/// One participant's question, scored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub participant: usize,
    pub question: usize,
    /// Presentations answered.
    pub answered: usize,
    /// Of those, answered correctly.
    pub correct: usize,
    /// The answer to presentation 0: `None` when it was not answered.
    pub vanilla: Option<bool>,
    pub circular: Circular,
}

/// The interval a [`Proportion`] carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalMethod {
    /// The exact binomial interval (`binomtest(...).proportion_ci(method="exact")`).
    ClopperPearson,
    /// Wilson's score interval without continuity correction (`method="wilson"`).
    Wilson,
}

/// A share of correct answers with its 95% interval and the interval's method.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Proportion {
    pub correct: u64,
    pub n: u64,
    /// `correct / n`; `None` over nothing.
    pub accuracy: Option<f64>,
    /// Two-sided 95%; `None` over nothing.
    #[schema(value_type = Option<[f64; 2]>)]
    pub interval: Option<(f64, f64)>,
    pub method: IntervalMethod,
}

impl Proportion {
    pub fn new(correct: u64, n: u64, method: IntervalMethod) -> Proportion {
        let interval = match method {
            IntervalMethod::ClopperPearson => clopper_pearson(correct, n, 0.95),
            IntervalMethod::Wilson => wilson(correct, n, 0.95),
        };
        Proportion {
            correct,
            n,
            accuracy: super::binomial::estimate(correct, n),
            interval,
            method,
        }
    }
}

/// Vanilla and circular accuracy over a set of participants' questions.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Accuracy {
    pub vanilla: Proportion,
    pub circular: Proportion,
    /// Questions left out of circular accuracy because not all their presentations
    /// were answered.
    pub incomplete: u64,
}

/// Every participant's questions, scored; built by [`score`] from checked answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// One per (participant, question) with at least one answer, ordered by
    /// participant, then question.
    pub cells: Vec<Cell>,
}

impl Scored {
    /// Accuracy over every cell.
    pub fn overall(&self, method: IntervalMethod) -> Accuracy {
        accuracy(self.cells.iter(), method)
    }

    /// Accuracy per group: `group` names each cell's group (a task, a QA type, a level,
    /// the participant), or `None` to leave the cell out.
    pub fn by<K: Ord>(
        &self,
        method: IntervalMethod,
        group: impl Fn(&Cell) -> Option<K>,
    ) -> BTreeMap<K, Accuracy> {
        let mut groups: BTreeMap<K, Vec<&Cell>> = BTreeMap::new();
        for cell in &self.cells {
            if let Some(k) = group(cell) {
                groups.entry(k).or_default().push(cell);
            }
        }
        groups
            .into_iter()
            .map(|(k, cells)| (k, accuracy(cells.into_iter(), method)))
            .collect()
    }
}

impl Scored {
    /// Linked pairs (one question asked in both directions) scored jointly: each
    /// participant's pair is one cell, its `question` the index of the pair in `links`.
    /// Vanilla: both questions' presentation 0 answered correctly (`None` unless both
    /// were answered); circular: both correct under circular evaluation, wrong when both
    /// are complete and one is wrong, incomplete when either is incomplete or was not
    /// answered at all while the other was. A pair neither of whose questions the
    /// participant answered is no cell.
    pub fn joint(&self, links: &[(usize, usize)]) -> Scored {
        let at: BTreeMap<(usize, usize), &Cell> = self
            .cells
            .iter()
            .map(|c| ((c.participant, c.question), c))
            .collect();
        let mut participants: Vec<usize> = self.cells.iter().map(|c| c.participant).collect();
        participants.dedup();
        let mut cells = Vec::new();
        for &participant in &participants {
            for (pair, &(a, b)) in links.iter().enumerate() {
                let (a, b) = (at.get(&(participant, a)), at.get(&(participant, b)));
                if a.is_none() && b.is_none() {
                    continue;
                }
                let vanilla = match (a.and_then(|c| c.vanilla), b.and_then(|c| c.vanilla)) {
                    (Some(x), Some(y)) => Some(x && y),
                    _ => None,
                };
                let circular = match (a.map(|c| c.circular), b.map(|c| c.circular)) {
                    (Some(Circular::Correct), Some(Circular::Correct)) => Circular::Correct,
                    (Some(x), Some(y))
                        if x != Circular::Incomplete && y != Circular::Incomplete =>
                    {
                        Circular::Wrong
                    }
                    _ => Circular::Incomplete,
                };
                let sum = |f: fn(&Cell) -> usize| a.map_or(0, |c| f(c)) + b.map_or(0, |c| f(c));
                cells.push(Cell {
                    participant,
                    question: pair,
                    answered: sum(|c| c.answered),
                    correct: sum(|c| c.correct),
                    vanilla,
                    circular,
                });
            }
        }
        Scored { cells }
    }
}

/// Vanilla and circular accuracy over `cells`.
pub fn accuracy<'a>(cells: impl Iterator<Item = &'a Cell>, method: IntervalMethod) -> Accuracy {
    let (mut v_ok, mut v_n, mut c_ok, mut c_n, mut incomplete) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for cell in cells {
        if let Some(ok) = cell.vanilla {
            v_n += 1;
            v_ok += u64::from(ok);
        }
        match cell.circular {
            Circular::Correct => {
                c_n += 1;
                c_ok += 1;
            }
            Circular::Wrong => c_n += 1,
            Circular::Incomplete => incomplete += 1,
        }
    }
    Accuracy {
        vanilla: Proportion::new(v_ok, v_n, method),
        circular: Proportion::new(c_ok, c_n, method),
        incomplete,
    }
}

fn invalid(at: String, value: impl std::fmt::Display) -> StatsError {
    StatsError::InvalidValue {
        value: value.to_string(),
        at,
    }
}

/// Checks the questions and answers whole and scores every participant's questions.
///
/// Refused, naming the answer (its index in `answers`) and the field: an unknown
/// question; a presentation not below the question's number of options; a `shown`
/// that is not a permutation of the question's options; presentation 0 not in the
/// manifest's order; a chosen position outside the shown options; one participant's
/// presentation of a question answered twice. A question with fewer than two options
/// or a key outside its options is refused naming the question.
pub fn score(questions: &[Question], answers: &[Answer]) -> Result<Scored, StatsError> {
    for (i, q) in questions.iter().enumerate() {
        if q.options < 2 {
            return Err(invalid(format!("question {i}: options"), q.options));
        }
        if q.key >= q.options {
            return Err(invalid(format!("question {i}: key"), q.key));
        }
    }
    let mut seen = HashSet::with_capacity(answers.len());
    // (participant, question) -> (answered, correct, vanilla)
    let mut cells: BTreeMap<(usize, usize), (usize, usize, Option<bool>)> = BTreeMap::new();
    for (i, a) in answers.iter().enumerate() {
        let at = |field: &str| format!("answer {i}: {field}");
        let q = questions
            .get(a.question)
            .ok_or_else(|| invalid(at("question"), a.question))?;
        if a.presentation >= q.options {
            return Err(invalid(at("presentation"), a.presentation));
        }
        if !is_permutation(&a.shown, q.options) {
            return Err(invalid(at("shown"), format!("{:?}", a.shown)));
        }
        if a.presentation == 0 && a.shown.iter().enumerate().any(|(i, &o)| i != o) {
            return Err(invalid(
                at("shown (presentation 0 shows the options in the manifest's order)"),
                format!("{:?}", a.shown),
            ));
        }
        if a.chosen >= q.options {
            return Err(invalid(at("chosen"), a.chosen));
        }
        if !seen.insert((a.participant, a.question, a.presentation)) {
            return Err(invalid(
                at("presentation (answered twice by this participant)"),
                a.presentation,
            ));
        }
        let ok = a.option() == Some(q.key);
        let cell = cells
            .entry((a.participant, a.question))
            .or_insert((0, 0, None));
        cell.0 += 1;
        cell.1 += usize::from(ok);
        if a.presentation == 0 {
            cell.2 = Some(ok);
        }
    }
    let cells = cells
        .into_iter()
        .map(|((participant, question), (answered, correct, vanilla))| {
            let options = questions[question].options;
            let circular = if answered < options {
                Circular::Incomplete
            } else if correct == answered {
                Circular::Correct
            } else {
                Circular::Wrong
            };
            Cell {
                participant,
                question,
                answered,
                correct,
                vanilla,
                circular,
            }
        })
        .collect();
    Ok(Scored { cells })
}

fn is_permutation(shown: &[usize], n: usize) -> bool {
    if shown.len() != n {
        return false;
    }
    let mut hit = vec![false; n];
    for &o in shown {
        match hit.get_mut(o) {
            Some(h) if !*h => *h = true,
            _ => return false,
        }
    }
    true
}

/// The shown positions picked, against a position-blind answerer's.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct PositionBias {
    /// Answers at each shown position (A, B, C, ...).
    pub counts: Vec<u64>,
    /// `counts` over all answers.
    pub shares: Vec<f64>,
    /// The shares a position-blind answerer gives: each answer on a question with N
    /// options adds 1/N to each of the first N positions (under circular evaluation the
    /// key sits equally often at each of them).
    pub expected_shares: Vec<f64>,
    /// Pearson's chi-square of the counts against the expected counts; `None` with no
    /// answers or a single position.
    pub chi_square: Option<f64>,
    /// Positions minus one.
    pub df: usize,
    pub p_value: Option<f64>,
}

/// The position bias of `answers` (already checked by [`score`]; an answer whose
/// chosen position lies outside its shown options is not counted).
pub fn position_bias<'a>(answers: impl Iterator<Item = &'a Answer>) -> PositionBias {
    let mut counts: Vec<u64> = Vec::new();
    let mut expected: Vec<f64> = Vec::new();
    let mut total = 0u64;
    for a in answers {
        let n = a.shown.len();
        if a.chosen >= n {
            continue;
        }
        if counts.len() < n {
            counts.resize(n, 0);
            expected.resize(n, 0.0);
        }
        counts[a.chosen] += 1;
        for e in &mut expected[..n] {
            *e += 1.0 / n as f64;
        }
        total += 1;
    }
    let shares = counts
        .iter()
        .map(|&c| c as f64 / total.max(1) as f64)
        .collect();
    let expected_shares = expected.iter().map(|&e| e / total.max(1) as f64).collect();
    let df = counts.len().saturating_sub(1);
    let chi_square = (total > 0 && df > 0).then(|| {
        counts
            .iter()
            .zip(&expected)
            .map(|(&o, &e)| (o as f64 - e).powi(2) / e)
            .sum::<f64>()
    });
    let p_value = chi_square.and_then(|x| chi2_sf(x, df as f64));
    PositionBias {
        counts,
        shares,
        expected_shares,
        chi_square,
        df,
        p_value,
    }
}

/// Agreement between participants over the content of the option they chose.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ContentAgreement {
    /// Presentations (a question in one rotation) answered by at least two participants.
    pub items: usize,
    /// Krippendorff's alpha, nominal, over the chosen options' content.
    pub krippendorff_alpha: Option<f64>,
    /// Fleiss' kappa with missing ratings (irrCAC), as Table 15.
    pub fleiss_kappa: Option<CacEstimate>,
}

/// The agreement between participants: each presentation of a question (the question in
/// one rotation) is an item, each participant a rater, and the rating the option chosen,
/// as an index in the manifest's order, so two people who picked the same answer agree
/// whatever letter it stood under. Not everyone answers every question: the missing
/// ratings are missing data.
pub fn content_agreement(questions: &[Question], answers: &[Answer]) -> ContentAgreement {
    let raters = answers.iter().map(|a| a.participant + 1).max().unwrap_or(0);
    let q = questions.iter().map(|q| q.options).max().unwrap_or(0);
    let mut rows: BTreeMap<(usize, usize), Vec<Option<usize>>> = BTreeMap::new();
    for a in answers {
        let Some(option) = a.option().filter(|&o| o < q) else {
            continue;
        };
        rows.entry((a.question, a.presentation))
            .or_insert_with(|| vec![None; raters])[a.participant] = Some(option);
    }
    let items = rows
        .values()
        .filter(|r| r.iter().flatten().count() >= 2)
        .count();
    match Ratings::new(q, rows.into_values().collect()) {
        Ok(r) => ContentAgreement {
            items,
            krippendorff_alpha: krippendorff_alpha(&r, AlphaLevel::Nominal),
            fleiss_kappa: fleiss_gwet(&r),
        },
        Err(_) => ContentAgreement {
            items,
            krippendorff_alpha: None,
            fleiss_kappa: None,
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn rotation(n: usize, r: usize) -> Vec<usize> {
        (0..n).map(|i| (i + r) % n).collect()
    }

    /// Participant `p` answers presentation `r` of question `q` (N options) by picking
    /// the shown position of `option`.
    fn pick(p: usize, q: usize, n: usize, r: usize, option: usize) -> Answer {
        let shown = rotation(n, r);
        let chosen = shown.iter().position(|&o| o == option).unwrap();
        Answer {
            participant: p,
            question: q,
            presentation: r,
            shown,
            chosen,
        }
    }

    #[test]
    fn vanilla_counts_presentation_zero_and_circular_needs_every_one() {
        let qs = [Question { options: 4, key: 2 }];
        let mut answers = Vec::new();
        // Participant 0: all four right.
        answers.extend((0..4).map(|r| pick(0, 0, 4, r, 2)));
        // Participant 1: presentation 0 right, presentation 3 wrong.
        answers.extend((0..3).map(|r| pick(1, 0, 4, r, 2)));
        answers.push(pick(1, 0, 4, 3, 0));
        // Participant 2: only presentations 1 and 0 (in that order), 0 wrong.
        answers.push(pick(2, 0, 4, 1, 2));
        answers.push(pick(2, 0, 4, 0, 1));
        // Participant 3: presentations 1-3, all right, never presentation 0.
        answers.extend((1..4).map(|r| pick(3, 0, 4, r, 2)));
        let s = score(&qs, &answers).unwrap();
        let got: Vec<_> = s.cells.iter().map(|c| (c.vanilla, c.circular)).collect();
        assert_eq!(
            got,
            [
                (Some(true), Circular::Correct),
                (Some(true), Circular::Wrong),
                (Some(false), Circular::Incomplete),
                (None, Circular::Incomplete),
            ]
        );
        let a = s.overall(IntervalMethod::ClopperPearson);
        assert_eq!((a.vanilla.correct, a.vanilla.n), (2, 3));
        assert_eq!((a.circular.correct, a.circular.n), (1, 2));
        assert_eq!(a.incomplete, 2);
        assert_eq!(a.circular.accuracy, Some(0.5));
        assert_eq!(a.circular.interval, clopper_pearson(1, 2, 0.95));
        let by = s.by(IntervalMethod::Wilson, |c| Some(c.participant));
        assert_eq!(by[&1].circular.correct, 0);
        assert_eq!(by[&1].vanilla.interval, wilson(1, 1, 0.95));
        assert_eq!(by[&3].vanilla.accuracy, None);
        assert_eq!(by[&3].vanilla.interval, None);
    }

    #[test]
    fn linked_pairs_count_only_when_both_questions_hold() {
        let qs = [
            Question { options: 2, key: 0 },
            Question { options: 2, key: 1 },
            Question { options: 2, key: 0 },
            Question { options: 2, key: 0 },
        ];
        let right = |p, q: usize, r| pick(p, q, 2, r, qs[q].key);
        let wrong = |p, q: usize, r| pick(p, q, 2, r, 1 - qs[q].key);
        let answers = vec![
            // Participant 0: pair (0, 1) all right; pair (2, 3): 2 right, 3 wrong at 1.
            right(0, 0, 0),
            right(0, 0, 1),
            right(0, 1, 0),
            right(0, 1, 1),
            right(0, 2, 0),
            right(0, 2, 1),
            right(0, 3, 0),
            wrong(0, 3, 1),
            // Participant 1: pair (0, 1): 0 complete, 1 only at presentation 0;
            // pair (2, 3): only question 3, wrong at 0.
            right(1, 0, 0),
            right(1, 0, 1),
            right(1, 1, 0),
            wrong(1, 3, 0),
        ];
        let joint = score(&qs, &answers).unwrap().joint(&[(0, 1), (2, 3)]);
        let got: Vec<_> = joint
            .cells
            .iter()
            .map(|c| (c.participant, c.question, c.vanilla, c.circular))
            .collect();
        assert_eq!(
            got,
            [
                (0, 0, Some(true), Circular::Correct),
                (0, 1, Some(true), Circular::Wrong),
                (1, 0, Some(true), Circular::Incomplete),
                (1, 1, None, Circular::Incomplete),
            ]
        );
        let a = joint.overall(IntervalMethod::ClopperPearson);
        assert_eq!((a.vanilla.correct, a.vanilla.n), (3, 3));
        assert_eq!((a.circular.correct, a.circular.n, a.incomplete), (1, 2, 2));
    }

    #[test]
    fn intervals_match_scipy() {
        // binomtest(87, 120).proportion_ci(method="exact") and method="wilson".
        let e = Proportion::new(87, 120, IntervalMethod::ClopperPearson);
        let (lo, hi) = e.interval.unwrap();
        assert!((lo - 0.6360159264005362).abs() < 1e-9, "{lo}");
        assert!((hi - 0.8025448721739181).abs() < 1e-9, "{hi}");
        let w = Proportion::new(87, 120, IntervalMethod::Wilson);
        let (lo, hi) = w.interval.unwrap();
        assert!((lo - 0.6390703417242319).abs() < 1e-12, "{lo}");
        assert!((hi - 0.7969710333873515).abs() < 1e-12, "{hi}");
        assert_eq!(
            serde_json::to_value(e.method).unwrap(),
            serde_json::json!("clopper-pearson")
        );
    }

    #[test]
    fn bad_answers_are_refused_naming_the_answer_and_field() {
        let qs = [Question { options: 4, key: 1 }];
        let ok = pick(0, 0, 4, 1, 1);
        let cases: Vec<(Answer, &str)> = vec![
            (
                Answer {
                    question: 1,
                    ..ok.clone()
                },
                "answer 1: question",
            ),
            (
                Answer {
                    presentation: 4,
                    ..ok.clone()
                },
                "answer 1: presentation",
            ),
            (
                Answer {
                    shown: vec![1, 1, 2, 3],
                    ..ok.clone()
                },
                "answer 1: shown",
            ),
            (
                Answer {
                    shown: vec![0, 1, 2],
                    ..ok.clone()
                },
                "answer 1: shown",
            ),
            (
                Answer {
                    presentation: 0,
                    ..ok.clone()
                },
                "answer 1: shown (presentation 0",
            ),
            (
                Answer {
                    chosen: 4,
                    ..ok.clone()
                },
                "answer 1: chosen",
            ),
            (ok.clone(), "answer 1: presentation (answered twice"),
        ];
        for (bad, field) in cases {
            let err = score(&qs, &[ok.clone(), bad]).unwrap_err();
            let StatsError::InvalidValue { at, .. } = &err else {
                panic!("{err:?}")
            };
            assert!(at.starts_with(field), "{at} for {field}");
        }
        let err = score(&[Question { options: 4, key: 4 }], &[]).unwrap_err();
        assert!(err.to_string().contains("question 0: key"), "{err}");
        let err = score(&[Question { options: 1, key: 0 }], &[]).unwrap_err();
        assert!(err.to_string().contains("question 0: options"), "{err}");
    }

    #[test]
    fn position_bias_matches_scipy_chisquare() {
        let at = |counts: &[usize], n: usize| -> Vec<Answer> {
            counts
                .iter()
                .enumerate()
                .flat_map(|(pos, &c)| {
                    (0..c).map(move |_| Answer {
                        participant: 0,
                        question: 0,
                        presentation: 1,
                        shown: rotation(n, 1),
                        chosen: pos,
                    })
                })
                .collect()
        };
        // scipy.stats.chisquare([30, 20, 25, 25]): 2.0, p 0.5724067044708798.
        let b = position_bias(at(&[30, 20, 25, 25], 4).iter());
        assert_eq!(b.counts, [30, 20, 25, 25]);
        assert_eq!(b.df, 3);
        assert!((b.chi_square.unwrap() - 2.0).abs() < 1e-12);
        assert!((b.p_value.unwrap() - 0.5724067044708798).abs() < 1e-12);
        assert_eq!(b.expected_shares, [0.25; 4]);
        // chisquare([7, 1, 1, 1]): 10.8, p 0.012858001156297613.
        let b = position_bias(at(&[7, 1, 1, 1], 4).iter());
        assert!((b.chi_square.unwrap() - 10.8).abs() < 1e-12);
        assert!((b.p_value.unwrap() - 0.012858001156297613).abs() < 1e-12);
        // 40 answers on four options and 30 on three:
        // chisquare([35, 15, 12, 8], [20, 20, 20, 10]): 16.1, p 0.001081687649128867.
        let mut answers = at(&[15, 5, 12, 8], 4);
        answers.extend(at(&[20, 10, 0], 3));
        let b = position_bias(answers.iter());
        assert_eq!(b.counts, [35, 15, 12, 8]);
        assert!((b.chi_square.unwrap() - 16.1).abs() < 1e-9);
        assert!((b.p_value.unwrap() - 0.001081687649128867).abs() < 1e-12);
        let sum: f64 = b.expected_shares.iter().sum();
        assert!((sum - 1.0).abs() < 1e-12);
        // Nothing answered: nothing to test.
        let b = position_bias(std::iter::empty());
        assert_eq!((b.chi_square, b.p_value, b.df), (None, None, 0));
    }

    #[test]
    fn agreement_is_over_the_content_not_the_letter() {
        let qs = [
            Question { options: 4, key: 0 },
            Question { options: 4, key: 3 },
        ];
        // Two participants pick the same options in every rotation: the letters
        // differ between rotations, the content never between people.
        let mut answers = Vec::new();
        for p in 0..2 {
            for r in 0..4 {
                answers.push(pick(p, 0, 4, r, r % 2));
                answers.push(pick(p, 1, 4, r, 3 - r % 3));
            }
        }
        let a = content_agreement(&qs, &answers);
        assert_eq!(a.items, 8);
        assert_eq!(a.krippendorff_alpha, Some(1.0));
        assert_eq!(a.fleiss_kappa.map(|k| k.value), Some(1.0));
        // The second participant now always picks the next option: no agreement.
        let shifted: Vec<Answer> = answers
            .iter()
            .map(|a| {
                if a.participant == 1 {
                    pick(
                        1,
                        a.question,
                        4,
                        a.presentation,
                        (a.option().unwrap() + 1) % 4,
                    )
                } else {
                    a.clone()
                }
            })
            .collect();
        let a = content_agreement(&qs, &shifted);
        assert!(a.krippendorff_alpha.unwrap() < 0.0);
    }

    /// The reconstruction: 10 simulated participants, each with 10 questions in each
    /// of 12 tasks (120), four options each, asked in all four rotations in a shuffled
    /// order; each presentation answered correctly with probability 0.95 / 0.85 / 0.70
    /// on L1 / L2 / L3 and, when wrong, position A picked with probability 0.5 (if A
    /// is not the key) and otherwise a uniform wrong position.
    #[test]
    fn a_simulated_baseline_is_scored_exactly_and_covers_its_truth() {
        use crate::rng::Xoshiro256;
        const P: [f64; 3] = [0.95, 0.85, 0.70];
        let n = 4;
        let mut rng = Xoshiro256::seed_from_u64(26);
        // 360 questions: 30 per task, levels in turn; participant p gets questions
        // 10 per task, overlapping so that every question has participants.
        let tasks = 12;
        let per_task = 30;
        let questions: Vec<Question> = (0..tasks * per_task)
            .map(|i| Question {
                options: n,
                key: (i * 7) % n,
            })
            .collect();
        let level = |q: usize| q % 3;
        let task = |q: usize| q / per_task;
        let mut answers = Vec::new();
        for p in 0..10 {
            let mut order = Vec::new();
            for t in 0..tasks {
                for j in 0..10 {
                    let q = t * per_task + (p * 3 + j) % per_task;
                    order.extend((0..n).map(|r| (q, r)));
                }
            }
            rng.shuffle(&mut order);
            for (q, r) in order {
                let shown = rotation(n, r);
                let key_at = shown.iter().position(|&o| o == questions[q].key).unwrap();
                let chosen = if rng.next_f64() < P[level(q)] {
                    key_at
                } else if key_at != 0 && rng.next_f64() < 0.5 {
                    0
                } else {
                    let wrong: Vec<usize> = (0..n)
                        .filter(|&i| i != key_at && (key_at == 0 || i != 0))
                        .collect();
                    wrong[rng.below(wrong.len() as u64).unwrap() as usize]
                };
                answers.push(Answer {
                    participant: p,
                    question: q,
                    presentation: r,
                    shown,
                    chosen,
                });
            }
        }
        let s = score(&questions, &answers).unwrap();

        // A second, plain implementation of the exact figures.
        let mut plain: BTreeMap<(usize, usize), Vec<(usize, bool)>> = BTreeMap::new();
        for a in &answers {
            plain.entry((a.participant, a.question)).or_default().push((
                a.presentation,
                a.shown[a.chosen] == questions[a.question].key,
            ));
        }
        let plain_counts = |lvl: Option<usize>| {
            let (mut v, mut c, mut n_q) = (0u64, 0u64, 0u64);
            for ((_, q), pres) in &plain {
                if lvl.is_some_and(|l| l != level(*q)) {
                    continue;
                }
                n_q += 1;
                v += u64::from(pres.iter().any(|&(r, ok)| r == 0 && ok));
                c += u64::from(pres.len() == n && pres.iter().all(|&(_, ok)| ok));
            }
            (v, c, n_q)
        };
        let overall = s.overall(IntervalMethod::ClopperPearson);
        assert_eq!(
            (
                overall.vanilla.correct,
                overall.circular.correct,
                overall.vanilla.n
            ),
            plain_counts(None)
        );
        assert_eq!(overall.vanilla.n, 1200);
        assert_eq!(overall.circular.n, 1200);
        assert_eq!(overall.incomplete, 0);
        let by_level = s.by(IntervalMethod::ClopperPearson, |c| Some(level(c.question)));
        for (l, acc) in &by_level {
            let (v, c, nq) = plain_counts(Some(*l));
            assert_eq!(
                (acc.vanilla.correct, acc.circular.correct, acc.vanilla.n),
                (v, c, nq)
            );
        }
        let by_task = s.by(IntervalMethod::ClopperPearson, |c| Some(task(c.question)));
        assert_eq!(by_task.len(), tasks);
        assert!(by_task.values().all(|a| a.vanilla.n == 100));

        // The truth each estimate's interval must cover. Twelve intervals are checked
        // (vanilla and circular overall and per level, four position shares); at 95%
        // each, one seed in two would see one miss by chance alone (with this seed the
        // L3 circular estimate lies 2.4 standard errors below its truth: 67 of 360
        // against 0.2401), so they are checked simultaneously (Bonferroni: each at
        // 1 - 0.05/12). The reported 95% intervals are checked against scipy above.
        const CHECKS: f64 = 12.0;
        let truth_v = |l: usize| P[l];
        let truth_c = |l: usize| P[l].powi(n as i32);
        // The design gives levels unequal shares of the questions (each participant's
        // 10 per task are 4 L1, 3 L2, 3 L3).
        let share = |l: usize| {
            s.cells.iter().filter(|c| level(c.question) == l).count() as f64 / s.cells.len() as f64
        };
        assert_eq!((share(0), share(1), share(2)), (0.4, 0.3, 0.3));
        let mean = |f: &dyn Fn(usize) -> f64| (0..3).map(|l| share(l) * f(l)).sum::<f64>();
        let covers = |p: &Proportion, t: f64| {
            let (lo, hi) = clopper_pearson(p.correct, p.n, 1.0 - 0.05 / CHECKS).unwrap();
            assert!(lo <= t && t <= hi, "{t} outside [{lo}, {hi}] ({p:?})");
        };
        covers(&overall.vanilla, mean(&truth_v));
        covers(&overall.circular, mean(&truth_c));
        for (l, acc) in &by_level {
            covers(&acc.vanilla, truth_v(*l));
            covers(&acc.circular, truth_c(*l));
        }
        assert!(overall.vanilla.accuracy > overall.circular.accuracy);

        // Position shares: with the key at each position once per question, a
        // presentation answered at level l picks A with probability
        // P/4 + (3/4)(1-P)/2, and B, C, D share the rest equally.
        let b = position_bias(answers.iter());
        let share_a = mean(&|l| P[l] / 4.0 + 0.75 * (1.0 - P[l]) * 0.5);
        let total: u64 = b.counts.iter().sum();
        let a = Proportion::new(b.counts[0], total, IntervalMethod::ClopperPearson);
        covers(&a, share_a);
        for pos in 1..n {
            let p = Proportion::new(b.counts[pos], total, IntervalMethod::ClopperPearson);
            covers(&p, (1.0 - share_a) / 3.0);
        }
        assert_eq!(b.expected_shares, [0.25; 4]);
        let expected = total as f64 / 4.0;
        let plain_chi: f64 = b
            .counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        assert!((b.chi_square.unwrap() - plain_chi).abs() < 1e-9);
        assert_eq!(b.p_value, crate::stats::chi2_sf(plain_chi, 3.0));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn answers() -> impl Strategy<Value = (Vec<Question>, Vec<Answer>)> {
            (2usize..6, 1usize..5, 1usize..5).prop_flat_map(|(n, n_q, n_p)| {
                let units = n_q * n_p * n;
                (
                    proptest::collection::vec(0..n, n_q),
                    proptest::collection::vec((any::<bool>(), 0..n), units),
                )
                    .prop_map(move |(keys, picks)| {
                        let qs: Vec<Question> = keys
                            .iter()
                            .map(|&key| Question { options: n, key })
                            .collect();
                        let mut out = Vec::new();
                        for (u, (kept, chosen)) in picks.into_iter().enumerate() {
                            if !kept {
                                continue;
                            }
                            let (p, rest) = (u / (n_q * n), u % (n_q * n));
                            let (q, r) = (rest / n, rest % n);
                            out.push(Answer {
                                participant: p,
                                question: q,
                                presentation: r,
                                shown: rotation(n, r),
                                chosen,
                            });
                        }
                        (qs, out)
                    })
            })
        }

        proptest! {
            #[test]
            fn circular_never_exceeds_vanilla_and_order_does_not_matter(
                (qs, answers) in answers(),
                seed in any::<u64>(),
            ) {
                let s = score(&qs, &answers).unwrap();
                for (_, acc) in s.by(IntervalMethod::Wilson, |c| Some(c.participant)) {
                    prop_assert!(acc.circular.correct <= acc.vanilla.correct);
                    if let (Some(a), Some((lo, hi))) = (acc.vanilla.accuracy, acc.vanilla.interval) {
                        prop_assert!(lo <= a && a <= hi);
                    }
                }
                let all = s.overall(IntervalMethod::ClopperPearson);
                prop_assert_eq!(all.circular.n + all.incomplete, s.cells.len() as u64);
                let mut shuffled = answers.clone();
                crate::rng::Xoshiro256::seed_from_u64(seed).shuffle(&mut shuffled);
                prop_assert_eq!(score(&qs, &shuffled).unwrap(), s);
                let b = position_bias(answers.iter());
                prop_assert_eq!(b.counts.iter().sum::<u64>(), answers.len() as u64);
                if !answers.is_empty() {
                    let sum: f64 = b.shares.iter().sum();
                    prop_assert!((sum - 1.0).abs() < 1e-9);
                }
            }
        }
    }
}
