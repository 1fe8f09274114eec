//! A small campaign through the command line alone.

use crate::helpers::{broken_mp4, clip_line, has_ffmpeg, write_manifest};
use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn tandem(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("--data-dir")
        .arg(data)
        .args(args)
        .env_remove("DATABASE_URL")
        .env_remove("TANDEM_DATA_DIR")
        .output()
        .expect("run tandem")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "tandem failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn fails(out: &Output) -> String {
    assert!(!out.status.success(), "tandem should have failed");
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn a_campaign_through_the_cli_exports_exactly_the_retained_items_with_their_variants() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let mc = "MC_F_EGO_STA";
    let lines: Vec<Value> = ["A", "B", "C", "D"]
        .iter()
        .map(|id| clip_line(&src, id, mc, &["OE", "OA"]))
        .collect();
    let manifest = write_manifest(&src, "manifest.jsonl", &lines);
    let out = ok(&tandem(&data, &["import", manifest.to_str().unwrap()]));
    assert!(out.contains("4 new clip(s)"), "{out}");

    for (name, idx) in [("val00", "0"), ("val01", "1")] {
        let out = ok(&tandem(
            &data,
            &["user", "add", name, "--role", "validator", "--index", idx],
        ));
        assert!(
            out.contains("password: "),
            "a password is generated and printed: {out}"
        );
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args([
            "user",
            "add",
            "lead",
            "--role",
            "author",
            "--password-stdin",
            "--data-dir",
        ])
        .arg(&data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"a passphrase of some length\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = ok(&out);
    assert!(!text.contains("password:"), "{text}");

    // A: both pass. B: split, accepted. C: split, rejected. D: both reject.
    // Stage 2 of A and B follows in the same file, after their Stage 1 rows.
    let t = "2026-03-01T10:00:00Z";
    let decisions = format!(
        "stage,item_id,validator,verdict,reasons,note,decided_at\n\
         1,A,val00,valid,,,{t}\n1,A,val01,valid,,,{t}\n\
         1,B,val00,valid,,,{t}\n1,B,val01,reject,generation_artifact,flicker,{t}\n\
         1,C,val00,reject,prompt_drift,,{t}\n1,C,val01,valid,,,{t}\n\
         1,D,val00,reject,physical_implausibility,,{t}\n1,D,val01,reject,other,floats,{t}\n\
         2,A_OE,val00,valid,,,{t}\n2,A_OE,val01,valid,,,{t}\n\
         2,A_OA,val00,reject,ambiguous_options,,{t}\n2,A_OA,val01,reject,incorrect_answer,,{t}\n"
    );
    std::fs::write(src.join("decisions.csv"), decisions).unwrap();
    let out = ok(&tandem(
        &data,
        &[
            "decisions",
            "import",
            src.join("decisions.csv").to_str().unwrap(),
        ],
    ));
    assert!(out.contains("12 recorded"), "{out}");
    let resolutions = format!(
        "stage,item_id,author,verdict,note,decided_at\n\
         1,B,lead,accept,flicker is minor,{t}\n1,C,lead,reject,drift is real,{t}\n"
    );
    std::fs::write(src.join("resolutions.csv"), resolutions).unwrap();
    ok(&tandem(
        &data,
        &[
            "resolutions",
            "import",
            src.join("resolutions.csv").to_str().unwrap(),
        ],
    ));
    let more = format!(
        "stage,item_id,validator,verdict,reasons,note,decided_at\n\
         2,B_OE,val00,valid,,,{t}\n2,B_OE,val01,valid,,,{t}\n2,B_OA,val00,valid,,,{t}\n2,B_OA,val01,valid,,,{t}\n"
    );
    std::fs::write(src.join("more.csv"), more).unwrap();
    ok(&tandem(
        &data,
        &[
            "decisions",
            "import",
            src.join("more.csv").to_str().unwrap(),
        ],
    ));

    let export = dir.path().join("export");
    let out = ok(&tandem(
        &data,
        &["export", "retained", "--out", export.to_str().unwrap()],
    ));
    assert!(out.contains("2 clip(s) and 3 question(s)"), "{out}");
    let jsonl = std::fs::read_to_string(export.join("benchmark.jsonl")).unwrap();
    let clips: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = clips
        .iter()
        .map(|c| c["clip_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["A", "B"]);
    let a_questions: Vec<&str> = clips[0]["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["question_id"].as_str().unwrap())
        .collect();
    assert_eq!(a_questions, vec!["A_OE"]);
    let q = &clips[0]["questions"][0];
    assert_eq!(q["variants"]["V1"]["options"][4], "None of these");
    assert_eq!(q["variants"]["V2"]["options"][2], "None of these");
    assert_eq!(q["variants"]["V2"]["answer"], 2);
    assert_eq!(q["variants"]["V3"]["answer"], "a glass orb");
    assert_eq!(clips[0]["theme"], "Wizard's Enchantment Altar");
    assert_eq!(
        clips[0]["scene_graph"],
        json!({"objects": ["key", "candle"]})
    );
    let video = export.join(clips[0]["file"].as_str().unwrap());
    assert_eq!(std::fs::read(video).unwrap(), crate::helpers::fake_mp4("A"));
    let readme = std::fs::read_to_string(export.join("README.md")).unwrap();
    assert!(
        readme.contains("| clips retained (in `benchmark.jsonl`) | 2 |"),
        "{readme}"
    );
    assert!(
        readme.contains("| clips rejected in Stage 1, waiting for a new version | 2 |"),
        "{readme}"
    );

    // Exporting into a folder that is not empty is refused and leaves it alone.
    let err = fails(&tandem(
        &data,
        &["export", "retained", "--out", export.to_str().unwrap()],
    ));
    assert!(err.contains("not empty"), "{err}");

    // The decisions export carries every row and can be imported again unchanged.
    let csv = ok(&tandem(&data, &["export", "decisions"]));
    assert_eq!(csv.lines().count(), 1 + 16);
    std::fs::write(src.join("again.csv"), &csv).unwrap();
    let out = ok(&tandem(
        &data,
        &[
            "decisions",
            "import",
            src.join("again.csv").to_str().unwrap(),
        ],
    ));
    assert!(out.contains("0 recorded, 16 already stored"), "{out}");
}

/// Roles per campaign from the command line: an account's role names its campaign
/// (`default` unless given), `user role` gives another campaign's role or takes one
/// away, `user list` shows each; refusals name what is wrong and change nothing.
#[test]
fn roles_are_given_per_campaign_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    ok(&tandem(&data, &["campaign", "create", "other"]));
    ok(&tandem(
        &data,
        &[
            "user",
            "add",
            "val00",
            "--role",
            "validator",
            "--index",
            "0",
        ],
    ));
    let out = ok(&tandem(&data, &["user", "add", "lead", "--role", "author"]));
    assert!(out.contains("created lead (author in default)"), "{out}");
    ok(&tandem(&data, &["user", "add", "boss", "--role", "admin"]));
    let out = ok(&tandem(
        &data,
        &[
            "user",
            "role",
            "lead",
            "--campaign",
            "other",
            "--role",
            "participant",
        ],
    ));
    assert!(
        out.contains("lead is a participant of campaign `other`"),
        "{out}"
    );
    let list = ok(&tandem(&data, &["user", "list"]));
    assert!(list.contains("boss\tadmin"), "{list}");
    assert!(
        list.contains("lead\tauthor in default, participant in other"),
        "{list}"
    );
    assert!(list.contains("val00\tvalidator in default"), "{list}");
    for (args, says) in [
        (
            &["user", "role", "val00", "--role", "author"][..],
            "validator pool",
        ),
        (
            &[
                "user",
                "role",
                "lead",
                "--campaign",
                "other",
                "--role",
                "validator",
            ][..],
            "tandem pool add",
        ),
        (
            &["user", "role", "boss", "--role", "author"][..],
            "server-wide",
        ),
        (
            &["user", "add", "x", "--role", "admin", "--campaign", "other"][..],
            "server-wide",
        ),
        (
            &["user", "role", "lead", "--role", "owner"][..],
            "unknown role",
        ),
        (
            &[
                "pool",
                "add",
                "lead",
                "--index",
                "1",
                "--campaign",
                "default",
            ][..],
            "one role per campaign",
        ),
    ] {
        let err = fails(&tandem(&data, args));
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!(
        ok(&tandem(&data, &["user", "list"])),
        list,
        "nothing changed"
    );
    ok(&tandem(
        &data,
        &[
            "user",
            "role",
            "lead",
            "--campaign",
            "other",
            "--role",
            "none",
        ],
    ));
    assert!(
        ok(&tandem(&data, &["user", "list"])).contains("lead\tauthor in default\n"),
        "the role in other is gone"
    );
}

#[test]
fn cli_errors_are_one_clear_line_and_a_failure_status() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let err = fails(&tandem(&data, &["user", "add", "v", "--role", "validator"]));
    assert!(
        err.starts_with("error: ") && err.contains("--index"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // A campaign that does not exist is named, with what creates it (never another
    // protocol's campaign made in its place); the file is checked before the campaign.
    let empty = dir.path().join("empty.csv");
    std::fs::write(&empty, "").unwrap();
    let err = fails(&tandem(
        &data,
        &[
            "decisions",
            "import",
            "--campaign",
            "lab",
            empty.to_str().unwrap(),
        ],
    ));
    assert!(
        err.contains("no campaign named `lab`")
            && err.contains("tandem campaign create lab --protocol FILE"),
        "{err}"
    );
    for args in [
        &["import", "--campaign", "lab", "/nonexistent/manifest.jsonl"][..],
        &[
            "user",
            "add",
            "w",
            "--role",
            "validator",
            "--index",
            "9",
            "--campaign",
            "lab",
        ][..],
    ] {
        let err = fails(&tandem(&data, args));
        assert!(err.contains("no campaign named `lab`"), "{args:?}: {err}");
    }
    let err = fails(&tandem(&data, &["decisions", "import", "nothing.csv"]));
    assert!(err.contains("nothing.csv"), "{err}");
    let err = fails(&tandem(
        &data,
        &["decisions", "import", empty.to_str().unwrap()],
    ));
    assert!(
        err.contains("the campaign `default` has nothing yet")
            && err.contains("tandem import FILE"),
        "{err}"
    );
    let err = fails(&tandem(&data, &["import", "/nonexistent/manifest.jsonl"]));
    assert!(err.contains("cannot open the manifest"), "{err}");
    let err = fails(&tandem(&data, &["user", "add", "x", "--role", "owner"]));
    assert!(err.contains("unknown role"), "{err}");

    // A refused manifest lists each problem with its line, after one summary line.
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let mut bad = clip_line(&src, "A", "MC_F_EGO_STA", &["OE"]);
    bad["questions"][0]["answer"] = json!(7);
    let m = write_manifest(&src, "m.jsonl", &[bad]);
    let err = fails(&tandem(&data, &["import", m.to_str().unwrap()]));
    assert!(err.starts_with("error: manifest"), "{err}");
    assert!(err.contains("line 1, field `questions[0].answer`"), "{err}");
}

#[test]
fn data_dir_works_before_or_after_the_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["migrate", "--data-dir"])
        .arg(&data)
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    ok(&out);
    assert!(data.join("tandem.db").exists());
    let out = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("--data-dir")
        .arg(&data)
        .arg("migrate")
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    ok(&out);
}

#[test]
fn the_campaign_life_commands_work_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let mut cal = clip_line(&src, "CAL", "MC_F_EGO_STA", &[]);
    cal["calibration"] = json!({"verdict": "valid"});
    let lines = vec![cal, clip_line(&src, "X", "MC_F_EGO_STA", &[])];
    for id in ["CAL", "X"] {
        std::fs::write(src.join(format!("videos/{id}.mp4")), broken_mp4(id)).unwrap();
    }
    let m = write_manifest(&src, "m.jsonl", &lines);
    let imported = ok(&tandem(&data, &["import", m.to_str().unwrap()]));
    // The import reads its videos' frame timing at once (these two broken videos cannot
    // be read, and are marked so).
    if has_ffmpeg() {
        assert!(
            imported.contains("frame rate and count read for 0 video(s); 2 could not be read"),
            "{imported}"
        );
    } else {
        assert!(imported.contains("ffprobe is not installed"), "{imported}");
    }
    for (name, idx) in [("val00", "0"), ("val01", "1")] {
        ok(&tandem(
            &data,
            &["user", "add", name, "--role", "validator", "--index", idx],
        ));
    }
    let out = ok(&tandem(
        &data,
        &[
            "campaign",
            "settings",
            "--target",
            "50",
            "--calibration-threshold",
            "0.9",
            "--calibration-min",
            "1",
        ],
    ));
    assert!(
        out.contains("target 50") && out.contains("90% agreement in rounds of 1 items"),
        "{out}"
    );
    let err = fails(&tandem(
        &data,
        &["campaign", "settings", "--calibration-threshold", "1.5"],
    ));
    assert!(err.contains("calibration_threshold"), "{err}");
    let out = ok(&tandem(&data, &["calibration", "status"]));
    assert!(out.contains("val00\tround 1\t0 of 1 decided"), "{out}");
    let err = fails(&tandem(&data, &["calibration", "reset", "val00"]));
    assert!(err.contains("has not failed calibration"), "{err}");

    let t = "2026-03-01T10:00:00Z";
    let csv = format!(
        "stage,item_id,validator,verdict,reasons,note,decided_at\n1,X,val00,reject,prompt_drift,drifts,{t}\n1,X,val01,reject,generation_artifact,,{t}\n"
    );
    std::fs::write(src.join("d.csv"), csv).unwrap();
    // The calibration clip is refused in a decisions file; the main one is fine.
    std::fs::write(
        src.join("cal.csv"),
        format!(
            "stage,item_id,validator,verdict,reasons,note,decided_at\n1,CAL,val00,valid,,,{t}\n"
        ),
    )
    .unwrap();
    let err = fails(&tandem(
        &data,
        &["decisions", "import", src.join("cal.csv").to_str().unwrap()],
    ));
    assert!(err.contains("calibration item"), "{err}");
    ok(&tandem(
        &data,
        &["decisions", "import", src.join("d.csv").to_str().unwrap()],
    ));
    let jsonl = ok(&tandem(&data, &["export", "regeneration"]));
    let line: Value = serde_json::from_str(jsonl.trim()).unwrap();
    assert_eq!(line["clip_id"], "X");
    assert_eq!(
        line["reasons"],
        json!(["generation_artifact", "prompt_drift"])
    );
    let audit = ok(&tandem(&data, &["export", "audit", "--clip", "X"]));
    assert_eq!(audit.lines().count(), 1 + 4, "{audit}");
    let err = fails(&tandem(&data, &["export", "audit", "--clip", "NOPE"]));
    assert!(err.contains("no clip `NOPE`"), "{err}");
    // The same filters as the page and the API: a person, days, the latest N.
    let mine = ok(&tandem(&data, &["export", "audit", "--validator", "val00"]));
    let rows: Vec<&str> = mine.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "{mine}");
    assert!(
        rows[0].contains(",val00,") && rows[0].contains("drifts"),
        "{mine}"
    );
    // The verdicts of March 1st and their outcome; not the import, made today.
    let day = ok(&tandem(
        &data,
        &[
            "export",
            "audit",
            "--clip",
            "X",
            "--from",
            "2026-03-01",
            "--to",
            "2026-03-01",
        ],
    ));
    assert_eq!(day.lines().count(), 1 + 3, "{day}");
    assert!(!day.contains(",import,"), "{day}");
    let later = ok(&tandem(
        &data,
        &["export", "audit", "--clip", "X", "--from", "2026-03-02"],
    ));
    assert_eq!(later.lines().count(), 1 + 1, "only the import: {later}");
    let latest = ok(&tandem(&data, &["export", "audit", "--latest", "2"]));
    assert_eq!(latest.lines().count(), 1 + 2, "{latest}");
    let err = fails(&tandem(&data, &["export", "audit", "--from", "March"]));
    assert!(err.contains("from") && err.contains("YYYY-MM-DD"), "{err}");
    let err = fails(&tandem(
        &data,
        &["export", "audit", "--validator", "nobody"],
    ));
    assert!(err.contains("no account `nobody`"), "{err}");
    // Frame timing: the import asked already; videos it marked unreadable are not asked
    // again.
    if has_ffmpeg() {
        let out = ok(&tandem(&data, &["probe"]));
        assert!(out.contains("for 0 video(s); 0 could not be read"), "{out}");
    } else {
        let out = ok(&tandem(&data, &["probe"]));
        assert!(out.contains("ffprobe is not installed"), "{out}");
    }
}

#[test]
fn the_study_through_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let src = dir.path().join("src");
    let sets = crate::study::write_sets(&src, 2);
    // Without a study there is no T14 and no study status.
    ok(&tandem(&data, &["migrate"]));
    let err = fails(&tandem(&data, &["study", "status"]));
    assert!(
        err.contains("the campaign `default` has nothing yet") || err.contains("has no study"),
        "{err}"
    );

    let out = ok(&tandem(&data, &["study", "import", sets.to_str().unwrap()]));
    assert!(out.contains("2 new set(s) with 8 clip(s)"), "{out}");
    let err = fails(&tandem(
        &data,
        &["study", "display", "strip", "--frames", "1"],
    ));
    assert!(err.contains("2 to 32 frames"), "{err}");
    if has_ffmpeg() {
        let out = ok(&tandem(
            &data,
            &["study", "display", "strip", "--frames", "6"],
        ));
        assert!(out.contains("strips of 6 frames (4 drawn now)"), "{out}");
    }
    for p in ["E1", "E2"] {
        ok(&tandem(&data, &["user", "add", p, "--role", "participant"]));
    }
    let mut csv = String::from("set_id,participant,clip_id,axis,value\n");
    for p in ["E1", "E2"] {
        for s in 0..2 {
            for (k, source) in crate::study::SOURCES.iter().enumerate() {
                let label = if k == 3 { "fake" } else { "real" };
                csv.push_str(&format!("S{s:02},{p},{source}_{s:02},real_fake,{label}\n"));
                csv.push_str(&format!(
                    "S{s:02},{p},{source}_{s:02},photorealism,{}\n",
                    k + 1
                ));
            }
        }
    }
    std::fs::write(src.join("r.csv"), &csv).unwrap();
    let r = src.join("r.csv");
    let out = ok(&tandem(
        &data,
        &["study", "responses", "import", r.to_str().unwrap()],
    ));
    assert!(
        out.contains("32 response(s) added from 2 participant(s)"),
        "{out}"
    );
    let out = ok(&tandem(&data, &["study", "status"]));
    assert!(
        out.contains("E1\t2 of 2 set(s) answered (imported)"),
        "{out}"
    );

    let json: Value = serde_json::from_str(&ok(&tandem(&data, &["stats", "--json"]))).unwrap();
    assert_eq!(json["t15"]["sources"]["VGenST"]["judged_fake"], 1.0);
    assert_eq!(json["t15"]["human_error_rate"], 0.0);
    assert_eq!(json["t14"]["VGenST"]["photorealism"]["mean"], 4.0);
    let tex = ok(&tandem(
        &data,
        &["stats", "--table", "T15", "--format", "latex"],
    ));
    assert!(
        tex.contains("\\toprule") && tex.contains("VGenST & 2 & Fake & 100.0\\% & 2/2"),
        "{tex}"
    );
    let csv = ok(&tandem(
        &data,
        &["stats", "--table", "t14", "--format", "csv"],
    ));
    assert!(csv.contains("VGenST,photorealism,4,0,4"), "{csv}");

    // A broken sets file: one clear refusal with the line, nothing stored.
    std::fs::write(
        src.join("bad.jsonl"),
        "{\"set_id\": \"S09\", \"clips\": 3}\n",
    )
    .unwrap();
    let err = fails(&tandem(
        &data,
        &["study", "import", src.join("bad.jsonl").to_str().unwrap()],
    ));
    assert!(
        err.contains("line 1, field `clips`: missing or not a list"),
        "{err}"
    );
    // New sets once the study has begun are refused.
    let more = crate::study::write_sets(&dir.path().join("more"), 3);
    let err = fails(&tandem(&data, &["study", "import", more.to_str().unwrap()]));
    assert!(err.contains("the study has begun"), "{err}");
}

#[test]
fn a_validator_who_would_re_pair_tasks_joins_only_with_yes() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let lines: Vec<Value> = vec![
        clip_line(&src, "A", "MC_F_EGO_STA", &[]),
        clip_line(&src, "B", "MC_F_EGO_STA", &[]),
        clip_line(&src, "Q", "QC_F_EGO_DYN", &[]),
    ];
    let m = write_manifest(&src, "m.jsonl", &lines);
    ok(&tandem(&data, &["import", m.to_str().unwrap()]));
    // The first pair forms without a question: nobody's work moves.
    for (name, idx) in [("val00", "0"), ("val01", "1")] {
        ok(&tandem(
            &data,
            &["user", "add", name, "--role", "validator", "--index", idx],
        ));
    }
    let before = ok(&tandem(&data, &["user", "list"]));
    let err = fails(&tandem(
        &data,
        &[
            "user",
            "add",
            "val02",
            "--role",
            "validator",
            "--index",
            "2",
        ],
    ));
    assert!(
        err.contains("QC_F_EGO_DYN: val01 + val00 -> val01 + val02 (1 unstarted item(s) move)"),
        "the tasks, their pairs and the items that move are named: {err}"
    );
    assert!(
        err.contains("--yes") && err.contains("nothing was changed"),
        "{err}"
    );
    assert!(
        !err.contains("MC_F_EGO_STA:"),
        "task 0 keeps (val00, val01): {err}"
    );
    assert_eq!(
        ok(&tandem(&data, &["user", "list"])),
        before,
        "nothing changed"
    );
    let out = tandem(
        &data,
        &[
            "user",
            "add",
            "val02",
            "--role",
            "validator",
            "--index",
            "2",
            "--yes",
        ],
    );
    ok(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("QC_F_EGO_DYN: val01 + val00 -> val01 + val02")
    );
    assert!(ok(&tandem(&data, &["user", "list"])).contains("val02"));
}

/// The sampling planner and bounds, as a lab calls them before it imports anything:
/// no data folder is made, figures as `stats::sampling` gives them, bad values named.
#[test]
fn sampling_plans_and_bounds_need_no_data_folder() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("never-made");
    let json = |args: &[&str]| -> Value {
        serde_json::from_str(ok(&tandem(&data, args)).trim()).expect("one JSON object")
    };
    let plan = json(&[
        "sampling", "plan", "--aql", "0.01", "--rql", "0.05", "--alpha", "0.05", "--beta", "0.10",
        "--json",
    ]);
    assert_eq!(
        (plan["n"].as_u64(), plan["c"].as_u64()),
        (Some(132), Some(3))
    );
    let at_aql = plan["accept_at_aql"].as_f64().unwrap();
    let at_rql = plan["accept_at_rql"].as_f64().unwrap();
    assert!((at_aql - 0.9557474941740338).abs() < 1e-9, "{plan}");
    assert!((at_rql - 0.0992283044257829).abs() < 1e-9, "{plan}");
    let bound = json(&[
        "sampling",
        "bound",
        "--defects",
        "3",
        "--n",
        "200",
        "--confidence",
        "0.95",
        "--json",
    ]);
    assert!((bound["upper"].as_f64().unwrap() - 0.03830970849818942).abs() < 1e-9);
    let zero = json(&[
        "sampling",
        "zero",
        "--p",
        "0.01",
        "--confidence",
        "0.95",
        "--json",
    ]);
    assert_eq!(zero["n"].as_u64(), Some(299));
    // In words by default.
    let words = ok(&tandem(
        &data,
        &["sampling", "plan", "--aql", "0.01", "--rql", "0.05"],
    ));
    assert!(
        words.contains("review 132 items") && words.contains("at most 3"),
        "{words}"
    );
    // Bad values are named, and nothing is written anywhere.
    let err = fails(&tandem(
        &data,
        &["sampling", "plan", "--aql", "0.05", "--rql", "0.01"],
    ));
    assert!(
        err.contains("the AQL (0.05) must be less than the RQL (0.01)"),
        "{err}"
    );
    let err = fails(&tandem(
        &data,
        &["sampling", "bound", "--defects", "5", "--n", "3"],
    ));
    assert!(err.contains("cannot exceed the items reviewed"), "{err}");
    let err = fails(&tandem(&data, &["sampling", "zero", "--p", "1.5"]));
    assert!(
        err.contains("p must be greater than 0 and less than 1"),
        "{err}"
    );
    assert!(!data.exists(), "sampling made a data folder");
}

/// A lab's own protocol through the command line: the GLIMPSE-like file is checked and
/// a campaign created with it; its manifest (GLIMPSE's tasks, yes/no and multiple-choice
/// questions) imports, a VGenST task is refused by line and field, its questions are
/// reviewed from the start (no clip review: real videos) by the intersection rule, and
/// the tables and the retained export follow. A broken file
/// is refused whole, each problem with its line and field, and creates nothing.
#[test]
fn a_campaign_reviews_by_the_protocol_file_it_was_created_with() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let glimpse = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/protocols/glimpse.toml"
    );
    let tumtraffic = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/protocols/tumtraffic.toml"
    );

    // Checking needs no data folder.
    let out = ok(&tandem(&data, &["protocol", "check", glimpse]));
    assert!(
        out.contains(
            "`GLIMPSE-like` (version 1) is sound: 11 tasks, 2 QA types, 22 task x QA-type cells"
        ),
        "{out}"
    );
    let out = ok(&tandem(&data, &["protocol", "check", tumtraffic, "--json"]));
    let read: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(read["cells"], 7);
    assert_eq!(
        read["taxonomy"]["tasks"][0]["attributes"]["output"],
        "choice"
    );
    // Its questions are reviewed by sample: each rule's plan, as `tandem sampling plan`
    // and `zero` give it.
    assert_eq!(
        read["sampling"][0],
        json!({"stratum": "Stage 2, task VQA, every QA type", "n": 65, "c": 3})
    );
    assert_eq!(
        read["sampling"][1],
        json!({"stratum": "Stage 2, task ROC, every QA type", "n": 59, "c": 0})
    );
    let out = ok(&tandem(&data, &["protocol", "check", tumtraffic]));
    assert!(
        out.contains("reviewed by sample: Stage 2, task VQA, every QA type: 65 of each lot, accepted with at most 3 defect(s)"),
        "{out}"
    );
    assert!(!data.exists(), "checking a protocol made a data folder");
    let shipped = ok(&tandem(&data, &["protocol", "vgenst"]));
    std::fs::write(src.join("vgenst.toml"), &shipped).unwrap();
    let out = ok(&tandem(
        &data,
        &[
            "protocol",
            "check",
            src.join("vgenst.toml").to_str().unwrap(),
        ],
    ));
    assert!(
        out.contains("12 tasks, 12 QA types, 98 task x QA-type cells"),
        "{out}"
    );

    let broken = src.join("broken.toml");
    std::fs::write(
        &broken,
        "[protocol]\nname = \"lab\"\nversion = 1\n\n[[task]]\ncode = \"A\"\nname = \"a\"\nqa_types = [\"YN\", \"MC\"]\n\n[[qa_type]]\ncode = \"YN\"\nname = \"yes/no\"\nlevel = \"L9\"\n\n[[reason]]\nstage = 1\ncode = \"bad\"\nlabel = \"Bad clip\"\nkey = 1\n\n[[reason]]\nstage = 2\ncode = \"wrong\"\nlabel = \"Wrong\"\nkey = 1\n",
    )
    .unwrap();
    let err = fails(&tandem(
        &data,
        &[
            "campaign",
            "create",
            "lab",
            "--protocol",
            broken.to_str().unwrap(),
        ],
    ));
    assert!(err.contains("nothing was stored: 2 problems"), "{err}");
    assert!(
        err.contains("line 8") && err.contains("task[1].qa_types[2]") && err.contains("`MC`"),
        "{err}"
    );
    assert!(
        err.contains("line 13") && err.contains("qa_type[1].level"),
        "{err}"
    );

    let out = ok(&tandem(
        &data,
        &["campaign", "create", "glimpse", "--protocol", glimpse],
    ));
    assert!(
        out.contains(
            "campaign `glimpse` created with protocol `GLIMPSE-like` (version 1): 11 tasks"
        ),
        "{out}"
    );
    let err = fails(&tandem(
        &data,
        &["campaign", "create", "glimpse", "--protocol", glimpse],
    ));
    assert!(err.contains("a campaign named `glimpse` exists"), "{err}");
    let err = fails(&tandem(&data, &["stats", "--json", "--campaign", "lab"]));
    assert!(err.contains("no campaign named `lab`"), "{err}");
    // A protocol's own target per task becomes the campaign's.
    let own = src.join("own.toml");
    std::fs::write(
        &own,
        "[protocol]\nname = \"lab\"\nversion = 1\ntarget_per_task = 40\nexport_variants = false\n\n[[task]]\ncode = \"A\"\nname = \"a\"\nqa_types = [\"YN\"]\n\n[[qa_type]]\ncode = \"YN\"\nname = \"yes/no\"\nlevel = \"L1\"\n\n[[reason]]\nstage = 1\ncode = \"bad\"\nlabel = \"Bad clip\"\nkey = 1\n\n[[reason]]\nstage = 2\ncode = \"wrong\"\nlabel = \"Wrong\"\nkey = 1\n",
    )
    .unwrap();
    ok(&tandem(
        &data,
        &[
            "campaign",
            "create",
            "lab",
            "--protocol",
            own.to_str().unwrap(),
        ],
    ));
    let out = ok(&tandem(
        &data,
        &["campaign", "settings", "--campaign", "lab"],
    ));
    assert!(out.contains("target 40 retained clips per task"), "{out}");

    // VGenST's tasks are not GLIMPSE's: refused by line and field, nothing stored.
    let wrong = write_manifest(
        &src,
        "wrong.jsonl",
        &[
            clip_line(&src, "G1", "TRAJ", &["YN", "MC"]),
            clip_line(&src, "V1", "MC_F_EGO_STA", &["OE"]),
        ],
    );
    let err = fails(&tandem(
        &data,
        &["import", wrong.to_str().unwrap(), "--campaign", "glimpse"],
    ));
    assert!(
        err.contains("line 2") && err.contains("MC_F_EGO_STA"),
        "{err}"
    );
    // Its yes/no questions come in linked pairs (`paired = true`): one without its
    // reverse is refused.
    assert!(
        err.contains(
            "line 1, field `questions[0].pair`: QA type `YN` asks its questions in linked pairs"
        ),
        "{err}"
    );
    // GLIMPSE's bidirectional yes/no questions: each asked in both directions, the two
    // linked by a `pair` key. A pair links exactly two questions of one QA type.
    let reversed = |clip: &str, pair: &str| {
        json!({"question_id": format!("{clip}_YNR"), "qa_type": "YN", "pair": pair,
               "question": "Did the second event come first?", "options": ["yes", "no"], "answer": 1})
    };
    let linked = |clip: &str, task: &str, extra: &[&str], pair: &str| {
        let mut line = clip_line(&src, clip, task, &[&["YN"], extra].concat());
        line["questions"][0]["pair"] = json!(pair);
        if let Some(qs) = line["questions"].as_array_mut() {
            qs.push(reversed(clip, pair));
        }
        line
    };
    let mut lonely = linked("G1", "TRAJ", &["MC"], "P1");
    lonely["questions"][2]["pair"] = json!("P9");
    let mut mixed = linked("G1", "TRAJ", &["MC"], "P1");
    mixed["questions"][1]["pair"] = json!("P1");
    let mut kinds = clip_line(&src, "G1", "TRAJ", &["YN", "MC"]);
    kinds["questions"][0]["pair"] = json!("P1");
    kinds["questions"][1]["pair"] = json!("P1");
    for (line, field, problem) in [
        (
            lonely,
            "questions[0].pair",
            "pair `P1` links 1 question(s) of this clip; a pair links exactly two",
        ),
        (mixed, "questions[0].pair", "pair `P1` links 3 question(s)"),
        (
            kinds,
            "questions[1].pair",
            "the two questions of pair `P1` have different QA types",
        ),
    ] {
        let bad = write_manifest(&src, "pairs.jsonl", &[line]);
        let err = fails(&tandem(
            &data,
            &["import", bad.to_str().unwrap(), "--campaign", "glimpse"],
        ));
        assert!(
            err.contains("line 1") && err.contains(field) && err.contains(problem),
            "{err}"
        );
    }
    let m = write_manifest(
        &src,
        "glimpse.jsonl",
        &[
            linked("G1", "TRAJ", &["MC"], "P1"),
            linked("G2", "TEMP", &[], "P2"),
        ],
    );
    let out = ok(&tandem(
        &data,
        &["import", m.to_str().unwrap(), "--campaign", "glimpse"],
    ));
    assert!(out.contains("2 new clip(s)"), "{out}");
    for (name, idx) in [("val00", "0"), ("val01", "1")] {
        ok(&tandem(
            &data,
            &[
                "user",
                "add",
                name,
                "--role",
                "validator",
                "--index",
                idx,
                "--campaign",
                "glimpse",
            ],
        ));
    }
    // GLIMPSE's review gives its own reasons (section 3.2): a VGenST reason is not one of
    // them, and the file is refused whole.
    let t = "2026-03-01T10:00:00Z";
    std::fs::write(
        src.join("d.csv"),
        format!(
            "stage,item_id,validator,verdict,reasons,note,decided_at\n\
             2,G1_MC,val00,valid,,,{t}\n2,G1_MC,val01,reject,prompt_drift,,{t}\n"
        ),
    )
    .unwrap();
    let err = fails(&tandem(
        &data,
        &[
            "decisions",
            "import",
            src.join("d.csv").to_str().unwrap(),
            "--campaign",
            "glimpse",
        ],
    ));
    assert!(
        err.contains("line 3, field `reasons`: `prompt_drift` is not a Stage 2 reason (expected one of: ill_defined, not_answerable, single_frame_solvable, reverse_mismatch, other)"),
        "{err}"
    );
    let decisions = format!(
        "stage,item_id,validator,verdict,reasons,note,decided_at\n\
         2,G1_YN,val00,valid,,,{t}\n2,G1_YN,val01,valid,,,{t}\n\
         2,G1_YNR,val00,reject,single_frame_solvable,,{t}\n2,G1_YNR,val01,reject,reverse_mismatch,,{t}\n\
         2,G1_MC,val00,valid,,,{t}\n2,G1_MC,val01,reject,single_frame_solvable,,{t}\n\
         2,G2_YN,val00,valid,,,{t}\n2,G2_YN,val01,valid,,,{t}\n\
         2,G2_YNR,val00,valid,,,{t}\n2,G2_YNR,val01,valid,,,{t}\n"
    );
    std::fs::write(src.join("d.csv"), decisions).unwrap();
    let out = ok(&tandem(
        &data,
        &[
            "decisions",
            "import",
            src.join("d.csv").to_str().unwrap(),
            "--campaign",
            "glimpse",
        ],
    ));
    assert!(out.contains("10 recorded"), "{out}");
    let stats = ok(&tandem(
        &data,
        &["stats", "--json", "--campaign", "glimpse"],
    ));
    let stats: Value = serde_json::from_str(stats.trim()).unwrap();
    let t12 = serde_json::to_string(&stats["t12"]).unwrap();
    assert!(t12.contains("TRAJ") && t12.contains("TEMP"), "{t12}");
    assert!(!t12.contains("MC_F_EGO_STA"), "{t12}");
    let out_dir = dir.path().join("retained");
    ok(&tandem(
        &data,
        &[
            "export",
            "retained",
            "--out",
            out_dir.to_str().unwrap(),
            "--campaign",
            "glimpse",
        ],
    ));
    // The campaign's protocol grows by a category; it cannot lose a cell that stored
    // questions use.
    let grown = std::fs::read_to_string(glimpse).unwrap()
        + "\n[[task]]\ncode = \"SPORT\"\nname = \"Sports\"\nattributes = { domain = \"motion\" }\nqa_types = [\"YN\"]\n";
    std::fs::write(src.join("grown.toml"), &grown).unwrap();
    let out = ok(&tandem(
        &data,
        &[
            "campaign",
            "protocol",
            src.join("grown.toml").to_str().unwrap(),
            "--campaign",
            "glimpse",
        ],
    ));
    assert!(
        out.contains("campaign `glimpse` now reviews by protocol `GLIMPSE-like` (version 1): 12 tasks (1 new)")
            && out.contains("the campaign's protocol is now version 2 (it was 1)"),
        "{out}"
    );
    let shrunk = grown.replacen("qa_types = [\"MC\", \"YN\"]", "qa_types = [\"MC\"]", 1);
    std::fs::write(src.join("shrunk.toml"), &shrunk).unwrap();
    let err = fails(&tandem(
        &data,
        &[
            "campaign",
            "protocol",
            src.join("shrunk.toml").to_str().unwrap(),
            "--campaign",
            "glimpse",
        ],
    ));
    assert!(
        err.contains("keeps its protocol, nothing was changed: 1 problem")
            && err.contains("task `TRAJ` no longer has QA type `YN`"),
        "{err}"
    );
    // Nor can it drop a reason that stored verdicts give.
    let dropped = grown.replace("code = \"reverse_mismatch\"", "code = \"reversed_wrong\"");
    std::fs::write(src.join("dropped.toml"), &dropped).unwrap();
    let err = fails(&tandem(
        &data,
        &[
            "campaign",
            "protocol",
            src.join("dropped.toml").to_str().unwrap(),
            "--campaign",
            "glimpse",
        ],
    ));
    assert!(
        err.contains(
            "the Stage 2 reason `reverse_mismatch` is removed, but stored verdicts give it"
        ),
        "{err}"
    );
    // GLIMPSE pairs per clip: the pool and its open work, no task pairs.
    let pairs = ok(&tandem(&data, &["pair", "list", "--campaign", "glimpse"]));
    assert!(
        pairs.starts_with("campaign `glimpse` pairs per clip, by least open work")
            && pairs.contains("\n#0   val00          ")
            && pairs.contains("\n#1   val01          "),
        "{pairs}"
    );
    let err = fails(&tandem(
        &data,
        &[
            "pair",
            "set",
            "SPORT",
            "val00",
            "val01",
            "--campaign",
            "glimpse",
        ],
    ));
    assert!(err.contains("a task has no pair to set"), "{err}");

    // G2's pair holds both ways and is kept, marked; G1_YN was retained but its reverse
    // was not, so the pair does not count; G1_MC waits for an author. The questions are
    // as written: VGenST's reformulations are not GLIMPSE's (`export_variants = false`).
    let exported = std::fs::read_to_string(out_dir.join("benchmark.jsonl")).unwrap();
    assert!(!exported.contains("variants"), "{exported}");
    let kept: Vec<(String, Option<String>)> = exported
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .flat_map(|c| c["questions"].as_array().cloned().unwrap_or_default())
        .map(|q| {
            (
                q["question_id"].as_str().unwrap().to_string(),
                q["pair"].as_str().map(String::from),
            )
        })
        .collect();
    assert_eq!(
        kept,
        [
            ("G2_YN".to_string(), Some("P2".to_string())),
            ("G2_YNR".to_string(), Some("P2".to_string()))
        ],
        "{exported}"
    );
    let readme = std::fs::read_to_string(out_dir.join("README.md")).unwrap();
    assert!(
        readme.contains(
            "| linked pairs retained (both directions; `pair` in `benchmark.jsonl`) | 1 |"
        ) && readme.contains("the other question of their pair was not retained | 1 |"),
        "{readme}"
    );
}

/// Each example protocol's small manifest imports whole into a campaign created with
/// that protocol (the VGenST one into the default campaign), through the command line;
/// imported again, it changes nothing.
#[test]
fn the_example_manifests_import_into_campaigns_on_their_protocols() {
    let dir = tempfile::tempdir().unwrap();
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/protocols");
    for (name, clips, questions) in [("vgenst", 3, 6), ("glimpse", 3, 6), ("tumtraffic", 3, 5)] {
        let data = dir.path().join(name);
        if name != "vgenst" {
            let protocol = format!("{examples}/{name}.toml");
            ok(&tandem(
                &data,
                &["campaign", "create", name, "--protocol", &protocol],
            ));
        }
        let manifest = format!("{examples}/{name}.jsonl");
        let campaign = if name == "vgenst" { "default" } else { name };
        let out = ok(&tandem(
            &data,
            &["import", &manifest, "--campaign", campaign],
        ));
        assert!(
            out.contains(&format!(
                "campaign `{campaign}`: {clips} new clip(s), 0 new version(s) of known clips, {questions} question(s) added"
            )),
            "{name}: {out}"
        );
        // Imported again: nothing changes.
        let again = ok(&tandem(
            &data,
            &["import", &manifest, "--campaign", campaign],
        ));
        assert!(
            again.contains(&format!("{clips} clip(s) unchanged")),
            "{name}: {again}"
        );
    }
}

/// Verdicts on known items from a decisions file count toward a pause as live ones do;
/// a pause a stopped server could not take is taken by the next server at its start.
#[test]
fn imported_misses_of_known_defects_pause_and_a_server_start_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let mc = "MC_F_EGO_STA";
    let mut lines = vec![clip_line(&src, "R", mc, &["OE"])];
    for i in 0..10 {
        let mut l = clip_line(&src, &format!("K{i}"), mc, &["OE"]);
        l["known"] = json!({"verdict": "reject", "reasons": ["generation_artifact"]});
        lines.push(l);
    }
    let manifest = write_manifest(&src, "manifest.jsonl", &lines);
    ok(&tandem(&data, &["import", manifest.to_str().unwrap()]));
    for (name, idx) in [("val00", "0"), ("val01", "1")] {
        ok(&tandem(
            &data,
            &["user", "add", name, "--role", "validator", "--index", idx],
        ));
    }
    let misses = |who: &str, from: usize| {
        let mut csv = String::from("stage,item_id,validator,verdict,reasons,note,decided_at\n");
        for i in from..from + 5 {
            csv.push_str(&format!(
                "1,K{i},{who},valid,,,2026-03-01T10:00:0{}Z\n",
                i % 10
            ));
        }
        let file = src.join(format!("{who}.csv"));
        std::fs::write(&file, csv).unwrap();
        file
    };
    let status = || ok(&tandem(&data, &["calibration", "status"]));
    let paused = |text: &str, who: &str| {
        text.lines()
            .any(|l| l.starts_with(who) && l.contains("paused by the known items"))
    };
    // Five known defects passed: the catch rate is surely below 80%.
    let file = misses("val00", 0);
    let out = ok(&tandem(
        &data,
        &["decisions", "import", file.to_str().unwrap()],
    ));
    assert!(out.contains("5 recorded"), "{out}");
    assert!(out.contains("paused val00's queue"), "{out}");
    assert!(paused(&status(), "val00"), "{}", status());

    // Under a threshold of 5% the same misses pause no one ...
    ok(&tandem(
        &data,
        &["campaign", "settings", "--calibration-threshold", "0.05"],
    ));
    let file = misses("val01", 5);
    let out = ok(&tandem(
        &data,
        &["decisions", "import", file.to_str().unwrap()],
    ));
    assert!(!out.contains("paused"), "{out}");
    // ... until the threshold is raised: the next server's start takes the pause.
    ok(&tandem(
        &data,
        &["campaign", "settings", "--calibration-threshold", "0.8"],
    ));
    assert!(!paused(&status(), "val01"), "{}", status());
    let server = crate::helpers::start_server(&data, None, &[]);
    let start = std::time::Instant::now();
    while !paused(&status(), "val01") {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "no pause after the start: {}",
            status()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    drop(server);
    // val00's pause stays one pause: the start paused no one twice.
    let rounds = status();
    assert_eq!(
        rounds.matches("paused by the known items").count(),
        2,
        "{rounds}"
    );
}

/// `tandem calibration copy` makes a resolved clip a known item for two validators who
/// did not review it, and `copies` lists it; refused while the task's pair reviewed it.
#[test]
fn a_resolved_clip_is_copied_as_a_known_item_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let mc = "MC_F_EGO_STA";
    let lines = [clip_line(&src, "MC_F_EGO_STA_0001", mc, &["OE"])];
    let manifest = write_manifest(&src, "manifest.jsonl", &lines);
    ok(&tandem(&data, &["import", manifest.to_str().unwrap()]));
    for (name, idx) in [
        ("val00", "0"),
        ("val01", "1"),
        ("val02", "2"),
        ("val03", "3"),
    ] {
        ok(&tandem(
            &data,
            &["user", "add", name, "--role", "validator", "--index", idx],
        ));
    }
    ok(&tandem(
        &data,
        &["user", "add", "author1", "--role", "author"],
    ));
    let decisions = src.join("decisions.csv");
    std::fs::write(
        &decisions,
        "stage,item_id,validator,verdict,reasons,note,decided_at\n\
         1,MC_F_EGO_STA_0001,val00,valid,,,2026-03-01T10:00:00Z\n\
         1,MC_F_EGO_STA_0001,val01,reject,generation_artifact,melts,2026-03-01T10:00:01Z\n",
    )
    .unwrap();
    ok(&tandem(
        &data,
        &["decisions", "import", decisions.to_str().unwrap()],
    ));
    let resolutions = src.join("resolutions.csv");
    std::fs::write(
        &resolutions,
        "stage,item_id,author,verdict,note,decided_at\n\
         1,MC_F_EGO_STA_0001,author1,reject,the cup melts,2026-03-01T11:00:00Z\n",
    )
    .unwrap();
    ok(&tandem(
        &data,
        &["resolutions", "import", resolutions.to_str().unwrap()],
    ));
    let copy = [
        "calibration",
        "copy",
        "MC_F_EGO_STA_0001",
        "--as",
        "MC_F_EGO_STA_0002",
    ];
    let refused = tandem(&data, &copy);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("val00, val01"), "{err}");
    ok(&tandem(&data, &["pair", "set", mc, "val02", "val03"]));
    let out = ok(&tandem(&data, &copy));
    assert!(out.contains("served to val02 and val03"), "{out}");
    let listed = ok(&tandem(&data, &["calibration", "copies"]));
    assert_eq!(
        listed.trim(),
        "MC_F_EGO_STA_0002\tcopy of MC_F_EGO_STA_0001\tknown: MC_F_EGO_STA_0002\tserved to val02 and val03"
    );
}

/// What an export of nothing writes (a header and no rows) imports as nothing to do,
/// on the test's database: the decisions, the resolutions and the baseline's answers
/// of a campaign that has none. A file with a wrong header is still refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_of_nothing_imports_as_nothing_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let url = crate::helpers::test_database_url().await;
    let run = |args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tandem"));
        cmd.arg("--data-dir").arg(&data).args(args);
        match &url {
            Some(u) => cmd.env("DATABASE_URL", u),
            None => cmd.env_remove("DATABASE_URL"),
        };
        cmd.env_remove("TANDEM_DATA_DIR").output().unwrap()
    };
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let lines = vec![clip_line(&src, "A", "MC_F_EGO_STA", &["OE"])];
    let manifest = write_manifest(&src, "manifest.jsonl", &lines);
    ok(&run(&["import", manifest.to_str().unwrap()]));
    for (export, import, header) in [
        (
            &["export", "decisions"][..],
            &["decisions", "import"][..],
            "stage,item_id",
        ),
        (
            &["export", "resolutions"],
            &["resolutions", "import"],
            "stage,item_id",
        ),
        (
            &["baseline", "export"],
            &["baseline", "import"],
            "participant",
        ),
    ] {
        let csv = ok(&run(export));
        assert_eq!(csv.lines().count(), 1, "{export:?}: {csv}");
        assert!(csv.starts_with(header), "{export:?}: {csv}");
        let file = src.join(format!("{}.csv", import[0]));
        std::fs::write(&file, &csv).unwrap();
        let mut args = import.to_vec();
        args.push(file.to_str().unwrap());
        let out = ok(&run(&args));
        assert!(
            out.contains("nothing to import") && out.contains("a header and no rows"),
            "{import:?}: {out}"
        );
        std::fs::write(&file, "no,such,columns\n").unwrap();
        let err = fails(&run(&args));
        assert!(err.contains("missing column"), "{import:?}: {err}");
    }
    // Nothing was recorded.
    assert_eq!(ok(&run(&["export", "decisions"])).lines().count(), 1);
}
