//! The records of a campaign as they travel in and out: rows of a decisions or
//! resolutions file, the decisions and resolutions exported, the retained benchmark,
//! the regeneration work list and the audit trail. Plain data: `io` reads and writes
//! them, the store fills and stores them.

use super::{Resolution, Stage, Verdict};
use serde::Serialize;
use serde_json::Value;

/// One row of a decisions file.
#[derive(Debug, Clone)]
pub struct DecisionRow {
    pub line: usize,
    pub stage: Stage,
    pub item_id: String,
    pub validator: String,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    pub note: String,
    pub decided_at: i64,
    pub time_spent_ms: Option<i64>,
    /// What `time_spent_ms` measures, when the file says.
    pub time_measure: Option<crate::domain::TimeMeasure>,
    /// The clip version the row is about; the newest when the file does not say.
    pub clip_version: Option<i64>,
}

/// One row of a resolutions file.
#[derive(Debug, Clone)]
pub struct ResolutionRow {
    pub line: usize,
    pub stage: Stage,
    pub item_id: String,
    pub author: String,
    pub verdict: Resolution,
    pub note: String,
    pub decided_at: i64,
}

/// One decision as exported.
#[derive(Debug, Clone, Serialize)]
pub struct DecisionRecord {
    pub stage: i64,
    pub item_id: String,
    pub validator: String,
    pub verdict: String,
    pub reasons: String,
    pub note: String,
    pub decided_at: i64,
    pub time_spent_ms: Option<i64>,
    /// What `time_spent_ms` measures: `visible`, `client`, or none (recorded before the
    /// measure was stored, or imported without it).
    pub time_measure: Option<String>,
    pub clip_version: i64,
    /// Whether this is the verdict that counted when the pair completed.
    pub counted: bool,
    /// The version of the campaign's protocol it was checked under.
    pub protocol_version: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ResolutionRecord {
    pub stage: i64,
    pub item_id: String,
    pub author: String,
    pub verdict: String,
    pub note: String,
    pub decided_at: i64,
    pub clip_version: i64,
}

#[derive(Debug, Clone)]
pub struct RetainedQuestion {
    pub question_id: String,
    pub qa_type: String,
    pub level: String,
    pub question: String,
    pub options: Vec<String>,
    pub answer: usize,
    /// Retained unreviewed: its lot's sample passed (`retained_by: "sample"`).
    pub by_sample: bool,
}

#[derive(Debug, Clone)]
pub struct RetainedClip {
    pub clip_id: String,
    pub task: String,
    pub version: i64,
    /// The manifest line's fields (without `file`).
    pub fields: Value,
    pub media_sha256: String,
    pub media_type: String,
    /// Retained unreviewed: its lot's sample passed.
    pub by_sample: bool,
    pub questions: Vec<RetainedQuestion>,
}

/// Where the campaign stands, for the export's README.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct RetainedCounts {
    /// Clips (newest versions).
    pub clips: usize,
    pub clips_retained: usize,
    /// Rejected in Stage 1 and waiting for a new version.
    pub clips_rejected: usize,
    /// Still in Stage 1 review or waiting for an author.
    pub clips_open: usize,
    /// Questions of retained clips.
    pub questions: usize,
    pub questions_retained: usize,
    pub questions_rejected: usize,
    pub questions_open: usize,
    /// Retained by the review, then withdrawn by an author (its key in doubt): dropped.
    pub questions_withdrawn: usize,
    /// Of the retained: those retained by sample, unreviewed.
    pub clips_by_sample: usize,
    pub questions_by_sample: usize,
}

/// A clip rejected in Stage 1, waiting for a new version: what the generation
/// pipeline needs to make one.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct RegenerationItem {
    pub clip_id: String,
    pub task: String,
    /// The rejected version.
    pub version: i64,
    pub outcome: String,
    pub scene_graph: Value,
    pub scenario: Value,
    /// The reasons both validators gave (each once, in canonical order).
    pub reasons: Vec<String>,
    /// The validators' notes and, for a split, the author's.
    pub notes: Vec<String>,
}

/// The letter of a 0-based option (A, B, ...), as pages and files name options.
pub fn option_letter(i: i64) -> char {
    char::from(b'A' + u8::try_from(i.rem_euclid(26)).unwrap_or(0))
}

/// The text of a 0-based option (empty when the question has no such option).
pub fn option_text(options: &[String], i: i64) -> &str {
    usize::try_from(i)
        .ok()
        .and_then(|i| options.get(i))
        .map_or("", String::as_str)
}

/// A 0-based option as the pages say it: its letter and its text ("C: a glass orb").
pub fn option_words(options: &[String], i: i64) -> String {
    format!("{}: {}", option_letter(i), option_text(options, i))
}

/// Whether a question's key is in doubt: two or more blind answers, every one otherwise
/// than the key.
pub fn key_in_doubt(answers: &[i64], key: i64) -> bool {
    answers.len() >= 2 && answers.iter().all(|a| *a != key)
}

/// A validator's answer to a question before its key was shown (the blind key check),
/// beside the key: the question's current version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlindRecord {
    pub question_id: String,
    pub clip_id: String,
    pub qa_type: String,
    pub level: String,
    pub validator: String,
    /// 0-based indices of the answer and of the key.
    pub answer: i64,
    pub key: i64,
    pub outcome: String,
    /// µs since the epoch.
    pub answered_at: i64,
    /// The time spent on the question before the answer, in ms.
    pub time_spent_ms: Option<i64>,
    /// The question's options, as the key and the answer index them.
    pub options: Vec<String>,
}

/// An author's withdrawal of a retained question from the benchmark (its key in doubt).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Withdrawal {
    pub question_id: String,
    pub clip_id: String,
    pub author: String,
    /// A Stage 2 reason of the protocol (`incorrect_answer` in VGenST-Bench's).
    pub reason: String,
    pub note: String,
    #[serde(serialize_with = "crate::clock::ser_time")]
    #[schema(value_type = String, format = DateTime)]
    pub decided_at: i64,
}

/// A validator's counted verdict on a known item of the live queue, beside its known
/// verdict: the latest they gave on it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct KnownRecord {
    pub stage: i64,
    /// The known item's id: the clip's (Stage 1) or the question's (Stage 2).
    pub item_id: String,
    pub clip_id: String,
    pub task: String,
    pub validator: String,
    /// The validator's verdict and its reasons (protocol codes, `;`-joined).
    pub verdict: String,
    pub reasons: String,
    /// The known verdict and its reasons.
    pub known_verdict: String,
    pub known_reasons: String,
    /// µs since the epoch.
    #[serde(serialize_with = "crate::clock::ser_time")]
    #[schema(value_type = String, format = DateTime)]
    pub decided_at: i64,
    /// The clip a known copy was made from, its known verdict the author's resolution
    /// (none for a known item imported with its verdict).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub known_from: Option<String>,
}

impl KnownRecord {
    /// The item is a known defect.
    pub fn defect(&self) -> bool {
        self.known_verdict == "reject"
    }

    /// The validator rejected it.
    pub fn rejected(&self) -> bool {
        self.verdict == "reject"
    }
}

/// One event in the life of a clip.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct AuditEvent {
    #[serde(serialize_with = "crate::clock::ser_time")]
    #[schema(value_type = String, format = DateTime)]
    pub at: i64,
    pub clip_id: String,
    pub version: i64,
    /// 1 or 2 for an item's event; none for an import.
    pub stage: Option<i64>,
    pub item_id: String,
    /// import, new_version, verdict, change, outcome, resolution, calibration_verdict,
    /// sample (drawn into a lot, held for its decision, retained by sample, sent to full
    /// review), blind_answer (the blind key check's answer before the key)
    pub event: String,
    pub who: String,
    pub detail: String,
    /// Sorts events of the same time: imports first, then verdicts, outcomes and
    /// resolutions.
    #[serde(skip)]
    pub order: i64,
    /// Where the event stands in the trail's order (for paging).
    #[serde(skip)]
    pub position: AuditPosition,
}

/// An event's place in the audit trail, which pages cut beside: its time, its kind
/// (imports, verdicts, outcomes, sample draws, resolutions, calibration verdicts, blind
/// answers, in that order at the same time) and its row. Unique: no two events share one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct AuditPosition {
    /// µs since the epoch.
    pub at: i64,
    pub kind: i64,
    pub row: i64,
}

impl AuditPosition {
    /// The position's text in a link: `AT.KIND.ROW`.
    pub fn token(&self) -> String {
        format!("{}.{}.{}", self.at, self.kind, self.row)
    }

    fn parse(
        field: &'static str,
        text: &str,
    ) -> Result<AuditPosition, crate::domain::rules::FieldError> {
        let bad = || {
            crate::domain::rules::FieldError::new(
                field,
                format!(
                    "`{text}` is not a place in the audit trail: it reads `TIME.KIND.ROW` (three whole numbers)"
                ),
            )
        };
        let mut parts = text.split('.').map(|p| p.parse::<i64>().map_err(|_| bad()));
        let (Some(at), Some(kind), Some(row), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        Ok(AuditPosition {
            at: at?,
            kind: kind?,
            row: row?,
        })
    }
}

/// A page of the audit trail: the trail in time order (a clip's or a person's history)
/// or newest first (the campaign's latest events), the rows beside a position, at most
/// `limit` of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditPaging {
    pub newest_first: bool,
    /// `None`: the first page. `(Before, None)`: the last page.
    pub side: Option<crate::domain::paging::Side>,
    pub at: Option<AuditPosition>,
    pub limit: usize,
}

impl AuditPaging {
    /// From a request's `after` and `before` fields (at most one; `before=end` is the
    /// last page).
    pub fn parse(
        newest_first: bool,
        after: Option<&str>,
        before: Option<&str>,
        limit: usize,
    ) -> Result<AuditPaging, crate::domain::rules::FieldError> {
        use crate::domain::paging::{Cursor, Side};
        let given = |v: Option<&str>| {
            v.map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let (side, at) = match (given(after), given(before)) {
            (None, None) => (None, None),
            (Some(_), Some(_)) => {
                return Err(crate::domain::rules::FieldError::new(
                    "before",
                    "give `after` or `before`, not both",
                ));
            }
            (Some(t), None) => (Some(Side::After), Some(AuditPosition::parse("after", &t)?)),
            (None, Some(t)) if t == Cursor::END => (Some(Side::Before), None),
            (None, Some(t)) => (
                Some(Side::Before),
                Some(AuditPosition::parse("before", &t)?),
            ),
        };
        Ok(AuditPaging {
            newest_first,
            side,
            at,
            limit,
        })
    }

    /// Whether the rows are read in ascending position (else descending): going away
    /// from the page's position, in the direction the page lies.
    pub fn reads_up(&self) -> bool {
        self.newest_first == (self.side == Some(crate::domain::paging::Side::Before))
    }

    /// Cuts the page from the rows read beside its position (each kind's first
    /// `limit + 1`, merged here), with the number of matching events.
    pub fn cut(
        &self,
        mut read: Vec<AuditEvent>,
        matching: usize,
    ) -> crate::domain::paging::Page<AuditEvent> {
        if self.reads_up() {
            read.sort_by_key(|e| e.position);
        } else {
            read.sort_by_key(|e| std::cmp::Reverse(e.position));
        }
        read.truncate(self.limit.saturating_add(1));
        crate::domain::paging::cut_beside(read, self.limit, self.side, self.at.is_none(), matching)
    }
}

/// Which events of the audit trail to show: of one clip, by one person, within a time
/// window (inclusive, µs), the latest `limit` (all when none). Events without a person
/// (imports, outcomes) do not match a person.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    pub clip: Option<String>,
    /// Events of clips, or items, whose id starts with this.
    pub prefix: Option<String>,
    pub who: Option<String>,
    pub from: Option<i64>,
    pub to: Option<i64>,
    pub limit: Option<usize>,
}

impl AuditFilter {
    /// A filter from text fields (a form, a query string, the command line): empty
    /// fields are no filter; dates are days (`YYYY-MM-DD`, UTC) or RFC 3339 times.
    pub fn parse(
        clip: Option<&str>,
        who: Option<&str>,
        from: Option<&str>,
        to: Option<&str>,
    ) -> Result<AuditFilter, crate::domain::rules::FieldError> {
        use crate::domain::rules::FieldError;
        let text = |v: Option<&str>| {
            v.map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let time =
            |name: &'static str, v: Option<&str>, end: bool| -> Result<Option<i64>, FieldError> {
                match text(v) {
                    None => Ok(None),
                    Some(v) => crate::clock::parse_day_or_time(&v, end)
                        .map(Some)
                        .map_err(|m| FieldError::new(name, m)),
                }
            };
        let f = AuditFilter {
            clip: text(clip),
            prefix: None,
            who: text(who),
            from: time("from", from, false)?,
            to: time("to", to, true)?,
            limit: None,
        };
        if let (Some(a), Some(b)) = (f.from, f.to)
            && a > b
        {
            return Err(FieldError::new("to", "`to` is before `from`"));
        }
        Ok(f)
    }

    /// Whether anything narrows the trail.
    pub fn is_empty(&self) -> bool {
        self.clip.is_none()
            && self.prefix.is_none()
            && self.who.is_none()
            && self.from.is_none()
            && self.to.is_none()
    }
}

/// Linked questions (GLIMPSE's bidirectional yes/no pairs): the manifest's `pair` key of
/// each question of a clip that has one, by question id, read from the clip's stored
/// fields.
pub fn pair_keys(fields: &Value) -> std::collections::BTreeMap<String, String> {
    fields
        .get("questions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|q| {
            let id = q.get("question_id")?.as_str()?;
            let pair = q.get("pair")?.as_str()?;
            Some((id.to_string(), pair.to_string()))
        })
        .collect()
}

/// A linked pair counts only when both its questions hold: of a clip's retained
/// `questions`, those whose partner (the other question of their pair in `pairs`) was
/// not retained are dropped. Returns the questions kept and how many were dropped.
pub fn keep_whole_pairs(
    questions: Vec<RetainedQuestion>,
    pairs: &std::collections::BTreeMap<String, String>,
) -> (Vec<RetainedQuestion>, usize) {
    let mut retained_in_pair: std::collections::BTreeMap<&str, usize> = Default::default();
    for q in &questions {
        if let Some(p) = pairs.get(&q.question_id) {
            *retained_in_pair.entry(p.as_str()).or_default() += 1;
        }
    }
    let whole: std::collections::BTreeSet<String> = retained_in_pair
        .into_iter()
        .filter(|(_, n)| *n == 2)
        .map(|(p, _)| p.to_string())
        .collect();
    let before = questions.len();
    let kept: Vec<RetainedQuestion> = questions
        .into_iter()
        .filter(|q| pairs.get(&q.question_id).is_none_or(|p| whole.contains(p)))
        .collect();
    let dropped = before - kept.len();
    (kept, dropped)
}

#[cfg(test)]
mod pair_tests {
    use super::*;
    use serde_json::json;

    fn q(id: &str) -> RetainedQuestion {
        RetainedQuestion {
            question_id: id.into(),
            qa_type: "YN".into(),
            level: "L3".into(),
            question: "?".into(),
            options: vec!["yes".into(), "no".into()],
            answer: 0,
            by_sample: false,
        }
    }

    #[test]
    fn a_pair_is_kept_whole_or_not_at_all() {
        let fields = json!({"questions": [
            {"question_id": "A", "pair": "P"}, {"question_id": "B", "pair": "P"},
            {"question_id": "C", "pair": "R"}, {"question_id": "D", "pair": "R"},
            {"question_id": "E"}
        ]});
        let pairs = pair_keys(&fields);
        assert_eq!(pairs.len(), 4);
        // P whole, R missing D, E unlinked.
        let (kept, dropped) = keep_whole_pairs(vec![q("A"), q("B"), q("C"), q("E")], &pairs);
        let ids: Vec<&str> = kept.iter().map(|q| q.question_id.as_str()).collect();
        assert_eq!((ids, dropped), (vec!["A", "B", "E"], 1));
        assert_eq!(pair_keys(&json!({"questions": []})).len(), 0);
        assert_eq!(pair_keys(&json!({})).len(), 0);
    }
}
