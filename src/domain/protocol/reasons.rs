//! The `[[reason]]` entries checked: each in a stage the protocol reviews, its code
//! declared once in its stage, its key a digit no other reason of the stage uses, its
//! levels among the protocol's (questions only); and every stage reviewed has one.

use super::Problems;
use super::header::unknown_level;
use super::raw::{RawFile, RawReason};
use crate::domain::taxonomy::ReasonDef;
use crate::domain::{Level, Stage, check_identifier};
use std::collections::HashSet;

pub(super) fn reasons(
    raw: &RawFile,
    clip_review: bool,
    levels: &[Level],
    problems: &mut Problems,
) -> Vec<ReasonDef> {
    let mut reasons: Vec<ReasonDef> = Vec::new();
    let mut keys: HashSet<(i64, i64)> = HashSet::new();
    for (i, r) in raw.reason.iter().enumerate() {
        let at = |f: &str| format!("reason[{}].{f}", i + 1);
        let context = Context {
            at: &at,
            clip_review,
            levels,
            before: &reasons,
        };
        if let Some(def) = reason(r.get_ref(), &context, &mut keys, problems) {
            reasons.push(def);
        }
    }
    for stage in Stage::BOTH {
        let in_use = stage == Stage::Question || clip_review;
        if in_use && !reasons.iter().any(|r| r.stage == stage) {
            problems.push(
                raw.protocol.span(),
                "reason",
                format!(
                    "Stage {stage} ({} review) has no reasons: a reject needs one ([[reason]] with stage = {stage})",
                    stage.item_noun()
                ),
            );
        }
    }
    reasons
}

/// What one reason is checked against.
struct Context<'a> {
    /// The field path of one of its fields.
    at: &'a dyn Fn(&str) -> String,
    clip_review: bool,
    levels: &'a [Level],
    /// The reasons declared before it.
    before: &'a [ReasonDef],
}

/// One reason checked; none when its stage is not one the protocol reviews (nothing
/// more is said of it then). `keys` holds the (stage, key) of the reasons before it.
fn reason(
    r: &RawReason,
    context: &Context,
    keys: &mut HashSet<(i64, i64)>,
    problems: &mut Problems,
) -> Option<ReasonDef> {
    let at = context.at;
    let Some(stage) = Stage::from_number(*r.stage.get_ref()) else {
        problems.push(
            r.stage.span(),
            at("stage"),
            format!(
                "must be 1 (clip review) or 2 (question review), not {}",
                r.stage.get_ref()
            ),
        );
        return None;
    };
    if stage == Stage::Clip && !context.clip_review {
        problems.push(
            r.stage.span(),
            at("stage"),
            "a Stage 1 reason, but the protocol reviews no clips (protocol.clip_review = false)",
        );
        return None;
    }
    let code = r.code.get_ref().trim();
    if let Err(m) = check_identifier("the code", code) {
        problems.push(r.code.span(), at("code"), m);
    } else if context
        .before
        .iter()
        .any(|d| d.stage == stage && d.code == code)
    {
        problems.push(
            r.code.span(),
            at("code"),
            format!("reason `{code}` is declared twice in Stage {stage}"),
        );
    }
    if r.label.get_ref().trim().is_empty() {
        problems.push(r.label.span(), at("label"), "is empty");
    }
    let key = *r.key.get_ref();
    if !(1..=9).contains(&key) {
        problems.push(
            r.key.span(),
            at("key"),
            format!("must be a digit from 1 to 9, not {key}"),
        );
    } else if !keys.insert((stage.number(), key)) {
        problems.push(
            r.key.span(),
            at("key"),
            format!("key {key} is used twice in Stage {stage}: a key names one reason of a stage"),
        );
    }
    Some(ReasonDef {
        stage,
        code: code.to_string(),
        label: r.label.get_ref().trim().to_string(),
        key: u8::try_from(key).unwrap_or(0),
        levels: reason_levels(r, stage, at, context.levels, problems),
        note: r.note,
    })
}

/// The levels a reason applies to (Stage 2 only): each declared, none twice.
fn reason_levels(
    r: &RawReason,
    stage: Stage,
    at: &dyn Fn(&str) -> String,
    declared: &[Level],
    problems: &mut Problems,
) -> Vec<Level> {
    let mut levels = Vec::new();
    let Some(ls) = &r.levels else {
        return levels;
    };
    if stage == Stage::Clip {
        problems.push(
            ls.span(),
            at("levels"),
            "a Stage 1 reason has no levels (clips have none; levels are the questions')",
        );
    }
    if ls.get_ref().is_empty() {
        problems.push(
            ls.span(),
            at("levels"),
            "is empty: leave it out for a reason of every level",
        );
    }
    for (j, l) in ls.get_ref().iter().enumerate() {
        let field = at(&format!("levels[{}]", j + 1));
        match declared.iter().find(|d| d.as_str() == l.get_ref()) {
            Some(level) if levels.contains(level) => problems.push(
                l.span(),
                field,
                format!("names level {} twice", level.as_str()),
            ),
            Some(level) => levels.push(level.clone()),
            None => problems.push(l.span(), field, unknown_level(declared, l.get_ref())),
        }
    }
    levels
}
