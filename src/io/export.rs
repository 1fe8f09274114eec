//! The retained benchmark: `benchmark.jsonl` (one retained clip a line, with its
//! retained questions and their V1/V2/V3 variants), the videos, and a README with the
//! counts. The folder is built aside and moved into place only when complete.

use crate::domain::records::{
    RetainedClip, RetainedCounts, RetainedQuestion, keep_whole_pairs, pair_keys,
};
use crate::error::{Error, Result};
use crate::io::manifest::extension_for;
use crate::io::media::media_path;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// The option text of the None-of-these variants.
pub const NONE_OF_THESE: &str = "None of these";
/// Longest answer, in words, that gets an open-ended (V3) variant.
pub const V3_MAX_WORDS: usize = 5;

/// The reformulation variants of a base question (Appendix C.6).
/// V1 adds "None of these" as an extra wrong option; V2 replaces the correct option's
/// text with "None of these", which becomes the answer; V3 drops the options and keeps
/// the answer's text, only when it is a number or a phrase of at most 5 words.
/// When an option already reads "None of these", V1 and V2 would be ambiguous and are
/// left out (null).
pub fn variants(q: &RetainedQuestion) -> Value {
    let has_none = q
        .options
        .iter()
        .any(|o| o.trim().eq_ignore_ascii_case(NONE_OF_THESE));
    let (v1, v2) = if has_none {
        (Value::Null, Value::Null)
    } else {
        let mut v1 = q.options.clone();
        v1.push(NONE_OF_THESE.to_string());
        let mut v2 = q.options.clone();
        if let Some(slot) = v2.get_mut(q.answer) {
            *slot = NONE_OF_THESE.to_string();
        }
        (
            json!({"options": v1, "answer": q.answer}),
            json!({"options": v2, "answer": q.answer}),
        )
    };
    let answer_text = q.options.get(q.answer).map(String::as_str).unwrap_or("");
    let words = answer_text.split_whitespace().count();
    let v3 = if (1..=V3_MAX_WORDS).contains(&words) {
        json!({"question": q.question, "answer": answer_text})
    } else {
        Value::Null
    };
    json!({"V1": v1, "V2": v2, "V3": v3})
}

fn clip_line(
    clip: &RetainedClip,
    video: &str,
    with_variants: bool,
    pairs: &BTreeMap<String, String>,
) -> Value {
    let mut obj = Map::new();
    obj.insert("clip_id".into(), json!(clip.clip_id));
    obj.insert("task".into(), json!(clip.task));
    obj.insert("file".into(), json!(video));
    obj.insert("version".into(), json!(clip.version));
    if clip.by_sample {
        obj.insert("retained_by".into(), json!("sample"));
    }
    if let Value::Object(fields) = &clip.fields {
        for (k, v) in fields {
            if !matches!(
                k.as_str(),
                "clip_id" | "task" | "file" | "questions" | "version"
            ) {
                obj.insert(k.clone(), v.clone());
            }
        }
    }
    let questions: Vec<Value> = clip
        .questions
        .iter()
        .map(|q| {
            let mut line = json!({
                "question_id": q.question_id,
                "qa_type": q.qa_type,
                "level": q.level,
                "question": q.question,
                "options": q.options,
                "answer": q.answer,
            });
            if let Value::Object(fields) = &mut line {
                if let Some(pair) = pairs.get(&q.question_id) {
                    fields.insert("pair".into(), json!(pair));
                }
                if q.by_sample {
                    fields.insert("retained_by".into(), json!("sample"));
                }
                if with_variants {
                    fields.insert("variants".into(), variants(q));
                }
            }
            line
        })
        .collect();
    obj.insert("questions".into(), Value::Array(questions));
    Value::Object(obj)
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ExportSummary {
    pub clips: usize,
    pub questions: usize,
    /// Linked pairs kept whole (both directions retained).
    pub pairs: usize,
    /// Retained questions left out because the other question of their pair was not
    /// retained.
    pub unpaired: usize,
    pub v1: usize,
    pub v2: usize,
    pub v3: usize,
}

/// Writes the retained benchmark into `out`, which must not exist or be empty; each
/// question with its V1/V2/V3 variants when `with_variants` (the campaign's protocol
/// says whether).
pub fn write_retained(
    out: &Path,
    campaign: &str,
    clips: &[RetainedClip],
    counts: &RetainedCounts,
    media_dir: &Path,
    with_variants: bool,
) -> Result<ExportSummary> {
    if out.exists() {
        let mut entries = std::fs::read_dir(out)
            .map_err(|e| Error::io(format!("cannot read {}", out.display()), e))?;
        if entries.next().is_some() {
            return Err(Error::Invalid(format!(
                "{} is not empty; export into a new folder",
                out.display()
            )));
        }
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent)
        .map_err(|e| Error::io(format!("cannot create {}", parent.display()), e))?;
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "export".into());
    let staging = parent.join(format!(".{name}.partial-{}", crate::auth::random_id(6)?));
    let result =
        build(&staging, campaign, clips, counts, media_dir, with_variants).and_then(|summary| {
            if out.exists() {
                std::fs::remove_dir(out)
                    .map_err(|e| Error::io(format!("cannot replace {}", out.display()), e))?;
            }
            std::fs::rename(&staging, out).map_err(|e| {
                Error::io(format!("cannot move the export to {}", out.display()), e)
            })?;
            Ok(summary)
        });
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
}

fn build(
    dir: &Path,
    campaign: &str,
    clips: &[RetainedClip],
    counts: &RetainedCounts,
    media_dir: &Path,
    with_variants: bool,
) -> Result<ExportSummary> {
    let videos = dir.join("videos");
    std::fs::create_dir_all(&videos)
        .map_err(|e| Error::io(format!("cannot create {}", videos.display()), e))?;
    let mut summary = ExportSummary::default();
    let mut linked = false;
    let mut per_task: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut jsonl = Vec::new();
    for clip in clips {
        let rel = format!(
            "videos/{}.{}",
            clip.clip_id,
            extension_for(&clip.media_type)
        );
        let src = media_path(media_dir, &clip.media_sha256);
        std::fs::copy(&src, dir.join(&rel)).map_err(|e| {
            Error::io(
                format!(
                    "cannot copy the video of {} from {}",
                    clip.clip_id,
                    src.display()
                ),
                e,
            )
        })?;
        // A linked pair counts only when both its questions are retained.
        let pairs = pair_keys(&clip.fields);
        let (questions, unpaired) = keep_whole_pairs(clip.questions.clone(), &pairs);
        linked |= !pairs.is_empty();
        summary.unpaired += unpaired;
        summary.pairs += questions
            .iter()
            .filter(|q| pairs.contains_key(&q.question_id))
            .count()
            / 2;
        let kept = RetainedClip {
            questions,
            ..clip.clone()
        };
        let line = clip_line(&kept, &rel, with_variants, &pairs);
        serde_json::to_writer(&mut jsonl, &line)
            .map_err(|e| Error::fault("cannot write JSON", e))?;
        jsonl.push(b'\n');
        summary.clips += 1;
        let entry = per_task.entry(clip.task.as_str()).or_default();
        entry.0 += 1;
        entry.1 += kept.questions.len();
        for q in &kept.questions {
            summary.questions += 1;
            if !with_variants {
                continue;
            }
            let v = variants(q);
            summary.v1 += usize::from(!v["V1"].is_null());
            summary.v2 += usize::from(!v["V2"].is_null());
            summary.v3 += usize::from(!v["V3"].is_null());
        }
    }
    write_file(&dir.join("benchmark.jsonl"), &jsonl)?;

    let readme = readme(campaign, counts, &summary, &per_task, linked, with_variants);
    write_file(&dir.join("README.md"), readme.as_bytes())?;
    Ok(summary)
}

/// The export's README: what "retained" means, the counts, the tasks, the format.
fn readme(
    campaign: &str,
    counts: &RetainedCounts,
    summary: &ExportSummary,
    per_task: &BTreeMap<&str, (usize, usize)>,
    linked: bool,
    with_variants: bool,
) -> String {
    let mut readme = String::new();
    readme.push_str(&format!(
        "# Retained benchmark of campaign `{campaign}`\n\n"
    ));
    readme.push_str(&format!(
        "Exported by Tandem {} on {}.\n\n",
        env!("CARGO_PKG_VERSION"),
        crate::clock::to_rfc3339(crate::clock::now_micros())
    ));
    readme.push_str("An item is retained when both validators passed it, or when they split and an author accepted it");
    readme.push_str(if counts.clips_by_sample + counts.questions_by_sample > 0 {
        ", or, in a stratum reviewed by sample, when it was not drawn and its lot's sample passed (marked `retained_by: \"sample\"`).\n\n"
    } else {
        ".\n\n"
    });
    readme.push_str("## Counts\n\n| | count |\n| --- | ---: |\n");
    let counted = [
        (
            "clips retained (in `benchmark.jsonl`)",
            counts.clips_retained,
        ),
        (
            "clips rejected in Stage 1, waiting for a new version",
            counts.clips_rejected,
        ),
        (
            "clips still in Stage 1 review or with an author",
            counts.clips_open,
        ),
        ("questions of retained clips", counts.questions),
        ("questions retained", counts.questions_retained),
        (
            "questions rejected in Stage 2 (dropped)",
            counts.questions_rejected,
        ),
        (
            "questions still in Stage 2 review or with an author",
            counts.questions_open,
        ),
        (
            "V1 variants (None of these added as a distractor)",
            summary.v1,
        ),
        ("V2 variants (None of these as the answer)", summary.v2),
        (
            "V3 variants (open-ended, answers of at most 5 words)",
            summary.v3,
        ),
    ];
    // The last three rows are the variants', which the protocol may leave out.
    let shown = if with_variants {
        counted.len()
    } else {
        counted.len() - 3
    };
    for (label, n) in &counted[..shown] {
        readme.push_str(&format!("| {label} | {n} |\n"));
    }
    if counts.questions_withdrawn > 0 {
        readme.push_str(&format!(
            "| questions withdrawn by an author after the blind key check (dropped; each in the audit trail) | {} |\n",
            counts.questions_withdrawn
        ));
    }
    if counts.clips_by_sample + counts.questions_by_sample > 0 {
        readme.push_str(&format!(
            "| of the retained clips: retained by sample, not reviewed (`retained_by: \"sample\"`) | {} |\n\
             | of the retained questions: retained by sample, not reviewed (`retained_by: \"sample\"`) | {} |\n",
            counts.clips_by_sample, counts.questions_by_sample
        ));
    }
    if linked {
        readme.push_str(&format!(
            "| linked pairs retained (both directions; `pair` in `benchmark.jsonl`) | {} |\n\
             | retained questions left out: the other question of their pair was not retained | {} |\n",
            summary.pairs, summary.unpaired
        ));
    }
    readme.push_str("\n## Per task\n\n| task | clips | questions |\n| --- | ---: | ---: |\n");
    for (task, (c, q)) in per_task {
        readme.push_str(&format!("| {task} | {c} | {q} |\n"));
    }
    if counts.clips_open + counts.questions_open > 0 {
        readme.push_str(
            "\n**Review is not finished**: items still in review are not in this export.\n",
        );
    }
    readme.push_str(
        "\n## Format\n\nEach line of `benchmark.jsonl` is one clip with the fields of the import manifest, `file` pointing into `videos/`, \
         and `questions` holding only its retained questions. `answer` is the 0-based index of the correct option.",
    );
    if with_variants {
        readme.push_str(
            " `variants.V1` appends \"None of these\" as an extra wrong option; `variants.V2` replaces the correct option's text with \
             \"None of these\", which becomes the answer; `variants.V3` is the open-ended form with the answer's text, given only \
             when that answer is a number or a phrase of at most 5 words (otherwise null). V1 and V2 are null for a question whose \
             options already include \"None of these\".",
        );
    }
    readme.push('\n');
    readme
}

fn write_file(path: &Path, data: &[u8]) -> Result<()> {
    let mut f = std::fs::File::create(path)
        .map_err(|e| Error::io(format!("cannot create {}", path.display()), e))?;
    f.write_all(data)
        .and_then(|()| f.sync_all())
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(options: &[&str], answer: usize) -> RetainedQuestion {
        RetainedQuestion {
            question_id: "Q".into(),
            qa_type: "OE".into(),
            level: "L1".into(),
            question: "Which object appears?".into(),
            options: options.iter().map(|s| s.to_string()).collect(),
            answer,
            by_sample: false,
        }
    }

    /// A protocol that leaves the variants out: no `variants` in any question, no
    /// variant rows or words in the README; with them, both.
    #[test]
    fn an_export_carries_the_variants_only_when_the_protocol_asks_for_them() {
        let dir = tempfile::tempdir().expect("temp dir");
        let media = dir.path().join("media");
        let sha = "ab".repeat(32);
        let video = media_path(&media, &sha);
        std::fs::create_dir_all(video.parent().expect("a folder")).expect("media folder");
        std::fs::write(&video, b"video").expect("video");
        let clip = RetainedClip {
            clip_id: "C1".into(),
            task: "TRAJ".into(),
            version: 1,
            fields: json!({"theme": "t"}),
            media_sha256: sha,
            media_type: "video/mp4".into(),
            by_sample: false,
            questions: vec![q(&["a brass key", "a red candle"], 1)],
        };
        let counts = RetainedCounts::default();
        for with in [false, true] {
            let out = dir.path().join(format!("export-{with}"));
            let s = write_retained(
                &out,
                "c",
                std::slice::from_ref(&clip),
                &counts,
                &media,
                with,
            )
            .expect("export");
            let jsonl = std::fs::read_to_string(out.join("benchmark.jsonl")).expect("jsonl");
            let readme = std::fs::read_to_string(out.join("README.md")).expect("readme");
            assert_eq!(jsonl.contains("\"variants\""), with, "{jsonl}");
            assert_eq!(readme.contains("V1 variants"), with, "{readme}");
            assert_eq!(readme.contains("`variants.V1`"), with, "{readme}");
            assert_eq!((s.questions, s.v1 > 0), (1, with));
        }
    }

    #[test]
    fn v1_adds_and_v2_replaces_and_v3_keeps_short_answers() {
        let v = variants(&q(&["a brass key", "a red candle", "a glass orb"], 2));
        assert_eq!(
            v["V1"]["options"],
            json!([
                "a brass key",
                "a red candle",
                "a glass orb",
                "None of these"
            ])
        );
        assert_eq!(v["V1"]["answer"], json!(2));
        assert_eq!(
            v["V2"]["options"],
            json!(["a brass key", "a red candle", "None of these"])
        );
        assert_eq!(v["V2"]["answer"], json!(2));
        assert_eq!(v["V3"]["answer"], json!("a glass orb"));
    }

    #[test]
    fn v3_is_left_out_for_long_answers() {
        let v = variants(&q(
            &["the cup moves behind the large wooden box on the left", "3"],
            0,
        ));
        assert!(v["V3"].is_null());
        let v = variants(&q(&["the cup moves", "3"], 1));
        assert_eq!(v["V3"]["answer"], json!("3"));
    }

    #[test]
    fn none_of_these_already_present_drops_v1_and_v2() {
        let v = variants(&q(&["red", "none of these"], 0));
        assert!(v["V1"].is_null() && v["V2"].is_null());
        assert_eq!(v["V3"]["answer"], json!("red"));
    }
}
