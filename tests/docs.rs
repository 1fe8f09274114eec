//! The manual cannot drift from what it describes, and the image builds:
//!
//! - every relative link and `#anchor` in README.md and `docs/**/*.md` resolves (the file
//!   exists; the anchor is the GitHub slug of one of its headings);
//! - the configuration reference (`docs/reference/configuration.md`) lists exactly the
//!   options and environment variables the binary accepts: `tandem serve --help` and the
//!   global options, the variables the code reads by name, the `AWS_*` keys the media
//!   store takes;
//! - the command-line examples of the manual (```` ```console ```` blocks, `$ tandem ...`
//!   lines) run against the built binary, each page in a fresh folder of its own, and
//!   print what the page shows (`...` stands for any lines; `? failed` after a command:
//!   it must fail);
//! - every path the build reads at compile time (`include_str!`, `include_bytes!`,
//!   rust-embed's `#[folder]`, askama's templates, `sqlx::migrate!`, `build.rs`, the
//!   manifest's targets) lies under a path the Dockerfile's build stage copies to the
//!   same place; the image runs as a user who is not root, keeps its data in a volume,
//!   and its health check is a command of the binary.
//!
//! Each check is also run on a broken example, so that it is known to be able to fail.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// README.md and every Markdown file under docs/, sorted.
fn manual() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut out);
    out.sort();
    out
}

fn rel(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

// ---------------------------------------------------------------- links and anchors

/// The lines of a Markdown text outside fenced code blocks, with their numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// A line without its inline code spans (a link inside backticks is not a link).
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// GitHub's anchor for a heading: its text lowercased, without inline code marks and
/// link targets, every character but letters, digits, `-` and `_` dropped, spaces made
/// hyphens.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading.replace('`', "");
    // [text](target) -> text
    while let Some(open) = rest.find("](") {
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        let start = rest[..open].rfind('[').unwrap_or(open);
        text.push_str(&rest[..start]);
        text.push_str(&rest[start + 1..open]);
        rest = rest[open + close + 1..].to_string();
    }
    text.push_str(&rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every anchor of a Markdown text: its headings' slugs, repeats numbered as GitHub does.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let s = slug(&line[hashes..]);
            let n = seen.entry(s.clone()).or_insert(0);
            out.insert(if *n == 0 {
                s.clone()
            } else {
                format!("{s}-{n}")
            });
            *n += 1;
        }
    }
    out
}

/// Every inline link target `](target)` of a Markdown text, outside code, with its line.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in prose_lines(text) {
        let line = without_code(line);
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            out.push((n, target.to_string()));
            rest = &after[end..];
        }
    }
    out
}

/// The broken links of one Markdown file: each as `file:line: target: why`.
fn broken_links(
    file: &Path,
    text: &str,
    read_other: &dyn Fn(&Path) -> Option<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (n, target) in links(text) {
        if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target.as_str(), None),
        };
        let resolved = if path.is_empty() {
            file.to_path_buf()
        } else {
            file.parent().unwrap().join(path)
        };
        let Some(other) = read_other(&resolved) else {
            out.push(format!("{}:{n}: {target}: no such file", rel(file)));
            continue;
        };
        if let Some(anchor) = anchor
            && !anchors(&other).contains(anchor)
        {
            out.push(format!(
                "{}:{n}: {target}: no heading has this anchor",
                rel(file)
            ));
        }
    }
    out
}

fn read_target(path: &Path) -> Option<String> {
    if path.is_dir() {
        return Some(String::new());
    }
    if path.extension().is_some_and(|e| e == "md") {
        return std::fs::read_to_string(path).ok();
    }
    path.exists().then(String::new)
}

#[test]
fn every_relative_link_and_anchor_of_the_manual_resolves() {
    let mut broken = Vec::new();
    for file in manual() {
        broken.extend(broken_links(&file, &read(&file), &read_target));
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_check_finds_a_missing_file_and_a_wrong_anchor() {
    assert_eq!(
        slug(" The `tandem serve` options"),
        "the-tandem-serve-options"
    );
    assert_eq!(
        slug(" Backup and restore (SQLite, PostgreSQL)"),
        "backup-and-restore-sqlite-postgresql"
    );
    assert_eq!(slug(" See [the API](http-api.md)"), "see-the-api");
    let file = root().join("docs/x.md");
    let text = "# One\n## One\n[a](#one-1) [b](#two) [c](y.md) `[d](z.md)`\n```\n[e](w.md)\n```\n";
    let found = broken_links(&file, text, &|p| (p == file).then(|| text.to_string()));
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].contains("#two") && found[1].contains("y.md"),
        "{found:?}"
    );
}

// ---------------------------------------------------------------- configuration

fn tandem(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(args)
        .env_remove("TANDEM_DATA_DIR")
        .env_remove("DATABASE_URL")
        .output()
        .unwrap()
}

/// The long options and the environment variables of a clap `--help` text.
fn help_options(help: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut flags = BTreeSet::new();
    let mut envs = BTreeSet::new();
    for line in help.lines() {
        let t = line.trim_start();
        if let Some(flag) = t.strip_prefix("--").or_else(|| {
            t.strip_prefix('-')
                .and_then(|s| s.split_once(", --").map(|(_, f)| f))
        }) {
            let name: String = flag
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if name != "help" && name != "version" {
                flags.insert(format!("--{name}"));
            }
        }
    }
    let joined = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for part in joined.split("[env: ").skip(1) {
        let name: String = part
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        envs.insert(name);
    }
    (flags, envs)
}

/// A Rust file without its `#[cfg(test)]` items (a test module, a test helper): from the
/// attribute to the brace that closes the item's first block.
fn without_test_items(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let Some(open) = after.find('{') else {
            return out;
        };
        let mut depth = 0;
        let mut end = after.len();
        for (i, c) in after[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// The string literals naming an environment variable (`"TANDEM_..."`) in the code of
/// `src/`, test code aside (a `tests.rs` file, or a file's `#[cfg(test)]` module, which
/// comes last).
fn variables_read_in_code() -> BTreeSet<String> {
    fn walk(dir: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs")
                && path.file_name().is_some_and(|n| n != "tests.rs")
            {
                let code = without_test_items(&read(&path));
                for part in code.split("\"TANDEM_").skip(1) {
                    let name: String = part
                        .chars()
                        .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                        .collect();
                    if part[name.len()..].starts_with('"') {
                        out.insert(format!("TANDEM_{name}"));
                    }
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(&root().join("src"), &mut out);
    out
}

/// What a configuration page documents: the long options in the first cell of its
/// tables' rows, and every environment variable it names in backticks.
fn documented(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut flags = BTreeSet::new();
    let mut envs = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        if let Some(row) = line.strip_prefix('|') {
            let first = row.split('|').next().unwrap_or("");
            for code in first.split('`').skip(1).step_by(2) {
                if let Some(flag) = code
                    .split_whitespace()
                    .next()
                    .filter(|f| f.starts_with("--"))
                {
                    flags.insert(flag.to_string());
                }
            }
        }
        for code in line.split('`').skip(1).step_by(2) {
            let name = code.split('=').next().unwrap_or("");
            if name.len() > 3
                && name.contains('_')
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                envs.insert(name.to_string());
            }
        }
    }
    (flags, envs)
}

#[test]
fn the_configuration_reference_lists_exactly_what_the_binary_accepts() {
    let help = |args: &[&str]| {
        let out = tandem(args);
        assert!(out.status.success(), "tandem {args:?} failed");
        help_options(&String::from_utf8(out.stdout).unwrap())
    };
    // `serve`'s options, the global ones among them.
    let (flags, mut envs) = help(&["serve", "--help"]);
    let (global_flags, global_envs) = help(&["--help"]);
    assert!(
        global_flags.is_subset(&flags),
        "{global_flags:?} not in serve's {flags:?}"
    );
    envs.extend(global_envs);
    envs.extend(variables_read_in_code());
    // The log filter: tracing-subscriber's own variable, read by `EnvFilter`.
    let cli = read(&root().join("src/cli/mod.rs"));
    assert!(cli.contains("EnvFilter::try_from_default_env"));
    envs.insert("RUST_LOG".to_string());

    let page = read(&root().join("docs/reference/configuration.md"));
    let (doc_flags, doc_envs) = documented(&page);
    assert_eq!(
        doc_flags, flags,
        "the options of `tandem serve --help` against the page's tables"
    );
    // The media store takes every AWS_* variable object_store knows; the page names the
    // ones a lab sets, and each must be one object_store reads.
    let (aws, doc_envs): (BTreeSet<String>, BTreeSet<String>) =
        doc_envs.into_iter().partition(|e| e.starts_with("AWS_"));
    assert_eq!(
        doc_envs, envs,
        "the variables the binary reads against the page"
    );
    let objects = read(&root().join("src/io/objects.rs"));
    assert!(objects.contains("starts_with(\"AWS_\")"));
    for key in &aws {
        key.to_ascii_lowercase()
            .parse::<object_store::aws::AmazonS3ConfigKey>()
            .unwrap_or_else(|_| panic!("{key}: not a variable the media store reads"));
    }
    assert!(
        aws.contains("AWS_ENDPOINT") && aws.contains("AWS_SECRET_ACCESS_KEY"),
        "{aws:?}"
    );
}

#[test]
fn the_configuration_check_sees_an_option_missing_from_the_page() {
    let help = "Options:\n      --bind <BIND>  Address [env: TANDEM_BIND=] [default: x]\n  -h, --help  Print\n";
    let (flags, envs) = help_options(help);
    assert_eq!(flags, BTreeSet::from(["--bind".to_string()]));
    assert_eq!(envs, BTreeSet::from(["TANDEM_BIND".to_string()]));
    let (doc_flags, doc_envs) = documented("| `--drain` | `TANDEM_DRAIN` |\n");
    assert_ne!(doc_flags, flags);
    assert_ne!(doc_envs, envs);
}

/// Every `TANDEM_*` name in a text.
fn tandem_names(text: &str) -> BTreeSet<String> {
    text.split("TANDEM_")
        .skip(1)
        .map(|part| {
            let name: String = part
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            format!("TANDEM_{name}")
        })
        .filter(|n| n.len() > "TANDEM_".len() && !n.ends_with('_'))
        .collect()
}

#[test]
fn every_variable_the_manual_names_is_read_by_the_binary_or_the_test_suite() {
    let mut known = variables_read_in_code();
    known.extend(help_options(&String::from_utf8(tandem(&["serve", "--help"]).stdout).unwrap()).1);
    let mut suite = String::new();
    let mut files = Vec::new();
    sources_of(&root().join("tests"), &mut files);
    for (_, text) in files {
        suite.push_str(&text);
    }
    suite.push_str(&read(&root().join(".ci/run")));
    known.extend(tandem_names(&suite).into_iter().filter(|n| {
        // tests/docs.rs names no variable of its own: only what it reads elsewhere
        n.starts_with("TANDEM_TEST_")
            || n.starts_with("TANDEM_REQUIRE_")
            || n == "TANDEM_PYTHON"
            || n == "TANDEM_AXE"
    }));
    let mut unknown = Vec::new();
    for file in manual() {
        for name in tandem_names(&read(&file)) {
            if !known.contains(&name) {
                unknown.push(format!("{}: {name}", rel(&file)));
            }
        }
    }
    assert!(unknown.is_empty(), "variables nothing reads: {unknown:?}");
    assert!(tandem_names("a `TANDEM_NOPE=1` b").contains("TANDEM_NOPE"));
}

/// The commands of a clap `--help` text's `Commands:` list, `help` aside.
fn help_commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

/// The commands a reference page documents: each `tandem X` (or `tandem X Y` when X has
/// subcommands) in backticks before the `: ` of a list item.
fn documented_commands(page: &str, with_subcommands: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (_, line) in prose_lines(page) {
        let Some(item) = line.strip_prefix("- `tandem ") else {
            continue;
        };
        let head = item.split("`: ").next().unwrap_or("");
        for span in format!("`tandem {head}`").split('`').skip(1).step_by(2) {
            let mut words = span.split_whitespace();
            if words.next() != Some("tandem") {
                continue;
            }
            let Some(cmd) = words.next() else { continue };
            if with_subcommands.contains(cmd) {
                if let Some(sub) = words.next() {
                    out.insert(format!("tandem {cmd} {sub}"));
                }
            } else {
                out.insert(format!("tandem {cmd}"));
            }
        }
    }
    out
}

#[test]
fn the_command_line_reference_names_every_command_and_nothing_else() {
    let text = |args: &[&str]| String::from_utf8(tandem(args).stdout).unwrap();
    let mut commands = BTreeSet::new();
    let mut with_subcommands = BTreeSet::new();
    for cmd in help_commands(&text(&["--help"])) {
        let subs = help_commands(&text(&[&cmd, "--help"]));
        if subs.is_empty() {
            commands.insert(format!("tandem {cmd}"));
        } else {
            with_subcommands.insert(cmd.clone());
            commands.extend(subs.iter().map(|s| format!("tandem {cmd} {s}")));
        }
    }
    assert!(commands.len() > 40, "{commands:?}");
    let page = read(&root().join("docs/reference/cli.md"));
    let documented = documented_commands(&page, &with_subcommands);
    let missing: Vec<_> = commands.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&commands).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "not on the page: {missing:?}; not commands: {unknown:?}"
    );
    let broken = documented_commands(
        "- `tandem user frob NAME`, `tandem serve`: x\n",
        &with_subcommands,
    );
    assert!(!broken.is_subset(&commands));
}

// ---------------------------------------------------------------- command-line examples

/// One `$ tandem ...` line of a console block and what the page says it prints.
#[derive(Debug)]
struct Example {
    line: usize,
    args: Vec<String>,
    fails: bool,
    expected: Vec<String>,
}

/// Splits a command line into words: spaces separate, quotes group, as a shell does for
/// the plain lines the manual shows.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None, c) if c.is_whitespace() => {
                if any {
                    out.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            (_, c) => {
                word.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(word);
    }
    out
}

fn examples(text: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_console = false;
    let mut in_other = false;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("```") {
            if in_console || in_other {
                in_console = false;
                in_other = false;
            } else if t == "```console" {
                in_console = true;
            } else {
                in_other = true;
            }
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(cmd) = t.strip_prefix("$ ") {
            let args = words(cmd);
            assert_eq!(
                args.first().map(String::as_str),
                Some("tandem"),
                "line {}: a console block runs `tandem` only (others go in a sh block)",
                i + 1
            );
            out.push(Example {
                line: i + 1,
                args: args[1..].to_vec(),
                fails: false,
                expected: Vec::new(),
            });
        } else if let Some(last) = out.last_mut() {
            if t == "? failed" && last.expected.is_empty() {
                last.fails = true;
            } else {
                last.expected.push(line.trim_end().to_string());
            }
        }
    }
    out
}

/// Whether a line is what a pattern shows: `...` inside a line stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split("...").collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return pattern == line;
    }
    if !line.starts_with(first) || line.len() < first.len() + last.len() || !line.ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

/// Whether `actual` is what `expected` shows: the lines in order, `...` alone any lines,
/// `...` within a line any text.
fn output_matches(expected: &[String], actual: &str) -> bool {
    let actual: Vec<&str> = actual.lines().map(str::trim_end).collect();
    fn go(e: &[String], a: &[&str]) -> bool {
        match e.split_first() {
            None => a.is_empty(),
            Some((first, rest)) if first == "..." => (0..=a.len()).any(|k| go(rest, &a[k..])),
            Some((first, rest)) => {
                a.first().is_some_and(|l| line_matches(first, l)) && go(rest, &a[1..])
            }
        }
    }
    expected.is_empty() || go(expected, &actual)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

#[test]
fn the_command_line_examples_of_the_manual_run_as_shown() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for file in manual() {
        let list = examples(&read(&file));
        if list.is_empty() {
            continue;
        }
        // Each page starts in a folder of its own, holding the repository's examples and
        // protocols as the pages name them; the data folder is the default ./tandem-data.
        let dir = tempfile::tempdir().unwrap();
        for sub in ["examples/protocols", "protocols"] {
            copy_dir(&root().join(sub), &dir.path().join(sub));
        }
        for ex in list {
            ran += 1;
            let out = Command::new(env!("CARGO_BIN_EXE_tandem"))
                .args(&ex.args)
                .current_dir(dir.path())
                .env_remove("TANDEM_DATA_DIR")
                .env_remove("DATABASE_URL")
                .env_remove("RUST_LOG")
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let shown = format!("{}:{}: tandem {}", rel(&file), ex.line, ex.args.join(" "));
            if out.status.success() == ex.fails {
                failures.push(format!("{shown}: exit {} (stderr: {stderr})", out.status));
            } else if !output_matches(&ex.expected, &format!("{stdout}{stderr}")) {
                failures.push(format!(
                    "{shown}: printed\n{stdout}{stderr}\nbut the page shows\n{}",
                    ex.expected.join("\n")
                ));
            }
        }
    }
    assert!(ran >= 10, "only {ran} examples found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_example_runner_reads_commands_status_and_output() {
    let text = "```console\n$ tandem sampling zero --p 0.01\n...\n$ tandem nothing 'a b'\n? failed\n```\n```sh\n$ cargo x\n```\n";
    let list = examples(text);
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].args, ["sampling", "zero", "--p", "0.01"]);
    assert!(list[1].fails && list[1].args == ["nothing", "a b"]);
    let lines = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert!(output_matches(&lines(&["a", "...", "d"]), "a\nb\nc\nd\n"));
    assert!(!output_matches(&lines(&["a", "d"]), "a\nb\nc\nd\n"));
    assert!(!output_matches(&lines(&["a", "..."]), "b\n"));
    assert!(output_matches(
        &lines(&["pw: ...", "x...z"]),
        "pw: 123\nxyz\n"
    ));
    assert!(!output_matches(&lines(&["pw: ...!"]), "pw: 123\n"));
}

// ---------------------------------------------------------------- the Dockerfile

/// A path made plain: no `.` and no `..` (the repository's files only).
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// The first string literal after `at` in `text`.
fn literal_after(text: &str, at: usize) -> Option<String> {
    let start = at + text[at..].find('"')? + 1;
    let end = start + text[start..].find('"')?;
    Some(text[start..end].to_string())
}

/// Every path (relative to the repository) that building the binary reads besides the
/// `.rs` files of `src/`: what the macros in `files` (path, text) name, `build.rs`, the
/// manifest, the lockfile and the manifest's declared targets.
fn compile_time_reads(files: &[(PathBuf, String)], manifest: &str) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for (path, text) in files {
        let dir = path.parent().unwrap();
        for (needle, relative_to_file) in [
            ("include_str!(", true),
            ("include_bytes!(", true),
            ("include!(", true),
            ("sqlx::migrate!(", false),
            ("#[folder = ", false),
            ("#[template(path = ", false),
        ] {
            for (at, _) in text.match_indices(needle) {
                if needle == "sqlx::migrate!(" && text[at + needle.len()..].starts_with(')') {
                    out.insert(PathBuf::from("migrations"));
                    continue;
                }
                let lit = literal_after(text, at + needle.len() - 1).unwrap();
                let p = if needle.starts_with("#[template") {
                    Path::new("templates").join(lit)
                } else if relative_to_file {
                    dir.join(lit)
                } else {
                    PathBuf::from(lit)
                };
                out.insert(normal(&p));
            }
        }
    }
    for line in manifest.lines() {
        if let Some(path) = line.trim().strip_prefix("path = ") {
            out.insert(normal(Path::new(path.trim_matches('"'))));
        }
    }
    for (at, _) in manifest.match_indices("[[bench]]") {
        let name = literal_after(manifest, at + manifest[at..].find("name =").unwrap()).unwrap();
        out.insert(PathBuf::from(format!("benches/{name}.rs")));
    }
    for p in ["Cargo.toml", "Cargo.lock", "build.rs", "src"] {
        out.insert(PathBuf::from(p));
    }
    out
}

/// The paths the Dockerfile's first stage copies from the build context, each only when
/// it lands at the same place under the stage's WORKDIR (so relative paths hold).
fn copied(dockerfile: &str) -> (BTreeSet<PathBuf>, Vec<String>) {
    let mut out = BTreeSet::new();
    let mut problems = Vec::new();
    let mut stages = 0;
    for line in dockerfile.lines() {
        let t = line.trim();
        if t.starts_with("FROM ") {
            stages += 1;
        }
        let Some(rest) = t.strip_prefix("COPY ") else {
            continue;
        };
        if stages != 1 {
            continue;
        }
        let parts: Vec<String> = if rest.trim_start().starts_with('[') {
            serde_json::from_str(rest.trim()).unwrap()
        } else {
            rest.split_whitespace()
                .filter(|w| !w.starts_with("--"))
                .map(String::from)
                .collect()
        };
        let (dest, sources) = parts.split_last().unwrap();
        let into_dir = dest.ends_with('/') || sources.len() > 1;
        for s in sources {
            let src = normal(Path::new(s));
            let lands = if into_dir {
                normal(&Path::new(dest).join(src.file_name().unwrap()))
            } else {
                normal(Path::new(dest))
            };
            if lands == src {
                out.insert(src);
            } else {
                problems.push(format!("COPY {s} lands at {}, not at {s}", lands.display()));
            }
        }
    }
    (out, problems)
}

fn uncovered(reads: &BTreeSet<PathBuf>, copies: &BTreeSet<PathBuf>) -> Vec<PathBuf> {
    reads
        .iter()
        .filter(|r| !copies.iter().any(|c| r.starts_with(c)))
        .cloned()
        .collect()
}

fn sources_of(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources_of(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root()).unwrap().to_path_buf();
            out.push((relative, read(&path)));
        }
    }
}

#[test]
fn the_dockerfile_copies_every_path_the_build_reads() {
    let mut files = Vec::new();
    sources_of(&root().join("src"), &mut files);
    let reads = compile_time_reads(&files, &read(&root().join("Cargo.toml")));
    for must in [
        "fonts/Roboto-Regular.ttf",
        "protocols/vgenst.toml",
        "migrations/sqlite",
        "static",
    ] {
        assert!(
            reads.contains(Path::new(must)),
            "{must} not found among {reads:?}"
        );
    }
    for r in &reads {
        assert!(
            root().join(r).exists(),
            "{}: read by the build, but missing",
            r.display()
        );
    }
    let dockerfile = read(&root().join("Dockerfile"));
    let (copies, problems) = copied(&dockerfile);
    assert!(problems.is_empty(), "{problems:?}");
    let missing = uncovered(&reads, &copies);
    assert!(
        missing.is_empty(),
        "the Dockerfile does not copy {missing:?}"
    );
}

#[test]
fn the_dockerfile_check_finds_what_a_dockerfile_leaves_out() {
    let files = vec![
        (
            PathBuf::from("src/report/render.rs"),
            "pub const FONT: &[u8] = include_bytes!(\"../../fonts/Roboto-Regular.ttf\");".to_string(),
        ),
        (
            PathBuf::from("src/store/sqlite.rs"),
            "let m = sqlx::migrate!(\"migrations/sqlite\");\n#[derive(RustEmbed)]\n#[folder = \"static/\"]"
                .to_string(),
        ),
    ];
    let reads = compile_time_reads(&files, "[[bench]]\nname = \"engine\"\n");
    let (copies, problems) = copied(
        "FROM rust AS build\nCOPY Cargo.toml Cargo.lock ./\nCOPY src src\nCOPY migrations migrations\nCOPY static /elsewhere\nFROM debian\nCOPY fonts fonts\n",
    );
    assert_eq!(problems.len(), 1, "{problems:?}");
    let missing: Vec<String> = uncovered(&reads, &copies)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(
        missing,
        [
            "benches/engine.rs",
            "build.rs",
            "fonts/Roboto-Regular.ttf",
            "static"
        ]
    );
}

#[test]
fn the_image_runs_unprivileged_keeps_its_data_in_a_volume_and_checks_its_health() {
    let dockerfile = read(&root().join("Dockerfile"));
    let runtime = dockerfile.rsplit_once("\nFROM ").unwrap().1;
    let value = |key: &str| {
        runtime
            .lines()
            .find_map(|l| l.trim().strip_prefix(key).map(|v| v.trim().to_string()))
            .unwrap_or_else(|| panic!("no {key} in the runtime stage"))
    };
    let user = value("USER ");
    assert!(user != "root" && user != "0", "the image runs as {user}");
    assert!(runtime.contains(&format!(
        "useradd --system --create-home --home-dir /var/lib/tandem {user}"
    )));
    let volume = value("VOLUME ");
    assert!(
        runtime.contains(&format!("TANDEM_DATA_DIR={volume}")),
        "the data folder is not the volume {volume}"
    );
    let check = value("CMD [\"tandem\", \"");
    let command = check.split('"').next().unwrap();
    let out = tandem(&[command, "--help"]);
    assert!(
        out.status.success(),
        "the health check's `tandem {command}` is no command"
    );
}
