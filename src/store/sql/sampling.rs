// Sampled review: a run (settle, release, draw) and the lots as they stand. (Shared SQL:
// compiled once per backend, see store/mod.rs.)

use crate::error::Result;
use crate::store::Lock;
use crate::store::catalog::Campaign;
use crate::store::sampling::{Lot, LotMembers, PlannedRule, SamplingRun, Waiting};
use crate::store::write;

impl Backend {
    /// One run of a campaign's sampled review (`write::sampling::run`).
    pub(crate) async fn run_sampling(
        &self,
        campaign: &str,
        version: i64,
        planned: &[PlannedRule],
        seed: u64,
    ) -> Result<SamplingRun> {
        let (campaign, planned) = (campaign.to_string(), planned.to_vec());
        self.write_tx(Lock::Structure, move |tx| {
            let (campaign, planned) = (campaign.clone(), planned.clone());
            Box::pin(async move {
                write::sampling::run(tx, &campaign, version, &planned, seed).await
            })
        })
        .await
    }

    /// A campaign's lots and the items held for a draw.
    pub(crate) async fn sampling_lots(&self, campaign: &Campaign) -> Result<(Vec<Lot>, Vec<Waiting>)> {
        write::sampling::lots(&mut *self.read().await?, campaign.id).await
    }

    /// A lot's members (item id, key) and the ids its sample drew.
    pub(crate) async fn lot_members(&self, lot: i64) -> Result<LotMembers> {
        write::sampling::lot_members(&mut *self.read().await?, lot).await
    }
}
