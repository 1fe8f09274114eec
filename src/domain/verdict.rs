//! What a verdict does to an item, decided without a database: the store loads the
//! item's facts and its decisions (two statements), [`decide_verdict`] applies every
//! rule (the item is the validator's, the version they saw, the stage gate, a repeat,
//! a change after the pair completed, the intersection rule) and returns a plan, and
//! the store writes the plan (one insert and at most one update).

use super::rules::{CheckedVerdict, FieldError, check_time_spent, check_verdict, outcome_of};
use super::taxonomy::Taxonomy;
use super::{Level, Outcome, Reason, Stage, Verdict};

/// Which version of a clip a verdict is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionRule {
    /// The newest one (a request that does not say).
    Newest,
    /// The version the validator was shown: refused if a newer one arrived since.
    Shown(i64),
    /// The item exactly as a decisions file names it, even of an older version
    /// (records of what happened).
    Named,
}

/// When a repeated request is the same decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dedupe {
    /// Same verdict, reasons and note as the validator's latest decision on the item
    /// (a double click, a retried request).
    SameAsLatest,
    /// Same verdict, reasons, note and time of decision as any stored decision of the
    /// validator on the item (importing the same file twice).
    SameRecord,
}

/// Where a verdict comes from, which decides how a refusal reads: a validator working
/// through their queue is told the item is not in it; a file of records is told why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    Queue,
    Records,
}

/// A pair of validators (user ids): rater 1, rater 2.
pub type Pair = (i64, i64);

/// Everything the rules need to know about an item, as one statement reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemFacts {
    pub id: i64,
    pub stage: Stage,
    /// The clip's id (Stage 1) or the question's (Stage 2).
    pub key: String,
    pub clip_key: String,
    pub task: String,
    /// The clip version this item belongs to.
    pub version: i64,
    /// Whether that is the clip's newest version.
    pub is_current: bool,
    pub calibration: bool,
    /// The question's level (Stage 2), when it is one the rules know.
    pub level: Option<Level>,
    pub outcome: Outcome,
    /// The pair fixed at the item's first verdict.
    pub raters: Option<Pair>,
    /// Stage 2: the pair that reviewed the clip.
    pub inherited: Option<Pair>,
    /// The task's pair in force.
    pub in_force: Option<Pair>,
    /// Why the task has no pair in force, when it has none.
    pub pair_problem: Option<String>,
    /// Stage 2: whether the clip is retained (`None`: a question without a clip review,
    /// open from the start).
    pub parent_retained: Option<bool>,
    /// Held for a sample: in a stratum reviewed by sample and not drawn (yet).
    pub held: bool,
    /// The blind key check, as it stands for the validator sending the verdict.
    pub blind: Blind,
}

/// The blind key check (a campaign setting, Stage 2) on a question, for one validator:
/// off, or on and answered blind by them or not yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blind {
    Off,
    Unanswered,
    Answered,
}

/// One stored decision on the item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionFact {
    pub id: i64,
    pub validator: i64,
    /// 1 for the first verdict, 2 for the first change, ...
    pub seq: i64,
    pub verdict: Verdict,
    /// Canonical order, `;`-separated.
    pub reasons: String,
    pub note: String,
    pub decided_at: i64,
    pub time_spent_ms: Option<i64>,
}

/// A verdict as sent.
#[derive(Debug, Clone)]
pub struct VerdictInput<'a> {
    /// The campaign's protocol in force (its reasons and their rules).
    pub taxonomy: &'a Taxonomy,
    pub validator: i64,
    pub verdict: Verdict,
    pub reasons: &'a [String],
    pub note: &'a str,
    pub time_spent_ms: Option<i64>,
    pub version: VersionRule,
    pub decided_at: i64,
    pub dedupe: Dedupe,
    pub path: Path,
}

/// The pair's two verdicts once both decided, with the intersection rule applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub outcome: Outcome,
    pub verdict1: Verdict,
    pub verdict2: Verdict,
    pub reasons1: String,
    pub reasons2: String,
    /// The partner's counted decision (the new one is the other).
    pub partner_decision: i64,
    /// Whether the new decision is rater 1's.
    pub mine_is_first: bool,
}

/// What to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// The request repeats a stored decision: nothing is written.
    Repeat(DecisionFact),
    Record(Record),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub seq: i64,
    pub checked: CheckedVerdict,
    /// `checked.reasons`, joined as stored.
    pub reasons: String,
    pub time_spent_ms: Option<i64>,
    pub pair: Pair,
    /// The item's first verdict: the pair is fixed on the item now.
    pub fix_pair: bool,
    /// The validator's first verdict on the item (their queue's count moves).
    pub first_of_mine: bool,
    /// The pair completes with this verdict.
    pub completes: Option<Completion>,
}

/// Why a verdict is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A malformed verdict (reasons, note, time).
    Field(FieldError),
    /// Not in the validator's queue (the queue path only).
    NotInQueue,
    /// The validator is not in the item's pair (records path).
    NotInPair(Pair),
    /// The task has no pair yet.
    NoPair(String),
    /// The state of the item forbids it.
    Conflict(String),
}

impl From<FieldError> for Refusal {
    fn from(e: FieldError) -> Self {
        Refusal::Field(e)
    }
}

/// The pair of an item: fixed at its first verdict; before that, for a question the
/// pair that reviewed its clip, else the task's pair in force. (The queues hold the
/// same pair: the store keeps `queue1`/`queue2` equal to this.)
pub fn pair_of(item: &ItemFacts) -> Option<Pair> {
    item.raters
        .or(if item.stage == Stage::Question {
            item.inherited
        } else {
            None
        })
        .or(item.in_force)
}

/// Whether an item is in a validator's queue: of their pair, of the newest version,
/// not held out for calibration or a sample, and (Stage 2) of a retained clip.
pub fn in_queue(item: &ItemFacts, validator: i64) -> bool {
    let mine = pair_of(item).is_some_and(|(a, b)| validator == a || validator == b);
    mine && item.is_current
        && !item.calibration
        && item.parent_retained != Some(false)
        && !item.held
        && item.outcome != Outcome::BySample
}

/// Checks a validator's blind answer (the blind key check) to a question of their
/// queue with `options` options: taken once, before any verdict of theirs, while the
/// question is open, with the time spent on it before (bounded as a verdict's is).
pub fn check_blind_answer(
    item: &ItemFacts,
    decisions: &[DecisionFact],
    validator: i64,
    options: usize,
    (answer, time_spent_ms): (i64, Option<i64>),
) -> Result<(), Refusal> {
    let key = &item.key;
    if item.stage != Stage::Question || !in_queue(item, validator) {
        return Err(Refusal::NotInQueue);
    }
    match item.blind {
        Blind::Off => {
            return Err(Refusal::Conflict(
                "this campaign's blind key check is off: give the verdict with the key in view"
                    .into(),
            ));
        }
        Blind::Answered => {
            return Err(Refusal::Conflict(format!(
                "you have answered question `{key}` blind already: that answer stands, since the key has been shown since"
            )));
        }
        Blind::Unanswered => {}
    }
    if decisions.iter().any(|d| d.validator == validator) {
        return Err(Refusal::Conflict(format!(
            "you gave a verdict on question `{key}` with its key in view: an answer now would not be blind"
        )));
    }
    if item.outcome != Outcome::Pending {
        return Err(Refusal::Conflict(format!(
            "the verdict on question `{key}` is final: both validators have decided"
        )));
    }
    if !usize::try_from(answer).is_ok_and(|a| a < options) {
        return Err(Refusal::Field(FieldError::new(
            "answer",
            format!(
                "{answer} is not an option of question `{key}`: its options are 0 to {} (A to {})",
                options.saturating_sub(1),
                super::records::option_letter(
                    i64::try_from(options.saturating_sub(1)).unwrap_or(0)
                )
            ),
        )));
    }
    check_time_spent(time_spent_ms).map_err(Refusal::Field)?;
    Ok(())
}

/// The intersection rule, when the partner has decided: their latest verdict counts
/// with this one (`None`: the partner has not decided yet).
fn completion(
    pair: (i64, i64),
    validator: i64,
    decisions: &[DecisionFact],
    checked: &CheckedVerdict,
    reasons: &str,
) -> Option<Completion> {
    let partner = if validator == pair.0 { pair.1 } else { pair.0 };
    let partner_latest = decisions
        .iter()
        .filter(|d| d.validator == partner)
        .max_by_key(|d| d.seq);
    let mine_is_first = validator == pair.0;
    partner_latest.map(|p| {
        let (v1, v2, r1, r2) = if mine_is_first {
            (
                checked.verdict,
                p.verdict,
                reasons.to_string(),
                p.reasons.to_string(),
            )
        } else {
            (
                p.verdict,
                checked.verdict,
                p.reasons.to_string(),
                reasons.to_string(),
            )
        };
        Completion {
            outcome: outcome_of(v1, v2),
            verdict1: v1,
            verdict2: v2,
            reasons1: r1,
            reasons2: r2,
            partner_decision: p.id,
            mine_is_first,
        }
    })
}

/// Applies every rule of a verdict to an item and its stored decisions (in `seq`
/// order per validator, any order between validators).
pub fn decide_verdict(
    item: &ItemFacts,
    decisions: &[DecisionFact],
    input: &VerdictInput<'_>,
) -> Result<Plan, Refusal> {
    let noun = item.stage.item_noun();
    let key = &item.key;
    let queue = input.path == Path::Queue;
    // What a validator's queue holds: items of their pair, of the newest version, not
    // held out for calibration, and (Stage 2) of a retained clip.
    let pair = pair_of(item);
    let mine = pair.is_some_and(|(a, b)| input.validator == a || input.validator == b);
    if queue && !in_queue(item, input.validator) {
        return Err(Refusal::NotInQueue);
    }
    if item.calibration {
        return Err(Refusal::Conflict(format!(
            "{noun} `{key}` is a calibration item: calibration verdicts are given in calibration and never count in the QC"
        )));
    }
    // Sampled review: an item not drawn is reviewed by no one (held for its lot's draw,
    // or retained by its lot's sample).
    if item.held || item.outcome == Outcome::BySample {
        if queue {
            return Err(Refusal::NotInQueue);
        }
        return Err(Refusal::Conflict(format!(
            "{noun} `{key}` is in a stratum reviewed by sample and was not drawn for review ({})",
            if item.held {
                "held for its lot's draw or decision"
            } else {
                "retained by its lot's sample"
            }
        )));
    }
    // The verdict itself first: a malformed one is refused whatever the item's state.
    let checked = check_verdict(
        input.taxonomy,
        item.stage,
        item.level.as_ref(),
        input.verdict,
        input.reasons,
        input.note,
    )?;
    let time_spent_ms = check_time_spent(input.time_spent_ms)?;
    let reasons = Reason::join(&checked.reasons);

    // A repeat of a stored decision adds nothing, whatever happened since.
    let own: Vec<&DecisionFact> = {
        let mut v: Vec<&DecisionFact> = decisions
            .iter()
            .filter(|d| d.validator == input.validator)
            .collect();
        v.sort_by_key(|d| d.seq);
        v
    };
    let same = |d: &DecisionFact| {
        d.verdict == checked.verdict && d.reasons == reasons && d.note == checked.note
    };
    let repeat = match input.dedupe {
        Dedupe::SameAsLatest => own.last().copied().filter(|d| same(d)),
        Dedupe::SameRecord => own
            .iter()
            .copied()
            .find(|d| same(d) && d.decided_at == input.decided_at),
    };
    if let Some(d) = repeat {
        return Ok(Plan::Repeat(d.clone()));
    }

    let Some(pair) = pair else {
        return Err(Refusal::NoPair(
            item.pair_problem
                .clone()
                .unwrap_or_else(|| "no pair set".into()),
        ));
    };
    if !mine {
        return Err(Refusal::NotInPair(pair));
    }
    match input.version {
        VersionRule::Newest if !item.is_current => {
            return Err(Refusal::Conflict(format!(
                "clip `{}` has a newer version; verdicts go to the newest one",
                item.clip_key
            )));
        }
        VersionRule::Shown(shown) if shown != item.version || !item.is_current => {
            return Err(Refusal::Conflict(format!(
                "a new version of clip `{}` arrived since the page was opened; nothing was recorded: reload to review it",
                item.clip_key
            )));
        }
        _ => {}
    }
    if item.parent_retained == Some(false) {
        return Err(Refusal::Conflict(format!(
            "question `{key}` is not open: its clip `{}` has not been retained in Stage 1",
            item.clip_key
        )));
    }
    if item.outcome != Outcome::Pending {
        return Err(Refusal::Conflict(format!(
            "the verdict on {noun} `{key}` is final: both validators have decided"
        )));
    }
    // The blind key check: a first verdict from the queue comes after the validator's
    // answer without the key (a verdict given before the check was turned on was given
    // with the key in view, and may still change).
    if queue && item.stage == Stage::Question && item.blind == Blind::Unanswered && own.is_empty() {
        return Err(Refusal::Conflict(format!(
            "answer question `{key}` from the video first: the campaign's blind key check shows the keyed answer, and takes the verdict, once your own answer is saved"
        )));
    }

    let completes = completion(pair, input.validator, decisions, &checked, &reasons);
    Ok(Plan::Record(Record {
        seq: own.last().map_or(1, |d| d.seq + 1),
        first_of_mine: own.is_empty(),
        fix_pair: item.raters.is_none(),
        checked,
        reasons,
        time_spent_ms,
        pair,
        completes,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const V0: i64 = 10;
    const V1: i64 = 11;
    const V2: i64 = 12;

    fn clip() -> ItemFacts {
        ItemFacts {
            id: 1,
            stage: Stage::Clip,
            key: "C1".into(),
            clip_key: "C1".into(),
            task: "T".into(),
            version: 1,
            is_current: true,
            calibration: false,
            level: None,
            outcome: Outcome::Pending,
            raters: None,
            inherited: None,
            in_force: Some((V0, V1)),
            pair_problem: None,
            parent_retained: None,
            held: false,
            blind: Blind::Off,
        }
    }

    fn question(parent_retained: Option<bool>) -> ItemFacts {
        ItemFacts {
            stage: Stage::Question,
            key: "Q1".into(),
            level: Some(Level::new("L2")),
            inherited: Some((V1, V2)),
            parent_retained,
            ..clip()
        }
    }

    fn input(validator: i64, verdict: Verdict) -> VerdictInput<'static> {
        VerdictInput {
            taxonomy: Taxonomy::vgenst_ref(),
            validator,
            verdict,
            reasons: &[],
            note: "",
            time_spent_ms: Some(900),
            version: VersionRule::Newest,
            decided_at: 1_000,
            dedupe: Dedupe::SameAsLatest,
            path: Path::Queue,
        }
    }

    fn decided(id: i64, validator: i64, seq: i64, verdict: Verdict, reasons: &str) -> DecisionFact {
        DecisionFact {
            id,
            validator,
            seq,
            verdict,
            reasons: reasons.into(),
            note: if reasons.is_empty() { "" } else { "seen" }.into(),
            decided_at: 500,
            time_spent_ms: None,
        }
    }

    fn record(plan: Plan) -> Record {
        match plan {
            Plan::Record(r) => r,
            Plan::Repeat(d) => panic!("a repeat of {d:?}"),
        }
    }

    #[test]
    fn a_first_verdict_fixes_the_pair_in_force_and_completes_nothing() {
        let r = record(decide_verdict(&clip(), &[], &input(V0, Verdict::Valid)).unwrap());
        assert_eq!(
            (r.seq, r.pair, r.fix_pair, r.first_of_mine),
            (1, (V0, V1), true, true)
        );
        assert_eq!(r.completes, None);
    }

    #[test]
    fn with_the_blind_key_check_a_first_verdict_waits_for_the_blind_answer() {
        let mut q = question(Some(true));
        q.blind = Blind::Unanswered;
        let refused = decide_verdict(&q, &[], &input(V1, Verdict::Valid)).unwrap_err();
        assert!(
            matches!(&refused, Refusal::Conflict(m) if m.contains("answer question `Q1` from the video first")),
            "{refused:?}"
        );
        // Answered blind: the verdict is taken.
        q.blind = Blind::Answered;
        record(decide_verdict(&q, &[], &input(V1, Verdict::Valid)).unwrap());
        // A verdict given before the check was turned on may still change.
        q.blind = Blind::Unanswered;
        let mine = [decided(3, V1, 1, Verdict::Valid, "")];
        let reasons = vec!["incorrect_answer".to_string()];
        let mut change = input(V1, Verdict::Reject);
        change.reasons = &reasons;
        change.note = "the ball floats";
        let r = record(decide_verdict(&q, &mine, &change).unwrap());
        assert_eq!(r.seq, 2);
        // Records brought in from elsewhere are not asked.
        let mut records = input(V1, Verdict::Valid);
        records.path = Path::Records;
        record(decide_verdict(&q, &[], &records).unwrap());
        // Clips are never asked.
        let mut c = clip();
        c.blind = Blind::Unanswered;
        record(decide_verdict(&c, &[], &input(V0, Verdict::Valid)).unwrap());
    }

    #[test]
    fn the_second_verdict_applies_the_intersection_rule_in_rater_order() {
        let stored = [decided(7, V0, 1, Verdict::Reject, "prompt_drift")];
        let mut item = clip();
        item.raters = Some((V0, V1));
        let r = record(decide_verdict(&item, &stored, &input(V1, Verdict::Valid)).unwrap());
        let c = r.completes.unwrap();
        assert_eq!(c.outcome, Outcome::Split);
        assert_eq!((c.verdict1, c.verdict2), (Verdict::Reject, Verdict::Valid));
        assert_eq!(
            (c.reasons1.as_str(), c.reasons2.as_str()),
            ("prompt_drift", "")
        );
        assert_eq!((c.partner_decision, c.mine_is_first), (7, false));
        assert!(!r.fix_pair);
    }

    #[test]
    fn the_partners_latest_change_is_the_one_that_counts() {
        let stored = [
            decided(1, V0, 1, Verdict::Valid, ""),
            decided(5, V0, 2, Verdict::Reject, "generation_artifact"),
        ];
        let reasons = vec!["physical_implausibility".to_string()];
        let mut i = input(V1, Verdict::Reject);
        i.reasons = &reasons;
        let r = record(decide_verdict(&clip(), &stored, &i).unwrap());
        let c = r.completes.unwrap();
        assert_eq!((c.outcome, c.partner_decision), (Outcome::BothReject, 5));
        assert_eq!(c.reasons1, "generation_artifact");
        assert_eq!(c.reasons2, "physical_implausibility");
    }

    #[test]
    fn a_repeat_records_nothing_and_a_change_is_the_next_seq() {
        let stored = [decided(3, V0, 1, Verdict::Valid, "")];
        match decide_verdict(&clip(), &stored, &input(V0, Verdict::Valid)).unwrap() {
            Plan::Repeat(d) => assert_eq!(d.id, 3),
            Plan::Record(r) => panic!("recorded {r:?}"),
        }
        let reasons = vec!["prompt_drift".to_string()];
        let mut change = input(V0, Verdict::Reject);
        change.reasons = &reasons;
        let r = record(decide_verdict(&clip(), &stored, &change).unwrap());
        assert_eq!((r.seq, r.first_of_mine), (2, false));
        // An imported record repeats only with the same time of decision.
        let mut again = input(V0, Verdict::Valid);
        again.dedupe = Dedupe::SameRecord;
        again.decided_at = 500;
        assert!(matches!(
            decide_verdict(&clip(), &stored, &again),
            Ok(Plan::Repeat(_))
        ));
        again.decided_at = 501;
        assert!(matches!(
            decide_verdict(&clip(), &stored, &again),
            Ok(Plan::Record(_))
        ));
    }

    #[test]
    fn a_verdict_after_the_pair_completed_is_final() {
        let mut item = clip();
        item.outcome = Outcome::BothPass;
        item.raters = Some((V0, V1));
        let stored = [decided(1, V0, 1, Verdict::Valid, "")];
        let reasons = vec!["prompt_drift".to_string()];
        let mut change = input(V0, Verdict::Reject);
        change.reasons = &reasons;
        change.note = "changed my mind";
        assert!(matches!(
            decide_verdict(&item, &stored, &change),
            Err(Refusal::Conflict(m)) if m.contains("final")
        ));
    }

    #[test]
    fn outside_the_pair_a_queue_says_not_found_and_records_name_the_pair() {
        assert_eq!(
            decide_verdict(&clip(), &[], &input(V2, Verdict::Valid)),
            Err(Refusal::NotInQueue)
        );
        let mut i = input(V2, Verdict::Valid);
        i.path = Path::Records;
        assert_eq!(
            decide_verdict(&clip(), &[], &i),
            Err(Refusal::NotInPair((V0, V1)))
        );
    }

    #[test]
    fn a_started_item_keeps_its_pair_when_the_task_changes_hands() {
        let mut item = clip();
        item.raters = Some((V0, V1));
        item.in_force = Some((V1, V2));
        assert!(decide_verdict(&item, &[], &input(V0, Verdict::Valid)).is_ok());
        assert_eq!(
            decide_verdict(&item, &[], &input(V2, Verdict::Valid)),
            Err(Refusal::NotInQueue)
        );
    }

    #[test]
    fn a_question_goes_to_the_pair_of_its_clip_and_opens_only_when_it_is_retained() {
        let open = question(Some(true));
        let r = record(decide_verdict(&open, &[], &input(V2, Verdict::Valid)).unwrap());
        assert_eq!(r.pair, (V1, V2));
        assert_eq!(
            decide_verdict(&open, &[], &input(V0, Verdict::Valid)),
            Err(Refusal::NotInQueue)
        );
        let closed = question(Some(false));
        assert_eq!(
            decide_verdict(&closed, &[], &input(V1, Verdict::Valid)),
            Err(Refusal::NotInQueue)
        );
        let mut i = input(V1, Verdict::Valid);
        i.path = Path::Records;
        assert!(matches!(
            decide_verdict(&closed, &[], &i),
            Err(Refusal::Conflict(m)) if m.contains("not open")
        ));
        // Without a clip review (another protocol), a question is open at once, for
        // the task's pair.
        let mut free = question(None);
        free.inherited = None;
        assert_eq!(
            record(decide_verdict(&free, &[], &input(V0, Verdict::Valid)).unwrap()).pair,
            (V0, V1)
        );
    }

    #[test]
    fn an_item_not_drawn_for_its_sample_takes_no_verdict() {
        let mut held = question(Some(true));
        held.held = true;
        assert_eq!(
            decide_verdict(&held, &[], &input(V1, Verdict::Valid)),
            Err(Refusal::NotInQueue)
        );
        let mut by_sample = question(Some(true));
        by_sample.outcome = Outcome::BySample;
        let mut i = input(V1, Verdict::Reject);
        i.path = Path::Records;
        for item in [&held, &by_sample] {
            assert!(matches!(
                decide_verdict(item, &[], &i),
                Err(Refusal::Conflict(m)) if m.contains("was not drawn for review")
            ));
        }
        // Drawn, it is reviewed as any item is.
        held.held = false;
        assert!(decide_verdict(&held, &[], &input(V1, Verdict::Valid)).is_ok());
    }

    #[test]
    fn the_version_shown_must_still_be_the_newest() {
        let mut old = clip();
        old.is_current = false;
        let mut i = input(V0, Verdict::Valid);
        i.path = Path::Records;
        assert!(matches!(
            decide_verdict(&old, &[], &i),
            Err(Refusal::Conflict(m)) if m.contains("newer version")
        ));
        i.version = VersionRule::Named;
        assert!(decide_verdict(&old, &[], &i).is_ok());
        let mut shown = input(V0, Verdict::Valid);
        shown.version = VersionRule::Shown(1);
        assert!(decide_verdict(&clip(), &[], &shown).is_ok());
        shown.version = VersionRule::Shown(2);
        assert!(matches!(
            decide_verdict(&clip(), &[], &shown),
            Err(Refusal::Conflict(m)) if m.contains("new version")
        ));
    }

    #[test]
    fn calibration_items_and_pairless_tasks_are_refused_with_their_reason() {
        let mut cal = clip();
        cal.calibration = true;
        let mut i = input(V0, Verdict::Valid);
        i.path = Path::Records;
        assert!(matches!(
            decide_verdict(&cal, &[], &i),
            Err(Refusal::Conflict(m)) if m.contains("calibration")
        ));
        let mut lonely = clip();
        lonely.in_force = None;
        lonely.pair_problem = Some("the pool has 1 validator".into());
        assert_eq!(
            decide_verdict(&lonely, &[], &i),
            Err(Refusal::NoPair("the pool has 1 validator".into()))
        );
    }

    #[test]
    fn a_malformed_verdict_is_refused_before_anything_else() {
        let mut item = clip();
        item.outcome = Outcome::BothPass;
        item.raters = Some((V0, V1));
        let mut i = input(V0, Verdict::Reject);
        i.path = Path::Records;
        assert!(matches!(
            decide_verdict(&item, &[], &i),
            Err(Refusal::Field(e)) if e.field == "reasons"
        ));
    }
}
