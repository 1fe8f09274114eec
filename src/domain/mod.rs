//! The vocabulary of a QC campaign: roles, stages, verdicts, reasons and outcomes,
//! the taxonomy, the pairing of validators and the intersection rule. No I/O here:
//! every value is parsed once from input and then travels as a type.
//!
//! What it holds, part by part:
//!
//! `baseline` (the questions a human baseline asks and the answers given, as plain data;
//! the seeded, balanced assignment of videos to participants and each participant's order
//! of presentations, no two rotations of a question side by side); roles, stages, verdicts,
//! reasons (a `Reason` is a code of the campaign's protocol), outcomes, what a decision's
//! time spent measures (`TimeMeasure`, stored with each decision); `text` (what a text
//! field may hold; spreadsheet-safe CSV cells); `taxonomy` (tasks with their attributes in
//! the protocol's order, no axis named in the code; the `[tables]` layout of Table 11 and
//! the tables' names, generic without it; a taxonomy stored by 0.1.0 read into this form by
//! `taxonomy::stored`), the protocol's levels (a `Level` is one of its codes) and QA types
//! with theirs, the applicability cells, the reasons of each stage with their digit, levels
//! and note rule); `protocol` (a QC protocol file, TOML, checked whole: every problem with
//! its line and field; its target per task and whether exports carry variants; what a
//! change of a campaign's protocol may not touch, `change_problems`; VGenST-Bench's, 98
//! cells, ships in `protocols/vgenst.toml` and is `Taxonomy::vgenst()`, the examples in
//! `examples/protocols/`); `pairing` (the two rules: task pairs, t mod n and (t+1) mod n;
//! or per clip, the two validators with the least open work, `least_open_work`); `paging`
//! (a long list's pages: the cursor beside a row, the id prefix, the cut); `sampling` (a
//! protocol's `[[sampling]]` rules and the strata they cover, the seeded draw of a lot's
//! sample, what a lot's reviewed sample decides); `rules` (reasons check, the intersection
//! rule, split resolution; `FieldError`, the domain's own error, which `error` maps);
//! `verdict` (`decide_verdict`: every rule of a verdict as one pure function over the
//! item's facts and decisions; `check_blind_answer`, the blind key check's answer); `facts`
//! (what the tables are computed from: outcome counts, scope, the study's clips and
//! responses); `records` (decision and resolution rows and records, the retained benchmark
//! and its linked pairs (`keep_whole_pairs`), the audit trail, its filter and its pages,
//! cut beside an event's time, kind and row, `AuditPosition`; `BlindRecord`, a blind answer
//! beside its key); `import` (a checked manifest and checked comparison sets; what an item
//! is, `ItemKind`: real, calibration or a known item of the live queue, as
//! `items.calibration` stores it; which known clips a task serves at the campaign's rate,
//! `known_to_serve`); `study` (axes, truth, the rule of a complete answer, each
//! participant's seeded order); `video` (`FrameTiming`: a clip's frame rate and count, as
//! stored; `Flaw`: where a calibration item's known flaw is, frames or a time span;
//! `FrameRate`, `ReadTiming`, `TimingRead`: the exact rate a file's tables or ffprobe
//! state, and what an import learnt)

pub mod baseline;
pub mod calibration;
pub mod facts;
pub mod import;
pub mod paging;
pub mod pairing;
pub mod protocol;
pub mod records;
pub mod rules;
pub mod sampling;
pub mod study;
pub mod taxonomy;
pub mod text;
pub mod verdict;
pub mod video;

use serde::{Deserialize, Serialize};
use std::fmt;

/// A person's role. One account has exactly one role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    Validator,
    Author,
    /// A participant of the blind study.
    Participant,
    /// A participant of the human baseline (SPEC section 2).
    Baseline,
}

impl Role {
    pub const ALL: [Role; 5] = [
        Role::Admin,
        Role::Validator,
        Role::Author,
        Role::Participant,
        Role::Baseline,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Validator => "validator",
            Role::Author => "author",
            Role::Participant => "participant",
            Role::Baseline => "baseline",
        }
    }

    /// Whether the role works on the campaign (and may know its name): not a participant
    /// of the study or the baseline.
    pub fn is_staff(self) -> bool {
        matches!(self, Role::Admin | Role::Validator | Role::Author)
    }

    /// The role with its article: `a validator`, `an author`.
    pub fn with_article(self) -> String {
        match self {
            Role::Admin | Role::Author => format!("an {self}"),
            Role::Validator | Role::Participant => format!("a {self}"),
            Role::Baseline => "a baseline participant".to_string(),
        }
    }

    pub fn parse(s: &str) -> Result<Role, String> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| {
                format!("unknown role `{s}` (expected admin, validator, author, participant or baseline)")
            })
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A part of a campaign that participants take: the blind study or the human baseline.
/// Each has its own role, and its invitation links open only it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Part {
    Study,
    Baseline,
}

impl Part {
    pub const ALL: [Part; 2] = [Part::Study, Part::Baseline];

    pub fn as_str(self) -> &'static str {
        match self {
            Part::Study => "study",
            Part::Baseline => "baseline",
        }
    }

    /// The role its participants hold.
    pub fn role(self) -> Role {
        match self {
            Part::Study => Role::Participant,
            Part::Baseline => Role::Baseline,
        }
    }

    pub fn parse(s: &str) -> Result<Part, String> {
        Part::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| format!("unknown part `{s}` (expected study or baseline)"))
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Stage 1 reviews clips, Stage 2 reviews the questions of retained clips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    Clip,
    Question,
}

impl Stage {
    pub const BOTH: [Stage; 2] = [Stage::Clip, Stage::Question];

    pub fn number(self) -> i64 {
        match self {
            Stage::Clip => 1,
            Stage::Question => 2,
        }
    }

    pub fn from_number(n: i64) -> Option<Stage> {
        match n {
            1 => Some(Stage::Clip),
            2 => Some(Stage::Question),
            _ => None,
        }
    }

    pub fn parse(s: &str) -> Result<Stage, String> {
        match s.trim() {
            "1" => Ok(Stage::Clip),
            "2" => Ok(Stage::Question),
            other => Err(format!("stage must be 1 or 2, not `{other}`")),
        }
    }

    /// What an item of this stage is called in messages.
    pub fn item_noun(self) -> &'static str {
        match self {
            Stage::Clip => "clip",
            Stage::Question => "question",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

impl Serialize for Stage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(self.number())
    }
}

impl utoipa::PartialSchema for Stage {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::Type::Integer)
            .enum_values(Some([1, 2]))
            .description(Some("1: Stage 1 (clips); 2: Stage 2 (questions)"))
            .into()
    }
}

impl utoipa::ToSchema for Stage {}

impl<'de> Deserialize<'de> for Stage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Stage, D::Error> {
        let n = i64::deserialize(d)?;
        Stage::from_number(n)
            .ok_or_else(|| serde::de::Error::custom(format!("stage must be 1 or 2, not {n}")))
    }
}

/// A validator's verdict on one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Valid,
    Reject,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Valid => "valid",
            Verdict::Reject => "reject",
        }
    }

    pub fn parse(s: &str) -> Result<Verdict, String> {
        match s.trim() {
            "valid" => Ok(Verdict::Valid),
            "reject" => Ok(Verdict::Reject),
            other => Err(format!(
                "verdict must be `valid` or `reject`, not `{other}`"
            )),
        }
    }
}

/// An author's resolution of a split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Resolution {
    Accept,
    Reject,
}

impl Resolution {
    pub fn as_str(self) -> &'static str {
        match self {
            Resolution::Accept => "accept",
            Resolution::Reject => "reject",
        }
    }

    pub fn parse(s: &str) -> Result<Resolution, String> {
        match s.trim() {
            "accept" => Ok(Resolution::Accept),
            "reject" => Ok(Resolution::Reject),
            other => Err(format!(
                "resolution must be `accept` or `reject`, not `{other}`"
            )),
        }
    }
}

/// A QA level, by its code: one of the campaign's protocol's declared levels
/// (VGenST-Bench's L1, L2 and L3 unless the protocol declares others).
/// `Taxonomy::parse_level` makes one from input and names the protocol's when the code
/// is not one of them; a reason's levels and a QA type's level are checked against the
/// declared ones when the protocol file is read.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord, utoipa::ToSchema,
)]
#[serde(transparent)]
#[schema(
    description = "A QA level's code: one of the campaign's protocol's `levels` (L1, L2, L3 unless it declares others)",
    example = "L2"
)]
pub struct Level(String);

impl Level {
    /// A level code as the protocol declares it (checked by `domain::protocol`, or
    /// read back from a stored record).
    pub fn new(code: &str) -> Level {
        Level(code.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// VGenST-Bench's three levels, the levels of a protocol that declares none.
    pub fn vgenst() -> Vec<Level> {
        ["L1", "L2", "L3"].into_iter().map(Level::new).collect()
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A rejection reason, by its code: one of the campaign's protocol's reasons of the
/// item's stage (`Taxonomy::parse_reason` makes one from input; which apply, and
/// their rules, are the protocol's: see [`rules::check_verdict`]).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(transparent)]
#[schema(
    description = "A rejection reason's code: one of the campaign's protocol's `reasons` for the item's stage (`GET /api/v1/campaigns/{campaign}/protocol`)",
    example = "generation_artifact"
)]
pub struct Reason(String);

impl Reason {
    pub fn new(code: &str) -> Reason {
        Reason(code.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The stored form: in the order given (the protocol's, from the rules),
    /// `;`-separated.
    pub fn join(reasons: &[Reason]) -> String {
        reasons
            .iter()
            .map(Reason::as_str)
            .collect::<Vec<_>>()
            .join(";")
    }

    /// Reads the stored form back; a name that cannot be a reason's code is an error (a
    /// record that cannot be read whole is not shown in part). Every stored reason is
    /// one of its campaign's protocol's: a protocol change that would drop one in use
    /// is refused (`protocol::change_problems`).
    pub fn split_stored(s: &str) -> Result<Vec<Reason>, String> {
        s.split(';')
            .filter(|p| !p.is_empty())
            .map(|p| {
                check_identifier("a reason", p)
                    .map(|()| Reason::new(p))
                    .map_err(|m| format!("the stored reasons `{s}` cannot be read: {m}"))
            })
            .collect()
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The outcome of an item in its stage, from its pair's two verdicts and, for a
/// split, the author's resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Pending,
    BothPass,
    BothReject,
    Split,
    SplitAccepted,
    SplitRejected,
    /// Retained without review: an undrawn item of a lot whose sample passed (see
    /// [`sampling`]). Never a reviewed item, never in the agreement statistics.
    BySample,
}

impl Outcome {
    pub const ALL: [Outcome; 7] = [
        Outcome::Pending,
        Outcome::BothPass,
        Outcome::BothReject,
        Outcome::Split,
        Outcome::SplitAccepted,
        Outcome::SplitRejected,
        Outcome::BySample,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pending => "pending",
            Outcome::BothPass => "both_pass",
            Outcome::BothReject => "both_reject",
            Outcome::Split => "split",
            Outcome::SplitAccepted => "split_accepted",
            Outcome::SplitRejected => "split_rejected",
            Outcome::BySample => "by_sample",
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// Where an item stands, in words for the pages.
    pub fn words(self) -> &'static str {
        match self {
            Outcome::Pending => "not decided yet",
            Outcome::BothPass => "retained: both validators passed it",
            Outcome::BothReject => "dropped: both validators rejected it",
            Outcome::Split => "split: waiting for an author",
            Outcome::SplitAccepted => "split, accepted by an author: retained",
            Outcome::SplitRejected => "split, rejected by an author: dropped",
            Outcome::BySample => "retained by its lot's sample",
        }
    }

    /// Kept in the benchmark: both passed, the author accepted the split, or (unreviewed)
    /// its lot's sample passed.
    pub fn is_retained(self) -> bool {
        matches!(
            self,
            Outcome::BothPass | Outcome::SplitAccepted | Outcome::BySample
        )
    }

    /// Kept because both validators (or the author of a split) accepted it: retained,
    /// and reviewed.
    pub fn is_reviewed_retained(self) -> bool {
        matches!(self, Outcome::BothPass | Outcome::SplitAccepted)
    }

    /// Out of the benchmark: both rejected, or the author rejected the split.
    pub fn is_rejected(self) -> bool {
        matches!(self, Outcome::BothReject | Outcome::SplitRejected)
    }
}

/// What a decision's `time_spent_ms` measures (stored with it, so that rows recorded
/// under another definition stay interpretable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeMeasure {
    /// The time the item's page was open and visible in the browser (a hidden tab does
    /// not count; kept across a refused save).
    Visible,
    /// The time since the page was drawn (the browser did not report how long it was
    /// visible, as without JavaScript).
    Open,
    /// What an API client sent, measured by the client.
    Client,
}

impl TimeMeasure {
    pub fn as_str(self) -> &'static str {
        match self {
            TimeMeasure::Visible => "visible",
            TimeMeasure::Open => "open",
            TimeMeasure::Client => "client",
        }
    }

    pub fn parse(s: &str) -> Result<TimeMeasure, String> {
        match s {
            "visible" => Ok(TimeMeasure::Visible),
            "open" => Ok(TimeMeasure::Open),
            "client" => Ok(TimeMeasure::Client),
            other => Err(format!(
                "`{other}` is not a time measure: use visible, open or client (or leave it empty)"
            )),
        }
    }
}

/// Where a decision came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Api,
    Web,
    Import,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Api => "api",
            Origin::Web => "web",
            Origin::Import => "import",
        }
    }
}

/// Identifiers from imports (clip, question and user names) travel into URLs,
/// file names and CSV cells, so they are kept to a plain alphabet.
pub fn check_identifier(what: &str, s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if s.len() > 200 {
        return Err(format!("{what} is longer than 200 characters"));
    }
    if s.starts_with('.') || s.starts_with('-') {
        return Err(format!("{what} `{s}` must not start with `.` or `-`"));
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(format!(
            "{what} `{s}` contains `{c}`; use letters, digits, `_`, `-` and `.` only"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_reasons_read_back_and_a_malformed_one_is_an_error() {
        let r = [Reason::new("generation_artifact"), Reason::new("other")];
        assert_eq!(Reason::join(&r), "generation_artifact;other");
        assert_eq!(
            Reason::split_stored("generation_artifact;other"),
            Ok(r.to_vec())
        );
        assert_eq!(Reason::split_stored(""), Ok(vec![]));
        assert!(
            Reason::split_stored("generation_artifact;made up")
                .unwrap_err()
                .contains("`made up`")
        );
    }

    #[test]
    fn a_reason_of_the_other_stage_is_refused() {
        let t = taxonomy::Taxonomy::vgenst();
        assert!(t.parse_reason(Stage::Clip, "incorrect_answer").is_err());
        assert!(t.parse_reason(Stage::Question, "prompt_drift").is_err());
        assert_eq!(
            t.parse_reason(Stage::Question, "other"),
            Ok(Reason::new("other"))
        );
    }

    #[test]
    fn identifiers_keep_to_a_plain_alphabet() {
        assert!(check_identifier("clip_id", "MC_F_EGO_STA_0001").is_ok());
        assert!(check_identifier("clip_id", "a/b").is_err());
        assert!(check_identifier("clip_id", "..").is_err());
        assert!(check_identifier("clip_id", "").is_err());
        assert!(check_identifier("clip_id", "x y").is_err());
    }
}
