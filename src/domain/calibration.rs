//! Calibration decided without a database: which items a validator's round holds, where
//! the validator stands ([`status`]), and what a calibration verdict does
//! ([`decide_calibration`]: the item is in the round, the round is open, a repeat is
//! answered as stored, a change is refused, and whether this verdict passes the round).
//! The store loads the rules, the items and the validator's history, calls these, and
//! writes the plan.

use super::rules::{CheckedVerdict, FieldError, check_time_spent, check_verdict};
use super::taxonomy::Taxonomy;
use super::{Level, Reason, Stage, Verdict};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// Where a validator stands in calibration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CalibrationState {
    /// The campaign has no calibration items: nothing to pass.
    NotRequired,
    InProgress,
    Passed,
    /// Every item of the round decided, below the threshold: waiting for an admin.
    Failed,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct CalibrationStatus {
    pub state: CalibrationState,
    pub round: i64,
    pub decided: i64,
    pub agreed: i64,
    /// Calibration items in this round.
    pub total: i64,
    /// Calibration items in the campaign, from which each round draws its items.
    pub pool: i64,
    /// Items to decide before the agreement can pass.
    pub required: i64,
    pub threshold: f64,
    /// The next item to decide.
    pub next: Option<NextItem>,
    /// Why the main queue is paused, when the known items of the live queue paused it:
    /// this round must be passed (or an admin lifts the pause).
    pub paused: Option<String>,
}

/// An item to decide: its stage and id (a clip_id in Stage 1, a question_id in Stage 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct NextItem {
    pub stage: Stage,
    pub item: String,
}

impl CalibrationStatus {
    /// Where the validator stands, in words for the pages and the CLI: a queue the known
    /// items paused says so, whatever its round's state.
    pub fn state_words(&self) -> &'static str {
        match (self.paused.is_some(), self.state) {
            (true, CalibrationState::InProgress) => "paused, in a calibration round",
            (true, _) => "paused",
            (false, CalibrationState::NotRequired) => "no calibration set",
            (false, CalibrationState::InProgress) => "in progress",
            (false, CalibrationState::Passed) => "passed",
            (false, CalibrationState::Failed) => "below the threshold",
        }
    }

    pub fn agreement(&self) -> Option<f64> {
        (self.decided > 0).then(|| self.agreed as f64 / self.decided as f64)
    }

    /// Whether the main queue is open.
    pub fn open(&self) -> bool {
        matches!(
            self.state,
            CalibrationState::NotRequired | CalibrationState::Passed
        )
    }
}

/// A known verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct KnownVerdict {
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub note: String,
    /// Where the flaw is in the clip, when the manifest said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flaw: Option<crate::domain::video::Flaw>,
}

/// The campaign's calibration rules.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rules {
    /// The share of a round's verdicts that must agree with the known ones.
    pub threshold: f64,
    /// Items in a round (the whole set when it has no more).
    pub min_items: i64,
}

impl Rules {
    fn round_size(self) -> usize {
        usize::try_from(self.min_items.max(1)).unwrap_or(usize::MAX)
    }
}

/// A calibration item with its known verdict, in the order items are shown (clips, then
/// questions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalItem {
    pub id: i64,
    pub stage: Stage,
    pub key: String,
    /// The question's level (Stage 2), when it is one the rules know.
    pub level: Option<Level>,
    pub known: KnownVerdict,
}

/// One validator's rounds and verdicts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct History {
    /// (round, passed)
    pub rounds: Vec<(i64, bool)>,
    /// The items each round drew, once it started (rounds from before: none).
    pub drawn: HashMap<i64, HashSet<i64>>,
    /// (round, item, agrees)
    pub decisions: Vec<(i64, i64, bool)>,
    /// The round the known items of the live queue opened, with why, unless an admin
    /// lifted it: passes of the rounds before it no longer count.
    pub reopened: Option<(i64, String)>,
}

/// The items of a validator's round, in the set's order: those it drew when it started
/// (stored); before that, the whole set when it holds no more than a round needs,
/// otherwise that many, drawn anew each round: first the items they decided in the
/// fewest earlier rounds, ties broken by a draw seeded by (validator, round), so round 2
/// does not repeat round 1 while the set has items they have not seen.
pub fn round_items<'a>(
    items: &'a [CalItem],
    size: usize,
    h: &History,
    user: i64,
    round: i64,
) -> Vec<&'a CalItem> {
    if let Some(drawn) = h.drawn.get(&round) {
        let kept: Vec<&CalItem> = items.iter().filter(|it| drawn.contains(&it.id)).collect();
        // A round whose items have all left the set (replaced versions) draws anew.
        if !kept.is_empty() {
            return kept;
        }
    }
    if items.len() <= size {
        return items.iter().collect();
    }
    let mut seen: HashMap<i64, u32> = HashMap::new();
    let mut counted: HashSet<(i64, i64)> = HashSet::new();
    for (r, item, _) in &h.decisions {
        if *r < round && counted.insert((*r, *item)) {
            *seen.entry(*item).or_default() += 1;
        }
    }
    let seed = (user as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (round as u64);
    let mut ranked: Vec<(u32, u64, usize)> = items
        .iter()
        .enumerate()
        .map(|(i, it)| {
            let draw =
                crate::rng::SplitMix64::new(seed ^ (it.id as u64).rotate_left(32)).next_u64();
            (seen.get(&it.id).copied().unwrap_or(0), draw, i)
        })
        .collect();
    ranked.sort_unstable();
    let mut chosen: Vec<usize> = ranked.into_iter().take(size).map(|r| r.2).collect();
    chosen.sort_unstable();
    chosen.into_iter().map(|i| &items[i]).collect()
}

/// A validator's calibration status from the items, the rules and their history.
pub fn status(
    items: &[CalItem],
    rules: Rules,
    h: Option<&History>,
    user: i64,
) -> CalibrationStatus {
    let pool = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let mut status = CalibrationStatus {
        state: CalibrationState::NotRequired,
        round: 0,
        decided: 0,
        agreed: 0,
        total: pool,
        pool,
        required: rules.min_items.min(pool),
        threshold: rules.threshold,
        next: None,
        paused: None,
    };
    let empty = History::default();
    let h = h.unwrap_or(&empty);
    let since = match &h.reopened {
        Some((round, why)) => {
            status.paused = Some(why.clone());
            *round
        }
        None => i64::MIN,
    };
    if pool == 0 {
        // Without calibration items a paused queue waits for the admin alone.
        if let Some((round, _)) = &h.reopened {
            status.round = *round;
            status.state = CalibrationState::Failed;
        }
        return status;
    }
    status.round = h.rounds.last().map_or(1, |r| r.0);
    let passed = h.rounds.iter().any(|r| r.1 && r.0 >= since);
    let mine = round_items(items, rules.round_size(), h, user, status.round);
    status.total = i64::try_from(mine.len()).unwrap_or(i64::MAX);
    status.required = status.total;
    let in_round: HashSet<i64> = mine.iter().map(|it| it.id).collect();
    let mut decided_items = HashSet::new();
    for (round, item, agrees) in &h.decisions {
        if *round == status.round && in_round.contains(item) {
            decided_items.insert(*item);
            status.agreed += i64::from(*agrees);
        }
    }
    status.decided = i64::try_from(decided_items.len()).unwrap_or(i64::MAX);
    let reached = status.decided >= status.required
        && status.agreed as f64 >= rules.threshold * status.decided as f64 - 1e-9;
    let undecided = mine.iter().find(|it| !decided_items.contains(&it.id));
    status.state = if passed || reached {
        CalibrationState::Passed
    } else if undecided.is_none() {
        CalibrationState::Failed
    } else {
        CalibrationState::InProgress
    };
    if status.state == CalibrationState::Passed {
        status.paused = None;
    }
    if status.state == CalibrationState::InProgress
        && let Some(it) = undecided
    {
        status.next = Some(NextItem {
            stage: it.stage,
            item: it.key.clone(),
        });
    }
    status
}

/// The items of round `round` as stored when it starts: their ids joined by commas.
pub fn drawn_ids(items: &[CalItem], rules: Rules, h: &History, user: i64, round: i64) -> String {
    round_items(items, rules.round_size(), h, user, round)
        .iter()
        .map(|it| it.id.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The validator's verdict on the item in this round, if they gave one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlierVerdict {
    pub verdict: Verdict,
    /// As stored: canonical order, `;`-separated.
    pub reasons: String,
    pub note: String,
    pub agrees: bool,
}

/// A calibration verdict as sent, with what the rules need to decide it.
#[derive(Debug, Clone)]
pub struct CalibrationInput<'a> {
    /// The campaign's protocol in force (its reasons and their rules).
    pub taxonomy: &'a Taxonomy,
    pub items: &'a [CalItem],
    pub rules: Rules,
    pub history: &'a History,
    pub user: i64,
    pub stage: Stage,
    pub key: &'a str,
    pub verdict: Verdict,
    pub reasons: &'a [String],
    pub note: &'a str,
    pub time_spent_ms: Option<i64>,
    /// The validator's verdict on this item in the round [`status`] names, if any.
    pub earlier: Option<EarlierVerdict>,
}

/// What a calibration verdict writes.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationRecord {
    pub item: i64,
    pub round: i64,
    /// The round's items, stored with the round on its first verdict.
    pub drawn: String,
    pub checked: CheckedVerdict,
    /// `checked.reasons`, joined as stored.
    pub reasons: String,
    pub time_spent_ms: Option<i64>,
    pub agrees: bool,
    pub known: KnownVerdict,
    /// The status once this verdict counts.
    pub after: CalibrationStatus,
}

impl CalibrationRecord {
    /// Whether this verdict passes the round (the gate opens in the same write).
    pub fn passes(&self) -> bool {
        self.after.state == CalibrationState::Passed
    }
}

/// What to do with a calibration verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum CalibrationPlan {
    /// The same verdict was given in this round already: answered as it was, nothing
    /// written.
    Repeat {
        checked: CheckedVerdict,
        agrees: bool,
        known: KnownVerdict,
        status: CalibrationStatus,
    },
    Record(CalibrationRecord),
}

/// Why a calibration verdict is refused.
#[derive(Debug, Clone, PartialEq)]
pub enum CalibrationRefusal {
    /// No calibration item of that stage and key.
    NoItem,
    /// A reason, level or note that the rules refuse.
    Field(FieldError),
    /// Decided already in this round, otherwise; or not in the round; or the round is
    /// over: in words.
    Conflict(String),
}

/// Every rule of a calibration verdict, without a database.
pub fn decide_calibration(
    input: &CalibrationInput<'_>,
) -> Result<CalibrationPlan, CalibrationRefusal> {
    let item = input
        .items
        .iter()
        .find(|it| it.stage == input.stage && it.key == input.key)
        .ok_or(CalibrationRefusal::NoItem)?;
    let checked = check_verdict(
        input.taxonomy,
        input.stage,
        item.level.as_ref(),
        input.verdict,
        input.reasons,
        input.note,
    )
    .map_err(CalibrationRefusal::Field)?;
    let time_spent_ms = check_time_spent(input.time_spent_ms).map_err(CalibrationRefusal::Field)?;
    let before = status(input.items, input.rules, Some(input.history), input.user);
    let reasons = Reason::join(&checked.reasons);
    let noun = input.stage.item_noun();
    if let Some(e) = &input.earlier {
        if e.verdict == checked.verdict && e.reasons == reasons && e.note == checked.note {
            return Ok(CalibrationPlan::Repeat {
                checked,
                agrees: e.agrees,
                known: item.known.clone(),
                status: before,
            });
        }
        return Err(CalibrationRefusal::Conflict(format!(
            "{noun} `{}` is already decided in this calibration round; calibration verdicts do not change",
            input.key
        )));
    }
    let in_round = round_items(
        input.items,
        input.rules.round_size(),
        input.history,
        input.user,
        before.round,
    )
    .iter()
    .any(|it| it.id == item.id);
    if before.state == CalibrationState::InProgress && !in_round {
        return Err(CalibrationRefusal::Conflict(format!(
            "{noun} `{}` is not in your calibration round {}; {}",
            input.key,
            before.round,
            match &before.next {
                Some(next) => format!("the next one is `{}`", next.item),
                None => "your round is complete".into(),
            }
        )));
    }
    if before.state != CalibrationState::InProgress {
        return Err(CalibrationRefusal::Conflict(match before.state {
            CalibrationState::Failed => {
                "this calibration round is over; an admin can start another".into()
            }
            CalibrationState::NotRequired => "this campaign has no calibration".into(),
            _ => "calibration is passed; the main queue is open".into(),
        }));
    }
    // The round's items are fixed from its first verdict on.
    let drawn = drawn_ids(
        input.items,
        input.rules,
        input.history,
        input.user,
        before.round,
    );
    let agrees = checked.verdict == item.known.verdict;
    let mut after = input.history.clone();
    // `drawn` is this code's own comma list of item ids.
    after
        .drawn
        .entry(before.round)
        .or_insert_with(|| drawn.split(',').filter_map(|id| id.parse().ok()).collect());
    if after.rounds.is_empty() {
        after.rounds.push((before.round, false));
    }
    after.decisions.push((before.round, item.id, agrees));
    let after = status(input.items, input.rules, Some(&after), input.user);
    Ok(CalibrationPlan::Record(CalibrationRecord {
        item: item.id,
        round: before.round,
        drawn,
        checked,
        reasons,
        time_spent_ms,
        agrees,
        known: item.known.clone(),
        after,
    }))
}

/// Whether a failed round may start again, and the round that starts: the next one,
/// with the items it draws now, after every verdict of the rounds before it.
pub fn next_round(
    items: &[CalItem],
    rules: Rules,
    history: &History,
    user: i64,
) -> Result<(i64, i64, String), CalibrationState> {
    let s = status(items, rules, Some(history), user);
    if s.state != CalibrationState::Failed {
        return Err(s.state);
    }
    let next = s.round + 1;
    Ok((s.round, next, drawn_ids(items, rules, history, user, next)))
}

/// What a new round holds: its items, how many of them the validator already decided
/// in an earlier round (the pool could not supply unseen ones), and how many more
/// calibration items the pool needs for a round of unseen items only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct RoundDraw {
    pub round: i64,
    pub items: usize,
    pub repeated: usize,
    pub more_items_needed: usize,
}

/// A new round in words, saying when it repeats items and how many more would avoid it.
pub fn round_text(name: &str, d: &RoundDraw) -> String {
    let mut s = format!("{name} starts calibration round {}.", d.round);
    if d.repeated > 0 {
        s.push_str(&format!(
            " The pool has too few items {name} has not decided: {} of the round's {} repeat \
             earlier ones; add {} calibration item(s) for a round of unseen items.",
            d.repeated, d.items, d.more_items_needed
        ));
    }
    s
}

/// [`RoundDraw`] of round `round` (drawn as `drawn`, the items' ids), for `user`.
pub fn round_draw(
    items: &[CalItem],
    rules: Rules,
    history: &History,
    round: i64,
    drawn: &str,
) -> RoundDraw {
    let seen: HashSet<i64> = history
        .decisions
        .iter()
        .filter(|(r, _, _)| *r < round)
        .map(|(_, item, _)| *item)
        .collect();
    // `drawn` is this code's own comma list of item ids.
    let ids: Vec<i64> = drawn.split(',').filter_map(|x| x.parse().ok()).collect();
    let repeated = ids.iter().filter(|id| seen.contains(id)).count();
    let unseen_in_pool = items.iter().filter(|it| !seen.contains(&it.id)).count();
    RoundDraw {
        round,
        items: ids.len(),
        repeated,
        more_items_needed: rules.round_size().saturating_sub(unseen_in_pool),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: i64, verdict: Verdict) -> CalItem {
        CalItem {
            id,
            stage: Stage::Clip,
            key: format!("C{id}"),
            level: None,
            known: KnownVerdict {
                verdict,
                reasons: if verdict == Verdict::Reject {
                    vec![Reason::new("generation_artifact")]
                } else {
                    Vec::new()
                },
                note: String::new(),
                flaw: None,
            },
        }
    }

    #[test]
    fn a_round_drawn_from_a_small_pool_says_what_repeats_and_what_is_missing() {
        let items: Vec<CalItem> = (0..6).map(|i| item(i, Verdict::Valid)).collect();
        let rules = Rules {
            threshold: 0.75,
            min_items: 4,
        };
        let mut h = History::default();
        for id in [0, 1, 2, 3] {
            h.decisions.push((1, id, false));
        }
        // Two of the six are unseen: a round of four repeats two, and needs two more.
        let drawn = drawn_ids(&items, rules, &h, 7, 2);
        let d = round_draw(&items, rules, &h, 2, &drawn);
        assert_eq!(
            d,
            RoundDraw {
                round: 2,
                items: 4,
                repeated: 2,
                more_items_needed: 2
            }
        );
        let text = round_text("val00", &d);
        assert!(
            text.contains("2 of the round's 4 repeat")
                && text.contains("add 2 calibration item(s)"),
            "{text}"
        );
        // With enough unseen items nothing repeats and nothing is said of it.
        let items: Vec<CalItem> = (0..8).map(|i| item(i, Verdict::Valid)).collect();
        let drawn = drawn_ids(&items, rules, &h, 7, 2);
        let d = round_draw(&items, rules, &h, 2, &drawn);
        assert_eq!((d.repeated, d.more_items_needed), (0, 0));
        assert_eq!(round_text("val00", &d), "val00 starts calibration round 2.");
    }

    fn input<'a>(
        items: &'a [CalItem],
        history: &'a History,
        key: &'a str,
        verdict: Verdict,
        reasons: &'a [String],
    ) -> CalibrationInput<'a> {
        CalibrationInput {
            taxonomy: Taxonomy::vgenst_ref(),
            items,
            rules: Rules {
                threshold: 0.75,
                min_items: 3,
            },
            history,
            user: 7,
            stage: Stage::Clip,
            key,
            verdict,
            reasons,
            note: "",
            time_spent_ms: None,
            earlier: None,
        }
    }

    #[test]
    fn a_round_passes_when_enough_verdicts_agree_and_fails_otherwise() {
        let items = [
            item(1, Verdict::Valid),
            item(2, Verdict::Valid),
            item(3, Verdict::Valid),
        ];
        let mut h = History::default();
        for (key, id) in [("C1", 1), ("C2", 2)] {
            let plan = decide_calibration(&input(&items, &h, key, Verdict::Valid, &[])).unwrap();
            let CalibrationPlan::Record(r) = plan else {
                panic!("not recorded")
            };
            assert!(r.agrees && !r.passes());
            h.rounds = vec![(1, false)];
            h.decisions.push((1, id, true));
        }
        // The third agreeing verdict passes the round (3 of 3 >= 75%).
        let CalibrationPlan::Record(r) =
            decide_calibration(&input(&items, &h, "C3", Verdict::Valid, &[])).unwrap()
        else {
            panic!("not recorded")
        };
        assert!(r.passes());
        // A disagreeing third verdict fails it (2 of 3 < 75%).
        let reasons = vec!["generation_artifact".to_string()];
        let CalibrationPlan::Record(r) =
            decide_calibration(&input(&items, &h, "C3", Verdict::Reject, &reasons)).unwrap()
        else {
            panic!("not recorded")
        };
        assert!(!r.agrees && r.after.state == CalibrationState::Failed);
    }

    #[test]
    fn a_repeat_is_answered_as_stored_and_a_change_is_refused() {
        let items = [item(1, Verdict::Valid), item(2, Verdict::Valid)];
        let h = History {
            rounds: vec![(1, false)],
            drawn: HashMap::new(),
            decisions: vec![(1, 1, true)],
            reopened: None,
        };
        let mut same = input(&items, &h, "C1", Verdict::Valid, &[]);
        same.earlier = Some(EarlierVerdict {
            verdict: Verdict::Valid,
            reasons: String::new(),
            note: String::new(),
            agrees: true,
        });
        assert!(matches!(
            decide_calibration(&same),
            Ok(CalibrationPlan::Repeat { agrees: true, .. })
        ));
        let reasons = vec!["generation_artifact".to_string()];
        let mut change = input(&items, &h, "C1", Verdict::Reject, &reasons);
        change.earlier = same.earlier.clone();
        assert!(matches!(
            decide_calibration(&change),
            Err(CalibrationRefusal::Conflict(m)) if m.contains("do not change")
        ));
        assert_eq!(
            decide_calibration(&input(&items, &h, "C9", Verdict::Valid, &[])),
            Err(CalibrationRefusal::NoItem)
        );
    }

    #[test]
    fn an_item_outside_the_round_and_a_round_that_is_over_are_refused() {
        let items: Vec<CalItem> = (1..=6).map(|i| item(i, Verdict::Valid)).collect();
        let h = History::default();
        let round: Vec<i64> = round_items(&items, 3, &h, 7, 1)
            .iter()
            .map(|i| i.id)
            .collect();
        let outside = items.iter().find(|i| !round.contains(&i.id)).unwrap();
        let refused = decide_calibration(&input(&items, &h, &outside.key, Verdict::Valid, &[]));
        assert!(
            matches!(&refused, Err(CalibrationRefusal::Conflict(m)) if m.contains("not in your calibration round 1")),
            "{refused:?}"
        );
        let failed = History {
            rounds: vec![(1, false)],
            drawn: HashMap::new(),
            decisions: round.iter().map(|id| (1, *id, false)).collect(),
            reopened: None,
        };
        let key = format!("C{}", round[0]);
        assert!(matches!(
            decide_calibration(&input(&items, &failed, &key, Verdict::Valid, &[])),
            Err(CalibrationRefusal::Conflict(m)) if m.contains("round is over")
        ));
        // Only a failed round starts again, with other items first.
        let (old, next, drawn) = next_round(
            &items,
            Rules {
                threshold: 0.75,
                min_items: 3,
            },
            &failed,
            7,
        )
        .unwrap();
        assert_eq!((old, next), (1, 2));
        let again: Vec<i64> = drawn.split(',').map(|d| d.parse().unwrap()).collect();
        assert!(
            again.iter().all(|id| !round.contains(id)),
            "{again:?} {round:?}"
        );
        assert_eq!(
            next_round(
                &items,
                Rules {
                    threshold: 0.75,
                    min_items: 3
                },
                &h,
                7
            ),
            Err(CalibrationState::InProgress)
        );
    }

    #[test]
    fn a_round_the_known_items_reopened_closes_the_queue_until_it_is_passed_or_lifted() {
        let items: Vec<CalItem> = (1..=4).map(|i| item(i, Verdict::Valid)).collect();
        let rules = Rules {
            threshold: 0.75,
            min_items: 2,
        };
        let mut h = History {
            rounds: vec![(1, true)],
            drawn: HashMap::new(),
            decisions: vec![(1, 1, true), (1, 2, true)],
            reopened: None,
        };
        assert!(status(&items, rules, Some(&h), 7).open());
        // Paused: round 2 opens and the pass of round 1 no longer counts.
        h.rounds.push((2, false));
        h.reopened = Some((2, "Stage 1: 2 of the last 20 known defects caught".into()));
        let s = status(&items, rules, Some(&h), 7);
        assert_eq!((s.state, s.round), (CalibrationState::InProgress, 2));
        assert_eq!(s.state_words(), "paused, in a calibration round");
        assert!(!s.open());
        assert!(
            s.paused
                .as_deref()
                .is_some_and(|w| w.contains("known defects"))
        );
        // Passing round 2 opens it again, and the pause is no longer shown.
        let round2: Vec<i64> = round_items(&items, 2, &h, 7, 2)
            .iter()
            .map(|i| i.id)
            .collect();
        for id in &round2 {
            h.decisions.push((2, *id, true));
        }
        h.rounds[1].1 = true;
        let s = status(&items, rules, Some(&h), 7);
        assert!(s.open() && s.paused.is_none());
        // Without calibration items a pause waits for the admin; lifted (no longer
        // read as reopened), the queue is open.
        let paused = History {
            rounds: vec![(1, false)],
            reopened: Some((1, "why".into())),
            ..History::default()
        };
        let s = status(&[], rules, Some(&paused), 7);
        assert_eq!(s.state, CalibrationState::Failed);
        // Said as a pause, not as a round below the threshold.
        assert_eq!(s.state_words(), "paused");
        assert!(status(&[], rules, Some(&History::default()), 7).open());
    }
}
