//! What a protocol says of its report's tables: how Table 11 lays its tasks out, and
//! what each table is called. A protocol without a `[tables]` section gets the generic
//! layout (`Tables::default`) and names a reader understands without the paper.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A table of the QC report and of the blind study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Table {
    /// Stage 1: clips retained per task.
    T11,
    /// Stage 2: questions rejected per task and QA type.
    T12,
    /// The validator pairs' agreement in both stages.
    T13,
    /// The blind study's ranks.
    T14,
    /// The blind study's real-or-fake judgments.
    T15,
    /// The annotator pool: the campaign's groups.
    T16,
}

impl Table {
    pub const ALL: [Table; 6] = [
        Table::T11,
        Table::T12,
        Table::T13,
        Table::T14,
        Table::T15,
        Table::T16,
    ];

    /// Its key in a protocol file's `[tables] names` ("t11").
    pub fn key(self) -> &'static str {
        match self {
            Table::T11 => "t11",
            Table::T12 => "t12",
            Table::T13 => "t13",
            Table::T14 => "t14",
            Table::T15 => "t15",
            Table::T16 => "t16",
        }
    }

    /// The table `key` names ("t11"), if any.
    pub fn from_key(key: &str) -> Option<Table> {
        Table::ALL.into_iter().find(|t| t.key() == key)
    }

    /// Its name when the protocol gives none.
    pub fn generic_name(self) -> &'static str {
        match self {
            Table::T11 => "Clip review by task",
            Table::T12 => "Question rejections by task and QA type",
            Table::T13 => "Reviewer agreement",
            Table::T14 => "Study ranks",
            Table::T15 => "Study real or fake",
            Table::T16 => "Annotator pool",
        }
    }
}

/// How Table 11 groups the tasks: the values of one attribute as its rows, those of the
/// `columns` attributes together as its columns (one column when there are none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grouping {
    pub rows: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<String>,
    /// What the rows are, as shown ("spatial scale").
    pub row_title: String,
    /// What the columns are, as shown ("perspective / scene dynamics").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub column_title: String,
}

/// The protocol's `[tables]`: stored with the taxonomy only when it has one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tables {
    /// Table 11's layout; none: the generic one (`report::format::grid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t11: Option<Grouping>,
    /// Names by table key ("t11" -> "Table 11"); a table not named here has its
    /// generic name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub names: BTreeMap<String, String>,
}

impl Tables {
    pub fn is_default(&self) -> bool {
        *self == Tables::default()
    }

    /// A page's heading for `table`, which shows `what`: "Table 13: inter-annotator
    /// agreement" where the protocol names the table, else `what` alone, capitalised.
    pub fn heading(&self, table: Table, what: &str) -> String {
        self.titled(table, ": ", what)
    }

    /// A title for `table` that shows `what`: the protocol's name for it and `what`
    /// joined by `sep` ("Table 11 · Stage 1: clips retained per task"), else `what`
    /// alone, capitalised. Figures, LaTeX tables and the bundle's README title their
    /// tables through it, so a protocol that names no tables gets no paper's numbers.
    pub fn titled(&self, table: Table, sep: &str, what: &str) -> String {
        match self.named(table) {
            Some(name) => format!("{name}{sep}{what}"),
            None => {
                let mut letters = what.chars();
                letters.next().map_or_else(String::new, |first| {
                    first.to_uppercase().chain(letters).collect()
                })
            }
        }
    }

    /// `tables` named in one phrase: "Tables 14 and 15" when each is named "Table N"
    /// (as VGenST-Bench's are), else their names, "Study ranks and Study real or fake".
    pub fn names_together(&self, tables: &[Table]) -> String {
        let numbers: Option<Vec<&str>> = tables
            .iter()
            .map(|t| self.name(*t).strip_prefix("Table "))
            .collect();
        match numbers {
            Some(n) if n.len() > 1 => format!("Tables {}", and_joined(&n)),
            _ => and_joined(&tables.iter().map(|t| self.name(*t)).collect::<Vec<_>>()),
        }
    }

    /// The protocol's own name for `table` ("Table 11"), if it gives one.
    pub fn named(&self, table: Table) -> Option<&str> {
        self.names.get(table.key()).map(String::as_str)
    }

    /// The name of `table`: the protocol's, else the generic one.
    pub fn name(&self, table: Table) -> &str {
        self.named(table).unwrap_or(table.generic_name())
    }

    /// VGenST-Bench's tables, as Tandem laid them out before protocols declared them
    /// (`protocols/vgenst.toml` declares the same): scales as rows, perspective x
    /// dynamics as columns, named as the paper names them.
    pub(super) fn former_vgenst() -> Tables {
        Tables {
            t11: Some(Grouping {
                rows: "scale".into(),
                columns: vec!["perspective".into(), "dynamics".into()],
                row_title: "spatial scale".into(),
                column_title: "perspective / scene dynamics".into(),
            }),
            names: Table::ALL
                .into_iter()
                .map(|t| (t.key().to_string(), format!("Table {}", &t.key()[1..])))
                .collect(),
        }
    }
}

/// "a", "a and b", "a, b and c".
fn and_joined(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
