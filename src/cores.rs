//! Work spread over the machine's cores: a list of independent jobs, each worker taking
//! the next job not taken yet, the results in the jobs' order (so a result never
//! depends on how many cores ran it or in which order they finished).

/// `f` over every element of `items` on the machine's cores, the results in the items'
/// order.
pub fn on_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism()
        .map_or(2, std::num::NonZero::get)
        .min(items.len())
        .max(1);
    if workers == 1 {
        return items.iter().map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<(usize, R)>> =
        std::sync::Mutex::new(Vec::with_capacity(items.len()));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    done.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push((i, r));
                }
            });
        }
    });
    let mut done = done
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::on_cores;

    #[test]
    fn results_come_in_the_items_order_whatever_finishes_first() {
        let items: Vec<u64> = (0..100).collect();
        let out = on_cores(&items, |&i| {
            std::thread::sleep(std::time::Duration::from_micros((100 - i) * 10));
            i * i
        });
        assert_eq!(out, items.iter().map(|i| i * i).collect::<Vec<_>>());
        assert!(on_cores(&[] as &[u8], |&x| x).is_empty());
    }
}
