// The human baseline: its participants, answers brought in, answers read back.
// (Shared SQL: compiled once per backend, see store/mod.rs.)

use crate::error::Result;
use crate::store::Lock;
use crate::store::baseline::{AnswersSummary, NewAnswer, StoredAnswer};
use crate::store::catalog::Campaign;
use crate::store::write;
use std::sync::Arc;

impl Backend {
    pub(crate) async fn baseline_participants(&self, campaign: &Campaign) -> Result<Vec<String>> {
        Ok(write::baseline::participants(&mut *self.read().await?, campaign.id)
            .await?
            .into_iter()
            .map(|(_, name)| name)
            .collect())
    }

    pub(crate) async fn group_sizes(&self, campaign: &Campaign) -> Result<Vec<(String, i64)>> {
        write::baseline::group_sizes(&mut *self.read().await?, campaign.id).await
    }

    pub(crate) async fn question_keys(&self, campaign: &Campaign) -> Result<Vec<String>> {
        write::baseline::question_keys(&mut *self.read().await?, campaign.id).await
    }

    pub(crate) async fn baseline_answers(&self, campaign: &Campaign) -> Result<Vec<StoredAnswer>> {
        write::baseline::answers(&mut *self.read().await?, campaign.id).await
    }

    pub(crate) async fn import_baseline_answers(
        &self,
        campaign: &Campaign,
        rows: &[NewAnswer],
        what: &str,
    ) -> Result<AnswersSummary> {
        let (campaign, rows, what) = (campaign.id, Arc::new(rows.to_vec()), what.to_string());
        self.write_tx(Lock::Structure, move |tx| {
            let (rows, what) = (rows.clone(), what.clone());
            Box::pin(async move { write::baseline::import_answers(tx, campaign, &rows, &what).await })
        })
        .await
    }
}
