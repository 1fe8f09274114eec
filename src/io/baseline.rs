//! The human baseline's answers as CSV (issue "The human baseline under circular
//! evaluation"): `participant,question_id,presentation,shown,chosen`, one row per
//! presentation answered.
//!
//! * `presentation`: the rotation index, 0 = the options in the manifest's order;
//! * `shown`: the options' letters in the order shown (`CDAB`: the first shown option
//!   was the question's option C);
//! * `chosen`: the letter of the shown position picked (`A` = the first shown).
//!
//! [`read_answers`] reads the rows and checks each on its own; [`check_answers`] checks
//! them whole against the retained questions and the participants, every problem with
//! its line and field; [`write_answers`] writes the same format.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};

use crate::domain::baseline::{
    AnswerRow, BaselineAnswer, BaselineQuestion, CheckedAnswers, letter, letter_index,
};
use crate::error::{Error, LineError, Result};

pub use crate::domain::baseline::MAX_OPTIONS;

pub const ANSWER_COLUMNS: [&str; 5] = [
    "participant",
    "question_id",
    "presentation",
    "shown",
    "chosen",
];

/// Reads an answers file. Rows that parse are returned with the problems of the rest.
pub fn read_answers(input: impl Read) -> (Vec<AnswerRow>, Vec<LineError>) {
    let mut problems = Vec::new();
    let Some(table) = crate::io::records::read_table(input, &ANSWER_COLUMNS, &mut problems) else {
        return (Vec::new(), problems);
    };
    let mut rows = Vec::new();
    for (line, rec) in &table.records {
        let line = *line;
        let cell = |name| table.cell(rec, name).to_string();
        let before = problems.len();
        for name in ["participant", "question_id"] {
            if cell(name).is_empty() {
                problems.push(LineError::new(line, Some(name), "empty"));
            }
        }
        let raw = cell("presentation");
        let presentation = raw.parse::<usize>().ok().filter(|&p| p < MAX_OPTIONS);
        if presentation.is_none() {
            problems.push(LineError::new(
                line,
                Some("presentation"),
                format!("`{raw}` is not a rotation index (a whole number from 0, 0 = the manifest's order)"),
            ));
        }
        let raw = cell("shown");
        let shown: Option<Vec<usize>> = raw.chars().map(letter_index).collect();
        let shown = match shown {
            Some(s) if s.len() >= 2 && is_permutation(&s) => Some(s),
            _ => {
                problems.push(LineError::new(
                    line,
                    Some("shown"),
                    format!(
                        "`{raw}` is not the options' letters in the order shown (each of A, B, ... once, as many as the question has options: `CDAB`)"
                    ),
                ));
                None
            }
        };
        let raw = cell("chosen");
        let mut letters = raw.chars();
        let chosen = match (letters.next().and_then(letter_index), letters.next()) {
            (Some(c), None) if shown.as_ref().is_none_or(|s| c < s.len()) => Some(c),
            _ => {
                problems.push(LineError::new(
                    line,
                    Some("chosen"),
                    format!(
                        "`{raw}` is not the letter of a shown position (A = the first shown{})",
                        shown
                            .as_ref()
                            .map(|s| format!(", up to {}", letter(s.len() - 1)))
                            .unwrap_or_default()
                    ),
                ));
                None
            }
        };
        if let (true, Some(presentation), Some(shown), Some(chosen)) =
            (problems.len() == before, presentation, shown, chosen)
        {
            rows.push(AnswerRow {
                line,
                participant: cell("participant"),
                question_id: cell("question_id"),
                presentation,
                shown,
                chosen,
            });
        }
    }
    (rows, problems)
}

fn is_permutation(shown: &[usize]) -> bool {
    let mut hit = vec![false; shown.len()];
    shown.iter().all(|&o| match hit.get_mut(o) {
        Some(h) if !*h => {
            *h = true;
            true
        }
        _ => false,
    })
}

/// Checks the rows against the retained questions (`questions`, in the order the
/// statistics index them) and the baseline's participants. Refused with line and field:
/// an unknown participant; an unknown question, or one not retained (`not_retained`
/// names the campaign's other questions so the error can say so); a `shown` with
/// another number of options than the question's; a presentation outside the
/// question's rotations; presentation 0 not in the manifest's order; a participant's
/// presentation of a question given twice (naming the line of the first).
pub fn check_answers(
    rows: &[AnswerRow],
    questions: &[BaselineQuestion],
    not_retained: &HashSet<String>,
    participants: &HashSet<String>,
) -> std::result::Result<CheckedAnswers, Vec<LineError>> {
    let by_id: HashMap<&str, usize> = questions
        .iter()
        .enumerate()
        .map(|(i, q)| (q.question_id.as_str(), i))
        .collect();
    let mut problems = Vec::new();
    let mut people: HashMap<&str, usize> = HashMap::new();
    let mut order = Vec::new();
    let mut first: HashMap<(&str, usize, usize), usize> = HashMap::new();
    let mut answers = Vec::with_capacity(rows.len());
    for row in rows {
        let line = row.line;
        if !participants.contains(&row.participant) {
            problems.push(LineError::new(
                line,
                Some("participant"),
                format!(
                    "`{}` is not a participant of this campaign's baseline",
                    row.participant
                ),
            ));
            continue;
        }
        let Some(&qi) = by_id.get(row.question_id.as_str()) else {
            let why = if not_retained.contains(&row.question_id) {
                "is not retained: the baseline asks retained questions only"
            } else {
                "is no question of this campaign"
            };
            problems.push(LineError::new(
                line,
                Some("question_id"),
                format!("`{}` {why}", row.question_id),
            ));
            continue;
        };
        let q = &questions[qi];
        if row.shown.len() != q.options {
            problems.push(LineError::new(
                line,
                Some("shown"),
                format!(
                    "shows {} options; question `{}` has {}",
                    row.shown.len(),
                    q.question_id,
                    q.options
                ),
            ));
            continue;
        }
        if row.presentation >= q.options {
            problems.push(LineError::new(
                line,
                Some("presentation"),
                format!(
                    "{} is not a rotation of a question with {} options (0 to {})",
                    row.presentation,
                    q.options,
                    q.options - 1
                ),
            ));
            continue;
        }
        if row.presentation == 0 && row.shown.iter().enumerate().any(|(i, &o)| i != o) {
            problems.push(LineError::new(
                line,
                Some("shown"),
                "presentation 0 shows the options in the manifest's order (AB...)",
            ));
            continue;
        }
        if let Some(earlier) = first.insert((row.participant.as_str(), qi, row.presentation), line)
        {
            problems.push(LineError::new(
                line,
                Some("presentation"),
                format!(
                    "presentation {} of `{}` by `{}` is already on line {earlier}",
                    row.presentation, q.question_id, row.participant
                ),
            ));
            continue;
        }
        let next = people.len();
        let participant = *people.entry(row.participant.as_str()).or_insert_with(|| {
            order.push(row.participant.clone());
            next
        });
        answers.push(BaselineAnswer {
            participant,
            question: qi,
            presentation: row.presentation,
            shown: row.shown.clone(),
            chosen: row.chosen,
        });
    }
    if problems.is_empty() {
        Ok(CheckedAnswers {
            participants: order,
            answers,
        })
    } else {
        Err(problems)
    }
}

/// Writes answers in the import's format, one row per presentation.
pub fn write_answers(out: impl Write, rows: &[AnswerRow]) -> Result<()> {
    use crate::domain::text::spreadsheet_safe;
    let csv_error = |e: csv::Error| Error::fault("cannot write CSV", e);
    let mut w = csv::Writer::from_writer(out);
    w.write_record(ANSWER_COLUMNS).map_err(csv_error)?;
    for r in rows {
        w.write_record([
            spreadsheet_safe(&r.participant).into_owned(),
            spreadsheet_safe(&r.question_id).into_owned(),
            r.presentation.to_string(),
            r.shown.iter().map(|&o| letter(o)).collect::<String>(),
            letter(r.chosen).to_string(),
        ])
        .map_err(csv_error)?;
    }
    w.flush().map_err(|e| Error::io("cannot write CSV", e))
}

/// Reads a consent text file: UTF-8 (four bytes a character at most, read no further),
/// as `domain::baseline::consent_text` takes it.
pub fn read_consent(path: &std::path::Path) -> Result<String> {
    let max = (crate::domain::baseline::MAX_CONSENT_CHARS * 4) as u64;
    let file = crate::io::limits::open_regular(path, "the consent text", max, "a shorter text")?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::Invalid(format!("{} is not UTF-8 text", path.display())))?;
    crate::domain::baseline::consent_text(&text)
        .map_err(|m| Error::Invalid(format!("{}: {m}", path.display())))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn places(problems: &[LineError]) -> Vec<(usize, Option<&str>)> {
        problems
            .iter()
            .map(|p| (p.line, p.field.as_deref()))
            .collect()
    }

    fn question(id: &str, options: usize, key: usize) -> BaselineQuestion {
        BaselineQuestion {
            question_id: id.into(),
            task: "T".into(),
            qa_type: "MC".into(),
            level: "L1".into(),
            options,
            key,
            pair: None,
        }
    }

    #[test]
    fn a_file_reads_back_as_written() {
        let csv = "participant,question_id,presentation,shown,chosen\n\
                   p1,q1,0,ABCD,C\n\
                   p1,q1,2,CDAB,A\n\
                   p2,q2,1,BCA,B\n";
        let (rows, problems) = read_answers(csv.as_bytes());
        assert_eq!(problems, []);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[1].shown, [2, 3, 0, 1]);
        assert_eq!((rows[1].chosen, rows[1].line), (0, 3));
        let mut out = Vec::new();
        write_answers(&mut out, &rows).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), csv);

        let questions = [question("q1", 4, 2), question("q2", 3, 0)];
        let people: HashSet<String> = ["p1", "p2"].map(String::from).into();
        let checked = check_answers(&rows, &questions, &HashSet::new(), &people).unwrap();
        assert_eq!(checked.participants, ["p1", "p2"]);
        assert_eq!(checked.answers[1].option(), Some(2));
        assert_eq!(checked.answers[2].question, 1);
        assert_eq!(checked.answers[2].option(), Some(2));
    }

    #[test]
    fn each_bad_cell_is_named_by_line_and_field() {
        let csv = "participant,question_id,presentation,shown,chosen\n\
                   ,q1,0,ABCD,A\n\
                   p1,q1,x,ABCD,A\n\
                   p1,q1,1,ABCA,A\n\
                   p1,q1,1,abcd,A\n\
                   p1,q1,1,BCDA,E\n\
                   p1,q1,1,BCDA,AB\n\
                   p1,q1,1,A,A\n";
        let (rows, problems) = read_answers(csv.as_bytes());
        assert_eq!(rows, []);
        assert_eq!(
            places(&problems),
            [
                (2, Some("participant")),
                (3, Some("presentation")),
                (4, Some("shown")),
                (5, Some("shown")),
                (6, Some("chosen")),
                (7, Some("chosen")),
                (8, Some("shown")),
            ]
        );
        assert!(problems[4].message.contains("up to D"), "{}", problems[4]);
        let (_, problems) = read_answers("participant,question_id,shown,chosen\n".as_bytes());
        assert_eq!(problems[0].field.as_deref(), Some("presentation"));
    }

    #[test]
    fn the_whole_file_is_checked_against_the_campaign() {
        let csv = "participant,question_id,presentation,shown,chosen\n\
                   p1,q1,0,ABCD,A\n\
                   p9,q1,1,BCDA,A\n\
                   p1,gone,1,BCDA,A\n\
                   p1,nope,1,BCDA,A\n\
                   p1,q1,1,BCA,A\n\
                   p1,q1,4,BCDA,A\n\
                   p1,q2,0,BCA,A\n\
                   p1,q1,0,ABCD,B\n";
        let (rows, problems) = read_answers(csv.as_bytes());
        assert_eq!(problems, []);
        let questions = [question("q1", 4, 2), question("q2", 3, 0)];
        let people: HashSet<String> = ["p1"].map(String::from).into();
        let gone: HashSet<String> = ["gone"].map(String::from).into();
        let problems = check_answers(&rows, &questions, &gone, &people).unwrap_err();
        assert_eq!(
            places(&problems),
            [
                (3, Some("participant")),
                (4, Some("question_id")),
                (5, Some("question_id")),
                (6, Some("shown")),
                (7, Some("presentation")),
                (8, Some("shown")),
                (9, Some("presentation")),
            ]
        );
        assert!(
            problems[1].message.contains("not retained"),
            "{}",
            problems[1]
        );
        assert!(
            problems[2].message.contains("no question"),
            "{}",
            problems[2]
        );
        assert!(
            problems[6].message.contains("already on line 2"),
            "{}",
            problems[6]
        );
    }
}
