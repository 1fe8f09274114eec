//! Golden vectors: every statistic of `tandem::stats` against the reference libraries.
//!
//! Reads `tests/data/golden/agreement.json`; for every vector computes, by kind, a JSON
//! value shaped like `expected` and compares them recursively under the README's
//! tolerance rule. Nothing depends on a vector's name: a hidden set with other seeds and
//! shapes of the same kinds runs through this same code. Every mismatch is reported,
//! with the vector's name and the field's dotted path.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use tandem::stats::agreement::{self, CohenKappa, Table, WeightedKappa};
use tandem::stats::binomial::{self, Alternative};
use tandem::stats::multi::{self, CacEstimate, FleissKappa, Ratings};
use tandem::stats::ranks::{self, RankingSummary};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden")
}

// ---------------------------------------------------------------------------------
// Turning results into JSON
// ---------------------------------------------------------------------------------

/// A finite number; a non-finite one becomes a string so that it fails the comparison
/// (serde_json would silently turn NaN into null, which could pass for "undefined").
fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x)
        .map(Value::Number)
        .unwrap_or_else(|| Value::String(format!("non-finite number {x}")))
}

fn opt(x: Option<f64>) -> Value {
    x.map_or(Value::Null, num)
}

fn cohen_json(c: &CohenKappa) -> Value {
    let mut m = Map::new();
    m.insert("n".into(), num(c.n));
    m.insert("p_o".into(), opt(c.p_o));
    m.insert("kappa".into(), opt(c.kappa));
    m.insert("p_e".into(), opt(c.p_e));
    m.insert("kappa_max".into(), opt(c.kappa_max));
    m.insert("std_kappa".into(), opt(c.std_kappa));
    m.insert("ci95_low".into(), opt(c.ci95_low));
    m.insert("ci95_high".into(), opt(c.ci95_high));
    m.insert("std_kappa0".into(), opt(c.std_kappa0));
    m.insert("z".into(), opt(c.z));
    m.insert("p_one_sided".into(), opt(c.p_one_sided));
    m.insert("p_two_sided".into(), opt(c.p_two_sided));
    if let Some(r) = &c.undefined_reason {
        m.insert("undefined_reason".into(), json!(r));
    }
    Value::Object(m)
}

fn weighted_json(w: &WeightedKappa) -> Value {
    let mut m = Map::new();
    m.insert("kappa".into(), opt(w.kappa));
    m.insert("p_e".into(), opt(w.p_e));
    m.insert("std_kappa".into(), opt(w.std_kappa));
    m.insert("ci95_low".into(), opt(w.ci95_low));
    m.insert("ci95_high".into(), opt(w.ci95_high));
    m.insert("std_kappa0".into(), opt(w.std_kappa0));
    m.insert("z".into(), opt(w.z));
    m.insert("p_one_sided".into(), opt(w.p_one_sided));
    m.insert("p_two_sided".into(), opt(w.p_two_sided));
    if let Some(r) = &w.undefined_reason {
        m.insert("undefined_reason".into(), json!(r));
    }
    Value::Object(m)
}

fn cac_json(c: Option<&CacEstimate>) -> Value {
    match c {
        None => Value::Null,
        Some(c) => json!({
            "value": num(c.value),
            "p_a": num(c.p_a),
            "p_e": num(c.p_e),
            "se": opt(c.se),
            "ci95_low": opt(c.ci95_low),
            "ci95_high": opt(c.ci95_high),
            "p_value": opt(c.p_value),
        }),
    }
}

fn fleiss_json(f: Option<&FleissKappa>) -> Value {
    let Some(f) = f else { return Value::Null };
    let mut m = Map::new();
    m.insert("kappa".into(), opt(f.kappa));
    m.insert("p_a".into(), num(f.p_a));
    m.insert("p_e".into(), num(f.p_e));
    m.insert("se0".into(), opt(f.se0));
    m.insert("z".into(), opt(f.z));
    m.insert("p_two_sided".into(), opt(f.p_two_sided));
    if let Some(r) = &f.undefined_reason {
        m.insert("undefined_reason".into(), json!(r));
    }
    Value::Object(m)
}

/// Table cells; counts from pairs are integers.
fn table_json(t: &Table) -> Value {
    Value::Array(
        t.rows()
            .iter()
            .map(|r| {
                Value::Array(
                    r.iter()
                        .map(|&x| {
                            if x.fract() == 0.0 && (0.0..9.0e15).contains(&x) {
                                json!(x as u64)
                            } else {
                                num(x)
                            }
                        })
                        .collect(),
                )
            })
            .collect(),
    )
}

fn ranking_json(s: &RankingSummary, sources: &[String]) -> Value {
    let mut per_source = Map::new();
    for (name, st) in sources.iter().zip(&s.per_source) {
        per_source.insert(
            name.clone(),
            json!({"n": st.n, "mean": opt(st.mean), "std": opt(st.std)}),
        );
    }
    json!({
        "n_blocks": s.n_blocks,
        "k": s.k,
        "has_ties": s.has_ties,
        "per_source": per_source,
        "friedman": s.friedman.as_ref().map_or(Value::Null, |f| json!({
            "chi2": num(f.chi2), "dof": f.dof, "p_value": num(f.p_value),
        })),
        "kendall_w": opt(s.kendall_w),
        "friedman_f": s.friedman_f.as_ref().map_or(Value::Null, |f| json!({
            "F": num(f.f), "dof1": num(f.dof1), "dof2": num(f.dof2), "p_value": num(f.p_value),
        })),
    })
}

// ---------------------------------------------------------------------------------
// Reading inputs
// ---------------------------------------------------------------------------------

fn field<'a>(v: &'a Value, key: &str) -> Result<&'a Value, String> {
    v.get(key).ok_or_else(|| format!("input has no `{key}`"))
}

fn array<'a>(v: &'a Value, key: &str) -> Result<&'a Vec<Value>, String> {
    field(v, key)?
        .as_array()
        .ok_or_else(|| format!("input `{key}` is not an array"))
}

fn f64_of(v: &Value, what: &str) -> Result<f64, String> {
    v.as_f64()
        .ok_or_else(|| format!("{what} is not a number: {v}"))
}

fn u64_of(v: &Value, what: &str) -> Result<u64, String> {
    v.as_u64()
        .ok_or_else(|| format!("{what} is not a non-negative integer: {v}"))
}

/// A category label as used for JSON object keys ("pass", or "1" for the number 1).
fn label_key(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn category_index(categories: &[Value], label: &Value) -> Result<usize, String> {
    categories
        .iter()
        .position(|c| c == label)
        .ok_or_else(|| format!("label {label} is not a declared category"))
}

/// Declared categories and the pairs as index pairs.
type IndexedPairs = (Vec<Value>, Vec<(usize, usize)>);

fn index_pairs(input: &Value) -> Result<IndexedPairs, String> {
    let categories = array(input, "categories")?.clone();
    let mut pairs = Vec::new();
    for (i, p) in array(input, "pairs")?.iter().enumerate() {
        let p = p
            .as_array()
            .filter(|p| p.len() == 2)
            .ok_or_else(|| format!("pair {i} is not a pair"))?;
        pairs.push((
            category_index(&categories, &p[0])?,
            category_index(&categories, &p[1])?,
        ));
    }
    Ok((categories, pairs))
}

fn blocks_of(v: &Value) -> Result<Vec<Vec<f64>>, String> {
    v.as_array()
        .ok_or("blocks is not an array")?
        .iter()
        .enumerate()
        .map(|(b, block)| {
            block
                .as_array()
                .ok_or_else(|| format!("block {b} is not an array"))?
                .iter()
                .map(|x| f64_of(x, "a rank"))
                .collect()
        })
        .collect()
}

fn strings(v: &Value, key: &str) -> Result<Vec<String>, String> {
    Ok(array(v, key)?.iter().map(label_key).collect())
}

// ---------------------------------------------------------------------------------
// Computing each kind
// ---------------------------------------------------------------------------------

fn two_rater_nominal(input: &Value) -> Result<Value, String> {
    let (categories, pairs) = index_pairs(input)?;
    let s = tandem::stats::pairs::two_rater_summary(categories.len(), &pairs)
        .map_err(|e| e.to_string())?;
    Ok(json!({
        "n": s.n,
        "table": table_json(&s.table),
        "percent_agreement": opt(s.percent_agreement),
        "cohen": cohen_json(&s.cohen),
        "pabak": opt(s.pabak),
        "scott_pi": opt(s.scott_pi),
        "gwet_ac1": cac_json(s.gwet_ac1.as_ref()),
        "krippendorff_alpha_nominal": opt(s.krippendorff_alpha_nominal),
    }))
}

fn two_rater_table(input: &Value) -> Result<Value, String> {
    let categories = array(input, "categories")?;
    let rows: Vec<Vec<f64>> = array(input, "table")?
        .iter()
        .map(|r| {
            r.as_array()
                .ok_or("a table row is not an array")?
                .iter()
                .map(|x| f64_of(x, "a table cell"))
                .collect::<Result<Vec<f64>, String>>()
        })
        .collect::<Result<_, _>>()?;
    let t = Table::from_rows(&rows).map_err(|e| e.to_string())?;
    if t.k() != categories.len() {
        return Err(format!(
            "table is {0} x {0} but {1} categories are declared",
            t.k(),
            categories.len()
        ));
    }
    let g = agreement::gwet_ac1_table(&t);
    Ok(json!({
        "n": num(t.total()),
        "table": table_json(&t),
        "percent_agreement": opt(agreement::percent_agreement(&t)),
        "cohen": cohen_json(&agreement::cohen_kappa(&t)),
        "pabak": opt(agreement::pabak(&t)),
        "scott_pi": opt(agreement::scott_pi(&t)),
        "gwet_ac1": g.map_or(Value::Null, |g| json!({
            "value": num(g.value), "p_a": num(g.p_a), "p_e": num(g.p_e),
        })),
    }))
}

fn two_rater_ordinal(input: &Value) -> Result<Value, String> {
    let (categories, pairs) = index_pairs(input)?;
    let s = tandem::stats::pairs::ordinal_summary(categories.len(), &pairs)
        .map_err(|e| e.to_string())?;
    Ok(json!({
        "n": s.n,
        "table": table_json(&s.table),
        "percent_agreement": opt(s.percent_agreement),
        "unweighted_kappa": opt(s.unweighted.kappa),
        "unweighted": cohen_json(&s.unweighted),
        "linear": weighted_json(&s.linear),
        "quadratic": weighted_json(&s.quadratic),
        "krippendorff_alpha_ordinal": opt(s.krippendorff_alpha_ordinal),
        "krippendorff_alpha_interval": opt(s.krippendorff_alpha_interval),
    }))
}

/// The multi-rater block (with `counts`) for rows of raw ratings.
fn multi_block(categories: &[Value], rows: &[&Vec<Value>]) -> Result<Map<String, Value>, String> {
    let mut idx_rows = Vec::with_capacity(rows.len());
    for row in rows {
        let mut r = Vec::with_capacity(row.len());
        for cell in row.iter() {
            r.push(if cell.is_null() {
                None
            } else {
                Some(category_index(categories, cell)?)
            });
        }
        idx_rows.push(r);
    }
    let ratings = Ratings::new(categories.len(), idx_rows).map_err(|e| e.to_string())?;
    let s = multi::multi_rater_summary(&ratings);
    let per_rater: Vec<Value> = s
        .per_rater_counts
        .iter()
        .map(|counts| {
            let mut m = Map::new();
            for (c, n) in categories.iter().zip(counts) {
                m.insert(label_key(c), json!(n));
            }
            Value::Object(m)
        })
        .collect();
    let mut m = Map::new();
    m.insert("n_items".into(), json!(s.n_items));
    m.insert("n_items_declared".into(), json!(s.n_items_declared));
    m.insert("n_items_unrated".into(), json!(s.n_items_unrated));
    m.insert("n_raters".into(), json!(s.n_raters));
    m.insert("complete".into(), json!(s.complete));
    m.insert("n_ratings".into(), json!(s.n_ratings));
    m.insert("counts".into(), json!(s.counts));
    m.insert("percent_agreement".into(), opt(s.percent_agreement));
    m.insert("fleiss".into(), fleiss_json(s.fleiss.as_ref()));
    m.insert("randolph_kappa".into(), opt(s.randolph_kappa));
    m.insert("fleiss_gwet".into(), cac_json(s.fleiss_gwet.as_ref()));
    m.insert("gwet_ac1".into(), cac_json(s.gwet_ac1.as_ref()));
    m.insert(
        "krippendorff_alpha_nominal".into(),
        opt(s.krippendorff_alpha_nominal),
    );
    m.insert("conger_kappa".into(), opt(s.conger_kappa));
    m.insert(
        "pairwise_cohen_kappa".into(),
        s.pairwise_cohen_kappa.as_ref().map_or(Value::Null, |v| {
            Value::Array(v.iter().map(|&k| opt(k)).collect())
        }),
    );
    m.insert("light_kappa".into(), opt(s.light_kappa));
    m.insert("per_rater_counts".into(), Value::Array(per_rater));
    Ok(m)
}

fn multi_rater_nominal(input: &Value) -> Result<Value, String> {
    let categories = array(input, "categories")?;
    let rows: Vec<&Vec<Value>> = array(input, "ratings")?
        .iter()
        .map(|r| r.as_array().ok_or("a ratings row is not an array"))
        .collect::<Result<_, _>>()?;
    let mut out = multi_block(categories, &rows)?;
    if let Some(groups) = input.get("groups").filter(|g| !g.is_null()) {
        let groups = groups.as_array().ok_or("groups is not an array")?;
        if groups.len() != rows.len() {
            return Err(format!("{} groups for {} items", groups.len(), rows.len()));
        }
        let mut order: Vec<String> = Vec::new();
        for g in groups {
            let key = label_key(g);
            if !order.contains(&key) {
                order.push(key);
            }
        }
        let mut by_group = Map::new();
        for key in order {
            let subset: Vec<&Vec<Value>> = rows
                .iter()
                .zip(groups)
                .filter(|(_, g)| label_key(g) == key)
                .map(|(r, _)| *r)
                .collect();
            let mut block = multi_block(categories, &subset)?;
            block.remove("counts");
            by_group.insert(key, Value::Object(block));
        }
        out.insert("by_group".into(), Value::Object(by_group));
    }
    Ok(Value::Object(out))
}

fn rankings(input: &Value) -> Result<Value, String> {
    let sources = strings(input, "sources")?;
    let blocks = blocks_of(field(input, "blocks")?)?;
    let s = ranks::ranking_summary(&blocks).map_err(|e| e.to_string())?;
    if s.k != sources.len() && !blocks.is_empty() {
        return Err(format!("{} sources but blocks of {}", sources.len(), s.k));
    }
    Ok(ranking_json(&s, &sources))
}

fn ranking_study(input: &Value) -> Result<Value, String> {
    let sources = strings(input, "sources")?;
    let axes = field(input, "axes")?
        .as_object()
        .ok_or("axes is not an object")?;
    let mut out = Map::new();
    for (axis, v) in axes {
        let blocks = blocks_of(field(v, "blocks")?)?;
        let s = ranks::ranking_summary(&blocks).map_err(|e| e.to_string())?;
        out.insert(axis.clone(), ranking_json(&s, &sources));
    }
    Ok(Value::Object(out))
}

fn binomial_kind(input: &Value) -> Result<Value, String> {
    let k = u64_of(field(input, "k")?, "k")?;
    let n = u64_of(field(input, "n")?, "n")?;
    let p = f64_of(field(input, "p")?, "p")?;
    let alt = field(input, "alternative")?
        .as_str()
        .and_then(Alternative::parse)
        .ok_or("unknown alternative")?;
    let pair = |c: Option<(f64, f64)>| c.map_or(Value::Null, |(a, b)| json!([num(a), num(b)]));
    Ok(json!({
        "estimate": opt(binomial::estimate(k, n)),
        "p_value": opt(binomial::binomial_p_value(k, n, p, alt)),
        "ci95_exact": pair(binomial::clopper_pearson(k, n, 0.95)),
        "ci95_wilson": pair(binomial::wilson(k, n, 0.95)),
    }))
}

/// Computes a vector's result by kind; an unknown kind is an error.
fn compute(kind: &str, input: &Value) -> Result<Value, String> {
    match kind {
        "two_rater_nominal" => two_rater_nominal(input),
        "two_rater_table" => two_rater_table(input),
        "two_rater_ordinal" => two_rater_ordinal(input),
        "multi_rater_nominal" => multi_rater_nominal(input),
        "rankings" => rankings(input),
        "ranking_study" => ranking_study(input),
        "binomial" => binomial_kind(input),
        other => Err(format!("unknown kind `{other}`")),
    }
}

// ---------------------------------------------------------------------------------
// Comparing
// ---------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
struct Tol {
    abs: f64,
    rel: f64,
}

fn tol_from(v: &Value) -> Tol {
    // A bound an override does not give does not apply (the override replaces the
    // default as a whole).
    Tol {
        abs: v.get("abs").and_then(Value::as_f64).unwrap_or(0.0),
        rel: v.get("rel").and_then(Value::as_f64).unwrap_or(0.0),
    }
}

/// The tolerance of a field: its dotted path in `overrides`, else (for an array
/// element) the array's path, else `default`.
fn tol_for(path: &str, tolerance: &Value) -> Tol {
    let overrides = tolerance.get("overrides").and_then(Value::as_object);
    let mut p = path.to_string();
    loop {
        if let Some(o) = overrides.and_then(|o| o.get(&p)) {
            return tol_from(o);
        }
        match p
            .strip_suffix(']')
            .and_then(|s| s.rfind('[').map(|i| s[..i].to_string()))
        {
            Some(parent) => p = parent,
            None => break,
        }
    }
    tolerance.get("default").map_or(
        Tol {
            abs: 1e-9,
            rel: 1e-9,
        },
        tol_from,
    )
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_integer(v: &serde_json::Number) -> bool {
    v.is_i64() || v.is_u64()
}

/// Compares `got` against `expected`; pushes one line per mismatch.
fn compare(expected: &Value, got: &Value, path: &str, tolerance: &Value, out: &mut Vec<String>) {
    let shown = if path.is_empty() { "<root>" } else { path };
    match (expected, got) {
        (Value::Object(e), Value::Object(g)) => {
            for (key, ev) in e {
                let p = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match g.get(key) {
                    Some(gv) => compare(ev, gv, &p, tolerance, out),
                    None => out.push(format!("{p}: missing (expected {ev})")),
                }
            }
        }
        (Value::Array(e), Value::Array(g)) => {
            if e.len() != g.len() {
                out.push(format!(
                    "{shown}: expected {} elements, got {}",
                    e.len(),
                    g.len()
                ));
            }
            for (i, (ev, gv)) in e.iter().zip(g).enumerate() {
                compare(ev, gv, &format!("{path}[{i}]"), tolerance, out);
            }
        }
        (Value::Null, Value::Null) => {}
        (Value::Null, g) => out.push(format!("{shown}: expected null (undefined), got {g}")),
        (Value::Number(e), Value::Number(g)) => {
            if is_integer(e) {
                let same = is_integer(g) && e.as_i64() == g.as_i64() && e.as_u64() == g.as_u64();
                if !same {
                    out.push(format!("{shown}: expected integer {e}, got {g}"));
                }
            } else {
                let (ef, gf) = (
                    e.as_f64().unwrap_or(f64::NAN),
                    g.as_f64().unwrap_or(f64::NAN),
                );
                let t = tol_for(path, tolerance);
                let diff = (gf - ef).abs();
                if !(diff <= t.abs || diff <= t.rel * ef.abs()) {
                    out.push(format!(
                        "{shown}: expected {ef:e}, got {gf:e} (|diff| {diff:.3e}, abs {:e}, rel {:e})",
                        t.abs, t.rel
                    ));
                }
            }
        }
        (Value::Number(e), g) => out.push(format!(
            "{shown}: expected number {e}, got {} {g}",
            kind_of(g)
        )),
        (Value::String(e), Value::String(g)) if e == g => {}
        (Value::Bool(e), Value::Bool(g)) if e == g => {}
        (e, g) => out.push(format!("{shown}: expected {e}, got {g}")),
    }
}

/// Runs every vector of a golden file; returns (vectors checked, mismatch lines).
fn check_file(doc: &Value) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let vectors = doc
        .get("vectors")
        .and_then(Value::as_array)
        .expect("the golden file has a `vectors` array");
    for (i, v) in vectors.iter().enumerate() {
        let name = v
            .get("name")
            .and_then(Value::as_str)
            .map_or_else(|| format!("#{i}"), str::to_string);
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("<none>");
        let (Some(input), Some(expected)) = (v.get("input"), v.get("expected")) else {
            failures.push(format!("{name}: no input or expected"));
            continue;
        };
        let tolerance = v.get("tolerance").cloned().unwrap_or(Value::Null);
        match compute(kind, input) {
            Ok(got) => {
                let mut local = Vec::new();
                compare(expected, &got, "", &tolerance, &mut local);
                failures.extend(local.into_iter().map(|m| format!("{name} ({kind}): {m}")));
            }
            Err(e) => failures.push(format!("{name} ({kind}): {e}")),
        }
    }
    (vectors.len(), failures)
}

#[test]
fn golden_vectors_match() {
    let path = golden_dir().join("agreement.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text).expect("agreement.json is valid JSON");
    let (n, failures) = check_file(&doc);
    assert!(n > 0, "no golden vectors found");
    assert!(
        failures.is_empty(),
        "{} mismatch(es) over {n} golden vectors:\n{}",
        failures.len(),
        failures.join("\n")
    );
    println!("{n} golden vectors match");
}

#[test]
fn golden_copy_is_identical_to_shared() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/golden");
    if !shared.is_dir() {
        println!(
            "note: {} does not exist (a fresh clone has no shared folder); copy check skipped",
            shared.display()
        );
        return;
    }
    for file in ["agreement.json", "README.md"] {
        let a = std::fs::read(shared.join(file)).expect("read the shared golden file");
        let b = std::fs::read(golden_dir().join(file)).expect("read the copied golden file");
        assert!(
            a == b,
            "tests/data/golden/{file} differs from {}; copy it again byte for byte",
            shared.join(file).display()
        );
    }
}

/// The comparator itself must catch every kind of mismatch, or the golden test could
/// pass vacuously.
#[test]
fn comparator_reports_every_mismatch() {
    let tol = json!({"default": {"abs": 1e-9, "rel": 1e-9},
                     "overrides": {"a.p": {"abs": 1e-12, "rel": 1e-6}, "ci": {"abs": 1e-3}}});
    let expected = json!({
        "a": {"x": 1.0, "p": 0.5, "n": 3, "s": "reason", "u": null, "m": 2.0},
        "ci": [0.5, 0.25],
        "t": [[1, 2]],
    });
    // Everything within tolerance.
    let ok = json!({
        "a": {"x": 1.0 + 5e-10, "p": 0.5 + 1e-7, "n": 3, "s": "reason", "u": null, "m": 2.0, "extra": 1},
        "ci": [0.5005, 0.2495],
        "t": [[1, 2]],
    });
    let mut out = Vec::new();
    compare(&expected, &ok, "", &tol, &mut out);
    assert!(out.is_empty(), "{out:?}");

    let bad = json!({
        "a": {"x": 1.0 + 1e-8, "p": 0.5 + 1e-5, "n": 3.0, "s": "other", "u": 0.0},
        "ci": [0.502, null],
        "t": [[1, 2, 3]],
    });
    let mut out = Vec::new();
    compare(&expected, &bad, "", &tol, &mut out);
    let joined = out.join("\n");
    for needle in [
        "a.x:",
        "a.p:",
        "a.n:",
        "a.s:",
        "a.u:",
        "a.m: missing",
        "ci[0]:",
        "ci[1]:",
        "t[0]:",
    ] {
        assert!(
            joined.contains(needle),
            "`{needle}` not reported in:\n{joined}"
        );
    }
    assert_eq!(out.len(), 9, "{joined}");

    // A non-finite result is never taken for null.
    let mut out = Vec::new();
    compare(
        &json!({"v": null}),
        &json!({"v": num(f64::NAN)}),
        "",
        &tol,
        &mut out,
    );
    assert_eq!(out.len(), 1);

    // An unknown kind fails.
    assert!(compute("no_such_kind", &json!({})).is_err());
    let doc =
        json!({"vectors": [{"name": "x", "kind": "no_such_kind", "input": {}, "expected": {}}]});
    let (_, failures) = check_file(&doc);
    assert_eq!(failures.len(), 1);
}

/// `sampling.json` (made by `sampling.py` beside it with scipy): every plan, bound and
/// zero-defect sample, integers exactly, probabilities within the file's tolerance.
#[test]
fn sampling_vectors_match_scipy() {
    use tandem::stats::sampling;
    let text = std::fs::read_to_string(golden_dir().join("sampling.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let abs = doc["tolerance"]["abs"].as_f64().unwrap();
    let rel = doc["tolerance"]["rel"].as_f64().unwrap();
    let close =
        |got: f64, exp: f64| (got - exp).abs() <= abs || (got - exp).abs() <= rel * exp.abs();
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap();
    let u = |v: &Value, k: &str| v[k].as_u64().unwrap();
    let mut failures = Vec::new();
    let plans = doc["plan"].as_array().unwrap();
    for v in plans {
        let p = sampling::plan(f(v, "aql"), f(v, "rql"), f(v, "alpha"), f(v, "beta")).unwrap();
        let e = &v["expected"];
        if (p.n, p.c) != (u(e, "n"), u(e, "c"))
            || !close(p.accept_at_aql, f(e, "accept_at_aql"))
            || !close(p.accept_at_rql, f(e, "accept_at_rql"))
        {
            failures.push(format!("plan {v}: got {p:?}"));
        }
    }
    let bounds = doc["bound"].as_array().unwrap();
    for v in bounds {
        let got = sampling::upper_bound(u(v, "defects"), u(v, "n"), f(v, "confidence")).unwrap();
        if !close(got, f(v, "upper")) {
            failures.push(format!("bound {v}: got {got}"));
        }
    }
    let zeros = doc["zero"].as_array().unwrap();
    for v in zeros {
        let got = sampling::zero_defect_n(f(v, "p"), f(v, "confidence")).unwrap();
        if got != u(v, "n") {
            failures.push(format!("zero {v}: got {got}"));
        }
    }
    assert!(plans.len() >= 8 && bounds.len() >= 10 && zeros.len() >= 6);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
