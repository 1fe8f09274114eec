//! The campaign's overview (per task and stage, against the target, with its charts)
//! and the items behind each of its numbers.

use crate::error::Error;
use crate::store::catalog::{StageProgress, TaskProgress};
use crate::store::sessions::Session;
use crate::web::pages::{Chrome, PageResult, render};
use crate::web::state::AppState;
use askama::Template;
use axum::Extension;
use axum::extract::{Path, State};

/// One row of the overview: a task (or the total) in both stages.
pub struct OverviewRow {
    pub task: String,
    /// The pair in force: who new and unstarted items go to.
    pub pair: String,
    /// The pairs that have reviewed the task's clips, with how many each.
    pub reviewed_by: String,
    pub s1: StageProgress,
    pub s2: StageProgress,
    /// Stage 1 items rejected, waiting for a new version.
    pub new_version: i64,
    pub retained: i64,
    pub s2_reviewed: i64,
    pub s2_retained: i64,
    pub s2_rejected: i64,
    /// Stage 1 items not decided yet: not started, one verdict in, or with an author.
    pub in_review: i64,
    /// Whether the task has its target of retained clips.
    pub reached: bool,
}

fn row(task: String, pair: String, p: &TaskProgress, target: i64) -> OverviewRow {
    let retained = p.stage1.both_pass + p.stage1.split_accepted + p.stage1.by_sample;
    OverviewRow {
        task,
        pair,
        reviewed_by: String::new(),
        in_review: p.stage1.unstarted + p.stage1.half_decided + p.stage1.split,
        reached: retained >= target,
        new_version: p.stage1.both_reject + p.stage1.split_rejected,
        retained,
        s2_reviewed: p.stage2.items
            - p.stage2.unstarted
            - p.stage2.half_decided
            - p.stage2.by_sample,
        s2_retained: p.stage2.both_pass + p.stage2.split_accepted + p.stage2.by_sample,
        s2_rejected: p.stage2.both_reject + p.stage2.split_rejected,
        s1: p.stage1.clone(),
        s2: p.stage2.clone(),
    }
}

fn add(a: &mut StageProgress, b: &StageProgress) {
    a.items += b.items;
    a.unstarted += b.unstarted;
    a.half_decided += b.half_decided;
    a.both_pass += b.both_pass;
    a.both_reject += b.both_reject;
    a.split += b.split;
    a.split_accepted += b.split_accepted;
    a.split_rejected += b.split_rejected;
    a.not_open += b.not_open;
    a.held += b.held;
    a.by_sample += b.by_sample;
}

/// Which columns of the overview's tables have a count somewhere: the others are
/// all zeros and are left out.
#[derive(Default)]
pub struct Shown {
    pub unstarted1: bool,
    pub half1: bool,
    pub both_pass1: bool,
    pub both_reject1: bool,
    pub split1: bool,
    pub split_accepted1: bool,
    pub split_rejected1: bool,
    pub new_version: bool,
    pub not_open2: bool,
    pub unstarted2: bool,
    pub half2: bool,
    pub both_pass2: bool,
    pub both_reject2: bool,
    pub split2: bool,
    pub dropped2: bool,
    pub held1: bool,
    pub by_sample1: bool,
    pub held2: bool,
    pub by_sample2: bool,
}

impl Shown {
    fn of(total: &OverviewRow) -> Shown {
        let (a, b) = (&total.s1, &total.s2);
        Shown {
            unstarted1: a.unstarted > 0,
            half1: a.half_decided > 0,
            both_pass1: a.both_pass > 0,
            both_reject1: a.both_reject > 0,
            split1: a.split > 0,
            split_accepted1: a.split_accepted > 0,
            split_rejected1: a.split_rejected > 0,
            new_version: total.new_version > 0,
            not_open2: b.not_open > 0,
            unstarted2: b.unstarted > 0,
            half2: b.half_decided > 0,
            both_pass2: b.both_pass > 0,
            both_reject2: b.both_reject > 0,
            split2: b.split > 0,
            dropped2: total.s2_rejected > 0,
            held1: a.held > 0,
            by_sample1: a.by_sample > 0,
            held2: b.held > 0,
            by_sample2: b.by_sample > 0,
        }
    }
}

/// The overview's two charts: per task, Stage 1 against the target and Stage 2.
fn progress_charts(rows: &[OverviewRow], target: i64) -> (String, String) {
    use crate::report::svg::{Series, stacked_bars};
    // The same four parts in both stages; the last is what a rejection leads to.
    let series = |rejected: &'static str| {
        [
            ("retained", "#1f7a4d"),
            ("waiting for an author", "#d49a00"),
            ("one verdict in", "#7aa2d6"),
            ("not started", "#c9ced8"),
            (rejected, "#b3361f"),
        ]
        .map(|(name, colour)| Series { name, colour })
    };
    let s1 = series("rejected, waiting for a new version");
    let s2 = series("dropped (rejected)");
    let r1: Vec<(String, Vec<i64>)> = rows
        .iter()
        .map(|r| {
            (
                r.task.clone(),
                vec![
                    r.retained,
                    r.s1.split,
                    r.s1.half_decided,
                    r.s1.unstarted,
                    r.new_version,
                ],
            )
        })
        .collect();
    let r2: Vec<(String, Vec<i64>)> = rows
        .iter()
        .map(|r| {
            (
                r.task.clone(),
                vec![
                    r.s2_retained,
                    r.s2.split,
                    r.s2.half_decided,
                    r.s2.unstarted,
                    r.s2_rejected,
                ],
            )
        })
        .collect();
    (
        stacked_bars(
            "Stage 1: clips per task (newest versions), against the target",
            &s1,
            &r1,
            Some(target),
        ),
        stacked_bars(
            "Stage 2: the open questions of retained clips, per task",
            &s2,
            &r2,
            None,
        ),
    )
}

#[derive(Template)]
#[template(path = "admin/overview.html")]
struct OverviewPage {
    chrome: Chrome,
    campaign: String,
    /// The name of the campaign's protocol (empty before the campaign exists).
    protocol: String,
    exists: bool,
    rows: Vec<OverviewRow>,
    total: OverviewRow,
    shown: Shown,
    chart1: String,
    chart2: String,
    splits_waiting: i64,
    target: i64,
    tasks_reached: usize,
    regeneration: Vec<crate::domain::records::RegenerationItem>,
    /// Whether the protocol reviews clips: without, no Stage 1 to show.
    clip_review: bool,
    /// Whether the protocol reviews some stratum by sample.
    sampled: bool,
}

pub async fn overview(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
) -> PageResult {
    let here = format!("/c/{c}/admin");
    let chrome = Chrome::new(&state, &session, Some(&c), &format!("Campaign {c}"), &here).await?;
    let campaign = match state.store.campaign(&c).await {
        Ok(campaign) => campaign,
        Err(Error::NotFound(_)) => {
            let empty = TaskProgress {
                task: String::new(),
                stage1: StageProgress::default(),
                stage2: StageProgress::default(),
            };
            return Ok(render(&OverviewPage {
                chrome,
                campaign: c,
                protocol: String::new(),
                exists: false,
                rows: vec![],
                total: row("Total".into(), String::new(), &empty, 0),
                shown: Shown::default(),
                chart1: String::new(),
                chart2: String::new(),
                splits_waiting: 0,
                target: 0,
                tasks_reached: 0,
                regeneration: vec![],
                clip_review: true,
                sampled: false,
            }));
        }
        Err(e) => return Err(e.into()),
    };
    let progress = state.store.progress(&campaign).await?;
    let tasks = state.store.tasks(&campaign).await?;
    let mut total = TaskProgress {
        task: "Total".into(),
        stage1: StageProgress::default(),
        stage2: StageProgress::default(),
    };
    let reviewing = state.store.reviewing_pairs(&campaign).await?;
    let mut rows = Vec::new();
    for p in &progress {
        add(&mut total.stage1, &p.stage1);
        add(&mut total.stage2, &p.stage2);
        let pair = tasks
            .iter()
            .find(|t| t.code == p.task)
            .map(|t| match (&t.rater1, &t.rater2) {
                (Some(a), Some(b)) => format!("{a} + {b}"),
                _ => "no pair".to_string(),
            })
            .unwrap_or_default();
        let mut r = row(p.task.clone(), pair, p, campaign.settings.target_per_task);
        r.reviewed_by = reviewing
            .iter()
            .filter(|(t, ..)| *t == p.task)
            .map(|(_, a, b, n)| format!("{a} + {b} ({n})"))
            .collect::<Vec<_>>()
            .join(", ");
        rows.push(r);
    }
    let splits_waiting = total.stage1.split + total.stage2.split;
    let target = campaign.settings.target_per_task;
    let tasks = i64::try_from(rows.len()).unwrap_or(0);
    let total = row("Total".into(), String::new(), &total, target * tasks);
    let (chart1, chart2) = progress_charts(&rows, target);
    let mut regeneration = state.store.regeneration_list(&campaign).await?;
    for g in &mut regeneration {
        g.reasons = g
            .reasons
            .iter()
            .map(|r| crate::report::svg::reason_label(&campaign.taxonomy, 1, r))
            .collect();
    }
    Ok(render(&OverviewPage {
        chrome,
        protocol: campaign.taxonomy.name.clone(),
        campaign: c,
        exists: true,
        tasks_reached: rows.iter().filter(|r| r.reached).count(),
        shown: Shown::of(&total),
        total,
        chart1,
        chart2,
        rows,
        splits_waiting,
        target,
        regeneration,
        clip_review: campaign.taxonomy.clip_review,
        sampled: !campaign.taxonomy.sampling.is_empty(),
    }))
}

/// The item list's filters (stage, task, group, an id prefix) and its page (`after`
/// or `before` a row's cursor, `domain::paging`).
#[derive(serde::Deserialize, Default)]
pub struct ItemsQuery {
    #[serde(default)]
    stage: String,
    #[serde(default)]
    task: String,
    #[serde(default)]
    show: String,
    /// A prefix of the item's id or its clip's.
    #[serde(default)]
    id: String,
    #[serde(flatten)]
    at: crate::web::pages::At,
}

#[derive(Template)]
#[template(path = "admin/items.html")]
struct ItemsPage {
    chrome: Chrome,
    campaign: String,
    heading: String,
    items: Vec<crate::store::catalog::ClassifiedItem>,
    pager: crate::web::pages::Pager,
    /// The form's values: (stage, task, show, id).
    stage: i64,
    task: String,
    show: String,
    id: String,
    /// The tasks of the campaign, for the form.
    tasks: Vec<String>,
    /// The groups: (name as in links, words).
    groups: Vec<(&'static str, &'static str)>,
}

/// The items behind one number of the overview: a stage, a task (or all) and a group
/// (`show`: open, not_open, unstarted, half_decided, both_pass, both_reject, split,
/// split_accepted, split_rejected, retained, rejected, in_review, reviewed).
pub async fn items(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(c): Path<String>,
    axum::extract::Query(q): axum::extract::Query<ItemsQuery>,
) -> PageResult {
    use crate::store::catalog::ItemGroup;
    let campaign = state.store.campaign(&c).await?;
    let stage = match q.stage.trim() {
        "" | "1" => crate::domain::Stage::Clip,
        "2" => crate::domain::Stage::Question,
        other => {
            return Err(
                Error::field("stage", format!("`{other}` is not a stage: use 1 or 2")).into(),
            );
        }
    };
    let show = match q.show.trim() {
        "" => "open",
        s => s,
    };
    let group = ItemGroup::parse(show).ok_or_else(|| {
        Error::field(
            "show",
            format!("`{show}` is not one of: {}", ItemGroup::NAMES.join(", ")),
        )
    })?;
    let task = q.task.trim();
    let tasks: Vec<String> = state
        .store
        .tasks(&campaign)
        .await?
        .into_iter()
        .map(|t| t.code)
        .collect();
    if !task.is_empty() && !tasks.iter().any(|t| t == task) {
        return Err(Error::NotFound(format!("no task `{task}` in campaign `{c}`")).into());
    }
    let task = (!task.is_empty()).then_some(task);
    let query = crate::store::catalog::ItemListQuery {
        task: task.map(str::to_string),
        group,
        prefix: crate::domain::paging::prefix("id", Some(&q.id)).map_err(Error::from)?,
        cursor: q.at.cursor()?,
        page: q.at.page()?,
        limit: crate::domain::paging::PAGE_ROWS,
    };
    let page = state.store.items_in_group(&campaign, stage, &query).await?;
    let path = format!("/c/{c}/admin/items");
    let stage_text = stage.number().to_string();
    let pager = crate::web::pages::Pager::new(
        &path,
        &[
            ("stage", stage_text.as_str()),
            ("task", task.unwrap_or("")),
            ("show", show),
            ("id", query.prefix.as_deref().unwrap_or("")),
        ],
        &page,
        |i| crate::domain::paging::Cursor::token(false, &i.item_id),
    )
    .jumps();
    let heading = format!(
        "Stage {}: {} {}{}",
        stage.number(),
        if stage == crate::domain::Stage::Clip {
            "clips"
        } else {
            "questions"
        },
        group.words(),
        task.map(|t| format!(", task {t}"))
            .unwrap_or_else(|| ", every task".into())
    );
    let here = format!("/c/{c}/admin");
    let chrome = Chrome::new(&state, &session, Some(&c), &heading, &here).await?;
    Ok(render(&ItemsPage {
        chrome,
        campaign: c,
        heading,
        items: page.rows,
        pager,
        stage: stage.number(),
        task: task.unwrap_or("").to_string(),
        show: show.to_string(),
        id: query.prefix.clone().unwrap_or_default(),
        tasks,
        groups: ItemGroup::NAMES
            .iter()
            .filter_map(|n| match ItemGroup::parse(n) {
                Some(ItemGroup::All) => Some((*n, "every item")),
                Some(g) => Some((*n, g.words())),
                None => None,
            })
            .collect(),
    }))
}
