//! The known items of the live queue: a verdict recorded (the API and the pages alike)
//! and, when it is a new verdict on a known item, the validator's recent catch rate
//! looked at after the reply (so that nothing in a reply's timing tells a known item
//! from a real one): a pause, when due, is a write of its own
//! (`Store::pause_for_known_items`), which opens a calibration round and closes the
//! gate. The figures: `report::known` from the store's verdicts.

use crate::domain::{Origin, Stage};
use crate::error::Result;
use crate::report::known::{KnownItemsReply, build, pause_reason};
use crate::store::Store;
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::store::review::{Recorded, VerdictRequest};
use std::collections::BTreeMap;

/// Records a validator's verdict on an item of their queue; a new verdict on a known
/// item then has the validator's recent catch rate looked at, off the request.
pub async fn record_verdict(
    store: &Store,
    campaign: &Campaign,
    validator: &User,
    stage: Stage,
    key: &str,
    req: &VerdictRequest,
    origin: Origin,
) -> Result<Recorded> {
    let recorded = store
        .record_verdict(campaign, validator, stage, key, req, origin)
        .await?;
    if recorded.known {
        let (store, campaign, validator) = (store.clone(), campaign.clone(), validator.clone());
        tokio::spawn(async move {
            if let Err(e) = check_pause(&store, &campaign, &validator).await {
                tracing::warn!(
                    "the known items' check of {} in campaign `{}` failed: {e}",
                    validator.name,
                    campaign.name
                );
            }
        });
    }
    Ok(recorded)
}

/// When each validator's queue was last paused by the known items (µs), by name.
async fn last_pauses(
    store: &Store,
    campaign: &Campaign,
    validator: Option<&User>,
) -> Result<BTreeMap<String, i64>> {
    let mut since = BTreeMap::new();
    for r in store.calibration_rounds(campaign, validator).await? {
        if r.reopened.is_some() {
            since.insert(r.validator.clone(), r.started_at);
        }
    }
    Ok(since)
}

/// Pauses the validator's queue when their recent catch rate on known defects (since
/// their last pause) is surely below the calibration threshold; answers the round that
/// opened, if one did.
pub async fn check_pause(
    store: &Store,
    campaign: &Campaign,
    validator: &User,
) -> Result<Option<i64>> {
    let records = store.known_records(campaign).await?;
    let since = last_pauses(store, campaign, Some(validator))
        .await?
        .remove(&validator.name)
        .unwrap_or(i64::MIN);
    let s = &campaign.settings;
    match pause_reason(
        &records,
        &validator.name,
        s.known_window,
        s.calibration_threshold,
        since,
    ) {
        Some(why) => {
            store
                .pause_for_known_items(campaign, validator.id, &why)
                .await
        }
        None => Ok(None),
    }
}

/// Every validator's figures on the known items; `None` before any verdict on one.
pub async fn figures(store: &Store, campaign: &Campaign) -> Result<Option<KnownItemsReply>> {
    let records = store.known_records(campaign).await?;
    if records.is_empty() {
        return Ok(None);
    }
    let since = last_pauses(store, campaign, None).await?;
    let s = &campaign.settings;
    Ok(build(
        &records,
        s.known_window,
        s.calibration_threshold,
        &since,
    ))
}
