//! `tandem demo`: a small campaign with twelve sample clips (one per task, made by
//! `make-clips.sh` and embedded in the binary), questions for them, an account for
//! every role with a generated password printed once, a few decisions already made so
//! that the author has a split to resolve, and the server running. `--protocol` builds
//! it on another protocol (the shipped examples or a file): the twelve clips go to its
//! tasks in turn, with questions of its QA types.

use crate::app::import_manifest;
use crate::auth::hash_password_limited as hash_blocking;
use crate::config::Config;
use crate::domain::protocol::Protocol;
use crate::domain::records::DecisionRow;
use crate::domain::taxonomy::Taxonomy;
use crate::domain::{Role, Stage, Verdict};
use crate::error::{Error, Result};
use crate::store::Store;
use crate::store::catalog::{Campaign, ItemGroup, ItemListQuery, TaskInfo};
use crate::{auth, clock};
use serde_json::{Value, json};

pub mod paper;
use std::path::Path;

/// The campaign the demo fills.
pub const CAMPAIGN: &str = crate::store::DEFAULT_CAMPAIGN;
const MARKER: &str = ".tandem-demo";

/// The sample clips, in task order.
pub const CLIPS: [&[u8]; 12] = [
    include_bytes!("clips/demo_00.webm"),
    include_bytes!("clips/demo_01.webm"),
    include_bytes!("clips/demo_02.webm"),
    include_bytes!("clips/demo_03.webm"),
    include_bytes!("clips/demo_04.webm"),
    include_bytes!("clips/demo_05.webm"),
    include_bytes!("clips/demo_06.webm"),
    include_bytes!("clips/demo_07.webm"),
    include_bytes!("clips/demo_08.webm"),
    include_bytes!("clips/demo_09.webm"),
    include_bytes!("clips/demo_10.webm"),
    include_bytes!("clips/demo_11.webm"),
];

/// The colour of the moving square in each clip (see make-clips.sh).
const COLOURS: [&str; 12] = [
    "red", "yellow", "white", "orange", "cyan", "lime", "magenta", "blue", "pink", "red", "yellow",
    "white",
];
const OTHER_COLOURS: [&str; 6] = ["green", "purple", "black", "brown", "grey", "gold"];

/// Rotates `options` so that the first one (the right answer) lands at `at`.
fn place(mut options: Vec<String>, at: usize) -> (Vec<String>, usize) {
    let n = options.len();
    let at = at % n;
    options.rotate_right(at);
    (options, at)
}

fn question(task: &str, qa: &str, clip: usize) -> Option<Value> {
    let colour = COLOURS[clip];
    let others: Vec<&str> = OTHER_COLOURS
        .iter()
        .copied()
        .filter(|c| *c != colour)
        .take(3)
        .collect();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let (text, opts): (&str, Vec<String>) = match qa {
        "OE" => (
            "Which object appears in the video?",
            vec![
                format!("a {colour} square"),
                "a green triangle".into(),
                "a purple circle".into(),
                "a black star".into(),
            ],
        ),
        "OA" => (
            "What colour is the moving square?",
            std::iter::once(colour)
                .chain(others)
                .map(String::from)
                .collect(),
        ),
        "FL" => (
            "Where is the grey bar in the frame?",
            s(&["bottom centre", "top left", "middle right", "top centre"]),
        ),
        "IT" => (
            "Is the square at the end of the clip the same one as at the start?",
            s(&["yes", "no"]),
        ),
        "AR" => (
            "What does the square do?",
            s(&[
                "it moves",
                "it stays still",
                "it disappears",
                "it splits in two",
            ]),
        ),
        "OC" => (
            "How many squares are in the video?",
            s(&["1", "2", "3", "4"]),
        ),
        "TO" => (
            "Which comes first?",
            s(&[
                "the square at its starting point",
                "the square at its end point",
            ]),
        ),
        "CM" => (
            "How does the camera move?",
            s(&[
                "it does not move",
                "it pans left",
                "it zooms in",
                "it tilts up",
            ]),
        ),
        "SL" => (
            "Where is the grey bar relative to the middle of the frame?",
            s(&["below it", "above it", "to its left", "to its right"]),
        ),
        "PT" => (
            "Standing at the grey bar and facing up the frame, is the top edge ahead or behind?",
            s(&["ahead", "behind"]),
        ),
        "CR" => (
            "If the square had not moved, how many squares would be visible at the end?",
            s(&["1", "0", "2", "3"]),
        ),
        "PR" => (
            "If the clip went on, where would the square most likely go next?",
            s(&[
                "further along its path",
                "back to where it started",
                "into the grey bar",
                "nowhere",
            ]),
        ),
        _ => return None,
    };
    Some(question_of(task, qa, clip, text, opts))
}

/// A question of a QA type the demo has no sample text for (another protocol's): about
/// what the clip shows, in the QA type's name.
fn other_question(task: &str, qa: &str, name: &str, clip: usize) -> Value {
    let colour = COLOURS[clip];
    let text = format!("{name}: which is true of the clip?");
    let opts = vec![
        format!("a {colour} square moves across the frame"),
        "the square stays where it is".into(),
        "a second square appears".into(),
        "the grey bar moves".into(),
    ];
    question_of(task, qa, clip, &text, opts)
}

/// A yes/no question asked in both directions (a QA type whose questions come in linked
/// pairs): the order of two events, then reversed, with the opposite answer.
fn linked_pair(task: &str, qa: &str, clip: usize) -> [Value; 2] {
    let colour = COLOURS[clip];
    let id = format!("{task}_D{clip:02}_{qa}");
    let pair = format!("{task}_D{clip:02}_P");
    [
        json!({
            "question_id": id,
            "qa_type": qa,
            "question": format!("Does the {colour} square start moving before it reaches the middle of the frame?"),
            "options": ["yes", "no"],
            "answer": 0,
            "pair": pair,
        }),
        json!({
            "question_id": format!("{id}R"),
            "qa_type": qa,
            "question": format!("Does the {colour} square reach the middle of the frame before it starts moving?"),
            "options": ["yes", "no"],
            "answer": 1,
            "pair": pair,
        }),
    ]
}

fn question_of(task: &str, qa: &str, clip: usize, text: &str, opts: Vec<String>) -> Value {
    let (options, answer) = place(opts, clip + qa.len());
    json!({
        "question_id": format!("{task}_D{clip:02}_{qa}"),
        "qa_type": qa,
        "question": text,
        "options": options,
        "answer": answer,
    })
}

/// The task of sample clip `i`: the taxonomy's tasks in turn (VGenST's twelve: one each).
fn task_of(taxonomy: &Taxonomy, i: usize) -> Result<&crate::domain::taxonomy::TaskDef> {
    let n = taxonomy.tasks.len();
    if n == 0 {
        return Err(Error::Invalid("the protocol has no task".into()));
    }
    Ok(&taxonomy.tasks[i % n])
}

/// Writes the sample clips and their manifest into `dir`; returns the manifest's path.
pub fn write_sample_manifest(dir: &Path, taxonomy: &Taxonomy) -> Result<std::path::PathBuf> {
    let videos = dir.join("videos");
    std::fs::create_dir_all(&videos)
        .map_err(|e| Error::io(format!("cannot create {}", videos.display()), e))?;
    let mut lines = String::new();
    for (i, bytes) in CLIPS.iter().enumerate() {
        let task = task_of(taxonomy, i)?;
        let file = format!("videos/{}_D{i:02}.webm", task.code);
        std::fs::write(dir.join(&file), bytes)
            .map_err(|e| Error::io(format!("cannot write {file}"), e))?;
        // One L1, one L2 and one L3 question where the task has them.
        let applicable = taxonomy
            .applicability
            .get(&task.code)
            .cloned()
            .unwrap_or_default();
        let mut questions = Vec::new();
        for level in &taxonomy.levels {
            if let Some(qa) = applicable
                .iter()
                .filter(|q| taxonomy.qa_type(q).is_some_and(|d| d.level == *level))
                .nth(i % 2)
                .or_else(|| {
                    applicable
                        .iter()
                        .find(|q| taxonomy.qa_type(q).is_some_and(|d| d.level == *level))
                })
            {
                if taxonomy.qa_type(qa).is_some_and(|d| d.paired) {
                    questions.extend(linked_pair(&task.code, qa, i));
                    continue;
                }
                questions.push(question(&task.code, qa, i).unwrap_or_else(|| {
                    let name = taxonomy
                        .qa_type(qa)
                        .map_or(qa.as_str(), |d| d.name.as_str());
                    other_question(&task.code, qa, name, i)
                }));
            }
        }
        let mut line = json!({
            "clip_id": format!("{}_D{i:02}", task.code),
            "task": task.code,
            "file": file,
            "theme": format!("{} square over a plain ground", COLOURS[i]),
            "generator": "ffmpeg lavfi (sample clip)",
            "scene_graph": {"objects": [{"id": "square", "colour": COLOURS[i]}, {"id": "bar", "colour": "grey"}]},
            "scenario": {"event": "the square moves across the frame"},
            "questions": questions,
        });
        for f in &taxonomy.fields {
            line[f.name.as_str()] = json!(field_value(&f.name, i));
        }
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    let manifest = dir.join("manifest.jsonl");
    std::fs::write(&manifest, lines)
        .map_err(|e| Error::io(format!("cannot write {}", manifest.display()), e))?;
    Ok(manifest)
}

/// A sample value of a manifest field the protocol declares (TUMTraffic's camera,
/// weather and time of day; any other field a numbered sample).
fn field_value(name: &str, i: usize) -> String {
    let pick = |values: &[&str]| values[i % values.len()].to_string();
    match name {
        "camera" => pick(&[
            "s110_camera_basler_south1",
            "s110_camera_basler_north",
            "s110_camera_basler_south2",
        ]),
        "weather" => pick(&["clear", "rain", "fog"]),
        "time_of_day" => pick(&["day", "dusk", "night"]),
        other => format!("{other} {}", i + 1),
    }
}

/// The known clips' videos: a square that jumps for two frames, and a steady one; each
/// unlike every sample clip, so that no known clip repeats the real one before it.
pub const KNOWN_CLIPS: [&[u8]; 2] = [
    include_bytes!("clips/known_flawed.webm"),
    include_bytes!("clips/known_sound.webm"),
];

/// Two known clips of the live queue, written beside the sample manifest: the first
/// task's sample clip again, twice, under that task's next ids (ids like the real
/// ones'), each with a video of its own: one the lab knows is flawed, one it knows is
/// sound. None without clip review.
pub fn write_known_manifest(
    dir: &Path,
    taxonomy: &Taxonomy,
    sample: &Path,
) -> Result<Option<std::path::PathBuf>> {
    if !taxonomy.clip_review {
        return Ok(None);
    }
    let written = std::fs::read_to_string(sample)
        .map_err(|e| Error::io(format!("cannot read {}", sample.display()), e))?;
    let known = [
        json!({"verdict": "reject", "reasons": [flaw_reason(taxonomy)?],
               "note": "the square jumps between two frames"}),
        json!({"verdict": "valid", "note": "a steady square on a plain ground"}),
    ];
    let n = CLIPS.len();
    let first = written
        .lines()
        .next()
        .ok_or_else(|| Error::Invalid("the demo's manifest is empty".into()))?;
    let mut lines = String::new();
    for (i, (k, video)) in known.into_iter().zip(KNOWN_CLIPS).enumerate() {
        // The first task's next clips: their ids, their videos' names, their questions'.
        let to = format!("_D{:02}", i + n);
        let mut copy: Value = serde_json::from_str(&first.replace("_D00", &to))
            .map_err(|e| Error::fault("the demo's manifest, line 1", e))?;
        let file = copy["file"].as_str().unwrap_or_default().to_string();
        std::fs::write(dir.join(&file), video)
            .map_err(|e| Error::io(format!("cannot write {file}"), e))?;
        copy["known"] = k;
        lines.push_str(&copy.to_string());
        lines.push('\n');
    }
    let manifest = dir.join("known.jsonl");
    std::fs::write(&manifest, lines)
        .map_err(|e| Error::io(format!("cannot write {}", manifest.display()), e))?;
    Ok(Some(manifest))
}

/// The stage the demo's flaws are found in: clip review, or question review in a
/// protocol without it.
fn first_stage(taxonomy: &Taxonomy) -> Stage {
    if taxonomy.clip_review {
        Stage::Clip
    } else {
        Stage::Question
    }
}

/// The reason the demo's flawed items are rejected for: VGenST-Bench's "generation
/// artifact", or the protocol's first reason of the stage that needs no note and
/// applies to every level.
fn flaw_reason(taxonomy: &Taxonomy) -> Result<String> {
    let stage = first_stage(taxonomy);
    let mut reasons = taxonomy.reasons_of(stage);
    taxonomy
        .reason(stage, "generation_artifact")
        .or_else(|| reasons.find(|r| !r.note && r.levels.is_empty()))
        .map(|r| r.code.clone())
        .ok_or_else(|| {
            Error::Invalid(format!(
                "protocol `{}` has no Stage {stage} reason without a note for every level, for the demo's flawed item",
                taxonomy.name
            ))
        })
}

/// The question a calibration clip is known by in a protocol without clip review: one
/// of a QA type of its task whose questions are not linked in pairs.
fn calibration_question(taxonomy: &Taxonomy, task: &str, i: usize) -> Result<Value> {
    let qa = taxonomy
        .applicability
        .get(task)
        .into_iter()
        .flatten()
        .find(|q| taxonomy.qa_type(q).is_some_and(|d| !d.paired))
        .ok_or_else(|| {
            Error::Invalid(format!(
                "task `{task}` of protocol `{}` has no QA type without linked pairs for the demo's calibration question",
                taxonomy.name
            ))
        })?;
    let mut q = question(task, qa, i).unwrap_or_else(|| {
        let name = taxonomy
            .qa_type(qa)
            .map_or(qa.as_str(), |d| d.name.as_str());
        other_question(task, qa, name, i)
    });
    q["question_id"] = json!(format!("CAL_{i}_{qa}"));
    Ok(q)
}

/// Three held-out calibration clips with known verdicts (the sample videos again, under
/// their own ids): two clean ones and one whose square is said to flicker.
pub fn write_calibration_manifest(dir: &Path, taxonomy: &Taxonomy) -> Result<std::path::PathBuf> {
    let videos = dir.join("calibration");
    std::fs::create_dir_all(&videos)
        .map_err(|e| Error::io(format!("cannot create {}", videos.display()), e))?;
    let known = [
        json!({"verdict": "valid", "note": "a steady square on a plain ground"}),
        json!({"verdict": "reject", "reasons": [flaw_reason(taxonomy)?], "note": "the square flickers near the end of the clip",
               "flaw": {"seconds": [2.25, 3.0]}}),
        json!({"verdict": "valid", "note": "the motion is smooth and the bar stays put"}),
    ];
    let mut lines = String::new();
    for (i, k) in known.iter().enumerate() {
        let task = task_of(taxonomy, i)?;
        let file = format!("calibration/CAL_{i}.webm");
        std::fs::write(dir.join(&file), CLIPS[i])
            .map_err(|e| Error::io(format!("cannot write {file}"), e))?;
        let mut k = k.clone();
        if !taxonomy.clip_review && i == 1 {
            k["note"] = json!("the clip does not show what the question asks");
            if let Some(o) = k.as_object_mut() {
                o.remove("flaw");
            }
        }
        let mut line = json!({
            "clip_id": format!("CAL_{i}"),
            "task": task.code,
            "file": file,
            "theme": "calibration sample",
            "scene_graph": {}, "scenario": {},
            "questions": [],
            "calibration": k,
        });
        // Without clip review a calibration clip is known by its question's verdict.
        if !taxonomy.clip_review {
            let mut q = calibration_question(taxonomy, &task.code, i)?;
            q["calibration"] = k.clone();
            line["questions"] = json!([q]);
            line["calibration"] = Value::Null;
        }
        for f in &taxonomy.fields {
            line[f.name.as_str()] = json!(field_value(&f.name, i));
        }
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    let manifest = dir.join("calibration.jsonl");
    std::fs::write(&manifest, lines)
        .map_err(|e| Error::io(format!("cannot write {}", manifest.display()), e))?;
    Ok(manifest)
}

/// A small blind study: three comparison sets of four clips, one per source (the
/// sample videos stand in for the real benchmarks' clips).
pub fn write_study_sets(dir: &Path) -> Result<std::path::PathBuf> {
    let videos = dir.join("study");
    std::fs::create_dir_all(&videos)
        .map_err(|e| Error::io(format!("cannot create {}", videos.display()), e))?;
    let sources = [
        ("PerceptionTest", "real"),
        ("EgoExoBench", "real"),
        ("VSI-Bench", "real"),
        ("VGenST", "fake"),
    ];
    let mut lines = String::new();
    for set in 0..3 {
        let mut clips = Vec::new();
        for (k, (source, truth)) in sources.iter().enumerate() {
            let file = format!("study/{source}_{set}.webm");
            std::fs::write(dir.join(&file), CLIPS[(set * 4 + k) % CLIPS.len()])
                .map_err(|e| Error::io(format!("cannot write {file}"), e))?;
            clips.push(json!({"clip_id": format!("{source}_{set}"), "source": source, "truth": truth, "file": file}));
        }
        lines.push_str(&json!({"set_id": format!("S{set}"), "clips": clips}).to_string());
        lines.push('\n');
    }
    let path = dir.join("study.jsonl");
    std::fs::write(&path, lines)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
    Ok(path)
}

/// The demo's accounts: (name, role, pool index).
pub const ACCOUNTS: [(&str, Role, Option<i64>); 7] = [
    ("admin", Role::Admin, None),
    ("val00", Role::Validator, Some(0)),
    ("val01", Role::Validator, Some(1)),
    ("val02", Role::Validator, Some(2)),
    ("val03", Role::Validator, Some(3)),
    ("author", Role::Author, None),
    ("part1", Role::Participant, None),
];

/// Clears `data_dir` (which must be new, empty or an earlier demo's) and opens a fresh
/// store in it.
pub async fn fresh(data_dir: &Path, database_url: Option<String>) -> Result<(Config, Store)> {
    if data_dir.exists() {
        let is_demo = data_dir.join(MARKER).exists();
        let empty = std::fs::read_dir(data_dir)
            .map_err(|e| Error::io(format!("cannot read {}", data_dir.display()), e))?
            .next()
            .is_none();
        if !is_demo && !empty {
            return Err(Error::Invalid(format!(
                "{} exists and is not a demo folder; pick another with --data-dir",
                data_dir.display()
            )));
        }
        std::fs::remove_dir_all(data_dir)
            .map_err(|e| Error::io(format!("cannot clear {}", data_dir.display()), e))?;
    }
    let config = Config::new(data_dir, database_url)?;
    std::fs::write(
        data_dir.join(MARKER),
        "made by `tandem demo`; deleted on its next run\n",
    )
    .map_err(|e| Error::io("cannot mark the demo folder", e))?;
    let store = crate::store::Store::open(&config.database_url).await?;
    if store.backend() == crate::store::Backend::Postgres && !store.users().await?.is_empty() {
        store.close().await;
        return Err(Error::Invalid(
            "the demo builds its campaign in an empty database, and this PostgreSQL database has accounts; give it a new one (for example `createdb tandem_demo`)".into(),
        ));
    }
    Ok((config, store))
}

/// Builds the small demo campaign in `data_dir` and returns the opened configuration
/// and store with the accounts' passwords and tokens.
pub async fn build(
    data_dir: &Path,
    database_url: Option<String>,
) -> Result<(Config, Store, Vec<(String, Role, String, String)>)> {
    build_with(data_dir, database_url, None).await
}

/// [`build`] on a protocol of the caller's (VGenST-Bench's when `None`).
pub async fn build_with(
    data_dir: &Path,
    database_url: Option<String>,
    protocol: Option<&Protocol>,
) -> Result<(Config, Store, Vec<(String, Role, String, String)>)> {
    let (config, store) = fresh(data_dir, database_url).await?;
    let taxonomy = match protocol {
        Some(p) => p.taxonomy.clone(),
        None => Taxonomy::vgenst(),
    };
    if let Some(p) = protocol {
        store.create_campaign(CAMPAIGN, p).await?;
    }
    // The accounts first: a protocol that pairs per clip spreads the clips over the
    // whole pool as they are imported.
    let mut accounts = Vec::new();
    for (name, role, index) in ACCOUNTS {
        let password = auth::generate_password()?;
        let hash = hash_blocking(password.clone()).await?;
        let campaign = (role != Role::Admin).then(|| CAMPAIGN.to_string());
        store.add_user(name, role, &hash, campaign, index).await?;
        let token = store.create_token(name, "demo").await?;
        accounts.push((name.to_string(), role, password, token));
    }
    let source = data_dir.join("sample-clips");
    let manifest = write_sample_manifest(&source, &taxonomy)?;
    import_manifest(&store, &config, CAMPAIGN, &manifest).await?;
    let calibration = write_calibration_manifest(&source, &taxonomy)?;
    import_manifest(&store, &config, CAMPAIGN, &calibration).await?;
    let known = write_known_manifest(&source, &taxonomy, &manifest)?;
    if let Some(known) = &known {
        import_manifest(&store, &config, CAMPAIGN, known).await?;
    }
    let sets = write_study_sets(&source)?;
    let checked = crate::io::study::check_sets(&sets, None, &crate::io::limits::Limits::default())?;
    crate::app::import_study(&store, &config, CAMPAIGN, &checked, None).await?;
    let campaign = store.campaign(CAMPAIGN).await?;
    store
        .set_settings(
            &campaign,
            crate::store::catalog::Settings {
                calibration_min_items: 3,
                ..campaign.settings
            },
        )
        .await?;

    // A few clips already reviewed: two pass, one split for the author, one rejected.
    let campaign = store.campaign(CAMPAIGN).await?;
    let tasks = store.tasks(&campaign).await?;
    let flaw = flaw_reason(&taxonomy)?;
    let stage = first_stage(&taxonomy);
    // The items decided: the clips, or without clip review their first questions.
    let written = std::fs::read_to_string(&manifest)
        .map_err(|e| Error::io(format!("cannot read {}", manifest.display()), e))?;
    let first_questions: Vec<String> = written
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l)
                .ok() // the demo wrote these lines itself a moment ago
                .and_then(|v| {
                    v["questions"][0]["question_id"]
                        .as_str()
                        .map(str::to_string)
                })
                .unwrap_or_default()
        })
        .collect();
    // Each item's fixed pair (paired per clip, fixed when it entered review), else its
    // task's pair in force.
    let open = store
        .items_in_group(&campaign, stage, &ItemListQuery::whole(ItemGroup::Open))
        .await?
        .rows;
    let now = clock::now_micros();
    let mut rows = Vec::new();
    for (k, verdicts) in [
        (8, [Verdict::Valid, Verdict::Valid]),
        (9, [Verdict::Valid, Verdict::Valid]),
        (10, [Verdict::Valid, Verdict::Reject]),
        (11, [Verdict::Reject, Verdict::Reject]),
    ] {
        let code = &task_of(&taxonomy, k)?.code;
        let Some(task) = tasks.iter().find(|t| t.code == *code) else {
            continue;
        };
        let item_id = match stage {
            Stage::Clip => format!("{}_D{k:02}", task.code),
            Stage::Question => first_questions.get(k).cloned().unwrap_or_default(),
        };
        let fixed = open
            .iter()
            .find(|i| i.item_id == item_id)
            .and_then(|i| i.rater1.as_ref().zip(i.rater2.as_ref()));
        let (Some(r1), Some(r2)) = fixed
            .map_or((task.rater1.as_ref(), task.rater2.as_ref()), |(a, b)| {
                (Some(a), Some(b))
            })
        else {
            continue;
        };
        for (who, v) in [r1, r2].into_iter().zip(verdicts) {
            rows.push(DecisionRow {
                time_measure: None,
                line: rows.len() + 2,
                stage,
                item_id: item_id.clone(),
                validator: who.clone(),
                verdict: v,
                reasons: if v == Verdict::Reject {
                    vec![flaw.clone()]
                } else {
                    vec![]
                },
                note: if v == Verdict::Reject && stage == Stage::Clip {
                    "the square flickers in the last second".into()
                } else if v == Verdict::Reject {
                    "the clip does not show what the question asks".into()
                } else {
                    String::new()
                },
                decided_at: now,
                time_spent_ms: Some(8000),
                clip_version: None,
            });
        }
    }
    if known.is_some() {
        known_decisions(&taxonomy, &tasks, &flaw, now, &mut rows)?;
    }
    store
        .import_decisions(&campaign, &rows, Vec::new(), "demo decisions")
        .await?;
    // The questions of one passed clip kept too, so that the human baseline has
    // something to ask: set up for the browser, with a consent text.
    if stage == Stage::Clip {
        keep_questions_of_one_clip(&store, &campaign, &taxonomy, &tasks, now).await?;
    }
    set_up_baseline(&store, &config, &campaign).await?;
    Ok((config, store, accounts))
}

/// The known flawed clip decided by its task's pair: one caught it, one missed it. (The
/// known sound one waits in their queue among the real clips.)
fn known_decisions(
    taxonomy: &Taxonomy,
    tasks: &[TaskInfo],
    flaw: &str,
    now: i64,
    rows: &mut Vec<DecisionRow>,
) -> Result<()> {
    let task = task_of(taxonomy, 0)?;
    let pair = tasks
        .iter()
        .find(|t| t.code == task.code)
        .and_then(|t| t.rater1.clone().zip(t.rater2.clone()));
    if let Some((r1, r2)) = pair {
        for (who, v) in [(r1, Verdict::Reject), (r2, Verdict::Valid)] {
            rows.push(DecisionRow {
                time_measure: None,
                line: rows.len() + 2,
                stage: Stage::Clip,
                item_id: format!("{}_D{:02}", task.code, CLIPS.len()),
                validator: who,
                verdict: v,
                reasons: if v == Verdict::Reject {
                    vec![flaw.to_string()]
                } else {
                    vec![]
                },
                note: String::new(),
                decided_at: now,
                time_spent_ms: Some(8000),
                clip_version: None,
            });
        }
    }
    Ok(())
}

/// Both validators pass every question of the demo's ninth clip (the baseline's).
async fn keep_questions_of_one_clip(
    store: &Store,
    campaign: &Campaign,
    taxonomy: &Taxonomy,
    tasks: &[TaskInfo],
    now: i64,
) -> Result<()> {
    let Ok(task) = task_of(taxonomy, 8) else {
        return Ok(());
    };
    let clip = format!("{}_D08", task.code);
    let open = store
        .items_in_group(
            campaign,
            Stage::Question,
            &ItemListQuery::whole(ItemGroup::Open),
        )
        .await?
        .rows;
    let mut kept = Vec::new();
    let pair = tasks
        .iter()
        .find(|t| t.code == task.code)
        .and_then(|t| t.rater1.clone().zip(t.rater2.clone()));
    for item in open.iter().filter(|i| i.clip_id == clip) {
        // Its fixed pair, else its task's pair in force.
        let Some((r1, r2)) = item
            .rater1
            .clone()
            .zip(item.rater2.clone())
            .or(pair.clone())
        else {
            continue;
        };
        for who in [&r1, &r2] {
            kept.push(DecisionRow {
                time_measure: None,
                line: kept.len() + 2,
                stage: Stage::Question,
                item_id: item.item_id.clone(),
                validator: who.clone(),
                verdict: Verdict::Valid,
                reasons: vec![],
                note: String::new(),
                decided_at: now,
                time_spent_ms: Some(8000),
                clip_version: None,
            });
        }
    }
    store
        .import_decisions(campaign, &kept, Vec::new(), "demo decisions, Stage 2")
        .await?;
    Ok(())
}

/// The human baseline set up for the browser, with a consent text, when the campaign
/// has questions for it.
async fn set_up_baseline(store: &Store, config: &Config, campaign: &Campaign) -> Result<()> {
    if !crate::app::baseline::questions(store, campaign)
        .await?
        .0
        .is_empty()
    {
        crate::app::baseline::setup(store, config, campaign, 10, Some(2026)).await?;
        store
            .set_part_settings(
                campaign,
                crate::domain::Part::Baseline,
                &crate::store::invitations::PartSettings {
                    consent: "This demo asks a few questions about short videos. Nothing you answer leaves this machine.".into(),
                    keep_external_id: false,
                },
            )
            .await?;
    }
    Ok(())
}

/// `tandem demo --paper-scale`: the reconstruction of the paper's QC, then serve.
async fn run_paper_scale(data_dir: &Path, database_url: Option<String>, bind: &str) -> Result<()> {
    let (config, store) = fresh(data_dir, database_url).await?;
    println!(
        "Building the paper-scale campaign: 1,200 clips, 9,800 questions, about 22,000 decisions..."
    );
    let started = std::time::Instant::now();
    let source = data_dir.join("sample-clips");
    let video = |t: usize, _: &str| CLIPS[t % CLIPS.len()].to_vec();
    let accounts = paper::build(&store, &config, CAMPAIGN, &source, &video).await?;
    println!("built in {:.1} s", started.elapsed().as_secs_f64());
    let (listener, addr) = crate::server::listen(bind).await?;
    let base = format!("http://{addr}");
    println!();
    println!("Tandem demo at paper scale: the decisions follow Tables 11-13 of VGenST-Bench");
    println!("data folder: {}", config.data_dir.display());
    println!("serving at:  {base}");
    println!();
    println!("Accounts (passwords are shown only now):");
    for (name, role, password) in &accounts {
        println!("  {name:<8} {:<10} password {password}", role.as_str());
    }
    println!();
    println!(
        "Sign in as admin and open {base}/c/{CAMPAIGN}/stats for the tables and plots, or run"
    );
    println!(
        "  cargo run --release -- --data-dir {} stats --json",
        config.data_dir.display()
    );
    println!();
    println!("Press Ctrl-C to stop.");
    crate::app::media::warm_up(&store, &config);
    crate::server::serve_until_stopped(listener, config, store).await
}

/// `tandem demo`: build, print the logins, serve.
/// The API lines the demo prints for val00, in the order they work: the calibration
/// status, the next calibration item, a verdict on it (each answer names the next),
/// then the queue, which answers 403 until calibration is passed.
pub fn api_lines(
    base: &str,
    token: &str,
    stage: Stage,
    next: Option<(Stage, &str)>,
) -> Vec<String> {
    let api = format!("{base}/api/v1/campaigns/{CAMPAIGN}");
    let auth = format!("curl -H 'Authorization: Bearer {token}'");
    let mut out = vec![
        "The same through the API, as val00: calibration first (the queue answers 403 until it is passed):"
            .to_string(),
        format!("  {auth} {api}/calibration"),
    ];
    if let Some((s, item)) = next {
        let s = s.number();
        out.push(format!("  {auth} {api}/calibration/{s}/{item}"));
        out.push(format!(
            "  {auth} -H 'Content-Type: application/json' -d '{{\"verdict\": \"valid\"}}' {api}/calibration/{s}/{item}/verdict"
        ));
    }
    out.push(
        "Each answer names the next calibration item and the known verdict; once calibration is passed, the queue:"
            .to_string(),
    );
    out.push(format!("  {auth} {api}/queue/{}", stage.number()));
    out
}

pub async fn run(
    data_dir: &Path,
    database_url: Option<String>,
    bind: &str,
    paper_scale: bool,
    protocol: Option<Protocol>,
) -> Result<()> {
    if paper_scale {
        return run_paper_scale(data_dir, database_url, bind).await;
    }
    let (config, store, accounts) = build_with(data_dir, database_url, protocol.as_ref()).await?;
    let (listener, addr) = crate::server::listen(bind).await?;
    let base = format!("http://{addr}");
    println!();
    let name = protocol
        .as_ref()
        .map_or("VGenST-Bench", |p| p.name.as_str());
    println!(
        "Tandem demo: 12 sample clips with their questions in campaign `{CAMPAIGN}`, protocol `{name}`"
    );
    println!("data folder: {}", config.data_dir.display());
    println!("serving at:  {base}");
    println!();
    println!("Accounts (passwords and tokens are shown only now):");
    for (name, role, password, token) in &accounts {
        println!(
            "  {name:<7} {:<11} password {password}  token {token}",
            role.as_str()
        );
    }
    println!();
    println!("Open {base}/ in a browser and sign in:");
    let taxonomy = protocol
        .as_ref()
        .map_or_else(Taxonomy::vgenst, |p| p.taxonomy.clone());
    let stage = first_stage(&taxonomy);
    let what = if stage == Stage::Clip {
        "clip"
    } else {
        "question"
    };
    println!("  as val00 (validator): first three calibration {what}s, each followed by its known");
    println!(
        "    verdict (2 of 3 agreeing is too few: then sign in as admin, Calibration, another round)."
    );
    let last_key = taxonomy.reasons_of(stage).map(|r| r.key).max().unwrap_or(1);
    println!(
        "    Then the review: Enter opens the next {what}; V valid, R reject, 1-{last_key} reasons,"
    );
    println!(
        "    N note, Enter saves and moves on; Space plays, arrows step one frame (Shift: ten)."
    );
    if stage == Stage::Clip {
        println!("    Stage 2 (questions) opens for the clips both validators pass.");
    } else {
        println!("    The protocol reviews no clips: every question is in Stage 2 from the start.");
    }
    if !taxonomy.sampling.is_empty() {
        println!(
            "    Some items are reviewed by sample: they wait until the admin's Sampled review page"
        );
        println!(
            "    (or `tandem sampling run --campaign {CAMPAIGN}`) draws a lot and queues its sample."
        );
    }
    println!(
        "  as author: one split is waiting in Stage {stage}; A accept or R reject, a note, Enter."
    );
    println!("  as part1 (participant): the blind study, three sets of four clips labelled A-D;");
    println!(
        "    Tab through the answers, digits rank (1 = best), r real, g generated, Enter saves."
    );
    println!(
        "  as admin: the overview per task and stage, statistics, pairs, calibration, the audit"
    );
    println!(
        "    trail, the study and its results (Tables 14, 15), the participants and their links,"
    );
    println!("    the baseline's results, accounts, import and exports.");
    let campaign = store.campaign(CAMPAIGN).await?;
    if store.baseline(&campaign).await?.is_some() {
        let links =
            crate::app::baseline::invite(&store, &campaign, crate::domain::Part::Baseline, 1)
                .await?;
        for l in links {
            println!(
                "  as a baseline participant: open {base}{} (no password: the link is",
                l.path
            );
            println!(
                "    the credential), read the consent, Enter begins; a letter picks an answer,"
            );
            println!("    Enter saves; each question comes once per rotation of its options.");
        }
    }
    if let Some((_, _, _, token)) = accounts.iter().find(|a| a.0 == "val00") {
        let campaign = store.campaign(CAMPAIGN).await?;
        let next = match store.user_by_name("val00").await? {
            Some(u) => store.calibration_status(&campaign, &u).await?.next,
            None => None,
        };
        println!();
        for line in api_lines(
            &base,
            token,
            stage,
            next.as_ref().map(|n| (n.stage, n.item.as_str())),
        ) {
            println!("{line}");
        }
    }
    println!();
    println!("Press Ctrl-C to stop.");
    crate::app::media::warm_up(&store, &config);
    crate::server::serve_until_stopped(listener, config, store).await
}
