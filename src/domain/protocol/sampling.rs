//! The `[[sampling]]` entries checked: each stratum names what the protocol declares and
//! overlaps no other, and each gives one plan (the four risks, a zero-defect `p`, or its
//! own `n` and `c`) within range.

use super::raw::RawSampling;
use super::{MAX_SAMPLE, Problems};
use crate::domain::Stage;
use crate::domain::sampling::{PlanSpec, SamplingRule};
use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use toml::Spanned;

/// What a stratum may name: the protocol's tasks, QA types and applicability matrix, and
/// whether it reviews clips.
pub(super) struct Declared<'a> {
    pub clip_review: bool,
    pub tasks: &'a HashSet<String>,
    pub qa_types: &'a HashSet<String>,
    pub applicability: &'a BTreeMap<String, Vec<String>>,
}

pub(super) fn rules(
    raw: &[Spanned<RawSampling>],
    declared: &Declared,
    problems: &mut Problems,
) -> Vec<SamplingRule> {
    let mut sampling: Vec<SamplingRule> = Vec::new();
    for (i, r) in raw.iter().enumerate() {
        let at = |f: &str| format!("sampling[{}].{f}", i + 1);
        let Some(rule) = rule(r.get_ref(), &at, declared, problems) else {
            continue;
        };
        match sampling.iter().position(|o| o.overlaps(&rule)) {
            Some(j) => problems.push(
                r.span(),
                format!("sampling[{}]", i + 1),
                format!(
                    "covers items that sampling[{}] covers too ({}): each stratum has one rule",
                    j + 1,
                    sampling[j].describe()
                ),
            ),
            None => sampling.push(rule),
        }
    }
    sampling
}

/// One entry checked: its rule, when it has no problem.
fn rule(
    r: &RawSampling,
    at: &dyn Fn(&str) -> String,
    declared: &Declared,
    problems: &mut Problems,
) -> Option<SamplingRule> {
    let before = problems.count();
    let mut fail = |span: Range<usize>, field: &str, message: String| {
        problems.push(span, at(field), message);
    };
    let stage = stratum(r, declared, &mut fail);
    let confidence = r
        .confidence
        .as_ref()
        .map_or(0.95, |c| proportion(c, "confidence", &mut fail));
    let plan = plan(r, &mut fail);
    match (stage, plan) {
        (Some(stage), Some(plan)) if problems.count() == before => Some(SamplingRule {
            stage,
            task: r.task.as_ref().map(|t| t.get_ref().clone()),
            qa_type: r.qa_type.as_ref().map(|q| q.get_ref().clone()),
            plan,
            confidence,
        }),
        _ => None,
    }
}

type Fail<'a> = dyn FnMut(Range<usize>, &str, String) + 'a;

/// The stratum: a stage the protocol reviews, and the task and QA type (when given) it
/// declares, the QA type applying to the task. Its stage, when it is one.
fn stratum(r: &RawSampling, declared: &Declared, fail: &mut Fail) -> Option<Stage> {
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
        Some(Stage::Clip) if !declared.clip_review => fail(
            r.stage.span(),
            "stage",
            "samples Stage 1, but the protocol reviews no clips (protocol.clip_review = false)"
                .into(),
        ),
        Some(Stage::Clip) => {
            if let Some(q) = &r.qa_type {
                fail(
                    q.span(),
                    "qa_type",
                    "a Stage 1 stratum is a task's clips: clips have no QA type".into(),
                );
            }
        }
        Some(Stage::Question) => {}
    }
    if let Some(t) = &r.task
        && !declared.tasks.contains(t.get_ref())
    {
        fail(
            t.span(),
            "task",
            format!("names task `{}`, which no [[task]] declares", t.get_ref()),
        );
    }
    if let Some(q) = &r.qa_type {
        if !declared.qa_types.contains(q.get_ref()) {
            fail(
                q.span(),
                "qa_type",
                format!(
                    "names QA type `{}`, which no [[qa_type]] declares",
                    q.get_ref()
                ),
            );
        } else if let Some(t) = &r.task
            && declared
                .applicability
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
    stage
}

/// A proportion strictly between 0 and 1.
fn proportion(v: &Spanned<f64>, field: &str, fail: &mut Fail) -> f64 {
    let x = *v.get_ref();
    if !(x > 0.0 && x < 1.0) {
        fail(
            v.span(),
            field,
            format!("must be greater than 0 and less than 1, not {x}"),
        );
    }
    x
}

/// The one plan the entry gives.
fn plan(r: &RawSampling, fail: &mut Fail) -> Option<PlanSpec> {
    let given = [
        [&r.aql, &r.rql, &r.alpha, &r.beta]
            .iter()
            .any(|x| x.is_some()),
        r.p.is_some(),
        r.n.is_some() || r.c.is_some(),
    ];
    match given {
        [true, false, false] => Some(by_risks(r, fail)),
        [false, true, false] => r.p.as_ref().map(|p| PlanSpec::ZeroDefect {
            p: proportion(p, "p", fail),
        }),
        [false, false, true] => fixed(r, fail),
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
    }
}

/// A plan by its four risks: all given, each a proportion, the aql below the rql.
fn by_risks(r: &RawSampling, fail: &mut Fail) -> PlanSpec {
    let risks = [&r.aql, &r.rql, &r.alpha, &r.beta];
    let names = ["aql", "rql", "alpha", "beta"];
    let mut values = [0.0; 4];
    for (k, (v, name)) in risks.iter().zip(names).enumerate() {
        match v {
            Some(v) => values[k] = proportion(v, name, fail),
            None => fail(
                r.stage.span(),
                name,
                "is missing: a plan by risks gives all four of aql, rql, alpha and beta".into(),
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
    PlanSpec::Risks {
        aql,
        rql,
        alpha,
        beta,
    }
}

/// The lab's own plan: n and c both given, 0 <= c < n <= [`MAX_SAMPLE`].
fn fixed(r: &RawSampling, fail: &mut Fail) -> Option<PlanSpec> {
    match (&r.n, &r.c) {
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
    }
}
