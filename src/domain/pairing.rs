//! Who reviews which task: task t is reviewed by the validators with pool indexes
//! (t mod n, (t+1) mod n), so each validator serves two adjacent tasks and shares one
//! member with each neighbouring pair. An admin may override a task's pair.

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

    #[test]
    fn a_gap_in_the_indexes_is_named() {
        let pool = [(0, "a"), (1, "b"), (3, "d")];
        assert_eq!(default_pair(0, &pool), Ok(("a", "b")));
        let err = default_pair(1, &pool).unwrap_err();
        assert!(err.contains("index 2"), "{err}");
    }
}
