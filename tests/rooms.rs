//! Rooms a reader can hold in mind: no function in `src/` over 150 lines and no file over
//! 1,000 (test code aside: a `tests.rs` child module, or the `#[cfg(test)]` module at a
//! file's end). The code is laid out by rustfmt, so a function runs from its `fn` line to
//! the first line that closes it at the same indentation.
//!
//! `OVER` lists what is still over a limit, each with the size it may not exceed: a
//! room that grows past it, a new room over a limit, or a listed room that has come
//! under the limit (strike it from the list) fails the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const FN_LIMIT: usize = 150;
const FILE_LIMIT: usize = 1000;

/// Rooms still over a limit: (file, function or "" for the file itself, lines at most).
const OVER: &[(&str, &str, usize)] = &[];

/// A room over its limit: where it is and how many lines it has.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Room {
    file: String,
    function: String,
    lines: usize,
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs")
            && p.file_name().is_some_and(|n| n != "tests.rs")
        {
            out.push(p);
        }
    }
}

/// The lines of a file before its test module.
fn code_lines(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let end = lines
        .windows(2)
        .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].starts_with("mod "))
        .unwrap_or(lines.len());
    lines[..end].to_vec()
}

/// The name of the function a line begins, if it begins one.
fn fn_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    for prefix in [
        "pub(crate) ",
        "pub(super) ",
        "pub ",
        "const ",
        "async ",
        "unsafe ",
        "extern \"C\" ",
    ] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("async ").unwrap_or(rest);
    let name = rest.strip_prefix("fn ")?;
    let end = name.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&name[..end])
}

/// Every function of a file with its length in lines (a declaration without a body has
/// none and is left out).
fn functions(lines: &[&str]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let Some(name) = fn_name(line) else { continue };
        let indent = line.len() - line.trim_start().len();
        let close = format!("{}}}", " ".repeat(indent));
        let mut body = false;
        for (k, l) in lines.iter().enumerate().skip(start) {
            let code = l.split("//").next().unwrap_or("").trim_end();
            if !body {
                if code.ends_with('{') || (code.contains('{') && code.ends_with('}')) {
                    body = true;
                    if k == start && code.ends_with('}') {
                        out.push((name.to_string(), 1));
                        break;
                    }
                } else if code.ends_with(';') {
                    break;
                }
                continue;
            }
            if *l == close {
                out.push((name.to_string(), k - start + 1));
                break;
            }
        }
    }
    out
}

/// Every room of `src/` over a limit.
fn rooms_over() -> Vec<Room> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut over = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let lines = code_lines(&text);
        if lines.len() > FILE_LIMIT {
            over.push(Room {
                file: file.clone(),
                function: String::new(),
                lines: lines.len(),
            });
        }
        for (function, n) in functions(&lines) {
            if n > FN_LIMIT {
                over.push(Room {
                    file: file.clone(),
                    function,
                    lines: n,
                });
            }
        }
    }
    over.sort();
    over
}

#[test]
fn no_function_over_150_lines_and_no_file_over_1000_but_those_listed_and_none_grows() {
    let listed: BTreeMap<(&str, &str), usize> = OVER.iter().map(|&(f, n, l)| ((f, n), l)).collect();
    let found = rooms_over();
    let mut problems = Vec::new();
    for r in &found {
        let what = if r.function.is_empty() {
            format!("{}: {} lines (the limit is {FILE_LIMIT})", r.file, r.lines)
        } else {
            format!(
                "{}: fn {} has {} lines (the limit is {FN_LIMIT})",
                r.file, r.function, r.lines
            )
        };
        match listed.get(&(r.file.as_str(), r.function.as_str())) {
            None => problems.push(format!("{what}: split it")),
            Some(&most) if r.lines > most => {
                problems.push(format!("{what}, more than the {most} it had: split it"))
            }
            Some(_) => {}
        }
    }
    for &(file, function, _) in OVER {
        if !found
            .iter()
            .any(|r| r.file == file && r.function == function)
        {
            problems.push(format!(
                "{file} {function}: now under the limit, strike it from OVER"
            ));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn the_counter_sees_bodies_declarations_and_test_modules() {
    let text = "\
pub fn one() -> u8 { 1 }
trait T {
    fn declared(&self) -> u8;
    fn multi(
        &self,
    ) -> u8;
}
pub(crate) async fn two(
    a: u8,
) -> u8 {
    let b = {
        a
    };
    b
}
#[cfg(test)]
mod tests {
    fn hidden() {}
}
";
    let lines = code_lines(text);
    assert_eq!(lines.len(), 15);
    assert_eq!(
        functions(&lines),
        vec![("one".to_string(), 1), ("two".to_string(), 8)]
    );
}
