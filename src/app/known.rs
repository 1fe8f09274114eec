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
async fn last_pauses(store: &Store, campaign: &Campaign) -> Result<BTreeMap<String, i64>> {
    Ok(store.pause_starts(campaign).await?.into_iter().collect())
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
    let since = last_pauses(store, campaign)
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

/// `check_pause` for every validator with a verdict on a known item: what a pause
/// after a reply could miss (verdicts imported from a decisions file, a server
/// stopped between a reply and its check). Answers who was paused, with why.
pub async fn check_pauses(store: &Store, campaign: &Campaign) -> Result<Vec<(String, String)>> {
    let records = store.known_records(campaign).await?;
    let since = last_pauses(store, campaign).await?;
    let s = &campaign.settings;
    let names: std::collections::BTreeSet<&str> =
        records.iter().map(|r| r.validator.as_str()).collect();
    let mut paused = Vec::new();
    for name in names {
        let from = since.get(name).copied().unwrap_or(i64::MIN);
        let why = pause_reason(
            &records,
            name,
            s.known_window,
            s.calibration_threshold,
            from,
        );
        let (Some(why), Some(user)) = (why, store.user_by_name(name).await?) else {
            continue;
        };
        if store
            .pause_for_known_items(campaign, user.id, &why)
            .await?
            .is_some()
        {
            paused.push((name.to_string(), why));
        }
    }
    Ok(paused)
}

/// At a server's start, off the listening path: `check_pauses` in every campaign.
pub fn catch_up(store: &Store) {
    let store = store.clone();
    tokio::spawn(async move {
        let names = match store.campaign_names().await {
            Ok(names) => names,
            Err(e) => {
                tracing::warn!("the known items' check at start could not list campaigns: {e}");
                return;
            }
        };
        for name in names {
            let done = async {
                let campaign = store.campaign(&name).await?;
                check_pauses(&store, &campaign).await
            };
            match done.await {
                Ok(paused) => {
                    for (who, why) in paused {
                        tracing::info!("paused {who} in campaign `{name}` at start: {why}");
                    }
                }
                Err(e) => tracing::warn!("the known items' check of campaign `{name}` failed: {e}"),
            }
        }
    });
}

/// Every validator's figures on the known items; `None` before any verdict on one.
pub async fn figures(store: &Store, campaign: &Campaign) -> Result<Option<KnownItemsReply>> {
    let records = store.known_records(campaign).await?;
    if records.is_empty() {
        return Ok(None);
    }
    let since = last_pauses(store, campaign).await?;
    let s = &campaign.settings;
    Ok(build(
        &records,
        s.known_window,
        s.calibration_threshold,
        &since,
    ))
}
