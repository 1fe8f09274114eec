//! The rules of a decision: which reasons go with which verdict, and the
//! intersection rule that turns two verdicts into an outcome.

use super::taxonomy::Taxonomy;
use super::{Level, Outcome, Reason, Resolution, Stage, Verdict};

/// Longest note accepted, in characters.
pub const MAX_NOTE_CHARS: usize = 4000;
/// Longest time spent on one decision that is believed, in milliseconds (one day).
pub const MAX_TIME_SPENT_MS: i64 = 86_400_000;

/// A verdict whose reasons and note have been checked against the stage and level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedVerdict {
    pub verdict: Verdict,
    /// Canonical order, no duplicates.
    pub reasons: Vec<Reason>,
    pub note: String,
    /// A known verdict's flaw: where in the clip it is (a calibration item's, from its
    /// manifest); none for everything a validator or an author decides.
    pub flaw: Option<crate::domain::video::Flaw>,
}

/// A problem with one field of a request or a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: &'static str,
    pub message: String,
}

impl FieldError {
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        FieldError {
            field,
            message: message.into(),
        }
    }
}

/// Checks a verdict with its reasons and note, for an item of `stage` whose question
/// (in Stage 2) has `level`, by the reasons of the campaign's protocol (`taxonomy`):
/// each one of the stage's, on a level it applies to, with a note where it needs one.
pub fn check_verdict(
    taxonomy: &Taxonomy,
    stage: Stage,
    level: Option<&Level>,
    verdict: Verdict,
    reasons: &[String],
    note: &str,
) -> Result<CheckedVerdict, FieldError> {
    let note = note.trim().to_string();
    super::text::check(&note).map_err(|m| FieldError::new("note", m))?;
    if note.chars().count() > MAX_NOTE_CHARS {
        return Err(FieldError::new(
            "note",
            format!("the note is longer than {MAX_NOTE_CHARS} characters"),
        ));
    }
    let mut parsed = Vec::with_capacity(reasons.len());
    for r in reasons.iter().filter(|r| !r.trim().is_empty()) {
        parsed.push(
            taxonomy
                .parse_reason(stage, r)
                .map_err(|m| FieldError::new("reasons", m))?,
        );
    }
    taxonomy.order_reasons(stage, &mut parsed);
    match verdict {
        Verdict::Valid if !parsed.is_empty() => {
            return Err(FieldError::new(
                "reasons",
                "reasons are given only with a reject verdict",
            ));
        }
        Verdict::Reject if parsed.is_empty() => {
            return Err(FieldError::new(
                "reasons",
                "a reject verdict needs at least one reason",
            ));
        }
        _ => {}
    }
    for r in &parsed {
        let Some(def) = taxonomy.reason(stage, r.as_str()) else {
            continue;
        };
        if !def.applies_to(level) {
            let level = level.map_or("unknown", |l| l.as_str());
            return Err(FieldError::new(
                "reasons",
                format!(
                    "`{r}` applies only to {} questions; this question is {level}",
                    def.level_words()
                ),
            ));
        }
    }
    for r in &parsed {
        if taxonomy.reason(stage, r.as_str()).is_some_and(|d| d.note) && note.is_empty() {
            return Err(FieldError::new(
                "note",
                format!("the reason `{r}` needs a note"),
            ));
        }
    }
    Ok(CheckedVerdict {
        verdict,
        reasons: parsed,
        note,
        flaw: None,
    })
}

/// Checks the time a validator spent on a decision.
pub fn check_time_spent(ms: Option<i64>) -> Result<Option<i64>, FieldError> {
    match ms {
        Some(ms) if !(0..=MAX_TIME_SPENT_MS).contains(&ms) => Err(FieldError::new(
            "time_spent_ms",
            format!("time spent must be between 0 and {MAX_TIME_SPENT_MS} ms, not {ms}"),
        )),
        other => Ok(other),
    }
}

/// The intersection rule: an item is kept only if both validators pass it.
pub fn outcome_of(rater1: Verdict, rater2: Verdict) -> Outcome {
    match (rater1, rater2) {
        (Verdict::Valid, Verdict::Valid) => Outcome::BothPass,
        (Verdict::Reject, Verdict::Reject) => Outcome::BothReject,
        _ => Outcome::Split,
    }
}

/// An author's resolution applies only to a split, and is final.
pub fn resolve(current: Outcome, resolution: Resolution) -> Result<Outcome, String> {
    match (current, resolution) {
        (Outcome::Split, Resolution::Accept) => Ok(Outcome::SplitAccepted),
        (Outcome::Split, Resolution::Reject) => Ok(Outcome::SplitRejected),
        (Outcome::SplitAccepted | Outcome::SplitRejected, _) => {
            Err("this split has already been resolved; a resolution is final".to_string())
        }
        (Outcome::Pending, _) => {
            Err("this item is not a split: its pair has not both decided".to_string())
        }
        (other, _) => Err(format!(
            "this item is not a split: both validators agreed ({})",
            other.as_str()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vg() -> Taxonomy {
        Taxonomy::vgenst()
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn intersection_rule() {
        use Verdict::*;
        assert_eq!(outcome_of(Valid, Valid), Outcome::BothPass);
        assert_eq!(outcome_of(Reject, Reject), Outcome::BothReject);
        assert_eq!(outcome_of(Valid, Reject), Outcome::Split);
        assert_eq!(outcome_of(Reject, Valid), Outcome::Split);
        assert!(Outcome::BothPass.is_retained());
        assert!(Outcome::SplitAccepted.is_retained());
        assert!(!Outcome::Split.is_retained());
        assert!(Outcome::SplitRejected.is_rejected());
    }

    #[test]
    fn only_a_split_can_be_resolved_and_only_once() {
        assert_eq!(
            resolve(Outcome::Split, Resolution::Accept),
            Ok(Outcome::SplitAccepted)
        );
        assert!(resolve(Outcome::SplitAccepted, Resolution::Reject).is_err());
        assert!(resolve(Outcome::BothPass, Resolution::Reject).is_err());
        assert!(resolve(Outcome::Pending, Resolution::Accept).is_err());
    }

    #[test]
    fn a_reject_needs_a_reason_and_a_valid_takes_none() {
        let e = check_verdict(&vg(), Stage::Clip, None, Verdict::Reject, &[], "").unwrap_err();
        assert_eq!(e.field, "reasons");
        let e = check_verdict(
            &vg(),
            Stage::Clip,
            None,
            Verdict::Valid,
            &s(&["prompt_drift"]),
            "",
        )
        .unwrap_err();
        assert_eq!(e.field, "reasons");
        assert!(check_verdict(&vg(), Stage::Clip, None, Verdict::Valid, &[], "fine").is_ok());
    }

    #[test]
    fn other_needs_a_note() {
        let e = check_verdict(
            &vg(),
            Stage::Clip,
            None,
            Verdict::Reject,
            &s(&["other"]),
            "  ",
        )
        .unwrap_err();
        assert_eq!(e.field, "note");
        let ok = check_verdict(
            &vg(),
            Stage::Clip,
            None,
            Verdict::Reject,
            &s(&["other"]),
            " odd ",
        )
        .unwrap();
        assert_eq!(ok.note, "odd");
    }

    #[test]
    fn single_frame_solvable_only_for_l3() {
        let r = s(&["single_frame_solvable"]);
        assert!(
            check_verdict(
                &vg(),
                Stage::Question,
                Some(&Level::new("L2")),
                Verdict::Reject,
                &r,
                ""
            )
            .is_err()
        );
        assert!(
            check_verdict(
                &vg(),
                Stage::Question,
                Some(&Level::new("L3")),
                Verdict::Reject,
                &r,
                ""
            )
            .is_ok()
        );
    }

    #[test]
    fn reasons_are_deduplicated_and_ordered() {
        let v = check_verdict(
            &vg(),
            Stage::Question,
            Some(&Level::new("L1")),
            Verdict::Reject,
            &s(&["other", "incorrect_answer", "other"]),
            "n",
        )
        .unwrap();
        assert_eq!(
            v.reasons,
            vec![Reason::new("incorrect_answer"), Reason::new("other")]
        );
    }

    #[test]
    fn time_spent_is_bounded() {
        assert!(check_time_spent(Some(-1)).is_err());
        assert!(check_time_spent(Some(MAX_TIME_SPENT_MS + 1)).is_err());
        assert_eq!(check_time_spent(Some(1500)), Ok(Some(1500)));
        assert_eq!(check_time_spent(None), Ok(None));
    }
}
