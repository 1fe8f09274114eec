//! The modules depend on each other in one direction only (ARCHITECTURE.md, "Modules"):
//! cli and demo -> server -> web -> app -> store -> domain, with io, report and stats
//! below app and beside store; error, clock, rng, cores, metrics and auth at the bottom;
//! config on those alone. This test reads every source file, resolves every path it
//! names (`use` trees, inline `crate::`, `super::` and `self::` paths, names brought in
//! by `use`) and fails on an edge the table below does not allow, and on any circle
//! between the modules one, two or three levels down (`store::areas::accounts` ->
//! `store::areas::catalog` -> ... -> `store::areas::accounts`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Which top-level modules each top-level module may name.
const ALLOWED: &[(&str, &[&str])] = &[
    ("clock", &[]),
    ("rng", &[]),
    ("cores", &[]),
    ("domain", &["clock", "rng"]),
    ("error", &["domain", "clock"]),
    ("metrics", &["domain", "clock"]),
    ("auth", &["domain", "clock", "error"]),
    ("config", &["error", "clock"]),
    ("stats", &["rng", "cores"]),
    (
        "io",
        &["domain", "error", "clock", "rng", "cores", "auth", "config"],
    ),
    (
        "store",
        &[
            "domain", "error", "clock", "rng", "metrics", "auth", "config",
        ],
    ),
    ("report", &["domain", "error", "clock", "rng", "stats"]),
    (
        "app",
        &[
            "domain", "error", "clock", "rng", "metrics", "auth", "config", "io", "store", "stats",
            "report",
        ],
    ),
    (
        "web",
        &[
            "domain", "error", "clock", "rng", "metrics", "auth", "config", "io", "store", "stats",
            "report", "app",
        ],
    ),
    (
        "server",
        &[
            "domain", "error", "clock", "rng", "metrics", "auth", "config", "store", "app", "web",
        ],
    ),
    (
        "demo",
        &[
            "domain", "error", "clock", "rng", "metrics", "auth", "config", "io", "store", "stats",
            "report", "app", "web", "server",
        ],
    ),
    (
        "cli",
        &[
            "domain", "error", "clock", "rng", "metrics", "auth", "config", "io", "store", "stats",
            "report", "app", "web", "server", "demo",
        ],
    ),
];

fn main_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `src/`, with the module paths it is compiled as.
fn modules(src: &Path) -> Vec<(PathBuf, Vec<Vec<String>>)> {
    let mut files = Vec::new();
    collect(src, &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap_or(&f);
        let mut parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        if parts == ["lib"] || parts == ["main"] {
            parts.clear();
        }
        out.push((f, vec![parts]));
    }
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The source without comments, strings and character literals (a path named in a
/// comment or a message is not a dependency).
fn code_only(s: &str) -> String {
    let b: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !b
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
        {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A character literal ('a', '\n', '\u{1F600}', '\'') or a lifetime ('a).
            if next == Some('\\') {
                let mut j = i + 2;
                while j < b.len() && b[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
                out.push_str("' '");
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Colons,
    Punct(char),
}

fn tokens(s: &str) -> Vec<Tok> {
    let b: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            let word: String = b[start..i].iter().collect();
            // `r#ident` and `$crate` keep their word.
            out.push(Tok::Ident(word));
        } else if c == ':' && b.get(i + 1) == Some(&':') {
            out.push(Tok::Colons);
            i += 2;
        } else if c.is_whitespace() {
            i += 1;
        } else {
            out.push(Tok::Punct(c));
            i += 1;
        }
    }
    out
}

/// A `use` tree flattened to (path, name it binds).
fn use_tree(
    toks: &[Tok],
    i: &mut usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) {
    let mut path = prefix;
    loop {
        match toks.get(*i) {
            Some(Tok::Ident(w)) => {
                path.push(w.clone());
                *i += 1;
            }
            Some(Tok::Punct('*')) => {
                *i += 1;
                out.push((path.clone(), "*".into()));
                return;
            }
            Some(Tok::Punct('{')) => {
                *i += 1;
                loop {
                    match toks.get(*i) {
                        Some(Tok::Punct('}')) => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Punct(',')) => *i += 1,
                        None => return,
                        _ => use_tree(toks, i, path.clone(), out),
                    }
                }
            }
            _ => return,
        }
        match toks.get(*i) {
            Some(Tok::Colons) => *i += 1,
            Some(Tok::Ident(w)) if w == "as" => {
                *i += 1;
                let alias = match toks.get(*i) {
                    Some(Tok::Ident(a)) => a.clone(),
                    _ => String::new(),
                };
                *i += 1;
                if path.last().is_some_and(|l| l == "self") {
                    path.pop();
                }
                out.push((path, alias));
                return;
            }
            _ => {
                if path.last().is_some_and(|l| l == "self") {
                    path.pop();
                }
                let name = path.last().cloned().unwrap_or_default();
                out.push((path, name));
                return;
            }
        }
    }
}

/// Resolves a path as written in module `here` to an absolute module path (without
/// `crate`), or None for a path outside the crate (std, a dependency, a local name).
fn absolute(
    path: &[String],
    here: &[String],
    aliases: &HashMap<String, Vec<String>>,
    tops: &BTreeSet<String>,
) -> Option<Vec<String>> {
    let first = path.first()?;
    let mut base: Vec<String>;
    let rest: &[String];
    match first.as_str() {
        "crate" => {
            base = Vec::new();
            rest = &path[1..];
        }
        "self" => {
            base = here.to_vec();
            rest = &path[1..];
        }
        "super" => {
            base = here.to_vec();
            let mut k = 0;
            while path.get(k).is_some_and(|p| p == "super") {
                base.pop();
                k += 1;
            }
            rest = &path[k..];
        }
        _ => {
            if let Some(a) = aliases.get(first) {
                base = a.clone();
                rest = &path[1..];
            } else if here.is_empty() && tops.contains(first) {
                // In the crate's root, a top-level module by its name.
                base = vec![first.clone()];
                rest = &path[1..];
            } else {
                return None;
            }
        }
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// A module declared inline (`mod name { ... }`): its path, the brace depth at which it
/// closes, and whether it is test code (`#[cfg(test)]`, whose paths are not counted).
struct Inline {
    path: Vec<String>,
    depth: usize,
    test: bool,
}

/// The paths a `use` declaration names, with the names they bind.
type Bound = Vec<(Vec<String>, String)>;

/// What a file names: the paths of a `use` declaration, or one other path.
enum Named {
    Use(Bound),
    Path(Vec<String>),
}

/// Walks a file's tokens, calling `on` for each `use` declaration and each other path,
/// with the module it appears in and whether that is test code.
fn walk(toks: &[Tok], home: &[String], mut on: impl FnMut(&[String], bool, Named)) {
    let mut inline: Vec<Inline> = Vec::new();
    let mut depth = 0usize;
    let mut cfg_test = false;
    let mut k = 0;
    while k < toks.len() {
        let here: Vec<String> = inline
            .last()
            .map_or_else(|| home.to_vec(), |m| m.path.clone());
        let in_test = inline.last().is_some_and(|m| m.test);
        match &toks[k] {
            Tok::Punct('#') => {
                let window = &toks[k..toks.len().min(k + 7)];
                if matches!(window, [Tok::Punct('#'), Tok::Punct('['), Tok::Ident(a), Tok::Punct('('), Tok::Ident(b), Tok::Punct(')'), Tok::Punct(']')] if a == "cfg" && b == "test")
                {
                    cfg_test = true;
                }
            }
            Tok::Ident(w) if w == "mod" => {
                if let (Some(Tok::Ident(name)), Some(Tok::Punct('{'))) =
                    (toks.get(k + 1), toks.get(k + 2))
                {
                    let mut path = here.clone();
                    path.push(name.clone());
                    depth += 1;
                    inline.push(Inline {
                        path,
                        depth,
                        test: cfg_test || in_test,
                    });
                    cfg_test = false;
                    k += 3;
                    continue;
                }
                cfg_test = false;
            }
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                if inline.last().is_some_and(|m| m.depth == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Punct(';') => cfg_test = false,
            Tok::Ident(w)
                if w == "use" && !matches!(toks.get(k.wrapping_sub(1)), Some(Tok::Colons)) =>
            {
                let mut j = k + 1;
                let mut found = Vec::new();
                use_tree(toks, &mut j, Vec::new(), &mut found);
                on(&here, in_test || cfg_test, Named::Use(found));
                k = j;
                continue;
            }
            Tok::Ident(w) if !matches!(toks.get(k.wrapping_sub(1)), Some(Tok::Colons)) => {
                // A path: ident (:: ident)*.
                let mut path = vec![w.clone()];
                let mut j = k + 1;
                while let (Some(Tok::Colons), Some(Tok::Ident(n))) = (toks.get(j), toks.get(j + 1))
                {
                    path.push(n.clone());
                    j += 2;
                }
                if path.len() > 1 || matches!(w.as_str(), "crate" | "super" | "self") {
                    on(&here, in_test, Named::Path(path));
                }
                k = j;
                continue;
            }
            _ => {}
        }
        k += 1;
    }
}

/// Every module path each file names: (the module naming it, the path, the file).
fn edges(src: &Path) -> Vec<(Vec<String>, Vec<String>, PathBuf)> {
    let mods = modules(src);
    let tops: BTreeSet<String> = mods
        .iter()
        .flat_map(|(_, homes)| homes.iter().filter_map(|h| h.first().cloned()))
        .collect();
    let mut out = Vec::new();
    for (file, homes) in &mods {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let toks = tokens(&code_only(&text));
        for home in homes {
            // The names `use` binds, anywhere in the file (a scope's names are visible
            // before its `use` lines too).
            let mut bound: HashMap<String, Vec<String>> = HashMap::new();
            walk(&toks, home, |here, _, named| {
                if let Named::Use(found) = named {
                    for (p, name) in found {
                        if name == "*" || name == "_" {
                            continue;
                        }
                        if let Some(abs) = absolute(&p, here, &bound, &tops) {
                            bound.insert(name, abs);
                        }
                    }
                }
            });
            let mut named: Vec<(Vec<String>, Vec<String>)> = Vec::new();
            walk(&toks, home, |here, test, n| match n {
                _ if test => {}
                Named::Use(found) => {
                    named.extend(found.into_iter().map(|(p, _)| (here.to_vec(), p)));
                }
                Named::Path(path) => named.push((here.to_vec(), path)),
            });
            for (here, path) in named {
                if let Some(abs) = absolute(&path, &here, &bound, &tops) {
                    out.push((here, abs, file.clone()));
                }
            }
        }
    }
    out
}

/// The module a resolved path lands in, `level` deep.
fn node(path: &[String], level: usize, known: &BTreeSet<Vec<String>>) -> Option<String> {
    // The longest prefix that is a module.
    let mut m: Vec<String> = Vec::new();
    for part in path {
        let mut next = m.clone();
        next.push(part.clone());
        if known.contains(&next) {
            m = next;
        } else {
            break;
        }
    }
    if m.is_empty() {
        return None;
    }
    m.truncate(level);
    Some(m.join("::"))
}

fn graph(level: usize) -> BTreeMap<(String, String), BTreeSet<String>> {
    let src = main_dir().join("src");
    let mods = modules(&src);
    let mut known: BTreeSet<Vec<String>> = BTreeSet::new();
    for (_, homes) in &mods {
        for h in homes {
            for k in 1..=h.len() {
                known.insert(h[..k].to_vec());
            }
        }
    }
    let mut g: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for (from, to, file) in edges(&src) {
        let (Some(a), Some(b)) = (node(&from, level, &known), node(&to, level, &known)) else {
            continue;
        };
        if a != b {
            let rel = file
                .strip_prefix(&src)
                .unwrap_or(&file)
                .display()
                .to_string();
            g.entry((a, b)).or_default().insert(rel);
        }
    }
    g
}

#[test]
fn top_level_modules_depend_only_downward() {
    let allowed: HashMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut wrong = Vec::new();
    for ((a, b), files) in graph(1) {
        if a.is_empty() {
            continue;
        }
        match allowed.get(a.as_str()) {
            Some(ok) if ok.contains(&b.as_str()) => {}
            Some(_) => wrong.push(format!(
                "{a} -> {b} (in {})",
                files.into_iter().collect::<Vec<_>>().join(", ")
            )),
            None => wrong.push(format!("{a} is not in the table of this test")),
        }
    }
    assert!(
        wrong.is_empty(),
        "edges against the layers:\n{}",
        wrong.join("\n")
    );
}

/// The groups of modules that reach each other (strongly connected components of more
/// than one module), each sorted.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Tarjan's algorithm.
    struct T<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: HashMap<String, usize>,
        low: HashMap<String, usize>,
        on: BTreeSet<String>,
        stack: Vec<String>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn strong(t: &mut T<'_>, v: &str) {
        t.index.insert(v.to_string(), t.next);
        t.low.insert(v.to_string(), t.next);
        t.next += 1;
        t.stack.push(v.to_string());
        t.on.insert(v.to_string());
        let succ: Vec<String> = t.edges.get(v).into_iter().flatten().cloned().collect();
        for w in succ {
            if !t.index.contains_key(&w) {
                strong(t, &w);
                let lw = t.low[&w];
                let lv = t.low[v];
                t.low.insert(v.to_string(), lv.min(lw));
            } else if t.on.contains(&w) {
                let iw = t.index[&w];
                let lv = t.low[v];
                t.low.insert(v.to_string(), lv.min(iw));
            }
        }
        if t.low[v] == t.index[v] {
            let mut group = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(&w);
                let done = w == v;
                group.push(w);
                if done {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                t.out.push(group);
            }
        }
    }
    let mut t = T {
        edges,
        index: HashMap::new(),
        low: HashMap::new(),
        on: BTreeSet::new(),
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for n in edges.keys() {
        if !t.index.contains_key(n) {
            strong(&mut t, n);
        }
    }
    t.out
}

#[test]
fn no_circle_between_modules_at_any_level() {
    let mut found = Vec::new();
    for level in 1..=3 {
        let g = graph(level);
        let mut adj: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in g.keys() {
            if a.is_empty() {
                continue;
            }
            // A module and the modules inside it are one room.
            if b.starts_with(&format!("{a}::")) || a.starts_with(&format!("{b}::")) {
                continue;
            }
            adj.entry(a.clone()).or_default().insert(b.clone());
        }
        for group in circles(&adj) {
            let mut why = vec![format!("level {level}: {}", group.join(", "))];
            for ((a, b), files) in &g {
                if group.contains(a)
                    && group.contains(b)
                    && adj.get(a).is_some_and(|s| s.contains(b))
                {
                    why.push(format!(
                        "  {a} -> {b} ({})",
                        files.iter().cloned().collect::<Vec<_>>().join(", ")
                    ));
                }
            }
            found.push(why.join("\n"));
        }
    }
    assert!(
        found.is_empty(),
        "modules in a circle:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_resolver_sees_inline_paths_and_use_trees() {
    let src = "use crate::a::{b, c::{self, D}};\nuse super::e as f;\nfn x() { crate::g::h(); c::i(); f::j(); // crate::no\n let s = \"crate::no\"; }\n#[cfg(test)]\nmod tests { use crate::no; }";
    let toks = tokens(&code_only(src));
    let mut i = 1;
    let mut found = Vec::new();
    use_tree(&toks, &mut i, Vec::new(), &mut found);
    assert_eq!(found.len(), 3);
    let dir = tempdir_with(&[("lib.rs", ""), ("k/mod.rs", src)]);
    let e: BTreeSet<String> = edges(&dir)
        .into_iter()
        .map(|(_, to, _)| to.join("::"))
        .collect();
    for want in ["a::b", "a::c", "a::c::D", "e", "g::h", "a::c::i", "e::j"] {
        assert!(e.contains(want), "{want} not found in {e:?}");
    }
    assert!(!e.iter().any(|p| p.contains("no")), "{e:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempdir_with(files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tandem-layers-{}", std::process::id()));
    for (name, text) in files {
        let p = dir.join(name);
        if let Some(parent) = p.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let _ = std::fs::write(p, text);
    }
    dir
}
