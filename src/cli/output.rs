//! What the commands give: an answer as JSON or in words, and an export written to a
//! file or to standard output.

use crate::error::{Error, Result};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

/// Prints the answer as one line of JSON with `--json`, else in words (which end their
/// own lines); only the one printed is made.
pub(super) fn json_or_words<T: Serialize>(
    json: bool,
    value: impl FnOnce() -> T,
    words: impl FnOnce() -> String,
) -> Result<()> {
    if json {
        let line = serde_json::to_string(&value()).map_err(|e| Error::fault("JSON", e))?;
        println!("{line}");
    } else {
        print!("{}", words());
    }
    Ok(())
}

/// `value` as indented JSON, ending in a new line.
pub(super) fn pretty_json(value: &impl Serialize) -> Result<String> {
    serde_json::to_string_pretty(value)
        .map(|text| text + "\n")
        .map_err(|e| Error::fault("cannot write JSON", e))
}

/// Writes an export (`app::exports`) to `out`, or to standard output.
pub(super) fn write_download(out: Option<&Path>, d: crate::app::exports::Download) -> Result<()> {
    let bytes = d.into_bytes()?;
    write_out(out, |w| {
        w.write_all(&bytes)
            .map_err(|e| Error::io("cannot write the export", e))
    })
}

/// Runs `f` on the file `out` (created, and synced after), or on standard output.
pub(super) fn write_out(
    out: Option<&Path>,
    f: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    match out {
        Some(path) => {
            let mut file = std::fs::File::create(path)
                .map_err(|e| Error::io(format!("cannot create {}", path.display()), e))?;
            f(&mut file)?;
            file.sync_all()
                .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
        }
        None => {
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            f(&mut lock)
        }
    }
}
