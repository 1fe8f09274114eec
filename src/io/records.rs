//! The decisions and resolutions CSV files:
//! `stage,item_id,validator,verdict,reasons,note,decided_at` and
//! `stage,item_id,author,verdict,note,decided_at`, with a header row.

use crate::clock::{parse_rfc3339, to_rfc3339};
use crate::domain::records::{DecisionRecord, DecisionRow, ResolutionRecord, ResolutionRow};
use crate::domain::{Resolution, Stage, Verdict};
use crate::error::{Error, LineError, Result};
use std::collections::HashMap;
use std::io::{Read, Write};

pub const DECISION_COLUMNS: [&str; 7] = [
    "stage",
    "item_id",
    "validator",
    "verdict",
    "reasons",
    "note",
    "decided_at",
];
pub const RESOLUTION_COLUMNS: [&str; 6] = [
    "stage",
    "item_id",
    "author",
    "verdict",
    "note",
    "decided_at",
];

/// A CSV file read into header-named cells, with each record's line number.
pub(crate) struct Table {
    index: HashMap<String, usize>,
    pub(crate) records: Vec<(usize, csv::StringRecord)>,
}

impl Table {
    pub(crate) fn cell<'r>(&self, rec: &'r csv::StringRecord, name: &str) -> &'r str {
        self.index.get(name).and_then(|&i| rec.get(i)).unwrap_or("")
    }
}

pub(crate) fn read_table(
    input: impl Read,
    required: &[&str],
    problems: &mut Vec<LineError>,
) -> Option<Table> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(input);
    let headers = match reader.headers() {
        Ok(h) => h.clone(),
        Err(e) => {
            problems.push(LineError::new(1, None, format!("unreadable header: {e}")));
            return None;
        }
    };
    let mut index = HashMap::new();
    for (i, h) in headers.iter().enumerate() {
        if index.insert(h.to_string(), i).is_some() {
            problems.push(LineError::new(
                1,
                Some(h),
                format!("column `{h}` appears twice"),
            ));
        }
    }
    for col in required {
        if !index.contains_key(*col) {
            problems.push(LineError::new(
                1,
                Some(col),
                format!(
                    "missing column `{col}` (the header must name: {})",
                    required.join(",")
                ),
            ));
        }
    }
    if !problems.is_empty() {
        return None;
    }
    let mut records = Vec::new();
    for rec in reader.records() {
        match rec {
            Ok(r) => {
                let line = r
                    .position()
                    .map_or(0, |p| usize::try_from(p.line()).unwrap_or(usize::MAX));
                if r.len() != headers.len() {
                    problems.push(LineError::new(
                        line,
                        None,
                        format!("{} cells where the header has {}", r.len(), headers.len()),
                    ));
                    continue;
                }
                if let Some((column, message)) =
                    r.iter().zip(headers.iter()).find_map(|(cell, h)| {
                        crate::domain::text::check(cell)
                            .err()
                            .map(|m| (h.to_string(), m))
                    })
                {
                    problems.push(LineError::new(line, Some(&column), message));
                    continue;
                }
                records.push((line, r));
            }
            Err(e) => {
                let line = e
                    .position()
                    .map_or(0, |p| usize::try_from(p.line()).unwrap_or(usize::MAX));
                if let csv::ErrorKind::Io(io) = e.kind() {
                    // Reading stopped (a limit, a broken file): nothing after it is read.
                    problems.push(LineError::new(line, None, io.to_string()));
                    break;
                }
                problems.push(LineError::new(line, None, format!("unreadable row: {e}")));
                if problems.len() >= super::manifest::MAX_PROBLEMS {
                    break;
                }
            }
        }
    }
    Some(Table { index, records })
}

/// Reads a decisions file. Rows that parse are returned with the problems of the rest.
pub fn read_decisions(input: impl Read) -> (Vec<DecisionRow>, Vec<LineError>) {
    let mut problems = Vec::new();
    let Some(table) = read_table(input, &DECISION_COLUMNS, &mut problems) else {
        return (Vec::new(), problems);
    };
    let mut rows = Vec::new();
    for (line, rec) in &table.records {
        let line = *line;
        let mut bad = false;
        let mut fail = |field: &str, m: String| {
            problems.push(LineError::new(line, Some(field), m));
            bad = true;
        };
        // Each bad cell is listed by `fail` (with its line and field) before `.ok()`
        // leaves it empty; a row with any is skipped below, and the file refused.
        let stage = Stage::parse(table.cell(rec, "stage"))
            .map_err(|m| fail("stage", m))
            .ok();
        let item_id = table.cell(rec, "item_id").to_string();
        if item_id.is_empty() {
            fail("item_id", "item_id is empty".into());
        }
        let validator = table.cell(rec, "validator").to_string();
        if validator.is_empty() {
            fail("validator", "validator is empty".into());
        }
        // Each problem is recorded by `fail`; the line is then skipped.
        let verdict = Verdict::parse(table.cell(rec, "verdict"))
            .map_err(|m| fail("verdict", m))
            .ok();
        let reasons: Vec<String> = table
            .cell(rec, "reasons")
            .split(';')
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .map(str::to_string)
            .collect();
        // Each problem is recorded by `fail`; the line is then skipped.
        let decided_at = parse_rfc3339(table.cell(rec, "decided_at"))
            .map_err(|m| fail("decided_at", m))
            .ok();
        let clip_version = match table.cell(rec, "clip_version") {
            "" => None,
            v => match v.parse::<i64>() {
                Ok(n) if n >= 1 => Some(n),
                _ => {
                    fail(
                        "clip_version",
                        format!("`{v}` is not a version number (1, 2, ...)"),
                    );
                    None
                }
            },
        };
        let time_spent_ms = match table.cell(rec, "time_spent_ms") {
            "" => None,
            s => match s.parse::<i64>() {
                Ok(v) => Some(v),
                Err(_) => {
                    fail(
                        "time_spent_ms",
                        format!("`{s}` is not a whole number of milliseconds"),
                    );
                    None
                }
            },
        };
        let time_measure = match table.cell(rec, "time_measure") {
            "" => None,
            s => match crate::domain::TimeMeasure::parse(s) {
                Ok(m) => Some(m),
                Err(m) => {
                    fail("time_measure", m);
                    None
                }
            },
        };
        if bad {
            continue;
        }
        if let (Some(stage), Some(verdict), Some(decided_at)) = (stage, verdict, decided_at) {
            rows.push(DecisionRow {
                time_measure,
                line,
                stage,
                item_id,
                validator,
                verdict,
                reasons,
                note: crate::domain::text::from_spreadsheet(table.cell(rec, "note")).to_string(),
                decided_at,
                time_spent_ms,
                clip_version,
            });
        }
    }
    (rows, problems)
}

/// Reads a resolutions file. Rows that parse are returned with the problems of the rest.
pub fn read_resolutions(input: impl Read) -> (Vec<ResolutionRow>, Vec<LineError>) {
    let mut problems = Vec::new();
    let Some(table) = read_table(input, &RESOLUTION_COLUMNS, &mut problems) else {
        return (Vec::new(), problems);
    };
    let mut rows = Vec::new();
    for (line, rec) in &table.records {
        let line = *line;
        let mut bad = false;
        let mut fail = |field: &str, m: String| {
            problems.push(LineError::new(line, Some(field), m));
            bad = true;
        };
        // Each bad cell is listed by `fail` (with its line and field) before `.ok()`
        // leaves it empty; a row with any is skipped below, and the file refused.
        let stage = Stage::parse(table.cell(rec, "stage"))
            .map_err(|m| fail("stage", m))
            .ok();
        let item_id = table.cell(rec, "item_id").to_string();
        if item_id.is_empty() {
            fail("item_id", "item_id is empty".into());
        }
        let author = table.cell(rec, "author").to_string();
        if author.is_empty() {
            fail("author", "author is empty".into());
        }
        // Each problem is recorded by `fail`; the line is then skipped.
        let verdict = Resolution::parse(table.cell(rec, "verdict"))
            .map_err(|m| fail("verdict", m))
            .ok();
        let note = crate::domain::text::from_spreadsheet(table.cell(rec, "note")).to_string();
        if note.is_empty() {
            fail("note", "a resolution needs a note saying why".into());
        }
        // Each problem is recorded by `fail`; the line is then skipped.
        let decided_at = parse_rfc3339(table.cell(rec, "decided_at"))
            .map_err(|m| fail("decided_at", m))
            .ok();
        if bad {
            continue;
        }
        if let (Some(stage), Some(verdict), Some(decided_at)) = (stage, verdict, decided_at) {
            rows.push(ResolutionRow {
                line,
                stage,
                item_id,
                author,
                verdict,
                note,
                decided_at,
            });
        }
    }
    (rows, problems)
}

/// A free-text cell, written so that a spreadsheet shows it as text (a note typed as
/// `=cmd|...` must not run as a formula); `decisions import` reads it back exactly.
fn safe(s: &str) -> String {
    crate::domain::text::spreadsheet_safe(s).into_owned()
}

fn csv_error(e: csv::Error) -> Error {
    Error::fault("cannot write CSV", e)
}

/// Writes every decision: the import columns, then `time_spent_ms`, `clip_version`,
/// `final` (true for the two verdicts that decided the item's outcome), `time_measure`
/// and `protocol_version` (the version of the campaign's protocol the verdict was
/// checked under). The output can be imported again.
pub fn write_decisions(out: impl Write, records: &[DecisionRecord]) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let mut header: Vec<&str> = DECISION_COLUMNS.to_vec();
    header.extend([
        "time_spent_ms",
        "clip_version",
        "final",
        "time_measure",
        "protocol_version",
    ]);
    w.write_record(&header).map_err(csv_error)?;
    for r in records {
        w.write_record([
            r.stage.to_string(),
            r.item_id.clone(),
            r.validator.clone(),
            r.verdict.clone(),
            r.reasons.clone(),
            safe(&r.note),
            to_rfc3339(r.decided_at),
            r.time_spent_ms.map(|t| t.to_string()).unwrap_or_default(),
            r.clip_version.to_string(),
            r.counted.to_string(),
            r.time_measure.clone().unwrap_or_default(),
            r.protocol_version.to_string(),
        ])
        .map_err(csv_error)?;
    }
    w.flush().map_err(|e| Error::io("cannot write CSV", e))
}

/// Writes every resolution, with `clip_version` after the import columns.
pub fn write_resolutions(out: impl Write, records: &[ResolutionRecord]) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let mut header: Vec<&str> = RESOLUTION_COLUMNS.to_vec();
    header.push("clip_version");
    w.write_record(&header).map_err(csv_error)?;
    for r in records {
        w.write_record([
            r.stage.to_string(),
            r.item_id.clone(),
            r.author.clone(),
            r.verdict.clone(),
            safe(&r.note),
            to_rfc3339(r.decided_at),
            r.clip_version.to_string(),
        ])
        .map_err(csv_error)?;
    }
    w.flush().map_err(|e| Error::io("cannot write CSV", e))
}

/// Writes an audit trail: one event a row, in order.
pub fn write_audit(out: impl Write, events: &[crate::domain::records::AuditEvent]) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "at", "clip_id", "version", "stage", "item_id", "event", "who", "detail",
    ])
    .map_err(csv_error)?;
    for e in events {
        w.write_record([
            to_rfc3339(e.at),
            e.clip_id.clone(),
            e.version.to_string(),
            e.stage.map(|s| s.to_string()).unwrap_or_default(),
            e.item_id.clone(),
            safe(&e.event),
            safe(&e.who),
            safe(&e.detail),
        ])
        .map_err(csv_error)?;
    }
    w.flush().map_err(|e| Error::io("cannot write CSV", e))
}

/// Writes every blind answer (the blind key check) as CSV: the question, its QA type and
/// level, the validator, their answer and the key as letters, whether they agree, when,
/// and the time spent on the question before the answer.
pub fn write_blind_answers(
    out: impl Write,
    records: &[crate::domain::records::BlindRecord],
) -> Result<()> {
    let letter = |i: i64| crate::domain::records::option_letter(i).to_string();
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "question_id",
        "clip_id",
        "qa_type",
        "level",
        "validator",
        "answer",
        "key",
        "agrees",
        "answered_at",
        "outcome",
        "time_spent_ms",
    ])
    .map_err(csv_error)?;
    for r in records {
        w.write_record([
            r.question_id.clone(),
            r.clip_id.clone(),
            safe(&r.qa_type),
            safe(&r.level),
            safe(&r.validator),
            letter(r.answer),
            letter(r.key),
            u8::from(r.answer == r.key).to_string(),
            to_rfc3339(r.answered_at),
            r.outcome.clone(),
            r.time_spent_ms.map(|t| t.to_string()).unwrap_or_default(),
        ])
        .map_err(csv_error)?;
    }
    w.flush().map_err(|e| Error::io("cannot write CSV", e))
}

/// Writes the regeneration work list as JSON Lines, one rejected clip a line.
pub fn write_regeneration(
    mut out: impl Write,
    items: &[crate::domain::records::RegenerationItem],
) -> Result<()> {
    for item in items {
        serde_json::to_writer(&mut out, item).map_err(|e| Error::fault("cannot write JSON", e))?;
        out.write_all(b"\n")
            .map_err(|e| Error::io("cannot write", e))?;
    }
    out.flush().map_err(|e| Error::io("cannot write", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_parse_with_line_numbers_and_field_names() {
        let csv = "stage,item_id,validator,verdict,reasons,note,decided_at\n\
                   1,C1,val00,valid,,,2026-01-01T00:00:00Z\n\
                   3,C1,val00,valid,,,2026-01-01T00:00:00Z\n\
                   1,C1,val00,maybe,,,2026-01-01T00:00:00Z\n\
                   1,C1,val00,reject,prompt_drift;other,\"a, b\",yesterday\n";
        let (rows, problems) = read_decisions(csv.as_bytes());
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].line, 2);
        let at: Vec<(usize, Option<&str>)> = problems
            .iter()
            .map(|p| (p.line, p.field.as_deref()))
            .collect();
        assert_eq!(
            at,
            vec![
                (3, Some("stage")),
                (4, Some("verdict")),
                (5, Some("decided_at"))
            ]
        );
    }

    #[test]
    fn a_missing_column_is_named() {
        let (rows, problems) = read_decisions("stage,item_id,verdict\n1,C1,valid\n".as_bytes());
        assert!(rows.is_empty());
        assert!(
            problems
                .iter()
                .any(|p| p.field.as_deref() == Some("validator"))
        );
    }

    #[test]
    fn resolutions_need_a_note() {
        let csv = "stage,item_id,author,verdict,note,decided_at\n1,C1,auth,accept,,2026-01-01T00:00:00Z\n";
        let (rows, problems) = read_resolutions(csv.as_bytes());
        assert!(rows.is_empty());
        assert_eq!(problems[0].field.as_deref(), Some("note"));
    }
}
