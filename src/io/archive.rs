//! Zip archives: unpacking an uploaded manifest with its clips (safely), and packing an
//! export folder for download.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

/// Most entries an uploaded archive may hold.
const MAX_ENTRIES: usize = 200_000;
/// Most bytes an uploaded archive may unpack to (64 GiB).
const MAX_UNPACKED: u64 = 64 * 1024 * 1024 * 1024;

fn zip_error(e: zip::result::ZipError) -> Error {
    Error::Invalid(format!("the file is not a readable zip archive: {e}"))
}

/// Unpacks `archive` into `dest` (which must exist and be empty). Entries whose names
/// would leave `dest` (absolute, `..`) are refused; so are archives that unpack to more
/// than 64 GiB or hold more than 200,000 entries.
pub fn unpack(archive: &Path, dest: &Path) -> Result<()> {
    let f = File::open(archive).map_err(|e| Error::io("cannot open the upload", e))?;
    let mut zip = ZipArchive::new(f).map_err(zip_error)?;
    if zip.len() > MAX_ENTRIES {
        return Err(Error::Invalid(format!(
            "the archive holds {} entries; at most {MAX_ENTRIES} are accepted",
            zip.len()
        )));
    }
    let mut total = 0u64;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(zip_error)?;
        let Some(name) = entry.enclosed_name() else {
            return Err(Error::Invalid(format!(
                "the archive entry `{}` would be unpacked outside its folder",
                entry.name().unwrap_or_default()
            )));
        };
        let out = dest.join(&name);
        if entry.is_dir() {
            std::fs::create_dir_all(&out).map_err(|e| Error::io("cannot unpack", e))?;
            continue;
        }
        if let Some(parent) = out.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("cannot unpack", e))?;
        }
        let mut file = File::create(&out).map_err(|e| Error::io("cannot unpack", e))?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = entry.read(&mut buf).map_err(|e| {
                Error::Invalid(format!(
                    "the archive is damaged at `{}`: {e}",
                    name.display()
                ))
            })?;
            if n == 0 {
                break;
            }
            total += n as u64;
            if total > MAX_UNPACKED {
                return Err(Error::Invalid(
                    "the archive unpacks to more than 64 GiB".into(),
                ));
            }
            file.write_all(&buf[..n])
                .map_err(|e| Error::io("cannot unpack", e))?;
        }
    }
    Ok(())
}

/// The manifest of an unpacked upload: `manifest.jsonl` at the top (or in the single
/// top-level folder), else the only `.jsonl` file there.
pub fn find_manifest(dir: &Path) -> Result<PathBuf> {
    let mut roots = vec![dir.to_path_buf()];
    let entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io("cannot read the upload", e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    if let [only] = entries.as_slice()
        && only.is_dir()
    {
        roots.push(only.clone());
    }
    for root in roots {
        let named = root.join("manifest.jsonl");
        if named.is_file() {
            return Ok(named);
        }
        let jsonl: Vec<PathBuf> = std::fs::read_dir(&root)
            .map_err(|e| Error::io("cannot read the upload", e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        if let [one] = jsonl.as_slice() {
            return Ok(one.clone());
        }
    }
    Err(Error::Invalid(
        "the archive holds no manifest: put manifest.jsonl at its top, with the videos in folders beside it".into(),
    ))
}

/// Packs every file under `dir` into a zip at `out`, without compression (videos do
/// not shrink), with paths relative to `dir` under `prefix/`.
pub fn pack(dir: &Path, prefix: &str, out: &Path) -> Result<()> {
    let f = File::create(out).map_err(|e| Error::io("cannot create the archive", e))?;
    let mut zip = ZipWriter::new(f);
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .large_file(true);
    let mut stack = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(|e| Error::io("cannot read the export", e))? {
            let p = e
                .map_err(|e| Error::io("cannot read the export", e))?
                .path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    for p in files {
        let rel = p
            .strip_prefix(dir)
            .map_err(|_| Error::Internal("export path outside its folder".into()))?;
        let name = format!("{prefix}/{}", rel.to_string_lossy().replace('\\', "/"));
        zip.start_file(name, options)
            .map_err(|e| Error::Internal(format!("cannot write the archive: {e}")))?;
        let mut src = File::open(&p).map_err(|e| Error::io("cannot read the export", e))?;
        std::io::copy(&mut src, &mut zip).map_err(|e| Error::io("cannot write the archive", e))?;
    }
    let mut f = zip
        .finish()
        .map_err(|e| Error::Internal(format!("cannot finish the archive: {e}")))?;
    f.flush()
        .map_err(|e| Error::io("cannot write the archive", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_and_unpacks_and_finds_the_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(src.join("videos")).unwrap();
        std::fs::write(src.join("manifest.jsonl"), b"{}\n").unwrap();
        std::fs::write(src.join("videos/a.mp4"), b"abc").unwrap();
        let z = dir.path().join("a.zip");
        pack(&src, "bundle", &z).unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        unpack(&z, &out).unwrap();
        assert_eq!(
            std::fs::read(out.join("bundle/videos/a.mp4")).unwrap(),
            b"abc"
        );
        assert_eq!(
            find_manifest(&out).unwrap(),
            out.join("bundle/manifest.jsonl")
        );
    }

    #[test]
    fn an_entry_that_climbs_out_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let z = dir.path().join("evil.zip");
        let mut w = ZipWriter::new(File::create(&z).unwrap());
        w.start_file("../escape.txt", SimpleFileOptions::default())
            .unwrap();
        w.write_all(b"x").unwrap();
        w.finish().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        let err = unpack(&z, &out).unwrap_err();
        assert!(err.to_string().contains("outside"), "{err}");
        assert!(!dir.path().join("escape.txt").exists());
    }

    #[test]
    fn a_file_that_is_not_a_zip_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let z = dir.path().join("x.zip");
        std::fs::write(&z, b"not a zip").unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        assert!(unpack(&z, &out).is_err());
    }
}
