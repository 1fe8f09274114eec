//! The human baseline under circular evaluation: the questions it asks and the answers
//! given, as plain data. Read and checked by `io::baseline`, scored by `report::baseline`
//! with `stats::circular`.

/// The most options a question may have (`A` to `Z`).
pub const MAX_OPTIONS: usize = 26;

/// The index of an option's letter (`A` = 0), if it is one.
pub fn letter_index(c: char) -> Option<usize> {
    c.is_ascii_uppercase().then(|| (c as u8 - b'A') as usize)
}

/// The letter of an option's index (`?` past `Z`).
pub fn letter(i: usize) -> char {
    u8::try_from(i)
        .ok()
        .filter(|&i| (i as usize) < MAX_OPTIONS)
        .map_or('?', |i| char::from(b'A' + i))
}

/// Options as their letters, in order: `[2, 3, 0, 1]` is `CDAB`.
pub fn letters(options: &[usize]) -> String {
    options.iter().map(|&o| letter(o)).collect()
}

/// The longest consent text participants read first, in characters.
pub const MAX_CONSENT_CHARS: usize = 4000;

/// A consent text as stored: line ends made `\n`, trimmed, at most
/// [`MAX_CONSENT_CHARS`] characters (else the reason, in words).
pub fn consent_text(raw: &str) -> Result<String, String> {
    let text = raw.replace("\r\n", "\n").trim().to_string();
    if text.chars().count() > MAX_CONSENT_CHARS {
        return Err(format!(
            "a consent text is limited to {MAX_CONSENT_CHARS} characters"
        ));
    }
    Ok(text)
}

/// One row of an answers file, read and checked on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerRow {
    pub line: usize,
    pub participant: String,
    pub question_id: String,
    pub presentation: usize,
    /// The options shown, as indexes in the manifest's order.
    pub shown: Vec<usize>,
    /// The shown position picked.
    pub chosen: usize,
}

/// A question the baseline may ask: retained, with its options and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineQuestion {
    pub question_id: String,
    pub task: String,
    pub qa_type: String,
    pub level: String,
    pub options: usize,
    /// The keyed option, an index in the manifest's order.
    pub key: usize,
    /// The key of its linked pair (one question asked in both directions), if any.
    pub pair: Option<String>,
}

/// Answers checked whole: participants and questions as indexes for the statistics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedAnswers {
    /// The participants named, in the order they first appear.
    pub participants: Vec<String>,
    pub answers: Vec<BaselineAnswer>,
}

/// One answered presentation, its participant and question as indexes (into
/// [`CheckedAnswers::participants`] and the question list it was checked against).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineAnswer {
    pub participant: usize,
    pub question: usize,
    /// The rotation: 0 shows the options in the manifest's order.
    pub presentation: usize,
    /// The options shown, as indexes in the manifest's order.
    pub shown: Vec<usize>,
    /// The shown position picked.
    pub chosen: usize,
}

impl BaselineAnswer {
    /// The option picked, as an index in the manifest's order.
    pub fn option(&self) -> Option<usize> {
        self.shown.get(self.chosen).copied()
    }
}

/// Which videos of each task each participant answers: `k` per task (all of a task's
/// videos when it has fewer), drawn reproducibly from `seed`, balanced so that every
/// video (and so every question) of a task goes to the same number of participants,
/// or to one more or one fewer where `participants x k` does not divide evenly.
///
/// `videos[t]` lists task `t`'s videos (any ids, in a stable order: the draw depends on
/// it); the result gives, per participant, per task, the videos in the order drawn.
/// Each task's videos are shuffled once and dealt in turn: participant `p` gets the
/// `k` videos from position `p k` on, wrapping around, so no one gets a video twice.
pub fn assign<T: Clone>(
    videos: &[Vec<T>],
    participants: usize,
    k: usize,
    seed: u64,
) -> Vec<Vec<Vec<T>>> {
    let mut rng = crate::rng::Xoshiro256::seed_from_u64(seed);
    let mut out = vec![vec![Vec::new(); videos.len()]; participants];
    for (t, task) in videos.iter().enumerate() {
        let mut order: Vec<&T> = task.iter().collect();
        rng.shuffle(&mut order);
        let n = order.len();
        let take = k.min(n);
        for (p, mine) in out.iter_mut().enumerate() {
            mine[t] = (0..take)
                .map(|j| order[(p * take + j) % n].clone())
                .collect();
        }
    }
    out
}

/// The order in which one participant is shown their presentations: every rotation of
/// every question once (`options[q]` rotations of question `q`), shuffled from `seed`
/// so that two rotations of one question are never next to each other wherever the
/// numbers allow it (no question holds more than half the presentations, rounded up).
/// Returns `(question, rotation)` pairs; rotation 0 is the manifest's order.
///
/// Each step draws a question at random, weighted by its presentations left, among
/// those that differ from the one just shown and leave an order without neighbours
/// possible; then one of its rotations left, at random.
pub fn presentation_order(options: &[usize], seed: u64) -> Vec<(usize, usize)> {
    let mut rng = crate::rng::Xoshiro256::seed_from_u64(seed);
    let mut left: Vec<Vec<usize>> = options.iter().map(|&n| (0..n).collect()).collect();
    let total: usize = options.iter().sum();
    let mut out = Vec::with_capacity(total);
    let mut last: Option<usize> = None;
    for placed in 0..total {
        let remaining = total - placed;
        // Still possible after showing `q` next: of the R-1 left, no question holds
        // more than half rounded up, and `q` itself no more than half rounded down.
        let possible = |q: usize| {
            let after = remaining - 1;
            left.iter().enumerate().all(|(i, rots)| {
                let c = rots.len() - usize::from(i == q);
                if i == q {
                    c <= after / 2
                } else {
                    c <= after.div_ceil(2)
                }
            })
        };
        let open: Vec<usize> = (0..left.len())
            .filter(|&q| !left[q].is_empty() && Some(q) != last)
            .collect();
        let good: Vec<usize> = open.iter().copied().filter(|&q| possible(q)).collect();
        let from = if !good.is_empty() {
            good
        } else if !open.is_empty() {
            open
        } else {
            (0..left.len()).filter(|&q| !left[q].is_empty()).collect()
        };
        let weight: usize = from.iter().map(|&q| left[q].len()).sum();
        let mut pick = rng.below(weight as u64).map_or(0, |w| w as usize);
        let mut q = from[0];
        for &c in &from {
            if pick < left[c].len() {
                q = c;
                break;
            }
            pick -= left[c].len();
        }
        let r = rng.below(left[q].len() as u64).map_or(0, |r| r as usize);
        out.push((q, left[q].swap_remove(r)));
        last = Some(q);
    }
    out
}

/// The options of a question with `n` options in rotation `r`: the shown position `i`
/// holds option `(i + r) mod n`, so that over the `n` rotations the key stands once at
/// every position.
pub fn rotation(n: usize, r: usize) -> Vec<usize> {
    (0..n).map(|i| (i + r) % n).collect()
}

/// The seed of one participant's presentation order, from the baseline's seed and the
/// participant's place.
pub fn participant_seed(seed: u64, place: usize) -> u64 {
    seed ^ (place as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// One presentation drawn for a participant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drawn<Q> {
    pub question: Q,
    /// The rotation (0 = the manifest's order).
    pub presentation: usize,
    /// The options shown, as indexes in the manifest's order.
    pub shown: Vec<usize>,
}

/// Everything the participant at `place` (0 for the first to begin) is shown, in order:
/// their `k` videos of each task by [`assign`] (so the draw depends only on the seed and
/// the place, and places dealt in turn keep the videos balanced), every question of
/// those videos in each of its rotations, ordered by [`presentation_order`].
///
/// `tasks[t][v]` lists video `v` of task `t`'s questions, each with its number of
/// options.
pub fn draw<Q: Clone>(
    tasks: &[Vec<Vec<(Q, usize)>>],
    place: usize,
    k: usize,
    seed: u64,
) -> Vec<Drawn<Q>> {
    let mine = assign(tasks, place + 1, k, seed).pop().unwrap_or_default();
    let questions: Vec<(Q, usize)> = mine.into_iter().flatten().flatten().collect();
    let options: Vec<usize> = questions.iter().map(|q| q.1).collect();
    presentation_order(&options, participant_seed(seed, place))
        .into_iter()
        .map(|(q, r)| Drawn {
            question: questions[q].0.clone(),
            presentation: r,
            shown: rotation(questions[q].1, r),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_paper_design_is_balanced() {
        // 12 tasks of 25 videos, 10 participants, 10 videos per task each: 100 slots
        // over 25 videos, 4 participants per video.
        let videos: Vec<Vec<(usize, usize)>> =
            (0..12).map(|t| (0..25).map(|v| (t, v)).collect()).collect();
        let a = assign(&videos, 10, 10, 16);
        assert_eq!(a, assign(&videos, 10, 10, 16));
        assert_ne!(a, assign(&videos, 10, 10, 17));
        let mut count = std::collections::HashMap::new();
        for mine in &a {
            for (t, vs) in mine.iter().enumerate() {
                assert_eq!(vs.len(), 10);
                let distinct: std::collections::HashSet<_> = vs.iter().collect();
                assert_eq!(distinct.len(), 10);
                assert!(vs.iter().all(|v| v.0 == t));
                for v in vs {
                    *count.entry(*v).or_insert(0) += 1;
                }
            }
        }
        assert_eq!(count.len(), 300);
        assert!(count.values().all(|&c| c == 4));
    }

    proptest! {
        #[test]
        fn every_video_gets_its_share(
            sizes in proptest::collection::vec(0usize..12, 1..5),
            participants in 0usize..9,
            k in 0usize..14,
            seed in any::<u64>(),
        ) {
            let videos: Vec<Vec<usize>> = sizes.iter().map(|&n| (0..n).collect()).collect();
            let a = assign(&videos, participants, k, seed);
            prop_assert_eq!(a.len(), participants);
            for (t, &n) in sizes.iter().enumerate() {
                let mut count = vec![0usize; n];
                for mine in &a {
                    let vs = &mine[t];
                    prop_assert_eq!(vs.len(), k.min(n));
                    let distinct: std::collections::HashSet<_> = vs.iter().collect();
                    prop_assert_eq!(distinct.len(), vs.len());
                    for &v in vs {
                        count[v] += 1;
                    }
                }
                if let (Some(lo), Some(hi)) = (count.iter().min(), count.iter().max()) {
                    prop_assert!(hi - lo <= 1, "{:?}", count);
                }
            }
        }

        #[test]
        fn rotations_of_a_question_are_never_neighbours_when_they_need_not_be(
            options in proptest::collection::vec(2usize..6, 1..12),
            seed in any::<u64>(),
        ) {
            let order = presentation_order(&options, seed);
            prop_assert_eq!(order.clone(), presentation_order(&options, seed));
            let mut seen = std::collections::HashSet::new();
            for &(q, r) in &order {
                prop_assert!(r < options[q]);
                prop_assert!(seen.insert((q, r)));
            }
            let total: usize = options.iter().sum();
            prop_assert_eq!(order.len(), total);
            let max = options.iter().copied().max().unwrap_or(0);
            if max <= total.div_ceil(2) {
                for w in order.windows(2) {
                    prop_assert_ne!(w[0].0, w[1].0, "{:?}", order);
                }
            }
        }
    }

    #[test]
    fn one_question_alone_is_shown_in_all_its_rotations() {
        let order = presentation_order(&[4], 1);
        let mut rots: Vec<usize> = order.iter().map(|&(_, r)| r).collect();
        rots.sort_unstable();
        assert_eq!(rots, [0, 1, 2, 3]);
    }

    #[test]
    fn a_participant_sees_every_rotation_of_their_videos_questions_once() {
        // Two tasks of three videos; video v of task t has questions (t, v, 0..2) of 4
        // options each.
        type Video = Vec<((usize, usize, usize), usize)>;
        let tasks: Vec<Vec<Video>> = (0..2)
            .map(|t| {
                (0..3)
                    .map(|v| (0..2).map(|q| ((t, v, q), 4)).collect())
                    .collect()
            })
            .collect();
        let shown = draw(&tasks, 1, 2, 7);
        // 2 tasks x 2 videos x 2 questions x 4 rotations.
        assert_eq!(shown.len(), 32);
        let mut seen = std::collections::HashSet::new();
        for d in &shown {
            assert_eq!(d.shown, rotation(4, d.presentation));
            assert!(seen.insert((d.question, d.presentation)));
        }
        // The same place and seed draw the same; the place's videos are assign's.
        assert_eq!(shown, draw(&tasks, 1, 2, 7));
        let videos = &assign(&tasks, 2, 2, 7)[1];
        for d in &shown {
            let (t, v, _) = d.question;
            assert!(videos[t].iter().any(|qs| qs.iter().any(|q| q.0.1 == v)));
        }
        // Two rotations of one question are never next to each other here.
        assert!(shown.windows(2).all(|w| w[0].question != w[1].question));
    }
}
