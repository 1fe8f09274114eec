//! The known items of the live queue: a verdict recorded (the API and the pages alike),
//! then the validator's recent catch rate looked at by the [`Checker`], off the
//! request and the same for every verdict, so that nothing in a reply's timing tells a
//! known item from a real one. A pause found due is written (`Store::pause_for_known_items`,
//! which opens a calibration round and closes the gate) at a random later moment, so
//! that its moment does not point at the item either. The figures: `report::known`
//! from the store's verdicts.

use crate::domain::{Origin, Stage};
use crate::error::Result;
use crate::report::known::{KnownItemsReply, build, pause_reason};
use crate::store::Store;
use crate::store::accounts::User;
use crate::store::catalog::Campaign;
use crate::store::review::{Recorded, VerdictRequest};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Records a validator's verdict on an item of their queue (in the checker's store), and
/// has the validator's recent catch rate looked at after it, whatever the item was.
pub async fn record_verdict(
    checker: &Checker,
    campaign: &Campaign,
    validator: &User,
    stage: Stage,
    key: &str,
    req: &VerdictRequest,
    origin: Origin,
) -> Result<Recorded> {
    let recorded = checker
        .inner
        .store
        .record_verdict(campaign, validator, stage, key, req, origin)
        .await?;
    checker.after_verdict(campaign, validator);
    Ok(recorded)
}

/// How long the checker gathers verdicts before it looks at their validators.
const GATHER: Duration = Duration::from_millis(250);

/// Looks at the catch rate of the validators who gave verdicts, a batch at a time, in
/// one task of its own, and writes the pauses found due after their delay.
#[derive(Clone)]
pub struct Checker {
    inner: Arc<CheckerInner>,
}

struct CheckerInner {
    store: Store,
    delay: Duration,
    /// Started at the first verdict (a server's runtime is running then).
    tx: OnceLock<mpsc::UnboundedSender<(String, String)>>,
}

impl Checker {
    /// A checker for `store` whose pauses come between half of `delay` and `delay`
    /// after they are found due.
    pub fn new(store: Store, delay: Duration) -> Checker {
        Checker {
            inner: Arc::new(CheckerInner {
                store,
                delay,
                tx: OnceLock::new(),
            }),
        }
    }

    /// Notes a verdict of `validator` in `campaign` (the same work for every verdict).
    fn after_verdict(&self, campaign: &Campaign, validator: &User) {
        let tx = self.inner.tx.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(run(self.inner.store.clone(), self.inner.delay, rx));
            tx
        });
        let _ = tx.send((campaign.name.clone(), validator.name.clone()));
    }
}

/// The checker's task: gathers the validators who gave verdicts, looks at each
/// campaign's known records once per batch, and writes each pause when its moment
/// comes (looked at again then: a pause lifted or already taken is not written twice).
async fn run(store: Store, delay: Duration, mut rx: mpsc::UnboundedReceiver<(String, String)>) {
    let mut pauses: BTreeMap<Instant, (String, String)> = BTreeMap::new();
    let mut waiting: HashSet<(String, String)> = HashSet::new();
    loop {
        let next_due = pauses.keys().next().copied();
        let first = tokio::select! {
            m = rx.recv() => match m {
                Some(m) => Some(m),
                None => return,
            },
            () = async {
                match next_due {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => None,
        };
        if let Some(first) = first {
            let mut marked: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            marked.entry(first.0).or_default().insert(first.1);
            tokio::time::sleep(GATHER).await;
            while let Ok((campaign, name)) = rx.try_recv() {
                marked.entry(campaign).or_default().insert(name);
            }
            for (campaign, names) in marked {
                let found = match store.campaign(&campaign).await {
                    Ok(c) => due(&store, &c, Some(&names)).await,
                    Err(e) => Err(e),
                };
                match found {
                    Ok(found) => {
                        for (name, _) in found {
                            let key = (campaign.clone(), name);
                            if waiting.insert(key.clone()) {
                                pauses.insert(Instant::now() + later(delay), key);
                            }
                        }
                    }
                    Err(e) => tracing::warn!(
                        "the known items' check in campaign `{campaign}` failed: {e}"
                    ),
                }
            }
        }
        let now = Instant::now();
        while let Some(entry) = pauses.first_entry() {
            if *entry.key() > now {
                break;
            }
            let (campaign, name) = entry.remove();
            waiting.remove(&(campaign.clone(), name.clone()));
            if let Err(e) = pause_now(&store, &campaign, &name).await {
                tracing::warn!(
                    "the known items' pause of {name} in campaign `{campaign}` failed: {e}"
                );
            }
        }
    }
}

/// A moment between half of `delay` and `delay` from now, drawn at random.
fn later(delay: Duration) -> Duration {
    let mut b = [0u8; 8];
    let r = match getrandom::fill(&mut b) {
        Ok(()) => u64::from_le_bytes(b) as f64 / u64::MAX as f64,
        Err(_) => 1.0,
    };
    delay.mul_f64(0.5 + 0.5 * r)
}

/// Writes the pause of `name` in `campaign` if it is still due.
async fn pause_now(store: &Store, campaign: &str, name: &str) -> Result<()> {
    let campaign = store.campaign(campaign).await?;
    if let Some(user) = store.user_by_name(name).await? {
        check_pause(store, &campaign, &user).await?;
    }
    Ok(())
}

/// When each validator's queue was last paused by the known items (µs), by name.
async fn last_pauses(store: &Store, campaign: &Campaign) -> Result<BTreeMap<String, i64>> {
    Ok(store.pause_starts(campaign).await?.into_iter().collect())
}

/// The validators (those among `only`, when given) whose recent catch rate on known
/// defects since their last pause is surely below the calibration threshold, with why:
/// the one place the rule is applied to a campaign's records.
async fn due(
    store: &Store,
    campaign: &Campaign,
    only: Option<&BTreeSet<String>>,
) -> Result<Vec<(String, String)>> {
    let records = store.known_records(campaign).await?;
    if records.is_empty() {
        return Ok(Vec::new());
    }
    let since = last_pauses(store, campaign).await?;
    let s = &campaign.settings;
    let names: BTreeSet<&str> = records
        .iter()
        .map(|r| r.validator.as_str())
        .filter(|n| only.is_none_or(|o| o.contains(*n)))
        .collect();
    Ok(names
        .into_iter()
        .filter_map(|name| {
            let from = since.get(name).copied().unwrap_or(i64::MIN);
            pause_reason(
                &records,
                name,
                s.known_window,
                s.calibration_threshold,
                from,
            )
            .map(|why| (name.to_string(), why))
        })
        .collect())
}

/// Pauses the validator's queue when their recent catch rate on known defects (since
/// their last pause) is surely below the calibration threshold; answers the round that
/// opened, if one did.
pub async fn check_pause(
    store: &Store,
    campaign: &Campaign,
    validator: &User,
) -> Result<Option<i64>> {
    let only = BTreeSet::from([validator.name.clone()]);
    match due(store, campaign, Some(&only)).await?.pop() {
        Some((_, why)) => {
            store
                .pause_for_known_items(campaign, validator.id, &why)
                .await
        }
        None => Ok(None),
    }
}

/// `check_pause` for every validator with a verdict on a known item: what the checker
/// could miss (verdicts imported from a decisions file, a server stopped before its
/// pause came). Answers who was paused, with why.
pub async fn check_pauses(store: &Store, campaign: &Campaign) -> Result<Vec<(String, String)>> {
    let mut paused = Vec::new();
    for (name, why) in due(store, campaign, None).await? {
        let Some(user) = store.user_by_name(&name).await? else {
            continue;
        };
        if store
            .pause_for_known_items(campaign, user.id, &why)
            .await?
            .is_some()
        {
            paused.push((name, why));
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
