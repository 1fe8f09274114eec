//! `tandem stats`: the QC tables from the raw decisions, and the study's, the annotator
//! pool's and the human baseline's, as a summary, one table, or all as JSON.

use super::CampaignArg;
use super::output::pretty_json;
use crate::domain::facts::Scope;
use crate::error::{Error, Result};
use crate::report::format::{Format, TableId};
use crate::store::Store;
use clap::Args;

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// Print every table as one JSON object (keys t11, t12, t13, reasons, validators,
    /// t14, t14_tests and t15 when the campaign has a study, baseline when it has
    /// baseline answers)
    #[arg(long, conflicts_with = "table")]
    pub json: bool,
    /// Print one table: T11, T12, T13, the study's T14 or T15, Table 16 (the annotator pool: the campaign's groups), or the human baseline's (`baseline`)
    #[arg(long)]
    pub table: Option<String>,
    /// Format of --table: csv, latex or json
    #[arg(long, default_value = "json")]
    pub format: String,
    #[command(flatten)]
    pub campaign: CampaignArg,
    /// Only this task (its code)
    #[arg(long)]
    pub task: Option<String>,
    /// Only this pair, as RATER1,RATER2
    #[arg(long)]
    pub pair: Option<String>,
    /// Stage 1 over the first version of every clip (first) or every version (all)
    #[arg(long, default_value = "first")]
    pub versions: String,
}

impl StatsArgs {
    pub(super) async fn run(self, store: &Store) -> Result<()> {
        let campaign = store.campaign(&self.campaign.campaign).await?;
        let scope =
            Scope::parse(self.task, self.pair.as_deref(), &self.versions).map_err(Error::from)?;
        let text = if self.json {
            pretty_json(&crate::app::stats_json(store, &campaign, &scope).await?)?
        } else if let Some(t) = self.table {
            let table = TableId::parse(&t).map_err(|m| Error::field("table", m))?;
            let format = Format::parse(&self.format).map_err(|m| Error::field("format", m))?;
            crate::app::table_text(store, &campaign, &scope, table, format).await?
        } else {
            crate::report::format::summary(&crate::app::qc_report(store, &campaign, &scope).await?)
        };
        print!("{text}");
        Ok(())
    }
}
