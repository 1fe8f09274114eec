//! The blind key check's figures: how often validators, answering a question from the
//! video before its key is shown, give the keyed answer (per QA type and level, with
//! Wilson intervals), and the questions whose key both validators answered otherwise
//! ("key in doubt", for the authors). Pure: the store gives the answers.

use crate::domain::records::BlindRecord;
use crate::stats::binomial::wilson;
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// Blind answers of one QA type and level (or of all: `qa_type` and `level` "all").
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BlindKeyRow {
    pub qa_type: String,
    pub level: String,
    /// Blind answers given.
    pub answers: usize,
    /// Of them, the keyed answer.
    pub agree: usize,
    /// `agree / answers`; null without answers.
    pub share: Option<f64>,
    /// Wilson 95% interval of the share.
    pub ci95: Option<[f64; 2]>,
}

/// One validator's blind answer to a question whose key is in doubt.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BlindAnswerOf {
    pub validator: String,
    /// The option's letter.
    pub answer: String,
    /// The option's text.
    pub text: String,
}

/// A question both of whose validators answered blind otherwise than its key.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct KeyInDoubt {
    pub question_id: String,
    pub clip_id: String,
    pub qa_type: String,
    pub level: String,
    /// The keyed answer's letter.
    pub key: String,
    /// The keyed answer's text.
    pub key_text: String,
    pub answers: Vec<BlindAnswerOf>,
    /// Where the question stands (pending, both_pass, split, ...).
    pub outcome: String,
}

/// `blind_key_check` in the statistics.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BlindKeyReply {
    /// What the figure is.
    pub measure: String,
    /// Per QA type and level.
    pub rows: Vec<BlindKeyRow>,
    /// Over every blind answer.
    pub all: BlindKeyRow,
    /// Questions whose key both validators answered otherwise.
    pub keys_in_doubt: Vec<KeyInDoubt>,
}

/// The letter of a 0-based option.
pub fn letter(i: i64) -> String {
    crate::domain::records::option_letter(i).to_string()
}

fn row(qa_type: &str, level: &str, answers: usize, agree: usize) -> BlindKeyRow {
    BlindKeyRow {
        qa_type: qa_type.into(),
        level: level.into(),
        answers,
        agree,
        share: (answers > 0).then(|| agree as f64 / answers as f64),
        ci95: wilson(agree as u64, answers as u64, 0.95).map(|(a, b)| [a, b]),
    }
}

/// The questions whose every blind answer (two or more) differs from the key, in id
/// order.
pub fn keys_in_doubt(records: &[BlindRecord]) -> Vec<KeyInDoubt> {
    let mut by_question: BTreeMap<&str, Vec<&BlindRecord>> = BTreeMap::new();
    for r in records {
        by_question
            .entry(r.question_id.as_str())
            .or_default()
            .push(r);
    }
    by_question
        .into_values()
        .filter(|rs| {
            let answers: Vec<i64> = rs.iter().map(|r| r.answer).collect();
            crate::domain::records::key_in_doubt(&answers, rs[0].key)
        })
        .map(|rs| {
            let first = rs[0];
            let text = |i: i64| crate::domain::records::option_text(&first.options, i).to_string();
            KeyInDoubt {
                key_text: text(first.key),
                question_id: first.question_id.clone(),
                clip_id: first.clip_id.clone(),
                qa_type: first.qa_type.clone(),
                level: first.level.clone(),
                key: letter(first.key),
                answers: rs
                    .iter()
                    .map(|r| BlindAnswerOf {
                        validator: r.validator.clone(),
                        answer: letter(r.answer),
                        text: text(r.answer),
                    })
                    .collect(),
                outcome: first.outcome.clone(),
            }
        })
        .collect()
}

/// The figures of every blind answer; `None` when there is none.
pub fn build(records: &[BlindRecord]) -> Option<BlindKeyReply> {
    if records.is_empty() {
        return None;
    }
    let mut cells: BTreeMap<(&str, &str), (usize, usize)> = BTreeMap::new();
    for r in records {
        let c = cells
            .entry((r.qa_type.as_str(), r.level.as_str()))
            .or_default();
        c.0 += 1;
        c.1 += usize::from(r.answer == r.key);
    }
    let agree = records.iter().filter(|r| r.answer == r.key).count();
    Some(BlindKeyReply {
        measure:
            "the share of validators' answers, given from the video before the key was shown, \
                  that are the keyed answer: a human accuracy figure of the validators, who \
                  are not the human baseline's group; Wilson 95% intervals"
                .into(),
        rows: cells
            .into_iter()
            .map(|((t, l), (n, k))| row(t, l, n, k))
            .collect(),
        all: row("all", "all", records.len(), agree),
        keys_in_doubt: keys_in_doubt(records),
    })
}

/// The table as CSV: one row per QA type and level, then `all`.
pub fn csv_table(b: &BlindKeyReply) -> super::format::CsvTable {
    use super::format::{Col, CsvTable};
    let mut t = CsvTable::new(&[
        ("qa_type", Col::Text),
        ("level", Col::Text),
        ("answers", Col::Num),
        ("agree", Col::Num),
        ("share", Col::Num),
        ("ci95_low", Col::Num),
        ("ci95_high", Col::Num),
    ]);
    let num = |x: Option<f64>| x.map_or_else(String::new, |v| format!("{v}"));
    for r in b.rows.iter().chain(std::iter::once(&b.all)) {
        t.rows.push(vec![
            r.qa_type.clone(),
            r.level.clone(),
            r.answers.to_string(),
            r.agree.to_string(),
            num(r.share),
            num(r.ci95.map(|c| c[0])),
            num(r.ci95.map(|c| c[1])),
        ]);
    }
    t
}

/// The table as LaTeX (booktabs), with a caption a paper can use.
pub fn latex_table(b: &BlindKeyReply) -> String {
    use super::format::tex;
    let mut out = String::new();
    out.push_str(
        "% The blind key check: validators' answers before the key. Generated by Tandem.\n",
    );
    out.push_str("% Needs \\usepackage{booktabs}.\n");
    out.push_str("\\begin{table}[t]\n\\centering\n");
    out.push_str(&format!(
        "\\caption{{Validators' answers to the questions from the video, given before the keyed answer was shown: the share that are the keyed answer per QA type and level, with Wilson 95\\% intervals. A human accuracy figure of the validators, who are not the human baseline's participants. {} question(s) were answered otherwise than the key by both of their validators.}}\n",
        b.keys_in_doubt.len()
    ));
    out.push_str("\\label{tab:blind-key-check}\n");
    out.push_str("\\begin{tabular}{llrrl}\n\\toprule\nQA type & Level & Answers & Keyed & Share [95\\% CI] \\\\\n\\midrule\n");
    let share = |r: &BlindKeyRow| match (r.share, r.ci95) {
        (Some(s), Some([a, b])) => format!("{s:.2} [{a:.2}, {b:.2}]"),
        _ => "--".into(),
    };
    for r in &b.rows {
        out.push_str(&format!(
            "{} & {} & {} & {} & {} \\\\\n",
            tex(&r.qa_type),
            tex(&r.level),
            r.answers,
            r.agree,
            share(r)
        ));
    }
    out.push_str(&format!(
        "\\midrule\nAll & & {} & {} & {} \\\\\n",
        b.all.answers,
        b.all.agree,
        share(&b.all)
    ));
    out.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(q: &str, who: &str, answer: i64, key: i64, qa: &str, level: &str) -> BlindRecord {
        BlindRecord {
            question_id: q.into(),
            clip_id: "C".into(),
            qa_type: qa.into(),
            level: level.into(),
            validator: who.into(),
            answer,
            key,
            outcome: "pending".into(),
            answered_at: 0,
            time_spent_ms: None,
            options: vec!["a".into(), "b".into(), "c".into(), "d".into()],
        }
    }

    #[test]
    fn the_share_per_cell_and_the_keys_both_answered_otherwise() {
        let records = [
            rec("Q1", "a", 1, 1, "MC", "L1"),
            rec("Q1", "b", 2, 1, "MC", "L1"),
            rec("Q2", "a", 0, 3, "MC", "L2"),
            rec("Q2", "b", 2, 3, "MC", "L2"),
            rec("Q3", "a", 0, 3, "MC", "L2"),
        ];
        let r = build(&records).unwrap();
        assert_eq!(r.rows.len(), 2);
        assert_eq!(
            (r.rows[0].answers, r.rows[0].agree, r.rows[0].share),
            (2, 1, Some(0.5))
        );
        assert_eq!(
            (r.rows[1].answers, r.rows[1].agree, r.rows[1].share),
            (3, 0, Some(0.0))
        );
        let (lo, hi) = wilson(1, 2, 0.95).unwrap();
        assert_eq!(r.rows[0].ci95, Some([lo, hi]));
        assert_eq!((r.all.answers, r.all.agree), (5, 1));
        // Q2: both otherwise; Q3: one answer alone is no doubt; Q1: one agrees.
        assert_eq!(r.keys_in_doubt.len(), 1);
        let d = &r.keys_in_doubt[0];
        assert_eq!((d.question_id.as_str(), d.key.as_str()), ("Q2", "D"));
        let said: Vec<&str> = d.answers.iter().map(|a| a.answer.as_str()).collect();
        assert_eq!(said, ["A", "C"]);
        assert_eq!(build(&[]), None);
        let tex = latex_table(&r);
        assert!(
            tex.contains("\\label{tab:blind-key-check}")
                && tex.contains("MC & L2 & 3 & 0 & 0.00 ["),
            "{tex}"
        );
        let csv = csv_table(&r).to_csv().unwrap();
        assert!(
            csv.starts_with("qa_type,level,answers,agree,share,ci95_low,ci95_high\n"),
            "{csv}"
        );
        assert!(csv.contains("\nall,all,5,1,0.2,"), "{csv}");
    }
}
