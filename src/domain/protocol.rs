//! A benchmark's QC protocol, read from a TOML file: its tasks (with free attributes),
//! its QA types and their levels, and which QA types apply to which task. VGenST-Bench's
//! ships as `protocols/vgenst.toml`, embedded, and is the default.
//!
//! ```toml
//! [protocol]
//! name = "GLIMPSE-like"
//! version = 1
//! target_per_task = 50                  # optional: retained clips wanted per task
//! export_variants = false               # optional: no V1/V2/V3 in the export
//! clip_review = false                   # optional: no Stage 1 (then no stage = 1 reasons)
//! pairing = "least_open_work"           # optional: or "task_pairs" (the default)
//! levels = ["L1", "L2", "L3"]            # optional: the QA levels (these by default)
//!
//! [[task]]
//! code = "TRJ"
//! name = "Trajectory Analysis"
//! attributes = { source = "real" }      # free: any names, text values
//! qa_types = ["YN", "MC"]               # the QA types that apply to the task
//!
//! [[qa_type]]
//! code = "YN"
//! name = "Yes/No"
//! level = "L1"                          # one of the protocol's levels
//! paired = true                         # optional: its questions come in linked pairs
//!
//! [[reason]]                            # each stage has at least one
//! stage = 2                             # 1: clip review, 2: question review
//! code = "single_frame_solvable"        # as stored and sent by the API
//! label = "Single-frame solvable"       # as shown
//! key = 3                               # its digit on the review page, 1-9, one per stage
//! levels = ["L3"]                       # optional (Stage 2): the levels it applies to
//! note = false                          # optional: whether it needs a note
//!
//! [[sampling]]                          # optional: a stratum reviewed by sample
//! stage = 2                             # 1: a task's clips; 2: a task's questions
//! task = "TRJ"                          # optional: every task when left out
//! qa_type = "YN"                        # optional (Stage 2): every QA type when left out
//! aql = 0.02                            # the plan: the four risks ...
//! rql = 0.10
//! alpha = 0.05
//! beta = 0.10
//! # p = 0.05                            # ... or no defect shows the rate below p
//! # n = 50                              # ... or the lab's own n and c
//! # c = 1
//! confidence = 0.95                     # optional: of each lot's upper bound
//! ```
//!
//! A file is checked whole: every problem comes back at once, each with its line and
//! field; nothing of a file with a problem is used. Two reviewers per item and the
//! intersection rule are Tandem's invariants, not settings of a protocol. A protocol
//! reviews clips, then their questions, or (`clip_review = false`) the questions alone;
//! a stratum is reviewed whole or by sample (`domain::sampling`: a rule applies to the
//! items imported while it is in force). `pairing` chooses each item's two reviewers
//! (`domain::pairing`): the task pairs of the pool (task t to pool indexes t and t+1,
//! mod n; the default, VGenST-Bench's), or per clip the two validators with the least
//! open work when it enters review.

use super::pairing::Pairing;
use super::sampling::{PlanSpec, SamplingRule};
use super::taxonomy::{QaTypeDef, ReasonDef, TaskDef, Taxonomy};
use super::{Level, Stage};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use toml::Spanned;

/// The VGenST-Bench protocol, as shipped.
pub const VGENST: &str = include_str!("../../protocols/vgenst.toml");

/// The protocols that ship with Tandem, by name: VGenST-Bench's and the examples'
/// (`examples/protocols/`), which `tandem demo --protocol NAME` runs on.
pub const SHIPPED: [(&str, &str); 3] = [
    ("vgenst", VGENST),
    (
        "glimpse",
        include_str!("../../examples/protocols/glimpse.toml"),
    ),
    (
        "tumtraffic",
        include_str!("../../examples/protocols/tumtraffic.toml"),
    ),
];

/// The shipped protocol named `name`, if there is one.
pub fn shipped(name: &str) -> Option<&'static str> {
    SHIPPED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// The most tasks, and the most QA types, a protocol may declare.
pub const MAX_ENTRIES: usize = 1000;

/// A checked protocol.
#[derive(Debug, Clone, PartialEq)]
pub struct Protocol {
    pub name: String,
    pub version: u32,
    pub description: String,
    /// Retained clips wanted per task, for a campaign created with it (the admin may
    /// change it later); none: Tandem's default, 100.
    pub target_per_task: Option<i64>,
    pub taxonomy: Taxonomy,
}

/// One problem of a protocol file: where (line, from 1; the field's path, such as
/// `task[3].qa_types[1]`) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolProblem {
    pub line: usize,
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for ProtocolProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "line {}: {}", self.line, self.message)
        } else {
            write!(f, "line {}, {}: {}", self.line, self.field, self.message)
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    protocol: Spanned<RawHeader>,
    #[serde(default)]
    task: Vec<Spanned<RawTask>>,
    #[serde(default)]
    qa_type: Vec<Spanned<RawQaType>>,
    #[serde(default)]
    reason: Vec<Spanned<RawReason>>,
    #[serde(default)]
    sampling: Vec<Spanned<RawSampling>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSampling {
    stage: Spanned<i64>,
    task: Option<Spanned<String>>,
    qa_type: Option<Spanned<String>>,
    aql: Option<Spanned<f64>>,
    rql: Option<Spanned<f64>>,
    alpha: Option<Spanned<f64>>,
    beta: Option<Spanned<f64>>,
    p: Option<Spanned<f64>>,
    n: Option<Spanned<i64>>,
    c: Option<Spanned<i64>>,
    confidence: Option<Spanned<f64>>,
}

/// The largest sample a fixed plan may ask for.
pub const MAX_SAMPLE: i64 = 1_000_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReason {
    stage: Spanned<i64>,
    code: Spanned<String>,
    label: Spanned<String>,
    key: Spanned<i64>,
    #[serde(default)]
    levels: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    note: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHeader {
    name: Spanned<String>,
    version: Spanned<i64>,
    #[serde(default)]
    description: String,
    target_per_task: Option<Spanned<i64>>,
    #[serde(default = "yes")]
    export_variants: bool,
    #[serde(default)]
    clip_review: Option<Spanned<bool>>,
    pairing: Option<Spanned<String>>,
    levels: Option<Spanned<Vec<Spanned<String>>>>,
}

fn yes() -> bool {
    true
}

/// The largest target per task a protocol may set.
const MAX_TARGET: i64 = 1_000_000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    code: Spanned<String>,
    name: Spanned<String>,
    #[serde(default)]
    attributes: BTreeMap<String, Spanned<String>>,
    qa_types: Spanned<Vec<Spanned<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQaType {
    code: Spanned<String>,
    name: Spanned<String>,
    level: Spanned<String>,
    #[serde(default)]
    paired: bool,
}

/// The line (from 1) of a byte offset in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// Task attributes with a meaning of their own: Table 11 groups VGenST's tasks by them.
const AXES: [&str; 3] = ["scale", "perspective", "dynamics"];

/// Reads and checks a protocol file's text.
pub fn parse(text: &str) -> Result<Protocol, Vec<ProtocolProblem>> {
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| line_of(text, s.start));
        vec![ProtocolProblem {
            line,
            field: String::new(),
            message: e.message().trim().to_string(),
        }]
    })?;
    let mut problems = Vec::new();
    let mut push = |span: std::ops::Range<usize>, field: String, message: String| {
        problems.push(ProtocolProblem {
            line: line_of(text, span.start),
            field,
            message,
        });
    };

    let header = raw.protocol.get_ref();
    let name = header.name.get_ref().trim().to_string();
    if name.is_empty() {
        push(
            header.name.span(),
            "protocol.name".into(),
            "is empty".into(),
        );
    }
    let version = match u32::try_from(*header.version.get_ref()) {
        Ok(v) if v >= 1 => v,
        _ => {
            push(
                header.version.span(),
                "protocol.version".into(),
                format!(
                    "must be a whole number from 1, not {}",
                    header.version.get_ref()
                ),
            );
            0
        }
    };

    let target_per_task = header.target_per_task.as_ref().and_then(|t| {
        let n = *t.get_ref();
        if (1..=MAX_TARGET).contains(&n) {
            Some(n)
        } else {
            push(
                t.span(),
                "protocol.target_per_task".into(),
                format!("must be a whole number from 1 to {MAX_TARGET}, not {n}"),
            );
            None
        }
    });

    if raw.task.is_empty() {
        push(
            raw.protocol.span(),
            "task".into(),
            "the protocol declares no task ([[task]])".into(),
        );
    }
    if raw.task.len() > MAX_ENTRIES {
        push(
            raw.task[MAX_ENTRIES].span(),
            "task".into(),
            format!("more than {MAX_ENTRIES} tasks"),
        );
    }
    if raw.qa_type.len() > MAX_ENTRIES {
        push(
            raw.qa_type[MAX_ENTRIES].span(),
            "qa_type".into(),
            format!("more than {MAX_ENTRIES} QA types"),
        );
    }

    // The levels first: the QA types and the reasons name them.
    let declared: Vec<Level> = match &header.levels {
        None => Level::vgenst(),
        Some(ls) => {
            if ls.get_ref().is_empty() {
                push(
                    ls.span(),
                    "protocol.levels".into(),
                    "is empty: a protocol has at least one level (leave it out for L1, L2 and L3)"
                        .into(),
                );
            }
            let mut declared: Vec<Level> = Vec::new();
            for (j, l) in ls.get_ref().iter().enumerate() {
                let field = format!("protocol.levels[{}]", j + 1);
                if let Err(m) = super::check_identifier("a level", l.get_ref()) {
                    push(l.span(), field, m);
                } else if declared.iter().any(|d| d.as_str() == l.get_ref()) {
                    push(
                        l.span(),
                        field,
                        format!("names level `{}` twice", l.get_ref()),
                    );
                } else {
                    declared.push(Level::new(l.get_ref()));
                }
            }
            declared
        }
    };
    let names: Vec<&str> = declared.iter().map(Level::as_str).collect();
    let unknown_level = |code: &str| {
        format!(
            "unknown level `{code}` (the protocol's levels are {})",
            names.join(", ")
        )
    };

    // QA types next: the tasks name them.
    let mut qa_types = Vec::new();
    let mut qa_codes = HashSet::new();
    for (i, q) in raw.qa_type.iter().enumerate() {
        let q = q.get_ref();
        let at = |f: &str| format!("qa_type[{}].{f}", i + 1);
        let code = q.code.get_ref();
        if let Err(m) = super::check_identifier("the code", code) {
            push(q.code.span(), at("code"), m);
        } else if !qa_codes.insert(code.clone()) {
            push(
                q.code.span(),
                at("code"),
                format!("QA type `{code}` is declared twice"),
            );
        }
        if q.name.get_ref().trim().is_empty() {
            push(q.name.span(), at("name"), "is empty".into());
        }
        match declared.iter().find(|l| l.as_str() == q.level.get_ref()) {
            Some(level) => qa_types.push(QaTypeDef {
                paired: q.paired,
                code: code.clone(),
                name: q.name.get_ref().trim().to_string(),
                level: level.clone(),
            }),
            None => push(
                q.level.span(),
                at("level"),
                unknown_level(q.level.get_ref()),
            ),
        }
    }

    let mut tasks = Vec::new();
    let mut applicability = BTreeMap::new();
    let mut task_codes = HashSet::new();
    for (i, t) in raw.task.iter().enumerate() {
        let t = t.get_ref();
        let at = |f: &str| format!("task[{}].{f}", i + 1);
        let code = t.code.get_ref();
        if let Err(m) = super::check_identifier("the code", code) {
            push(t.code.span(), at("code"), m);
        } else if !task_codes.insert(code.clone()) {
            push(
                t.code.span(),
                at("code"),
                format!("task `{code}` is declared twice"),
            );
        }
        if t.name.get_ref().trim().is_empty() {
            push(t.name.span(), at("name"), "is empty".into());
        }
        let mut attributes = BTreeMap::new();
        for (k, v) in &t.attributes {
            if let Err(m) = super::check_identifier("an attribute's name", k) {
                push(v.span(), at("attributes"), m);
            }
            if v.get_ref().trim().is_empty() {
                push(v.span(), at(&format!("attributes.{k}")), "is empty".into());
            }
            attributes.insert(k.clone(), v.get_ref().trim().to_string());
        }
        let mut applies = Vec::new();
        for (j, q) in t.qa_types.get_ref().iter().enumerate() {
            let field = at(&format!("qa_types[{}]", j + 1));
            if !qa_codes.contains(q.get_ref()) {
                push(
                    q.span(),
                    field,
                    format!(
                        "names QA type `{}`, which no [[qa_type]] declares",
                        q.get_ref()
                    ),
                );
            } else if applies.contains(q.get_ref()) {
                push(
                    q.span(),
                    field,
                    format!("names QA type `{}` twice", q.get_ref()),
                );
            } else {
                applies.push(q.get_ref().clone());
            }
        }
        let mut axis = |name: &str| attributes.remove(name).unwrap_or_default();
        let (scale, perspective, dynamics) = (axis(AXES[0]), axis(AXES[1]), axis(AXES[2]));
        applicability.insert(code.clone(), applies);
        tasks.push(TaskDef {
            code: code.clone(),
            name: t.name.get_ref().trim().to_string(),
            scale,
            perspective,
            dynamics,
            attributes,
        });
    }

    let clip_review = header.clip_review.as_ref().is_none_or(|c| *c.get_ref());
    let pairing = match &header.pairing {
        None => Pairing::TaskPairs,
        Some(p) => Pairing::parse(p.get_ref()).unwrap_or_else(|| {
            push(
                p.span(),
                "protocol.pairing".into(),
                format!(
                    "must be `task_pairs` (task t to pool indexes t and t+1, mod n) or `least_open_work` (each clip to the two validators with the least open work), not `{}`",
                    p.get_ref()
                ),
            );
            Pairing::TaskPairs
        }),
    };
    let mut reasons: Vec<ReasonDef> = Vec::new();
    let mut keys: HashSet<(i64, i64)> = HashSet::new();
    for (i, r) in raw.reason.iter().enumerate() {
        let r = r.get_ref();
        let at = |f: &str| format!("reason[{}].{f}", i + 1);
        let stage = match Stage::from_number(*r.stage.get_ref()) {
            Some(s) => s,
            None => {
                push(
                    r.stage.span(),
                    at("stage"),
                    format!(
                        "must be 1 (clip review) or 2 (question review), not {}",
                        r.stage.get_ref()
                    ),
                );
                continue;
            }
        };
        if stage == Stage::Clip && !clip_review {
            push(
                r.stage.span(),
                at("stage"),
                "a Stage 1 reason, but the protocol reviews no clips (protocol.clip_review = false)"
                    .into(),
            );
            continue;
        }
        let code = r.code.get_ref().trim();
        if let Err(m) = super::check_identifier("the code", code) {
            push(r.code.span(), at("code"), m);
        } else if reasons.iter().any(|d| d.stage == stage && d.code == code) {
            push(
                r.code.span(),
                at("code"),
                format!("reason `{code}` is declared twice in Stage {stage}"),
            );
        }
        if r.label.get_ref().trim().is_empty() {
            push(r.label.span(), at("label"), "is empty".into());
        }
        let key = *r.key.get_ref();
        if !(1..=9).contains(&key) {
            push(
                r.key.span(),
                at("key"),
                format!("must be a digit from 1 to 9, not {key}"),
            );
        } else if !keys.insert((stage.number(), key)) {
            push(
                r.key.span(),
                at("key"),
                format!(
                    "key {key} is used twice in Stage {stage}: a key names one reason of a stage"
                ),
            );
        }
        let mut levels = Vec::new();
        if let Some(ls) = &r.levels {
            if stage == Stage::Clip {
                push(
                    ls.span(),
                    at("levels"),
                    "a Stage 1 reason has no levels (clips have none; levels are the questions')"
                        .into(),
                );
            }
            if ls.get_ref().is_empty() {
                push(
                    ls.span(),
                    at("levels"),
                    "is empty: leave it out for a reason of every level".into(),
                );
            }
            for (j, l) in ls.get_ref().iter().enumerate() {
                match declared.iter().find(|d| d.as_str() == l.get_ref()) {
                    Some(level) if levels.contains(level) => push(
                        l.span(),
                        at(&format!("levels[{}]", j + 1)),
                        format!("names level {} twice", level.as_str()),
                    ),
                    Some(level) => levels.push(level.clone()),
                    None => push(
                        l.span(),
                        at(&format!("levels[{}]", j + 1)),
                        unknown_level(l.get_ref()),
                    ),
                }
            }
        }
        reasons.push(ReasonDef {
            stage,
            code: code.to_string(),
            label: r.label.get_ref().trim().to_string(),
            key: u8::try_from(key).unwrap_or(0),
            levels,
            note: r.note,
        });
    }
    for stage in Stage::BOTH {
        let in_use = stage == Stage::Question || clip_review;
        if in_use && !reasons.iter().any(|r| r.stage == stage) {
            push(
                raw.protocol.span(),
                "reason".into(),
                format!(
                    "Stage {stage} ({} review) has no reasons: a reject needs one ([[reason]] with stage = {stage})",
                    stage.item_noun()
                ),
            );
        }
    }

    let mut sampling: Vec<SamplingRule> = Vec::new();
    for (i, r) in raw.sampling.iter().enumerate() {
        let span = r.span();
        let at = |f: &str| format!("sampling[{}].{f}", i + 1);
        let problem_count = problems.len();
        let mut push_here = |span: std::ops::Range<usize>, field: String, message: String| {
            problems.push(ProtocolProblem {
                line: line_of(text, span.start),
                field,
                message,
            })
        };
        if let Some(rule) = sampling_rule(
            r.get_ref(),
            &at,
            clip_review,
            &task_codes,
            &qa_codes,
            &applicability,
            &mut push_here,
        ) {
            match sampling.iter().position(|o| o.overlaps(&rule)) {
                Some(j) => push_here(
                    span,
                    format!("sampling[{}]", i + 1),
                    format!(
                        "covers items that sampling[{}] covers too ({}): each stratum has one rule",
                        j + 1,
                        sampling[j].describe()
                    ),
                ),
                None if problems.len() == problem_count => sampling.push(rule),
                None => {}
            }
        }
    }

    if !problems.is_empty() {
        problems.sort_by_key(|p| p.line);
        return Err(problems);
    }
    Ok(Protocol {
        name: name.clone(),
        version,
        description: header.description.trim().to_string(),
        target_per_task,
        taxonomy: Taxonomy {
            name,
            tasks,
            qa_types,
            applicability,
            variants: header.export_variants,
            reasons,
            clip_review,
            sampling,
            pairing,
            levels: declared,
        },
    })
}

/// One `[[sampling]]` entry checked: its stratum names what the protocol declares, and it
/// gives one plan (the four risks, a zero-defect `p`, or its own `n` and `c`) within range.
fn sampling_rule(
    r: &RawSampling,
    at: &dyn Fn(&str) -> String,
    clip_review: bool,
    tasks: &HashSet<String>,
    qa_types: &HashSet<String>,
    applicability: &BTreeMap<String, Vec<String>>,
    push: &mut dyn FnMut(std::ops::Range<usize>, String, String),
) -> Option<SamplingRule> {
    let before = std::cell::Cell::new(0usize);
    let mut fail = |span: std::ops::Range<usize>, field: &str, message: String| {
        before.set(before.get() + 1);
        push(span, at(field), message);
    };
    let stage = Stage::from_number(*r.stage.get_ref());
    match stage {
        None => fail(
            r.stage.span(),
            "stage",
            format!(
                "must be 1 (clip review) or 2 (question review), not {}",
                r.stage.get_ref()
            ),
        ),
        Some(Stage::Clip) if !clip_review => fail(
            r.stage.span(),
            "stage",
            "samples Stage 1, but the protocol reviews no clips (protocol.clip_review = false)"
                .into(),
        ),
        Some(Stage::Clip) if r.qa_type.is_some() => {
            if let Some(q) = &r.qa_type {
                fail(
                    q.span(),
                    "qa_type",
                    "a Stage 1 stratum is a task's clips: clips have no QA type".into(),
                );
            }
        }
        _ => {}
    }
    if let Some(t) = &r.task
        && !tasks.contains(t.get_ref())
    {
        fail(
            t.span(),
            "task",
            format!("names task `{}`, which no [[task]] declares", t.get_ref()),
        );
    }
    if let Some(q) = &r.qa_type {
        if !qa_types.contains(q.get_ref()) {
            fail(
                q.span(),
                "qa_type",
                format!(
                    "names QA type `{}`, which no [[qa_type]] declares",
                    q.get_ref()
                ),
            );
        } else if let Some(t) = &r.task
            && applicability
                .get(t.get_ref())
                .is_some_and(|a| !a.contains(q.get_ref()))
        {
            fail(
                q.span(),
                "qa_type",
                format!(
                    "QA type `{}` does not apply to task `{}`",
                    q.get_ref(),
                    t.get_ref()
                ),
            );
        }
    }
    let proportion =
        |v: &Spanned<f64>,
         field: &str,
         fail: &mut dyn FnMut(std::ops::Range<usize>, &str, String)| {
            let x = *v.get_ref();
            if !(x > 0.0 && x < 1.0) {
                fail(
                    v.span(),
                    field,
                    format!("must be greater than 0 and less than 1, not {x}"),
                );
            }
            x
        };
    let confidence = r
        .confidence
        .as_ref()
        .map_or(0.95, |c| proportion(c, "confidence", &mut fail));
    let risks = [&r.aql, &r.rql, &r.alpha, &r.beta];
    let given = [
        risks.iter().any(|x| x.is_some()),
        r.p.is_some(),
        r.n.is_some() || r.c.is_some(),
    ];
    let plan = match given {
        [true, false, false] => {
            let names = ["aql", "rql", "alpha", "beta"];
            let mut values = [0.0; 4];
            for (k, (v, name)) in risks.iter().zip(names).enumerate() {
                match v {
                    Some(v) => values[k] = proportion(v, name, &mut fail),
                    None => fail(
                        r.stage.span(),
                        name,
                        "is missing: a plan by risks gives all four of aql, rql, alpha and beta"
                            .into(),
                    ),
                }
            }
            let [aql, rql, alpha, beta] = values;
            if let Some(v) = &r.rql
                && aql > 0.0
                && rql > 0.0
                && aql >= rql
            {
                fail(
                    v.span(),
                    "rql",
                    format!("must be greater than the aql ({aql}), not {rql}"),
                );
            }
            Some(PlanSpec::Risks {
                aql,
                rql,
                alpha,
                beta,
            })
        }
        [false, true, false] => r.p.as_ref().map(|p| PlanSpec::ZeroDefect {
            p: proportion(p, "p", &mut fail),
        }),
        [false, false, true] => match (&r.n, &r.c) {
            (Some(n), Some(c)) => {
                let (nv, cv) = (*n.get_ref(), *c.get_ref());
                if !(1..=MAX_SAMPLE).contains(&nv) {
                    fail(
                        n.span(),
                        "n",
                        format!("must be a whole number from 1 to {MAX_SAMPLE}, not {nv}"),
                    );
                }
                if cv < 0 || cv >= nv {
                    fail(
                        c.span(),
                        "c",
                        format!("must be at least 0 and less than n ({nv}), not {cv}"),
                    );
                }
                Some(PlanSpec::Fixed {
                    n: u64::try_from(nv).unwrap_or(0),
                    c: u64::try_from(cv).unwrap_or(0),
                })
            }
            (Some(n), None) => {
                fail(
                    n.span(),
                    "c",
                    "is missing: a fixed plan gives n and c".into(),
                );
                None
            }
            (None, Some(c)) => {
                fail(
                    c.span(),
                    "n",
                    "is missing: a fixed plan gives n and c".into(),
                );
                None
            }
            (None, None) => None,
        },
        _ => {
            fail(
                r.stage.span(),
                "plan",
                if given.iter().any(|g| *g) {
                    "gives more than one plan: either aql, rql, alpha and beta, or p, or n and c"
                } else {
                    "gives no plan: either aql, rql, alpha and beta (a sampling plan), p (no defect shows the rate below p), or n and c"
                }
                .into(),
            );
            None
        }
    };
    match (stage, plan) {
        (Some(stage), Some(plan)) if before.get() == 0 => Some(SamplingRule {
            stage,
            task: r.task.as_ref().map(|t| t.get_ref().clone()),
            qa_type: r.qa_type.as_ref().map(|q| q.get_ref().clone()),
            plan,
            confidence,
        }),
        _ => None,
    }
}

/// The shipped VGenST-Bench protocol.
pub fn vgenst() -> Protocol {
    match parse(VGENST) {
        Ok(p) => p,
        // The shipped file is checked by the tests below: it cannot fail here.
        Err(problems) => unreachable!("protocols/vgenst.toml: {problems:?}"),
    }
}

/// What a campaign's records use of its protocol: what another protocol for it must keep.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InUse {
    /// The tasks that have clips.
    pub tasks: BTreeSet<String>,
    /// The (task, QA type) cells that have questions.
    pub cells: BTreeSet<(String, String)>,
    /// The QA types that have questions, with the level those were stored at.
    pub levels: BTreeMap<String, Level>,
    /// The reasons given in decisions, calibration verdicts and known verdicts.
    pub reasons: BTreeSet<(Stage, String)>,
}

/// Why `new` cannot replace `old` as the protocol of a campaign whose records use `used`
/// of it; empty when it can. A protocol may rename tasks and QA types, change their
/// attributes, add tasks after the existing ones, add QA types and cells, and change
/// what no stored item uses. It may not move or remove a task (a task's position is its
/// place in the pairing rule), remove a cell or a QA type that stored questions have, or
/// change such a QA type's level (a stored question keeps the level it was imported at,
/// and the reasons allowed on it follow that level), or remove a reason that stored
/// verdicts give. A reason's label, key, levels and note rule may change: a decision
/// keeps the protocol version it was made under.
pub fn change_problems(old: &Taxonomy, new: &Taxonomy, used: &InUse) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, t) in old.tasks.iter().enumerate() {
        if new.tasks.get(i).is_some_and(|n| n.code == t.code) {
            continue;
        }
        let stored = if used.tasks.contains(&t.code) {
            " (it has clips)"
        } else {
            ""
        };
        match new.task(&t.code) {
            Some((j, _)) => problems.push(format!(
                "task `{}`{stored} moves from position {} to {}: the existing tasks keep their order (a task's position is its place in the pairing rule); new tasks come after them",
                t.code,
                i + 1,
                j + 1
            )),
            None => problems.push(format!(
                "task `{}`{stored} is removed: the existing tasks stay, in their order; new tasks come after them",
                t.code
            )),
        }
    }
    for (task, qa) in &used.cells {
        if new.task(task).is_some() && !new.applies(task, qa) {
            problems.push(format!(
                "task `{task}` no longer has QA type `{qa}`, but questions of that cell are stored"
            ));
        }
    }
    for (qa, level) in &used.levels {
        match new.qa_type(qa) {
            None => problems.push(format!(
                "QA type `{qa}` is removed, but questions of it are stored"
            )),
            Some(d) if d.level != *level => problems.push(format!(
                "QA type `{qa}` changes level from {} to {}, but its stored questions keep {} (the reasons allowed on a question follow its level)",
                level.as_str(),
                d.level.as_str(),
                level.as_str()
            )),
            Some(_) => {}
        }
    }
    for (stage, code) in &used.reasons {
        if new.reason(*stage, code).is_none() {
            problems.push(format!(
                "the Stage {stage} reason `{code}` is removed, but stored verdicts give it"
            ));
        }
    }
    if old.clip_review != new.clip_review && !used.tasks.is_empty() {
        problems.push(format!(
            "clip review is turned {}, but clips are imported: their items were made {} a clip review (a campaign keeps its stages once it has clips)",
            if new.clip_review { "on" } else { "off" },
            if old.clip_review { "for" } else { "without" },
        ));
    }
    problems
}

impl Taxonomy {
    /// The taxonomy of VGenST-Bench (SPEC section 10), from the shipped protocol file,
    /// read once.
    pub fn vgenst() -> Taxonomy {
        Taxonomy::vgenst_ref().clone()
    }

    /// The same, borrowed for the life of the program.
    pub fn vgenst_ref() -> &'static Taxonomy {
        static READ: std::sync::OnceLock<Taxonomy> = std::sync::OnceLock::new();
        READ.get_or_init(|| vgenst().taxonomy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<String> {
        match parse(text) {
            Ok(p) => panic!("accepted: {p:?}"),
            Err(ps) => ps.iter().map(ToString::to_string).collect(),
        }
    }

    const SMALL: &str = r#"[protocol]
name = "small"
version = 2

[[task]]
code = "TRJ"
name = "Trajectory"
attributes = { source = "real", scale = "vista" }
qa_types = ["YN"]

[[qa_type]]
code = "YN"
name = "Yes/No"
level = "L1"

[[reason]]
stage = 1
code = "blurry"
label = "Blurry"
key = 1

[[reason]]
stage = 2
code = "wrong"
label = "Wrong answer"
key = 1

[[reason]]
stage = 2
code = "other"
label = "Other"
key = 2
note = true
"#;

    /// SMALL's reasons, for a protocol written out in a test.
    fn reasons_of_small() -> &'static str {
        &SMALL[SMALL.find("[[reason]]").unwrap_or(0)..]
    }

    #[test]
    fn a_small_protocol_gives_its_taxonomy() {
        let p = parse(SMALL).unwrap();
        assert_eq!((p.name.as_str(), p.version), ("small", 2));
        let t = &p.taxonomy;
        assert_eq!(t.tasks.len(), 1);
        assert_eq!(t.tasks[0].scale, "vista");
        assert_eq!(t.tasks[0].perspective, "");
        assert_eq!(t.tasks[0].attributes["source"], "real");
        assert!(t.applies("TRJ", "YN"));
        assert_eq!(t.qa_type("YN").map(|q| q.level.as_str()), Some("L1"));
    }

    #[test]
    fn a_protocol_sets_its_target_and_whether_exports_carry_variants() {
        let p = parse(SMALL).unwrap();
        assert_eq!((p.target_per_task, p.taxonomy.variants), (None, true));
        let set = SMALL.replace(
            "version = 2\n",
            "version = 2\ntarget_per_task = 40\nexport_variants = false\n",
        );
        let p = parse(&set).unwrap();
        assert_eq!((p.target_per_task, p.taxonomy.variants), (Some(40), false));
        let bad = problems(&SMALL.replace("version = 2\n", "version = 2\ntarget_per_task = 0\n"));
        assert_eq!(
            bad,
            ["line 4, protocol.target_per_task: must be a whole number from 1 to 1000000, not 0"]
        );
    }

    #[test]
    fn every_problem_is_named_with_its_line_and_field() {
        let text = r#"[protocol]
name = "broken"
version = 1

[[task]]
code = "A"
name = "first"
qa_types = ["X", "Q", "X"]

[[task]]
code = "A"
name = ""
qa_types = []

[[qa_type]]
code = "X"
name = "x"
level = "L4"

[[qa_type]]
code = "X"
name = "again"
level = "L1"
"#;
        assert_eq!(
            problems(&format!("{text}\n{}", reasons_of_small())),
            [
                "line 8, task[1].qa_types[2]: names QA type `Q`, which no [[qa_type]] declares",
                "line 8, task[1].qa_types[3]: names QA type `X` twice",
                "line 11, task[2].code: task `A` is declared twice",
                "line 12, task[2].name: is empty",
                "line 18, qa_type[1].level: unknown level `L4` (the protocol's levels are L1, L2, L3)",
                "line 21, qa_type[2].code: QA type `X` is declared twice",
            ]
        );
    }

    #[test]
    fn unreadable_toml_and_unknown_fields_are_refused_with_their_line() {
        let bad = problems("[protocol]\nname = \"x\"\nversion = 1\n[[task]]\ncode = \"A\n");
        assert!(bad[0].starts_with("line 5"), "{bad:?}");
        let unknown = problems(&SMALL.replace("level = \"L1\"", "level = \"L1\"\ncolour = 3"));
        assert!(
            unknown[0].starts_with("line 15") && unknown[0].contains("colour"),
            "{unknown:?}"
        );
        let no_task = problems(&format!(
            "[protocol]\nname = \"x\"\nversion = 1\n\n{}",
            reasons_of_small()
        ));
        assert_eq!(
            no_task,
            ["line 1, task: the protocol declares no task ([[task]])"]
        );
        let version = problems(&SMALL.replace("version = 2", "version = 0"));
        assert_eq!(
            version,
            ["line 3, protocol.version: must be a whole number from 1, not 0"]
        );
    }

    #[test]
    fn a_change_that_would_orphan_stored_records_is_refused() {
        let old = parse(SMALL).unwrap().taxonomy;
        let used = InUse {
            tasks: ["TRJ".to_string()].into(),
            cells: [("TRJ".to_string(), "YN".to_string())].into(),
            levels: [("YN".to_string(), Level::new("L1"))].into(),
            reasons: [(Stage::Question, "other".to_string())].into(),
        };
        // Renamed, an attribute changed, a task and a QA type added: allowed.
        let grown = SMALL.replace("name = \"Trajectory\"", "name = \"Trajectories\"")
            + "\n[[task]]\ncode = \"NEW\"\nname = \"new\"\nqa_types = [\"YN\", \"MC\"]\n\n[[qa_type]]\ncode = \"MC\"\nname = \"mc\"\nlevel = \"L3\"\n";
        let grown = parse(&grown).unwrap().taxonomy;
        assert_eq!(change_problems(&old, &grown, &used), Vec::<String>::new());
        // Moved behind a new first task, a cell dropped, a level changed.
        let moved = r#"[protocol]
name = "small"
version = 3

[[task]]
code = "FIRST"
name = "first"
qa_types = ["YN"]

[[task]]
code = "TRJ"
name = "Trajectory"
qa_types = ["MC"]

[[qa_type]]
code = "YN"
name = "Yes/No"
level = "L2"

[[qa_type]]
code = "MC"
name = "mc"
level = "L1"
"#;
        let moved = parse(&format!("{moved}\n{}", reasons_of_small()))
            .unwrap()
            .taxonomy;
        assert_eq!(
            change_problems(&old, &moved, &used),
            [
                "task `TRJ` (it has clips) moves from position 1 to 2: the existing tasks keep their order (a task's position is its place in the pairing rule); new tasks come after them",
                "task `TRJ` no longer has QA type `YN`, but questions of that cell are stored",
                "QA type `YN` changes level from L1 to L2, but its stored questions keep L1 (the reasons allowed on a question follow its level)",
            ]
        );
        // Nothing stored: only the order of the existing tasks is kept.
        assert_eq!(change_problems(&old, &moved, &InUse::default()).len(), 1);
        let gone = parse(&SMALL.replace("code = \"TRJ\"", "code = \"OTHER\"")).unwrap();
        assert_eq!(
            change_problems(&old, &gone.taxonomy, &used)[0],
            "task `TRJ` (it has clips) is removed: the existing tasks stay, in their order; new tasks come after them"
        );
    }

    #[test]
    fn a_reason_in_use_stays_and_its_rules_may_change() {
        let old = parse(SMALL).unwrap().taxonomy;
        let used = InUse {
            reasons: [(Stage::Question, "other".to_string())].into(),
            ..InUse::default()
        };
        // Relabelled, another key, a note no longer required: allowed.
        let relabelled = SMALL
            .replace("label = \"Other\"", "label = \"Something else\"")
            .replace("key = 2\nnote = true", "key = 9");
        let relabelled = parse(&relabelled).unwrap().taxonomy;
        assert_eq!(
            change_problems(&old, &relabelled, &used),
            Vec::<String>::new()
        );
        // Removed from Stage 2 (kept in no stage): refused.
        let gone = SMALL.replace("code = \"other\"", "code = \"unclear\"");
        let gone = parse(&gone).unwrap().taxonomy;
        assert_eq!(
            change_problems(&old, &gone, &used),
            ["the Stage 2 reason `other` is removed, but stored verdicts give it"]
        );
    }

    #[test]
    fn broken_reasons_are_named_with_their_line_and_field() {
        // A key used twice in a stage, an unknown level, levels on a Stage 1 reason.
        let broken = SMALL
            .replace("key = 2\nnote = true", "key = 1\nlevels = [\"L4\"]")
            .replace(
                "code = \"blurry\"\nlabel = \"Blurry\"\nkey = 1",
                "code = \"blurry\"\nlabel = \"Blurry\"\nkey = 1\nlevels = [\"L1\"]",
            );
        let p = problems(&broken);
        assert!(
            p.iter()
                .any(|m| m.contains("reason[1].levels: a Stage 1 reason has no levels")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|m| m.contains("reason[3].key: key 1 is used twice in Stage 2")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|m| m.contains("reason[3].levels[1]: unknown level `L4`")),
            "{p:?}"
        );
        assert!(p.iter().all(|m| m.starts_with("line ")), "{p:?}");
        // The same code twice in a stage, a key out of 1-9, an empty label.
        let twice = SMALL
            .replace("code = \"wrong\"", "code = \"other\"")
            .replace("key = 2\nnote = true", "key = 10")
            .replace("label = \"Blurry\"", "label = \" \"");
        let p = problems(&twice);
        assert!(
            p.iter()
                .any(|m| m.contains("reason `other` is declared twice in Stage 2")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|m| m.contains("reason[3].key: must be a digit from 1 to 9, not 10")),
            "{p:?}"
        );
        assert!(
            p.iter().any(|m| m.contains("reason[1].label: is empty")),
            "{p:?}"
        );
        // A stage with no reasons.
        let none = &SMALL[..SMALL.find("[[reason]]\nstage = 2").unwrap_or(SMALL.len())];
        let p = problems(none);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].contains("reason: Stage 2 (question review) has no reasons"),
            "{p:?}"
        );
    }

    #[test]
    fn a_protocol_reviews_strata_by_sample_with_one_plan_each() {
        let with = format!(
            "{SMALL}\n[[sampling]]\nstage = 2\ntask = \"TRJ\"\nqa_type = \"YN\"\naql = 0.02\nrql = 0.1\nalpha = 0.05\nbeta = 0.1\n\n[[sampling]]\nstage = 1\np = 0.05\nconfidence = 0.9\n"
        );
        let t = parse(&with).unwrap().taxonomy;
        assert_eq!(t.sampling.len(), 2);
        assert_eq!(
            t.sampling[0].plan,
            PlanSpec::Risks {
                aql: 0.02,
                rql: 0.1,
                alpha: 0.05,
                beta: 0.1
            }
        );
        assert_eq!(t.sampling[0].confidence, 0.95, "the default confidence");
        assert_eq!(t.sampling[1].plan, PlanSpec::ZeroDefect { p: 0.05 });
        assert_eq!(
            (t.sampling[1].stage, t.sampling[1].task.as_deref()),
            (Stage::Clip, None)
        );
        // Stored with the taxonomy, and read back the same.
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<Taxonomy>(&json).unwrap(), t);
        // A protocol without sampling stores nothing more than before.
        let plain = serde_json::to_string(&parse(SMALL).unwrap().taxonomy).unwrap();
        assert!(!plain.contains("sampling"), "{plain}");
    }

    #[test]
    fn broken_sampling_rules_are_named_with_their_line_and_field() {
        let broken = format!(
            "{SMALL}\n[[sampling]]\nstage = 2\ntask = \"NOPE\"\nqa_type = \"XX\"\naql = 0.1\nrql = 0.05\nalpha = 0.05\n\n[[sampling]]\nstage = 3\nn = 5\nc = 5\n\n[[sampling]]\nstage = 2\np = 1.5\nn = 4\n\n[[sampling]]\nstage = 1\nqa_type = \"YN\"\n"
        );
        let p = problems(&broken);
        for want in [
            "sampling[1].task: names task `NOPE`, which no [[task]] declares",
            "sampling[1].qa_type: names QA type `XX`, which no [[qa_type]] declares",
            "sampling[1].beta: is missing: a plan by risks gives all four",
            "sampling[1].rql: must be greater than the aql (0.1), not 0.05",
            "sampling[2].stage: must be 1 (clip review) or 2 (question review), not 3",
            "sampling[2].c: must be at least 0 and less than n (5), not 5",
            "sampling[3].plan: gives more than one plan",
            "sampling[4].qa_type: a Stage 1 stratum is a task's clips",
            "sampling[4].plan: gives no plan",
        ] {
            assert!(p.iter().any(|m| m.contains(want)), "{want}: {p:?}");
        }
        assert!(p.iter().all(|m| m.starts_with("line ")), "{p:?}");
        // Two rules that could cover one item.
        let twice = format!(
            "{SMALL}\n[[sampling]]\nstage = 2\np = 0.05\n\n[[sampling]]\nstage = 2\ntask = \"TRJ\"\nn = 10\nc = 0\n"
        );
        let p = problems(&twice);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].contains("sampling[2]: covers items that sampling[1] covers too (Stage 2, every task, every QA type)"),
            "{p:?}"
        );
        // Stage 1 sampling without clip review.
        let no_clips = format!("{SMALL}\n[[sampling]]\nstage = 1\np = 0.05\n")
            .replace("version = 2\n", "version = 2\nclip_review = false\n")
            .replace(
                "[[reason]]\nstage = 1\ncode = \"blurry\"\nlabel = \"Blurry\"\nkey = 1\n",
                "",
            );
        let p = problems(&no_clips);
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].contains("sampling[1].stage: samples Stage 1, but the protocol reviews no clips"),
            "{p:?}"
        );
    }

    #[test]
    fn a_protocol_declares_its_own_levels_and_its_qa_types_and_reasons_use_them() {
        // VGenST's three by default, and then not stored.
        let t = parse(SMALL).unwrap().taxonomy;
        assert_eq!(t.levels, Level::vgenst());
        let json = serde_json::to_string(&t).unwrap();
        assert!(!json.contains("\"levels\":[\"L1\""), "{json}");
        // Its own: QA types and reasons name them; a reason bound to one is refused on
        // a question of another, in the protocol's words.
        let own = SMALL
            .replace(
                "version = 2\n",
                "version = 2\nlevels = [\"basic\", \"advanced\"]\n",
            )
            .replace("level = \"L1\"", "level = \"basic\"")
            .replace(
                "code = \"wrong\"\nlabel = \"Wrong answer\"\nkey = 1\n",
                "code = \"wrong\"\nlabel = \"Wrong answer\"\nkey = 1\nlevels = [\"advanced\"]\n",
            );
        let t = parse(&own).unwrap().taxonomy;
        assert_eq!(t.levels, [Level::new("basic"), Level::new("advanced")]);
        assert_eq!(t.qa_type("YN").map(|q| q.level.as_str()), Some("basic"));
        let json = serde_json::to_string(&t).unwrap();
        assert!(
            json.contains("\"levels\":[\"basic\",\"advanced\"]"),
            "{json}"
        );
        let back: Taxonomy = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
        assert_eq!(t.parse_level("advanced"), Ok(Level::new("advanced")));
        assert_eq!(
            t.parse_level("L1"),
            Err("`L1` is not a level of the protocol (expected one of: basic, advanced)".into())
        );
        let basic = Level::new("basic");
        let refused = crate::domain::rules::check_verdict(
            &t,
            Stage::Question,
            Some(&basic),
            crate::domain::Verdict::Reject,
            &["wrong".to_string()],
            "",
        )
        .unwrap_err();
        assert_eq!(refused.field, "reasons");
        assert_eq!(
            refused.message,
            "`wrong` applies only to advanced questions; this question is basic"
        );
        // A level the protocol does not declare, an empty list, a level twice.
        let p = problems(&own.replace("level = \"basic\"", "level = \"L1\""));
        assert_eq!(
            p,
            [
                "line 15, qa_type[1].level: unknown level `L1` (the protocol's levels are basic, advanced)"
            ]
        );
        let p = problems(&own.replace("levels = [\"advanced\"]", "levels = [\"expert\"]"));
        assert!(
            p[0].ends_with("reason[2].levels[1]: unknown level `expert` (the protocol's levels are basic, advanced)"),
            "{p:?}"
        );
        let p = problems(&SMALL.replace("version = 2\n", "version = 2\nlevels = []\n"));
        assert!(
            p.iter()
                .any(|m| m.starts_with("line 4, protocol.levels: is empty")),
            "{p:?}"
        );
        let p = problems(&own.replace(
            "[\"basic\", \"advanced\"]",
            "[\"basic\", \"basic\", \"advanced\"]",
        ));
        assert_eq!(p, ["line 4, protocol.levels[2]: names level `basic` twice"]);
    }

    #[test]
    fn a_protocol_names_its_pairing_rule_and_a_wrong_one_is_refused_at_its_line() {
        assert_eq!(parse(SMALL).unwrap().taxonomy.pairing, Pairing::TaskPairs);
        let least = SMALL.replace(
            "version = 2\n",
            "version = 2\npairing = \"least_open_work\"\n",
        );
        let t = parse(&least).unwrap().taxonomy;
        assert_eq!(t.pairing, Pairing::LeastOpenWork);
        // Stored only when not the default, and read back.
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains("\"pairing\":\"least_open_work\""), "{json}");
        let back: Taxonomy = serde_json::from_str(&json).unwrap();
        assert_eq!(back.pairing, Pairing::LeastOpenWork);
        let default = serde_json::to_string(&parse(SMALL).unwrap().taxonomy).unwrap();
        assert!(!default.contains("pairing"), "{default}");
        let p =
            problems(&SMALL.replace("version = 2\n", "version = 2\npairing = \"round_robin\"\n"));
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with("line 4, protocol.pairing: must be `task_pairs`")
                && p[0].ends_with("not `round_robin`"),
            "{p:?}"
        );
    }

    #[test]
    fn a_protocol_may_turn_clip_review_off_and_then_has_no_clip_reasons() {
        assert!(parse(SMALL).unwrap().taxonomy.clip_review);
        // Off, without Stage 1 reasons: question review alone.
        let stage2 = &SMALL[SMALL.find("[[reason]]\nstage = 2").unwrap_or(0)..];
        let off = SMALL[..SMALL.find("[[reason]]").unwrap_or(0)]
            .replace("version = 2\n", "version = 2\nclip_review = false\n")
            + stage2;
        let t = parse(&off).unwrap().taxonomy;
        assert!(!t.clip_review);
        assert!(t.reasons_of(Stage::Clip).next().is_none());
        // Stored, the setting is kept; a taxonomy with clip review stores as before.
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains("\"clip_review\":false"), "{json}");
        let back: Taxonomy = serde_json::from_str(&json).unwrap();
        assert!(!back.clip_review);
        let on = serde_json::to_string(&parse(SMALL).unwrap().taxonomy).unwrap();
        assert!(!on.contains("clip_review"), "{on}");
        // Off with a Stage 1 reason: refused at the reason, with its line.
        let p = problems(&SMALL.replace("version = 2\n", "version = 2\nclip_review = false\n"));
        assert_eq!(
            p,
            [
                "line 18, reason[1].stage: a Stage 1 reason, but the protocol reviews no clips (protocol.clip_review = false)"
            ]
        );
        // On (the default) without Stage 1 reasons: refused as before.
        let p = problems(&(SMALL[..SMALL.find("[[reason]]").unwrap_or(0)].to_string() + stage2));
        assert!(
            p[0].contains("reason: Stage 1 (clip review) has no reasons"),
            "{p:?}"
        );
        // A campaign with clips keeps its stages; one without may change them.
        let on = parse(SMALL).unwrap().taxonomy;
        let used = InUse {
            tasks: ["TRJ".to_string()].into(),
            ..InUse::default()
        };
        let p = change_problems(&on, &t, &used);
        assert!(
            p.iter()
                .any(|m| m.contains("clip review is turned off, but clips are imported")),
            "{p:?}"
        );
        assert!(change_problems(&on, &t, &InUse::default()).is_empty());
    }

    #[test]
    fn every_shipped_protocol_is_sound() {
        let sizes: Vec<(String, usize, usize, usize)> = SHIPPED
            .iter()
            .map(|(name, text)| {
                let p = parse(text).unwrap_or_else(|e| panic!("{name}: {e:?}"));
                let t = &p.taxonomy;
                (p.name, t.tasks.len(), t.qa_types.len(), t.cell_count())
            })
            .collect();
        assert_eq!(
            sizes,
            [
                ("VGenST-Bench".to_string(), 12, 12, 98),
                ("GLIMPSE-like".to_string(), 11, 2, 22),
                ("TUMTraffic-VideoQA-like".to_string(), 3, 7, 7),
            ]
        );
        assert_eq!(shipped("glimpse"), Some(SHIPPED[1].1));
        assert_eq!(shipped("nope"), None);
    }

    #[test]
    fn the_shipped_vgenst_protocol_is_the_papers_taxonomy() {
        let p = vgenst();
        assert_eq!((p.name.as_str(), p.version), ("VGenST-Bench", 1));
        let t = &p.taxonomy;
        assert_eq!(
            (t.tasks.len(), t.qa_types.len(), t.cell_count()),
            (12, 12, 98)
        );
        assert!(t.tasks.iter().all(|t| t.attributes.is_empty()));
    }
}
