//! The review-quality model's fits, kept for the inputs they were fitted to. A fit
//! (EM with a seeded bootstrap) takes most of a second at the paper's scale and about
//! ten at ten times it, and the statistics page, `stats --json`, the paper bundle and
//! the defect-probabilities export each ask for it whenever they are read. The fit is
//! a pure function of its inputs (the protocol, the counted verdicts, the known items'
//! records, the stages and the options, seed included), so the answer kept for inputs
//! equal to these, compared whole, is the answer; any new verdict, resolution or known
//! item changes the inputs and is fitted anew.

use crate::domain::facts::{DecidedItem, OutcomeCount};
use crate::domain::records::KnownRecord;
use crate::domain::taxonomy::Taxonomy;
use crate::error::{Error, Result};
use crate::report::quality::{DefectProbability, ReviewQualityReply};
use crate::stats::quality::Options;
use std::collections::VecDeque;
use std::sync::{Arc, LazyLock, Mutex};

/// The last few answers with their inputs, the newest first.
pub struct Memo<K, V> {
    kept: Mutex<VecDeque<(Arc<K>, Arc<V>)>>,
    capacity: usize,
}

impl<K: PartialEq, V> Memo<K, V> {
    pub fn new(capacity: usize) -> Memo<K, V> {
        Memo {
            kept: Mutex::new(VecDeque::new()),
            capacity: capacity.max(1),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, VecDeque<(Arc<K>, Arc<V>)>> {
        // A panic while the lock was held leaves only a list of finished answers.
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The answer kept for inputs equal to `key`.
    pub fn get(&self, key: &K) -> Option<Arc<V>> {
        let mut kept = self.kept();
        let at = kept.iter().position(|(k, _)| **k == *key)?;
        let hit = kept.remove(at)?;
        let value = hit.1.clone();
        kept.push_front(hit);
        Some(value)
    }

    /// Keeps an answer; the least recently used one goes past the capacity.
    pub fn put(&self, key: Arc<K>, value: Arc<V>) {
        let mut kept = self.kept();
        kept.retain(|(k, _)| **k != *key);
        kept.push_front((key, value));
        kept.truncate(self.capacity);
    }

    /// The answer for `key`: the one kept, or `fit` run off the async runtime (CPU
    /// work) and kept when it succeeds.
    pub async fn get_or_fit<F>(&'static self, key: K, fit: F) -> Result<Arc<V>>
    where
        K: Send + Sync + 'static,
        V: Send + Sync + 'static,
        F: FnOnce(&K) -> Result<V> + Send + 'static,
    {
        if let Some(v) = self.get(&key) {
            return Ok(v);
        }
        let key = Arc::new(key);
        let k = key.clone();
        let value = tokio::task::spawn_blocking(move || fit(&k))
            .await
            .map_err(|e| Error::fault("the review-quality fit failed", e))??;
        let value = Arc::new(value);
        self.put(key, value.clone());
        Ok(value)
    }
}

/// The inputs of a fit over counted outcomes.
#[derive(PartialEq)]
struct QualityInputs {
    taxonomy: Taxonomy,
    outcomes: Vec<OutcomeCount>,
    known: Vec<KnownRecord>,
    stages: Vec<i64>,
    options: Options,
}

/// The inputs of the per-item defect probabilities.
#[derive(PartialEq)]
struct DefectInputs {
    taxonomy: Taxonomy,
    items: Vec<DecidedItem>,
    known: Vec<KnownRecord>,
    stages: Vec<i64>,
    options: Options,
}

/// Fits over outcome counts (grouped rows: small) for a few campaigns and scopes read
/// in turn; per-item fits (a row per decided item, some 16 MB at ten times the paper's
/// scale) for two.
static QUALITY: LazyLock<Memo<QualityInputs, ReviewQualityReply>> = LazyLock::new(|| Memo::new(8));
static DEFECTS: LazyLock<Memo<DefectInputs, Vec<DefectProbability>>> =
    LazyLock::new(|| Memo::new(2));

/// The stages a campaign's model is fitted for.
pub fn stages(taxonomy: &Taxonomy) -> Vec<i64> {
    if taxonomy.clip_review {
        vec![1, 2]
    } else {
        vec![2]
    }
}

/// `report::quality::build` over these inputs, kept for them.
pub async fn review_quality(
    taxonomy: &Taxonomy,
    outcomes: Vec<OutcomeCount>,
    known: Vec<KnownRecord>,
) -> Result<Arc<ReviewQualityReply>> {
    let key = QualityInputs {
        taxonomy: taxonomy.clone(),
        outcomes,
        known,
        stages: stages(taxonomy),
        options: Options::default(),
    };
    QUALITY
        .get_or_fit(key, |k| {
            crate::report::quality::build(&k.taxonomy, &k.outcomes, &k.known, &k.stages, k.options)
                .map_err(|e| Error::fault("the review-quality estimates", e))
        })
        .await
}

/// `report::quality::defect_probabilities` over these inputs, kept for them.
pub async fn defect_probabilities(
    taxonomy: &Taxonomy,
    items: Vec<DecidedItem>,
    known: Vec<KnownRecord>,
) -> Result<Arc<Vec<DefectProbability>>> {
    let key = DefectInputs {
        taxonomy: taxonomy.clone(),
        items,
        known,
        stages: stages(taxonomy),
        options: Options::default(),
    };
    DEFECTS
        .get_or_fit(key, |k| {
            crate::report::quality::defect_probabilities(
                &k.taxonomy,
                &k.items,
                &k.known,
                &k.stages,
                k.options,
            )
            .map_err(|e| Error::fault("the defect probabilities", e))
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn an_answer_is_kept_for_equal_inputs_and_fitted_anew_for_others() {
        static MEMO: LazyLock<Memo<Vec<i64>, i64>> = LazyLock::new(|| Memo::new(2));
        static FITS: AtomicUsize = AtomicUsize::new(0);
        let sum = |k: &Vec<i64>| {
            FITS.fetch_add(1, Ordering::SeqCst);
            Ok(k.iter().sum::<i64>())
        };
        let a = MEMO.get_or_fit(vec![1, 2], sum).await.unwrap();
        let again = MEMO.get_or_fit(vec![1, 2], sum).await.unwrap();
        assert_eq!((*a, *again), (3, 3));
        assert!(Arc::ptr_eq(&a, &again), "the kept answer");
        assert_eq!(FITS.load(Ordering::SeqCst), 1);
        // Other inputs are fitted; past the capacity the least recently used goes.
        assert_eq!(*MEMO.get_or_fit(vec![5], sum).await.unwrap(), 5);
        assert_eq!(*MEMO.get_or_fit(vec![1, 2], sum).await.unwrap(), 3);
        assert_eq!(*MEMO.get_or_fit(vec![7], sum).await.unwrap(), 7);
        assert_eq!(FITS.load(Ordering::SeqCst), 3);
        assert!(MEMO.get(&vec![5]).is_none(), "[5] was used least recently");
        assert!(MEMO.get(&vec![1, 2]).is_some());
        // A failed fit is not kept.
        let failed = MEMO
            .get_or_fit(vec![9], |_| Err(Error::Internal("no".into())))
            .await;
        assert!(failed.is_err());
        assert!(MEMO.get(&vec![9]).is_none());
    }
}
