//! The human baseline's tables (VGenST-Bench Table 16): vanilla and circular accuracy
//! overall, per task, QA type, level and participant, each with its interval and the
//! interval's method; the position bias overall and per participant; the agreement
//! between participants over the content chosen. Built from answers checked whole
//! (by `io::baseline`); the figures are [`crate::stats::circular`]'s.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::domain::baseline::{BaselineQuestion, CheckedAnswers};
use crate::stats::StatsError;
use crate::stats::circular::{
    self, Accuracy, Answer, ContentAgreement, IntervalMethod, PositionBias, Question,
    content_agreement, position_bias,
};

/// The baseline's tables, as `tandem stats --json` gives them under `baseline`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaselineReport {
    /// The interval every accuracy carries.
    pub interval_method: IntervalMethod,
    /// Participants with at least one answer.
    pub participants: usize,
    /// Questions answered by at least one participant.
    pub questions: usize,
    /// Presentations answered, all participants together.
    pub presentations: usize,
    pub overall: Accuracy,
    pub per_task: BTreeMap<String, Accuracy>,
    pub per_qa_type: BTreeMap<String, Accuracy>,
    pub per_level: BTreeMap<String, Accuracy>,
    pub per_participant: BTreeMap<String, Accuracy>,
    /// Linked pairs scored jointly (a pair counts only when both its questions do);
    /// `None` when no question answered is in a linked pair.
    pub linked_pairs: Option<LinkedPairs>,
    pub position_bias: PositionBias,
    pub position_bias_per_participant: BTreeMap<String, PositionBias>,
    pub agreement: ContentAgreement,
}

/// Linked pairs scored jointly.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkedPairs {
    /// Pairs with both questions among the questions asked.
    pub pairs: usize,
    pub overall: Accuracy,
    pub per_participant: BTreeMap<String, Accuracy>,
}

/// The tables over `answers` to `questions` (the same list the answers were checked
/// against: their question indexes point into it).
pub fn baseline(
    questions: &[BaselineQuestion],
    answers: &CheckedAnswers,
    method: IntervalMethod,
) -> Result<BaselineReport, StatsError> {
    let stats_qs: Vec<Question> = questions
        .iter()
        .map(|q| Question {
            options: q.options,
            key: q.key,
        })
        .collect();
    let all: Vec<Answer> = answers
        .answers
        .iter()
        .map(|a| Answer {
            participant: a.participant,
            question: a.question,
            presentation: a.presentation,
            shown: a.shown.clone(),
            chosen: a.chosen,
        })
        .collect();
    let scored = circular::score(&stats_qs, &all)?;
    let name = |p: usize| answers.participants.get(p).cloned();
    let of = |c: &circular::Cell| questions.get(c.question);
    let mut per_participant_bias = BTreeMap::new();
    for (p, who) in answers.participants.iter().enumerate() {
        per_participant_bias.insert(
            who.clone(),
            position_bias(all.iter().filter(|a| a.participant == p)),
        );
    }
    let mut by_pair: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, q) in questions.iter().enumerate() {
        if let Some(p) = &q.pair {
            by_pair.entry(p.as_str()).or_default().push(i);
        }
    }
    let links: Vec<(usize, usize)> = by_pair
        .values()
        .filter_map(|qs| match qs.as_slice() {
            &[a, b] => Some((a, b)),
            _ => None,
        })
        .collect();
    let joint = scored.joint(&links);
    let linked_pairs = (!joint.cells.is_empty()).then(|| LinkedPairs {
        pairs: links.len(),
        overall: joint.overall(method),
        per_participant: joint.by(method, |c| name(c.participant)),
    });
    let mut answered: Vec<usize> = scored.cells.iter().map(|c| c.question).collect();
    answered.sort_unstable();
    answered.dedup();
    Ok(BaselineReport {
        interval_method: method,
        participants: answers.participants.len(),
        questions: answered.len(),
        presentations: all.len(),
        overall: scored.overall(method),
        per_task: scored.by(method, |c| of(c).map(|q| q.task.clone())),
        per_qa_type: scored.by(method, |c| of(c).map(|q| q.qa_type.clone())),
        per_level: scored.by(method, |c| of(c).map(|q| q.level.clone())),
        per_participant: scored.by(method, |c| name(c.participant)),
        linked_pairs,
        position_bias: position_bias(all.iter()),
        position_bias_per_participant: per_participant_bias,
        agreement: content_agreement(&stats_qs, &all),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::io::baseline::{check_answers, read_answers};
    use std::collections::HashSet;

    fn question(id: &str, task: &str, level: &str, key: usize) -> BaselineQuestion {
        BaselineQuestion {
            question_id: id.into(),
            task: task.into(),
            qa_type: if task == "T1" { "YN" } else { "MC" }.into(),
            level: level.into(),
            options: 2,
            key,
            pair: (task == "T2").then(|| "P".to_string()),
        }
    }

    #[test]
    fn the_tables_group_each_participants_questions() {
        // Two-option questions: presentation 0 shows AB, presentation 1 BA.
        // ann: q1 right in both, q2 right at 0 and wrong at 1, q3 only at 1.
        // ben: q1 wrong at 0 and right at 1, q2 right in both.
        let csv = "participant,question_id,presentation,shown,chosen\n\
                   ann,q1,1,BA,B\n\
                   ann,q1,0,AB,A\n\
                   ann,q2,0,AB,B\n\
                   ann,q2,1,BA,B\n\
                   ann,q3,1,BA,A\n\
                   ben,q1,0,AB,B\n\
                   ben,q1,1,BA,B\n\
                   ben,q2,0,AB,B\n\
                   ben,q2,1,BA,A\n";
        let questions = [
            question("q1", "T1", "L1", 0),
            question("q2", "T2", "L2", 1),
            question("q3", "T2", "L3", 0),
        ];
        let (rows, problems) = read_answers(csv.as_bytes());
        assert_eq!(problems, []);
        let people: HashSet<String> = ["ann", "ben"].map(String::from).into();
        let checked = check_answers(&rows, &questions, &HashSet::new(), &people).unwrap();
        let r = baseline(&questions, &checked, IntervalMethod::ClopperPearson).unwrap();
        assert_eq!((r.participants, r.questions, r.presentations), (2, 3, 9));
        let counts = |a: &Accuracy| {
            (
                a.vanilla.correct,
                a.vanilla.n,
                a.circular.correct,
                a.circular.n,
                a.incomplete,
            )
        };
        assert_eq!(counts(&r.overall), (3, 4, 2, 4, 1));
        assert_eq!(counts(&r.per_participant["ann"]), (2, 2, 1, 2, 1));
        assert_eq!(counts(&r.per_participant["ben"]), (1, 2, 1, 2, 0));
        assert_eq!(counts(&r.per_task["T1"]), (1, 2, 1, 2, 0));
        assert_eq!(counts(&r.per_task["T2"]), (2, 2, 1, 2, 1));
        assert_eq!(counts(&r.per_qa_type["YN"]), counts(&r.per_task["T1"]));
        assert_eq!(counts(&r.per_level["L3"]), (0, 0, 0, 0, 1));
        assert_eq!(r.per_level["L3"].vanilla.accuracy, None);
        assert_eq!(r.position_bias.counts, [3, 6]);
        assert_eq!(r.position_bias_per_participant["ben"].counts, [1, 3]);
        assert_eq!(r.agreement.items, 4);
        // q2 and q3 are one linked pair: ann's is incomplete (q3 asked once), ben's
        // has q2 alone (q3 never asked): incomplete as well, and no vanilla.
        let pairs = r.linked_pairs.as_ref().unwrap();
        assert_eq!(pairs.pairs, 1);
        assert_eq!(counts(&pairs.overall), (0, 0, 0, 0, 2));
        assert_eq!(counts(&pairs.per_participant["ann"]), (0, 0, 0, 0, 1));

        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["interval_method"], "clopper-pearson");
        assert_eq!(json["overall"]["circular"]["accuracy"], 0.5);
        assert_eq!(json["overall"]["circular"]["method"], "clopper-pearson");
        assert!(json["per_participant"]["ann"]["vanilla"]["interval"].is_array());
    }
}
