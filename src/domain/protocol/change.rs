//! Whether a campaign may move to another protocol: what its stored records use of the
//! one it has, and what another must keep of it.

use crate::domain::taxonomy::Taxonomy;
use crate::domain::{Level, Stage};
use std::collections::{BTreeMap, BTreeSet};

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
