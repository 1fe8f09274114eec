//! A protocol file read from disk: a regular file within the manifest size limit, UTF-8,
//! checked whole by `domain::protocol::parse`; its problems come back as one
//! [`Error::Rejected`] naming each line and field.

use super::limits::{self, Limits};
use crate::domain::protocol::{self, Protocol};
use crate::error::{Error, LineError, Rejected, Result};
use std::io::Read;
use std::path::Path;

/// Reads and checks the protocol file at `path`.
pub fn read(path: &Path, limits: &Limits) -> Result<Protocol> {
    let file = limits::open_regular(
        path,
        "the protocol file",
        limits.manifest_bytes,
        "TANDEM_MAX_MANIFEST_BYTES",
    )?;
    let mut bytes = Vec::new();
    file.take(limits.manifest_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
    let what = format!("protocol file {}", path.display());
    let text = String::from_utf8(bytes).map_err(|e| {
        let before = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        Error::Rejected(Rejected {
            what: what.clone(),
            problems: vec![LineError::new(line, None, "is not UTF-8 text")],
        })
    })?;
    protocol::parse(&text).map_err(|problems| {
        Error::Rejected(Rejected {
            what,
            problems: problems
                .into_iter()
                .map(|p| {
                    LineError::new(
                        p.line,
                        (!p.field.is_empty()).then_some(p.field.as_str()),
                        p.message,
                    )
                })
                .collect(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_file_is_one_refusal_naming_each_line() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("p.toml");
        std::fs::write(
            &path,
            "[protocol]\nname = \"x\"\nversion = 1\n[[task]]\ncode = \"A\"\nname = \"a\"\nqa_types = [\"Q\"]\n\n[[reason]]\nstage = 1\ncode = \"a\"\nlabel = \"A\"\nkey = 1\n\n[[reason]]\nstage = 2\ncode = \"b\"\nlabel = \"B\"\nkey = 1\n",
        )
        .expect("write");
        let err = read(&path, &Limits::default()).unwrap_err();
        let Error::Rejected(r) = &err else {
            panic!("{err}")
        };
        assert_eq!(r.problems.len(), 1);
        assert_eq!(r.problems[0].line, 7);
        assert_eq!(r.problems[0].field.as_deref(), Some("task[1].qa_types[1]"));
        std::fs::write(&path, b"[protocol]\nname = \"\xff\"\n").expect("write");
        let err = read(&path, &Limits::default()).unwrap_err().to_string();
        assert!(err.contains("refused"), "{err}");
        let small = Limits {
            manifest_bytes: 10,
            ..Limits::default()
        };
        let err = read(&path, &small).unwrap_err().to_string();
        assert!(err.contains("TANDEM_MAX_MANIFEST_BYTES"), "{err}");
        let shipped = dir.path().join("vgenst.toml");
        std::fs::write(&shipped, protocol::VGENST).expect("write");
        assert_eq!(
            read(&shipped, &Limits::default()).expect("read"),
            protocol::vgenst()
        );
    }
}
