//! The `[tables]` section checked: Table 11's grouping by attributes every task declares,
//! and the tables' names, none empty.
//!
//! ```toml
//! [tables]
//! t11 = { rows = "scale", columns = ["perspective", "dynamics"],
//!         row_title = "spatial scale", column_title = "perspective / scene dynamics" }
//! names = { t11 = "Table 11", t12 = "Table 12" }   # the others keep their generic names
//! ```

use super::Problems;
use super::raw::{RawGrouping, RawNames, RawTables};
use crate::domain::taxonomy::{Grouping, Table, Tables, TaskDef};
use toml::Spanned;

/// The checked `[tables]`; the default (generic layout and names) without the section.
pub(super) fn tables(
    raw: Option<&Spanned<RawTables>>,
    tasks: &[TaskDef],
    problems: &mut Problems,
) -> Tables {
    let Some(raw) = raw.map(Spanned::get_ref) else {
        return Tables::default();
    };
    Tables {
        t11: raw
            .t11
            .as_ref()
            .map(|g| grouping(g.get_ref(), tasks, problems)),
        names: raw
            .names
            .as_ref()
            .map(|n| names(n.get_ref(), problems))
            .unwrap_or_default(),
    }
}

/// Table 11's grouping: its attributes each declared by every task, none twice.
fn grouping(raw: &RawGrouping, tasks: &[TaskDef], problems: &mut Problems) -> Grouping {
    let mut seen: Vec<&str> = Vec::new();
    let named = std::iter::once(("tables.t11.rows".to_string(), &raw.rows)).chain(
        raw.columns
            .iter()
            .enumerate()
            .map(|(i, c)| (format!("tables.t11.columns[{}]", i + 1), c)),
    );
    for (field, name) in named {
        let attribute = name.get_ref().trim();
        if seen.contains(&attribute) {
            problems.push(
                name.span(),
                field,
                format!("attribute `{attribute}` is named twice"),
            );
            continue;
        }
        seen.push(attribute);
        let lacking: Vec<&str> = tasks
            .iter()
            .filter(|t| t.attribute(attribute).is_none())
            .map(|t| t.code.as_str())
            .collect();
        if !lacking.is_empty() {
            problems.push(
                name.span(),
                field,
                format!(
                    "task{} `{}` {} no attribute `{attribute}` (the t11 layout groups every task by it)",
                    if lacking.len() == 1 { "" } else { "s" },
                    lacking.join("`, `"),
                    if lacking.len() == 1 { "has" } else { "have" },
                ),
            );
        }
    }
    let columns: Vec<String> = raw
        .columns
        .iter()
        .map(|c| c.get_ref().trim().to_string())
        .collect();
    let row_title = title(
        raw.row_title.as_ref(),
        "tables.t11.row_title",
        raw.rows.get_ref().trim().to_string(),
        problems,
    );
    let column_title = title(
        raw.column_title.as_ref(),
        "tables.t11.column_title",
        columns.join(" / "),
        problems,
    );
    Grouping {
        rows: raw.rows.get_ref().trim().to_string(),
        columns,
        row_title,
        column_title,
    }
}

/// A title as given, or `otherwise` (the attributes' names) when left out.
fn title(
    given: Option<&Spanned<String>>,
    field: &str,
    otherwise: String,
    problems: &mut Problems,
) -> String {
    match given {
        Some(t) if t.get_ref().trim().is_empty() => {
            problems.push(
                t.span(),
                field,
                "is empty (leave it out for the attributes' names)",
            );
            otherwise
        }
        Some(t) => t.get_ref().trim().to_string(),
        None => otherwise,
    }
}

/// The names the protocol gives, by table key; none empty.
fn names(raw: &RawNames, problems: &mut Problems) -> std::collections::BTreeMap<String, String> {
    let given = [
        (Table::T11, &raw.t11),
        (Table::T12, &raw.t12),
        (Table::T13, &raw.t13),
        (Table::T14, &raw.t14),
        (Table::T15, &raw.t15),
        (Table::T16, &raw.t16),
    ];
    let mut out = std::collections::BTreeMap::new();
    for (table, name) in given {
        let Some(name) = name else { continue };
        let text = name.get_ref().trim();
        if text.is_empty() {
            problems.push(
                name.span(),
                format!("tables.names.{}", table.key()),
                format!("is empty (leave it out for \"{}\")", table.generic_name()),
            );
        } else {
            out.insert(table.key().to_string(), text.to_string());
        }
    }
    out
}

/// The `[[field]]` entries checked: each a manifest key Tandem does not read itself,
/// named once, with a label.
pub(super) fn fields(
    raw: &[Spanned<super::raw::RawField>],
    problems: &mut Problems,
) -> Vec<crate::domain::taxonomy::FieldDef> {
    use crate::domain::taxonomy::{FieldDef, MANIFEST_KEYS};
    let mut out: Vec<FieldDef> = Vec::new();
    for (i, f) in raw.iter().enumerate() {
        let f = f.get_ref();
        let at = format!("field[{}]", i + 1);
        let name = f.name.get_ref().trim();
        let label = f.label.get_ref().trim();
        if let Err(m) = crate::domain::check_identifier("a field's name", name) {
            problems.push(f.name.span(), format!("{at}.name"), m);
            continue;
        }
        if MANIFEST_KEYS.contains(&name) {
            problems.push(
                f.name.span(),
                format!("{at}.name"),
                format!("`{name}` is a manifest key Tandem reads itself; declare another"),
            );
            continue;
        }
        if out.iter().any(|o| o.name == name) {
            problems.push(
                f.name.span(),
                format!("{at}.name"),
                format!("field `{name}` is declared twice"),
            );
            continue;
        }
        if label.is_empty() {
            problems.push(
                f.label.span(),
                format!("{at}.label"),
                "a field needs a label",
            );
            continue;
        }
        out.push(FieldDef {
            name: name.to_string(),
            label: label.to_string(),
            required: f.required,
        });
    }
    if out.len() > super::MAX_ENTRIES {
        problems.push(
            0..0,
            "field",
            format!("at most {} fields", super::MAX_ENTRIES),
        );
    }
    out
}
