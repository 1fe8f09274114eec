//! `tandem protocol`: a protocol file checked, or the shipped VGenST-Bench one printed
//! (no data folder, no database); and a taxonomy's size in words, which `campaign`
//! says too.

use crate::domain::taxonomy::Taxonomy;
use crate::error::Result;
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand, Debug)]
pub enum ProtocolCommand {
    /// Read and check a protocol file: every problem, each with its line and field
    Check {
        file: PathBuf,
        /// Print the protocol read (its tasks, QA types and cells) as JSON
        #[arg(long)]
        json: bool,
    },
    /// Print the shipped VGenST-Bench protocol file
    Vgenst,
}

impl ProtocolCommand {
    /// Reads a file (bounded by `TANDEM_MAX_MANIFEST_BYTES`) or prints the shipped one.
    pub(super) fn run(self) -> Result<()> {
        match self {
            ProtocolCommand::Vgenst => {
                print!("{}", crate::domain::protocol::VGENST);
                Ok(())
            }
            ProtocolCommand::Check { file, json } => {
                let limits = crate::config::Limits::from_env()?;
                let p = crate::io::protocol::read(&file, &limits)?;
                let t = &p.taxonomy;
                // A sampling rule's plan is found here too: one that cannot be is refused.
                let plans = crate::app::sampling::planned(&t.sampling)?;
                if json {
                    let sampling: Vec<serde_json::Value> = plans
                        .iter()
                        .map(|r| {
                            serde_json::json!({
                                "stratum": r.rule.describe(), "n": r.n, "c": r.c,
                            })
                        })
                        .collect();
                    println!(
                        "{}",
                        serde_json::json!({
                            "name": p.name, "version": p.version, "description": p.description,
                            "taxonomy": t, "cells": t.cell_count(), "sampling": sampling,
                        })
                    );
                } else {
                    println!(
                        "{}: protocol `{}` (version {}) is sound: {}",
                        file.display(),
                        p.name,
                        p.version,
                        sizes(t, None)
                    );
                    println!("  pairing: {}", t.pairing.words());
                    for r in &plans {
                        println!(
                            "  reviewed by sample: {}: {} of each lot, accepted with at most {} defect(s)",
                            r.rule.describe(),
                            r.n,
                            r.c
                        );
                    }
                }
                Ok(())
            }
        }
    }
}

/// A taxonomy's size in words: "11 tasks, 2 QA types, 22 task x QA-type cells" (with
/// how many tasks are new, for a protocol change).
pub(super) fn sizes(t: &Taxonomy, new: Option<usize>) -> String {
    format!(
        "{} tasks{}, {} QA types, {} task x QA-type cells",
        t.tasks.len(),
        new.map(|n| format!(" ({n} new)")).unwrap_or_default(),
        t.qa_types.len(),
        t.cell_count()
    )
}
