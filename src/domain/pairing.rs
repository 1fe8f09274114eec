//! Who reviews what, by one of two rules a protocol names (`pairing`):
//!
//! - **task pairs** (VGenST-Bench's, the default): task t is reviewed by the validators
//!   with pool indexes (t mod n, (t+1) mod n), so each validator serves two adjacent
//!   tasks and shares one member with each neighbouring pair. An admin may override a
//!   task's pair; the items no one has started follow a change.
//! - **least open work**: each clip, when it first enters review, goes to the two
//!   validators of the pool with the least open work (items in their queues without
//!   their verdict), rater 1 being the one with the lower pool index; the pair then
//!   stays with the clip, its questions and its new versions.
//!
//! Either way every reviewed item has exactly two reviewers.

use serde::{Deserialize, Serialize};

/// How a campaign's protocol chooses an item's two reviewers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pairing {
    /// Task t to pool indexes (t mod n, (t+1) mod n), or the admin's override.
    #[default]
    TaskPairs,
    /// Per clip, the two validators with the least open work when it enters review.
    LeastOpenWork,
}

impl Pairing {
    pub const ALL: [Pairing; 2] = [Pairing::TaskPairs, Pairing::LeastOpenWork];

    pub fn as_str(self) -> &'static str {
        match self {
            Pairing::TaskPairs => "task_pairs",
            Pairing::LeastOpenWork => "least_open_work",
        }
    }

    pub fn parse(s: &str) -> Option<Pairing> {
        Pairing::ALL.into_iter().find(|p| p.as_str() == s)
    }

    pub fn is_default(&self) -> bool {
        *self == Pairing::TaskPairs
    }

    /// In words, for the pages and the command line.
    pub fn words(self) -> &'static str {
        match self {
            Pairing::TaskPairs => "task pairs: task t to pool indexes t and t+1 (mod n)",
            Pairing::LeastOpenWork => {
                "least open work: each clip to the two validators with the fewest items waiting"
            }
        }
    }
}

/// A validator of the pool as the least-open-work rule sees them: pool index, account,
/// items waiting in their queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    pub index: i64,
    pub id: i64,
    pub open: i64,
}

/// The pair of the next clip by least open work: the two members with the fewest open
/// items (ties to the lower pool index), rater 1 the one with the lower pool index.
/// Their open work grows by `weight` (the items the clip puts in each of their queues),
/// so that a run of clips spreads over the pool. `None` with fewer than two members.
pub fn least_open_work(pool: &mut [Member], weight: i64) -> Option<(i64, i64)> {
    let mut order: Vec<usize> = (0..pool.len()).collect();
    order.sort_by_key(|&i| (pool[i].open, pool[i].index));
    let (&a, &b) = (order.first()?, order.get(1)?);
    for i in [a, b] {
        pool[i].open = pool[i].open.saturating_add(weight);
    }
    let (first, second) = if pool[a].index < pool[b].index {
        (a, b)
    } else {
        (b, a)
    };
    Some((pool[first].id, pool[second].id))
}

/// The pool indexes of the default pair of the task at `position`, for a pool of `n`
/// validators; `None` when the pool is too small to make a pair.
pub fn default_pair_indexes(position: usize, n: usize) -> Option<(usize, usize)> {
    if n < 2 {
        return None;
    }
    Some((position % n, (position + 1) % n))
}

/// Picks the default pair out of a pool given as (index, member) entries.
/// Pool indexes are expected to run 0..n-1; a gap leaves the tasks that need the
/// missing index without a pair, and the error says which index is missing.
pub fn default_pair<T: Clone>(position: usize, pool: &[(i64, T)]) -> Result<(T, T), String> {
    let (a, b) = default_pair_indexes(position, pool.len()).ok_or_else(|| {
        format!(
            "the validator pool has {} member(s); a pair needs at least 2",
            pool.len()
        )
    })?;
    let find = |idx: usize| {
        // A negative index is no validator's place.
        pool.iter()
            .find(|(i, _)| usize::try_from(*i).ok() == Some(idx))
            .map(|(_, m)| m.clone())
            .ok_or_else(|| {
                format!(
                    "no validator has pool index {idx} (a pool of {} must use the indexes 0..{})",
                    pool.len(),
                    pool.len() - 1
                )
            })
    };
    Ok((find(a)?, find(b)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twelve_validators_pair_adjacent_indexes_and_wrap_around() {
        assert_eq!(default_pair_indexes(0, 12), Some((0, 1)));
        assert_eq!(default_pair_indexes(5, 12), Some((5, 6)));
        assert_eq!(default_pair_indexes(11, 12), Some((11, 0)));
    }

    #[test]
    fn each_validator_serves_exactly_two_tasks_when_n_equals_the_task_count() {
        let n = 12;
        let mut served = vec![0; n];
        for t in 0..n {
            let (a, b) = default_pair_indexes(t, n).unwrap();
            assert_ne!(a, b);
            served[a] += 1;
            served[b] += 1;
        }
        assert!(served.iter().all(|&s| s == 2));
    }

    #[test]
    fn a_pool_of_one_makes_no_pair() {
        assert_eq!(default_pair_indexes(3, 1), None);
        assert!(default_pair(0, &[(0, "a")]).is_err());
    }

    fn member(index: i64, open: i64) -> Member {
        Member {
            index,
            id: 100 + index,
            open,
        }
    }

    #[test]
    fn least_open_work_takes_the_two_least_loaded_rater_1_the_lower_index() {
        let mut pool = [member(0, 5), member(1, 2), member(2, 7), member(3, 1)];
        // 3 (1 open) and 1 (2 open): rater 1 is index 1.
        assert_eq!(least_open_work(&mut pool, 4), Some((101, 103)));
        assert_eq!(pool.map(|m| m.open), [5, 6, 7, 5]);
        // Now 0 and 3 tie at 5; 1 is at 6.
        assert_eq!(least_open_work(&mut pool, 1), Some((100, 103)));
    }

    #[test]
    fn ties_go_to_the_lower_pool_index() {
        let mut pool = [member(2, 0), member(0, 0), member(1, 0)];
        assert_eq!(least_open_work(&mut pool, 1), Some((100, 101)));
        assert_eq!(least_open_work(&mut pool, 1), Some((100, 102)));
    }

    #[test]
    fn least_open_work_needs_two_members() {
        assert_eq!(least_open_work(&mut [], 1), None);
        assert_eq!(least_open_work(&mut [member(0, 0)], 1), None);
    }

    #[test]
    fn a_run_of_clips_spreads_evenly_over_the_pool() {
        // 5 validators, 1,000 clips of 1 to 4 items each: every validator ends within
        // the largest clip's weight of every other, and every clip has two reviewers.
        let mut pool: Vec<Member> = (0..5).map(|i| member(i, 0)).collect();
        for k in 0..1000i64 {
            let (a, b) = least_open_work(&mut pool, 1 + k % 4).unwrap();
            assert_ne!(a, b);
            let index = |id: i64| pool.iter().find(|m| m.id == id).unwrap().index;
            assert!(index(a) < index(b));
        }
        let loads: Vec<i64> = pool.iter().map(|m| m.open).collect();
        let (min, max) = (loads.iter().min().unwrap(), loads.iter().max().unwrap());
        assert!(max - min <= 4, "{loads:?}");
        assert_eq!(
            loads.iter().sum::<i64>(),
            2 * (0..1000).map(|k| 1 + k % 4).sum::<i64>()
        );
    }

    #[test]
    fn pairing_names_round_trip() {
        for p in Pairing::ALL {
            assert_eq!(Pairing::parse(p.as_str()), Some(p));
        }
        assert_eq!(Pairing::parse("round_robin"), None);
        assert!(Pairing::TaskPairs.is_default());
    }

    #[test]
    fn a_gap_in_the_indexes_is_named() {
        let pool = [(0, "a"), (1, "b"), (3, "d")];
        assert_eq!(default_pair(0, &pool), Ok(("a", "b")));
        let err = default_pair(1, &pool).unwrap_err();
        assert!(err.contains("index 2"), "{err}");
    }
}
