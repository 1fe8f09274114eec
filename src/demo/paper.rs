//! A paper-scale campaign whose counts follow Tables 11, 12 and 13 of VGenST-Bench
//! (Appendix D.3): 12 tasks x 100 clips, the 9,800 questions of the applicability
//! matrix, 12 validators paired (t mod 12, (t+1) mod 12), and decisions and
//! resolutions brought in through the same path as `tandem decisions import`.
//!
//! Stage 1 (first reviews): per-task retention as in Table 11; 1,045 both pass, 70 both
//! reject, 85 splits (40 accepted, 45 rejected), the splits divided 43/42 between a
//! rejecting rater 1 and a rejecting rater 2. The 115 rejected clips are regenerated
//! (a new video, the same questions) and both validators pass the new versions, so all
//! 1,200 clips reach Stage 2. Stage 2: 9,677 both pass, 80 both reject, 43 splits (30
//! accepted, 13 rejected), with the rejections of each cell as in Table 12.

use crate::clock::{parse_rfc3339, to_rfc3339};
use crate::config::Config;
use crate::domain::records::{DecisionRow, ResolutionRow};
use crate::domain::taxonomy::Taxonomy;
use crate::domain::{Resolution, Role, Stage, Verdict};
use crate::error::{Error, Result};
use crate::store::Store;
use serde_json::json;
use std::path::Path;

/// Table 11: clips retained out of 100, per task.
pub const T11_RETAINED: [(&str, i64); 12] = [
    ("MC_F_EGO_STA", 95),
    ("QC_F_EGO_DYN", 93),
    ("CI_F_EXO_STA", 95),
    ("CM_F_EXO_DYN", 90),
    ("DE_V_EGO_STA", 89),
    ("IO_V_EGO_DYN", 94),
    ("HO_V_EXO_STA", 97),
    ("VI_V_EXO_DYN", 87),
    ("DS_E_EGO_STA", 91),
    ("RV_E_EGO_DYN", 86),
    ("LS_E_EXO_STA", 78),
    ("BT_E_EXO_DYN", 90),
];

/// Table 12: the cells with rejected questions (out of 100); every other cell is 0.
pub const T12_REJECTED: [(&str, &str, i64); 14] = [
    ("QC_F_EGO_DYN", "OA", 6),
    ("CM_F_EXO_DYN", "OE", 2),
    ("CM_F_EXO_DYN", "OA", 3),
    ("IO_V_EGO_DYN", "OA", 8),
    ("HO_V_EXO_STA", "OE", 1),
    ("HO_V_EXO_STA", "OA", 18),
    ("VI_V_EXO_DYN", "OE", 4),
    ("LS_E_EXO_STA", "OA", 12),
    ("LS_E_EXO_STA", "SL", 6),
    ("LS_E_EXO_STA", "PT", 3),
    ("LS_E_EXO_STA", "CR", 10),
    ("BT_E_EXO_DYN", "OA", 16),
    ("BT_E_EXO_DYN", "AR", 2),
    ("BT_E_EXO_DYN", "PT", 2),
];

/// Table 13, Stage 1: (both pass, both reject, split accepted, split rejected).
pub const T13_STAGE1: (i64, i64, i64, i64) = (1045, 70, 40, 45);
/// Table 13, Stage 2.
pub const T13_STAGE2: (i64, i64, i64, i64) = (9677, 80, 30, 13);

pub const CLIPS_PER_TASK: usize = 100;
pub const AUTHOR: &str = "author1";

/// Splits `total` in proportion to `weights` (largest remainders), never giving a slot
/// more than its cap.
pub fn apportion(total: i64, weights: &[i64], caps: &[i64]) -> Result<Vec<i64>> {
    let sum: i64 = weights.iter().sum();
    if total > caps.iter().sum::<i64>() || (sum == 0 && total > 0) {
        return Err(Error::Internal(format!(
            "cannot place {total} within {caps:?}"
        )));
    }
    let mut out: Vec<i64> = weights
        .iter()
        .zip(caps)
        .map(|(&w, &c)| {
            if sum == 0 {
                0
            } else {
                (total * w / sum).min(c)
            }
        })
        .collect();
    let mut left = total - out.iter().sum::<i64>();
    // Hand out the rest by the largest fractional part, skipping full slots.
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by_key(|&i| {
        let rem = if sum == 0 {
            0
        } else {
            (total * weights[i]) % sum
        };
        (std::cmp::Reverse(rem), i)
    });
    while left > 0 {
        let before = left;
        for &i in &order {
            if left > 0 && out[i] < caps[i] {
                out[i] += 1;
                left -= 1;
            }
        }
        if left == before {
            return Err(Error::Internal("apportion made no progress".into()));
        }
    }
    Ok(out)
}

/// What one item gets: the two counted verdicts and, for a split, the resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    BothPass,
    BothReject,
    SplitAccepted,
    SplitRejected,
}

/// `counts` of each fate laid out over `n` items in a fixed scattered order.
fn fates(n: usize, counts: [(Fate, i64); 4], salt: usize) -> Vec<Fate> {
    let mut seq = Vec::with_capacity(n);
    for (f, k) in counts {
        for _ in 0..k {
            seq.push(f);
        }
    }
    while seq.len() < n {
        seq.push(Fate::BothPass);
    }
    // i -> (37 i + salt) mod n is a permutation when gcd(37, n) = 1 (n = 100 here).
    let mut out = vec![Fate::BothPass; n];
    for (i, f) in seq.into_iter().enumerate() {
        let j = if n.is_multiple_of(37) {
            i
        } else {
            (37 * i + salt) % n
        };
        out[j] = f;
    }
    out
}

/// The accounts of the paper-scale campaign: (name, role, generated password).
pub type Accounts = Vec<(String, Role, String)>;

struct Rows {
    decisions: Vec<DecisionRow>,
    resolutions: Vec<ResolutionRow>,
    clock: i64,
    splits: usize,
}

impl Rows {
    fn tick(&mut self) -> i64 {
        self.clock += 7_000_000;
        self.clock
    }

    /// Adds the two verdicts (and the resolution) that give `fate`.
    fn item(
        &mut self,
        stage: Stage,
        item: &str,
        pair: (&str, &str),
        fate: Fate,
        reason: &str,
        k: usize,
    ) {
        let (v1, v2) = match fate {
            Fate::BothPass => (Verdict::Valid, Verdict::Valid),
            Fate::BothReject => (Verdict::Reject, Verdict::Reject),
            Fate::SplitAccepted | Fate::SplitRejected => {
                // Alternate which rater rejects: the splits divide about equally.
                self.splits += 1;
                if self.splits % 2 == 1 {
                    (Verdict::Valid, Verdict::Reject)
                } else {
                    (Verdict::Reject, Verdict::Valid)
                }
            }
        };
        for (who, v) in [(pair.0, v1), (pair.1, v2)] {
            let at = self.tick();
            self.decisions.push(DecisionRow {
                // Reconstructed, not measured: no measure is claimed.
                time_measure: None,
                line: self.decisions.len() + 2,
                stage,
                item_id: item.to_string(),
                validator: who.to_string(),
                verdict: v,
                reasons: if v == Verdict::Reject {
                    vec![reason.to_string()]
                } else {
                    vec![]
                },
                note: String::new(),
                decided_at: at,
                time_spent_ms: Some(4_000 + i64::try_from((k * 7_919) % 40_000).unwrap_or(0)),
                clip_version: None,
            });
        }
        if matches!(fate, Fate::SplitAccepted | Fate::SplitRejected) {
            let at = self.tick();
            self.resolutions.push(ResolutionRow {
                line: self.resolutions.len() + 2,
                stage,
                item_id: item.to_string(),
                author: AUTHOR.to_string(),
                verdict: if fate == Fate::SplitAccepted {
                    Resolution::Accept
                } else {
                    Resolution::Reject
                },
                note: if fate == Fate::SplitAccepted {
                    "fine on a second look".into()
                } else {
                    "the defect is real".into()
                },
                decided_at: at,
            });
        }
    }
}

fn question_json(clip: &str, qa: &str, k: usize) -> serde_json::Value {
    json!({
        "question_id": format!("{clip}_{qa}"),
        "qa_type": qa,
        "question": format!("Question of type {qa} about {clip}?"),
        "options": ["the first option", "the second option", "the third option", "4"],
        "answer": k % 4,
    })
}

/// Where the campaign goes.
struct Target<'a> {
    store: &'a Store,
    config: &'a Config,
    campaign: &'a str,
    dir: &'a Path,
}

/// Writes a manifest of the given clips (id, task index) with the videos `video`
/// makes, and imports it.
async fn import(
    to: &Target<'_>,
    name: &str,
    clips: &[(String, usize)],
    tax: &Taxonomy,
    video: &dyn Fn(usize, &str) -> Vec<u8>,
) -> Result<()> {
    let dir = to.dir;
    let videos = dir.join(format!("{name}-videos"));
    std::fs::create_dir_all(&videos).map_err(|e| Error::io("cannot write the sample videos", e))?;
    let mut text = String::new();
    for (k, (id, t)) in clips.iter().enumerate() {
        let task = &tax.tasks[*t];
        let file = format!("{name}-videos/{id}.webm");
        std::fs::write(dir.join(&file), video(*t, id))
            .map_err(|e| Error::io("cannot write a sample video", e))?;
        let questions: Vec<_> = tax.applicability[&task.code]
            .iter()
            .map(|qa| question_json(id, qa, k))
            .collect();
        text.push_str(
            &json!({"clip_id": id, "task": task.code, "file": file, "theme": "paper-scale sample",
                    "generator": "tandem paper-scale reconstruction", "scene_graph": {}, "scenario": {},
                    "questions": questions})
            .to_string(),
        );
        text.push('\n');
    }
    let manifest = dir.join(format!("{name}.jsonl"));
    std::fs::write(&manifest, text).map_err(|e| Error::io("cannot write the manifest", e))?;
    crate::app::import_manifest(to.store, to.config, to.campaign, &manifest).await?;
    Ok(())
}

/// Builds the campaign in `store`. `video(task index, clip id)` gives the bytes of a
/// first version; regenerated versions get `video` of the next task's index, so they
/// differ. Returns the accounts with their generated passwords.
pub async fn build(
    store: &Store,
    config: &Config,
    campaign: &str,
    dir: &Path,
    video: &dyn Fn(usize, &str) -> Vec<u8>,
) -> Result<Accounts> {
    let tax = Taxonomy::vgenst();
    let n = CLIPS_PER_TASK;
    let clips: Vec<(String, usize)> = (0..tax.tasks.len())
        .flat_map(|t| {
            let code = tax.tasks[t].code.clone();
            (0..n).map(move |i| (format!("{code}_{i:04}"), t))
        })
        .collect();
    let to = Target {
        store,
        config,
        campaign,
        dir,
    };
    import(&to, "round1", &clips, &tax, video).await?;

    let mut accounts = Vec::new();
    let make = |name: String, role: Role, index: Option<i64>| {
        let campaign = campaign.to_string();
        async move {
            let password = crate::auth::generate_password()?;
            let hash = crate::auth::hash_password_limited(password.clone()).await?;
            let campaign = (role != Role::Admin).then_some(campaign);
            store.add_user(&name, role, &hash, campaign, index).await?;
            Ok::<_, Error>((name, role, password))
        }
    };
    accounts.push(make("admin".into(), Role::Admin, None).await?);
    for i in 0..12 {
        accounts.push(make(format!("val{i:02}"), Role::Validator, Some(i)).await?);
    }
    accounts.push(make(AUTHOR.into(), Role::Author, None).await?);
    let pair = |t: usize| {
        (
            format!("val{:02}", t % 12),
            format!("val{:02}", (t + 1) % 12),
        )
    };

    // Stage 1, first reviews, per Table 11 and the Stage 1 column of Table 13.
    let retained: Vec<i64> = T11_RETAINED.iter().map(|(_, r)| *r).collect();
    let rejected: Vec<i64> = retained.iter().map(|r| n as i64 - r).collect();
    let (_, _, acc, rej) = T13_STAGE1;
    let split_acc = apportion(acc, &retained, &retained)?;
    let split_rej = apportion(rej, &rejected, &rejected)?;
    let mut rows = Rows {
        decisions: Vec::new(),
        resolutions: Vec::new(),
        clock: parse_rfc3339("2026-01-05T09:00:00Z").map_err(Error::Internal)?,
        splits: 0,
    };
    let stage1_reasons = [
        "generation_artifact",
        "prompt_drift",
        "physical_implausibility",
    ];
    let mut regenerate = Vec::new();
    for t in 0..tax.tasks.len() {
        let plan = fates(
            n,
            [
                (Fate::SplitAccepted, split_acc[t]),
                (Fate::BothReject, rejected[t] - split_rej[t]),
                (Fate::SplitRejected, split_rej[t]),
                (Fate::BothPass, retained[t] - split_acc[t]),
            ],
            t * 11,
        );
        let (a, b) = pair(t);
        for (i, fate) in plan.into_iter().enumerate() {
            let id = &clips[t * n + i].0;
            rows.item(
                Stage::Clip,
                id,
                (&a, &b),
                fate,
                stage1_reasons[i % 3],
                t * n + i,
            );
            if matches!(fate, Fate::BothReject | Fate::SplitRejected) {
                regenerate.push((id.clone(), t));
            }
        }
    }
    flush(store, campaign, &mut rows).await?;

    // The rejected clips come back as new versions, and both validators pass them.
    let next_video = |t: usize, id: &str| video((t + 1) % 12, id);
    import(&to, "round2", &regenerate, &tax, &next_video).await?;
    for (k, (id, t)) in regenerate.iter().enumerate() {
        let (a, b) = pair(*t);
        rows.item(Stage::Clip, id, (&a, &b), Fate::BothPass, "", k);
    }

    // Stage 2 over all 9,800 questions, per Table 12 and the Stage 2 column of Table 13.
    // Its splits start again with a rejecting rater 2, as Stage 1's did.
    rows.splits = 0;
    let (_, both_rej2, acc2, rej2) = T13_STAGE2;
    let weights: Vec<i64> = T12_REJECTED.iter().map(|c| c.2).collect();
    let caps_acc: Vec<i64> = weights.iter().map(|w| n as i64 - w).collect();
    let cell_rej = apportion(rej2, &weights, &weights)?;
    let cell_acc = apportion(acc2, &weights, &caps_acc)?;
    let both_rej_total: i64 = weights.iter().zip(&cell_rej).map(|(w, r)| w - r).sum();
    if both_rej_total != both_rej2 {
        return Err(Error::Internal("Table 12 and Table 13 disagree".into()));
    }
    let mut k = 0;
    for (t, task) in tax.tasks.iter().enumerate() {
        let (a, b) = pair(t);
        for qa in &tax.applicability[&task.code] {
            let cell = T12_REJECTED
                .iter()
                .position(|(ct, cq, _)| *ct == task.code && cq == qa);
            let (split_rej, both_rej, split_acc) = match cell {
                Some(c) => (cell_rej[c], weights[c] - cell_rej[c], cell_acc[c]),
                None => (0, 0, 0),
            };
            let plan = fates(
                n,
                [
                    (Fate::BothReject, both_rej),
                    (Fate::SplitRejected, split_rej),
                    (Fate::SplitAccepted, split_acc),
                    (Fate::BothPass, 0),
                ],
                t * 7 + qa.len(),
            );
            let level = tax.qa_type(qa).map(|d| d.level.as_str());
            for (i, fate) in plan.into_iter().enumerate() {
                let reason = match (qa.as_str(), level) {
                    ("OA", _) => "ambiguous_options",
                    (_, Some("L3")) if i % 2 == 0 => "single_frame_solvable",
                    _ => "incorrect_answer",
                };
                let id = format!("{}_{}", clips[t * n + i].0, qa);
                rows.item(Stage::Question, &id, (&a, &b), fate, reason, k);
                k += 1;
            }
        }
    }
    flush(store, campaign, &mut rows).await?;
    Ok(accounts)
}

async fn flush(store: &Store, campaign: &str, rows: &mut Rows) -> Result<()> {
    let c = store.campaign(campaign).await?;
    let decisions = std::mem::take(&mut rows.decisions);
    store
        .import_decisions(&c, &decisions, Vec::new(), "paper-scale decisions")
        .await?;
    let resolutions = std::mem::take(&mut rows.resolutions);
    store
        .import_resolutions(&c, &resolutions, Vec::new(), "paper-scale resolutions")
        .await?;
    tracing::debug!(last = %to_rfc3339(rows.clock), "paper-scale rows applied");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paper_tables_agree_with_each_other() {
        let retained: i64 = T11_RETAINED.iter().map(|r| r.1).sum();
        let (bp, br, sa, sr) = T13_STAGE1;
        assert_eq!(retained, bp + sa, "1,085 retained");
        assert_eq!(1200 - retained, br + sr);
        let rejected: i64 = T12_REJECTED.iter().map(|c| c.2).sum();
        let (bp2, br2, sa2, sr2) = T13_STAGE2;
        assert_eq!(rejected, br2 + sr2, "93 questions rejected");
        assert_eq!(bp2 + br2 + sa2 + sr2, 9800);
        let tax = Taxonomy::vgenst();
        assert!(T12_REJECTED.iter().all(|(t, q, _)| tax.applies(t, q)));
    }

    #[test]
    fn apportion_keeps_the_total_and_the_caps() {
        let got = apportion(
            40,
            &[95, 93, 95, 90, 89, 94, 97, 87, 91, 86, 78, 90],
            &[100; 12],
        )
        .unwrap();
        assert_eq!(got.iter().sum::<i64>(), 40);
        let got = apportion(
            13,
            &[6, 2, 3, 8, 1, 18, 4, 12, 6, 3, 10, 16, 2, 2],
            &[6, 2, 3, 8, 1, 18, 4, 12, 6, 3, 10, 16, 2, 2],
        )
        .unwrap();
        assert_eq!(got.iter().sum::<i64>(), 13);
        assert!(apportion(5, &[1, 1], &[2, 2]).is_err());
    }

    #[test]
    fn fates_lay_out_every_count() {
        let f = fates(
            100,
            [
                (Fate::SplitAccepted, 3),
                (Fate::BothReject, 4),
                (Fate::SplitRejected, 2),
                (Fate::BothPass, 91),
            ],
            5,
        );
        assert_eq!(f.iter().filter(|x| **x == Fate::BothReject).count(), 4);
        assert_eq!(f.iter().filter(|x| **x == Fate::BothPass).count(), 91);
    }
}
