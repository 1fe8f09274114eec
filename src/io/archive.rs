//! Zip archives: unpacking an uploaded manifest with its clips (safely), and packing an
//! export folder for download.

use super::limits::{Limits, human_bytes};
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

/// Most entries an uploaded archive may hold.
const MAX_ENTRIES: usize = 200_000;

fn zip_error(e: zip::result::ZipError) -> Error {
    Error::Invalid(format!("the file is not a readable zip archive: {e}"))
}

/// Unpacks `archive` into `dest` (which must exist and be empty), within `limits`:
/// entries whose names would leave `dest` (absolute, `..`) are refused; so are
/// archives of more than 200,000 entries, archives that unpack to more than the
/// unzip limit or than the free space of `data_dir` allows, and entries that compress
/// better than the ratio limit (a bomb, not a video). The sizes an archive declares
/// are checked first and the bytes actually unpacked again while unpacking.
pub fn unpack(archive: &Path, dest: &Path, limits: &Limits, data_dir: &Path) -> Result<()> {
    let f = File::open(archive).map_err(|e| Error::io("cannot open the upload", e))?;
    let mut zip = ZipArchive::new(f).map_err(zip_error)?;
    if zip.len() > MAX_ENTRIES {
        return Err(Error::Invalid(format!(
            "the archive holds {} entries; at most {MAX_ENTRIES} are accepted",
            zip.len()
        )));
    }
    let too_big = |n: u64| {
        Error::Invalid(format!(
            "the archive unpacks to {} or more, more than the limit of {} (set TANDEM_MAX_UNZIP_BYTES to raise it)",
            human_bytes(n),
            human_bytes(limits.unzip_bytes)
        ))
    };
    let bomb = |name: &str, ratio: u64| {
        Error::Invalid(format!(
            "the archive entry `{name}` unpacks to {ratio} times its compressed size, more than the limit of {} (videos hardly compress; set TANDEM_MAX_ZIP_RATIO to raise it)",
            limits.zip_ratio
        ))
    };
    // What the archive says about itself.
    let mut declared = 0u64;
    for i in 0..zip.len() {
        let entry = zip.by_index_raw(i).map_err(zip_error)?;
        declared = declared.saturating_add(entry.size());
        let compressed = entry.compressed_size().max(1);
        if entry.size() > 1024 * 1024 && entry.size() / compressed > limits.zip_ratio {
            return Err(bomb(
                &entry.name().unwrap_or_default(),
                entry.size() / compressed,
            ));
        }
    }
    if declared > limits.unzip_bytes {
        return Err(too_big(declared));
    }
    super::limits::require_space(data_dir, declared, limits, "the unpacked archive")?;
    // What it really holds.
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
        let compressed = entry.compressed_size().max(1);
        let declared_size = entry.size();
        let mut file = File::create(&out).map_err(|e| Error::io("cannot unpack", e))?;
        let mut buf = vec![0u8; 64 * 1024];
        let mut this = 0u64;
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
            this += n as u64;
            total += n as u64;
            if this > declared_size {
                return Err(Error::Invalid(format!(
                    "the archive entry `{}` holds more than the {} it declares",
                    name.display(),
                    human_bytes(declared_size)
                )));
            }
            if this > 1024 * 1024 && this / compressed > limits.zip_ratio {
                return Err(bomb(&name.display().to_string(), this / compressed));
            }
            if total > limits.unzip_bytes {
                return Err(too_big(total));
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
        .and_then(|entries| entries.map(|e| e.map(|e| e.path())).collect())
        .map_err(|e| Error::io("cannot read the upload", e))?;
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
        let listed: Vec<PathBuf> = std::fs::read_dir(&root)
            .and_then(|entries| entries.map(|e| e.map(|e| e.path())).collect())
            .map_err(|e| Error::io("cannot read the upload", e))?;
        let jsonl: Vec<PathBuf> = listed
            .into_iter()
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
            .map_err(|e| Error::fault("cannot write the archive", e))?;
        let mut src = File::open(&p).map_err(|e| Error::io("cannot read the export", e))?;
        std::io::copy(&mut src, &mut zip).map_err(|e| Error::io("cannot write the archive", e))?;
    }
    let mut f = zip
        .finish()
        .map_err(|e| Error::fault("cannot finish the archive", e))?;
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
        unpack(&z, &out, &Limits::default(), dir.path()).unwrap();
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
        let err = unpack(&z, &out, &Limits::default(), dir.path()).unwrap_err();
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
        assert!(unpack(&z, &out, &Limits::default(), dir.path()).is_err());
    }

    #[test]
    fn a_zip_bomb_is_refused_before_it_fills_the_disk() {
        // 200 MB of zeros compress to about 200 KB.
        let dir = tempfile::tempdir().unwrap();
        let z = dir.path().join("bomb.zip");
        let mut w = ZipWriter::new(File::create(&z).unwrap());
        let opts = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
        w.start_file("manifest.jsonl", opts).unwrap();
        let zeros = vec![0u8; 1024 * 1024];
        for _ in 0..200 {
            w.write_all(&zeros).unwrap();
        }
        w.finish().unwrap();
        assert!(std::fs::metadata(&z).unwrap().len() < 1024 * 1024);
        let out = dir.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        let err = unpack(&z, &out, &Limits::default(), dir.path()).unwrap_err();
        assert!(err.to_string().contains("TANDEM_MAX_ZIP_RATIO"), "{err}");
        let left: u64 = std::fs::read_dir(&out).unwrap().count() as u64;
        assert_eq!(left, 0, "nothing was unpacked");
        // With a lower total limit the size is what refuses it.
        let small = Limits {
            unzip_bytes: 1024,
            zip_ratio: u64::MAX,
            ..Limits::default()
        };
        let err = unpack(&z, &out, &small, dir.path()).unwrap_err();
        assert!(err.to_string().contains("TANDEM_MAX_UNZIP_BYTES"), "{err}");
    }
}
