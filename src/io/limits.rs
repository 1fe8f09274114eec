//! Bounds on every input Tandem reads from a file or an upload: only regular files,
//! at most so many bytes, lines at most so long, archives that unpack to at most so
//! much and compress no better than a video can, and never past the free space of the
//! data folder. Each refusal names the limit and the setting that raises it.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufRead, Read};
use std::path::Path;

pub use crate::config::Limits;

const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

/// "1.5 GiB", "300 KiB", "12 bytes".
pub fn human_bytes(n: u64) -> String {
    let units = [("GiB", GIB), ("MiB", MIB), ("KiB", 1024)];
    for (name, size) in units {
        if n >= size {
            let v = n as f64 / size as f64;
            return if v.fract() == 0.0 {
                format!("{v:.0} {name}")
            } else {
                format!("{v:.1} {name}")
            };
        }
    }
    format!("{n} bytes")
}

/// Opens `path` for reading if it is a regular file of at most `max` bytes. `what`
/// names it ("the manifest"), `var` the setting that raises the limit.
pub fn open_regular(path: &Path, what: &str, max: u64, var: &str) -> Result<File> {
    let meta = std::fs::metadata(path)
        .map_err(|e| Error::io(format!("cannot open {what} {}", path.display()), e))?;
    if !meta.is_file() {
        return Err(Error::Invalid(format!(
            "{what} {} is not a regular file (a device, a pipe or a folder cannot be imported)",
            path.display()
        )));
    }
    if meta.len() > max {
        return Err(Error::Invalid(format!(
            "{what} {} is {}, more than the limit of {} (set {var} to raise it)",
            path.display(),
            human_bytes(meta.len()),
            human_bytes(max)
        )));
    }
    let file = File::open(path)
        .map_err(|e| Error::io(format!("cannot open {what} {}", path.display()), e))?;
    // The file may grow after the check: never read more than the limit (and one byte
    // to notice).
    Ok(file)
}

/// One line read by [`read_line`].
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// The end of the input.
    End,
    /// A line, in the buffer (with its newline, if any).
    Read,
    /// A line longer than the limit: skipped to its end without being kept.
    TooLong,
}

/// Reads one line into `buf` (cleared first), keeping at most `max` bytes of it; a
/// longer line is read to its end in small steps and dropped, so that memory stays
/// bounded whatever the input. `hash` sees every byte read.
pub fn read_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
    mut hash: impl FnMut(&[u8]),
) -> std::io::Result<Line> {
    buf.clear();
    let mut too_long = false;
    let mut any = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(if !any {
                Line::End
            } else if too_long {
                Line::TooLong
            } else {
                Line::Read
            });
        }
        any = true;
        let (take, done) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        hash(&chunk[..take]);
        if !too_long {
            if buf.len() + take > max {
                too_long = true;
                buf.clear();
                buf.shrink_to(64 * 1024);
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        reader.consume(take);
        if done {
            return Ok(if too_long { Line::TooLong } else { Line::Read });
        }
    }
}

/// A reader that fails once a line grows past `max` bytes (for CSV files, whose
/// reader would otherwise keep a whole endless record in memory).
pub struct LineBounded<R> {
    inner: R,
    max: usize,
    run: usize,
    line: usize,
}

impl<R: Read> LineBounded<R> {
    pub fn new(inner: R, max: usize) -> Self {
        LineBounded {
            inner,
            max,
            run: 0,
            line: 1,
        }
    }
}

impl<R: Read> Read for LineBounded<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(out)?;
        for b in &out[..n] {
            if *b == b'\n' {
                self.run = 0;
                self.line += 1;
            } else {
                self.run += 1;
                if self.run > self.max {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "line {} is longer than the limit of {} (set TANDEM_MAX_LINE_BYTES to raise it)",
                            self.line,
                            human_bytes(self.max as u64)
                        ),
                    ));
                }
            }
        }
        Ok(n)
    }
}

/// Free bytes on the disk that holds `dir`, for this process.
pub fn available_space(dir: &Path) -> Result<u64> {
    let s = rustix::fs::statvfs(dir).map_err(|e| {
        Error::io(
            format!("cannot read the free space of {}", dir.display()),
            std::io::Error::from(e),
        )
    })?;
    Ok(s.f_bavail.saturating_mul(s.f_frsize))
}

/// Refuses a write of `needed` bytes into `dir` unless the disk keeps the margin free
/// afterwards.
pub fn require_space(dir: &Path, needed: u64, limits: &Limits, what: &str) -> Result<()> {
    let free = available_space(dir)?;
    if free < needed.saturating_add(limits.free_space_margin) {
        return Err(Error::Unavailable(format!(
            "not enough free space for {what}: it needs {} and {} must stay free for the database, but the data folder's disk has {} free; free some space (or lower TANDEM_FREE_SPACE_MARGIN_BYTES) and try again",
            human_bytes(needed),
            human_bytes(limits.free_space_margin),
            human_bytes(free)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_line_is_skipped_without_being_kept() {
        // 50 MB without a newline, then a short line: the buffer never grows past the
        // limit.
        let endless = std::io::repeat(b'x').take(50 * 1024 * 1024);
        let rest = std::io::Cursor::new(b"\n{\"ok\":1}\n".to_vec());
        let mut r = std::io::BufReader::new(endless.chain(rest));
        let mut buf = Vec::new();
        let mut seen = 0usize;
        assert_eq!(
            read_line(&mut r, &mut buf, 1024, |b| seen += b.len()).unwrap(),
            Line::TooLong
        );
        assert!(buf.capacity() <= 64 * 1024 + 1024, "{}", buf.capacity());
        assert_eq!(
            read_line(&mut r, &mut buf, 1024, |_| {}).unwrap(),
            Line::Read
        );
        assert_eq!(buf, b"{\"ok\":1}\n");
        assert_eq!(
            read_line(&mut r, &mut buf, 1024, |_| {}).unwrap(),
            Line::End
        );
        assert_eq!(seen, 50 * 1024 * 1024 + 1);
    }

    #[test]
    fn a_device_is_not_a_file_to_import() {
        let e = open_regular(Path::new("/dev/zero"), "the manifest", 10, "X").unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("m.jsonl");
        std::fs::write(&f, vec![b'x'; 2048]).unwrap();
        let e = open_regular(&f, "the manifest", 1024, "TANDEM_MAX_MANIFEST_BYTES").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("2 KiB") && msg.contains("1 KiB"), "{msg}");
        assert!(msg.contains("TANDEM_MAX_MANIFEST_BYTES"), "{msg}");
    }

    #[test]
    fn a_csv_line_past_the_limit_fails_the_read() {
        let mut r = LineBounded::new(std::io::Cursor::new(b"a,b\nccccccccccc\n".to_vec()), 5);
        let mut out = Vec::new();
        let e = r.read_to_end(&mut out).unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
    }

    #[test]
    fn free_space_is_read_and_a_margin_kept() {
        let dir = tempfile::tempdir().unwrap();
        assert!(available_space(dir.path()).unwrap() > 0);
        let l = Limits {
            free_space_margin: u64::MAX / 2,
            ..Limits::default()
        };
        let e = require_space(dir.path(), 1, &l, "the upload").unwrap_err();
        assert!(e.to_string().contains("not enough free space"), "{e}");
    }
}
