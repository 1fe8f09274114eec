//! Bulk records: bringing an existing QC run in (decisions and resolutions, applied in
//! file order in one write) and reading the campaign out (every decision, the retained
//! benchmark, the regeneration list, the audit trail). (The types; the SQL is in
//! `store/areas/records.rs`; the records themselves are `domain::records`.)

use serde::Serialize;

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct BulkSummary {
    pub rows: usize,
    pub recorded: usize,
    /// Rows that repeated a stored record and added nothing.
    pub repeated: usize,
}

impl std::fmt::Display for BulkSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} row(s): {} recorded, {} already stored",
            self.rows, self.recorded, self.repeated
        )
    }
}
