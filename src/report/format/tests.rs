use super::*;

#[test]
fn text_cells_that_look_like_formulas_are_text_and_numbers_are_untouched() {
    let mut t = CsvTable::new(&[("source", Col::Text), ("kappa", Col::Num)]);
    t.rows
        .push(vec!["=HYPERLINK(\"x\")".into(), "-0.41".into()]);
    t.rows.push(vec!["+real".into(), "".into()]);
    let csv = t.to_csv().unwrap();
    assert_eq!(
        csv,
        "source,kappa\n\"'=HYPERLINK(\"\"x\"\")\",-0.41\n'+real,\n"
    );
}

#[test]
fn counts_are_written_as_the_paper_writes_them() {
    assert_eq!(thousands(9800), "9,800");
    assert_eq!(thousands(1200), "1,200");
    assert_eq!(thousands(70), "70");
    assert_eq!(thousands(1_234_567), "1,234,567");
    assert_eq!(tex("MC_F_EGO_STA & 5%"), "MC\\_F\\_EGO\\_STA \\& 5\\%");
}

#[test]
fn the_vgenst_grid_is_three_scales_by_four_columns() {
    let g = grid(&Taxonomy::vgenst());
    assert_eq!(g.rows, vec!["figural", "vista", "environmental"]);
    assert_eq!(g.columns, vec!["EGO_STA", "EGO_DYN", "EXO_STA", "EXO_DYN"]);
    assert_eq!(g.cells[2][2], vec!["LS_E_EXO_STA"]);
    assert_eq!(g.row_title, "spatial scale");
}

/// A protocol's own layout: rows by the attribute it names, one column when it
/// names none; the cells show a task by its short label, else its code.
#[test]
fn a_declared_layout_groups_by_the_protocols_attributes() {
    let text = format!(
        "{}\n[tables]\nt11 = {{ rows = \"domain\", row_title = \"question domain\" }}\n",
        crate::domain::protocol::shipped("glimpse").unwrap()
    );
    let tax = crate::domain::protocol::parse(&text).unwrap().taxonomy;
    let g = grid(&tax);
    assert_eq!(g.declared, vec!["domain"]);
    assert_eq!(
        (g.row_title.as_str(), g.column_title.as_str()),
        ("question domain", "")
    );
    assert_eq!(
        g.rows,
        vec!["motion", "time", "quantity", "scene", "embodied"]
    );
    assert_eq!(g.columns, vec!["tasks"]);
    assert_eq!(g.cells[1][0], vec!["TEMP", "EVENT", "REV"]);
    let vgenst = grid(&Taxonomy::vgenst());
    assert_eq!(vgenst.declared, vec!["scale", "perspective", "dynamics"]);
    assert_eq!(
        column_label(&["exocentric".into(), "dynamic".into()]),
        "EXO_DYN"
    );
}

/// GLIMPSE's categories carry a `domain` each: rows by domain, one column; tasks
/// without a shared attribute get a row each.
#[test]
fn another_protocols_grid_groups_by_a_shared_attribute() {
    let text = crate::domain::protocol::shipped("glimpse").unwrap();
    let tax = crate::domain::protocol::parse(text).unwrap().taxonomy;
    let g = grid(&tax);
    assert!(g.declared.is_empty());
    assert_eq!(g.row_title, "domain");
    assert_eq!(
        g.rows,
        vec!["motion", "time", "quantity", "scene", "embodied"]
    );
    assert_eq!(g.columns, vec!["tasks"]);
    assert_eq!(g.cells[0][0], vec!["TRAJ", "VEL", "CINE"]);
    let mut bare = tax.clone();
    for t in &mut bare.tasks {
        t.attributes.clear();
    }
    let g = grid(&bare);
    assert_eq!(g.row_title, "task");
    assert_eq!(g.rows.len(), 11);
    assert_eq!(g.cells[10][0], vec!["INTER"]);
    let report = super::super::build(
        "c",
        &tax,
        &crate::domain::facts::Scope::default(),
        &[],
        &std::collections::HashMap::new(),
    );
    let table = t11_latex(&report, &tax);
    assert!(table.contains("Domain & Tasks"), "{table}");
    let csv = t11_csv(&report, &tax).to_csv().unwrap();
    assert!(
        csv.starts_with(
            "task,domain,reviewed,retained,retained_fraction,waiting_for_author\nTRAJ,motion,0,0,,0"
        ),
        "{csv}"
    );
    let vgenst = t11_csv(&report, &Taxonomy::vgenst()).to_csv().unwrap();
    assert!(
        vgenst.starts_with("task,scale,perspective,dynamics,reviewed"),
        "{vgenst}"
    );
}
