//! `tandem demo` builds what its printed instructions promise.

use tandem::domain::Stage;

#[tokio::test]
async fn the_demo_campaign_holds_what_the_readme_says() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("demo");
    let (_config, store, accounts) = tandem::demo::build(&data, None).await.unwrap();
    let names: Vec<&str> = accounts.iter().map(|a| a.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "admin", "val00", "val01", "val02", "val03", "author", "part1"
        ]
    );
    let campaign = store.campaign(tandem::demo::CAMPAIGN).await.unwrap();

    // One split waits for the author in Stage 1.
    let splits = store.splits(&campaign, Stage::Clip, false).await.unwrap();
    assert_eq!(splits.len(), 1);

    // val00 starts with the three calibration clips, and the review is closed until then.
    let val00 = store.user_by_name("val00").await.unwrap().unwrap();
    let status = store.calibration_status(&campaign, &val00).await.unwrap();
    assert_eq!((status.total, status.required, status.decided), (3, 3, 0));
    assert!(status.next.is_some());
    let closed = store.require_calibrated(&campaign, &val00).await;
    assert!(
        matches!(closed, Err(tandem::Error::Forbidden(_))),
        "{closed:?}"
    );

    // Two known clips in the live queue: the flawed one decided (one caught, one
    // missed), the sound one waiting among the real clips; neither is a split.
    let known = store.known_records(&campaign).await.unwrap();
    let said: Vec<(&str, &str, &str)> = known
        .iter()
        .map(|r| {
            (
                r.item_id.as_str(),
                r.verdict.as_str(),
                r.known_verdict.as_str(),
            )
        })
        .collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said.iter()
            .all(|(id, _, k)| id.ends_with("_D12") && *k == "reject"),
        "{said:?}"
    );
    // Both known clips are the first task's, and neither repeats a sample clip's video.
    let src = tempfile::tempdir().unwrap();
    let tax = tandem::domain::taxonomy::Taxonomy::vgenst();
    let sample = tandem::demo::write_sample_manifest(src.path(), &tax).unwrap();
    let known_manifest = tandem::demo::write_known_manifest(src.path(), &tax, &sample)
        .unwrap()
        .unwrap();
    let lines = std::fs::read_to_string(known_manifest).unwrap();
    let first_task = &tax.tasks[0].code;
    for (line, suffix) in lines.lines().zip(["_D12", "_D13"]) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["clip_id"], format!("{first_task}{suffix}"), "{line}");
        let video = std::fs::read(src.path().join(v["file"].as_str().unwrap())).unwrap();
        assert!(
            tandem::demo::CLIPS.iter().all(|c| *c != video.as_slice()),
            "{suffix} has a video of its own"
        );
    }
    let figures = tandem::app::known::figures(&store, &campaign)
        .await
        .unwrap()
        .expect("the known items' figures");
    let caught: usize = figures.validators.iter().map(|v| v.caught).sum();
    assert_eq!((figures.items, figures.verdicts, caught), (1, 2, 1));

    // A study of three sets for part1.
    let study = store.require_study(&campaign).await.unwrap();
    assert_eq!(store.study_size(&study).await.unwrap(), (3, 12));
    let part1 = store.user_by_name("part1").await.unwrap().unwrap();
    let p = store.study_progress(&study, &part1).await.unwrap();
    assert_eq!((p.total, p.answered, p.next), (3, 0, Some(1)));

    // The human baseline, set up on the one clip whose questions are kept.
    assert!(store.baseline(&campaign).await.unwrap().is_some());
    let (asked, _) = tandem::app::baseline::questions(&store, &campaign)
        .await
        .unwrap();
    assert!(!asked.is_empty());
    assert!(
        asked.iter().all(|q| q.question_id.contains("_D08")),
        "{asked:?}"
    );

    // A second run over the same folder starts afresh instead of failing.
    drop(store);
    let (_c, store, _) = tandem::demo::build(&data, None).await.unwrap();
    let campaign = store.campaign(tandem::demo::CAMPAIGN).await.unwrap();
    assert_eq!(
        store
            .splits(&campaign, Stage::Clip, false)
            .await
            .unwrap()
            .len(),
        1
    );
}

/// `tandem demo --protocol glimpse|tumtraffic`: the same demo on another protocol's
/// tasks and QA types (the twelve clips go to its tasks in turn), the campaign created
/// with that protocol, and the same split waiting for the author (of its first review
/// stage: GLIMPSE reviews no clips).
#[tokio::test]
async fn the_demo_runs_on_the_shipped_example_protocols() {
    for (name, tasks, per_clip) in [("glimpse", 11, 1), ("tumtraffic", 3, 2)] {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("demo");
        let text = tandem::domain::protocol::shipped(name).unwrap();
        let protocol = tandem::domain::protocol::parse(text).unwrap();
        let (_config, store, _accounts) = tandem::demo::build_with(&data, None, Some(&protocol))
            .await
            .unwrap();
        let campaign = store.campaign(tandem::demo::CAMPAIGN).await.unwrap();
        assert_eq!(*campaign.taxonomy, protocol.taxonomy, "{name}");
        assert_eq!(store.tasks(&campaign).await.unwrap().len(), tasks);
        let manifest =
            std::fs::read_to_string(data.join("sample-clips").join("manifest.jsonl")).unwrap();
        let clips: Vec<serde_json::Value> = manifest
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(clips.len(), 12, "{name}");
        for (i, clip) in clips.iter().enumerate() {
            let task = &protocol.taxonomy.tasks[i % tasks].code;
            assert_eq!(clip["task"], task.as_str(), "{name}: {clip}");
            let questions = clip["questions"].as_array().unwrap();
            assert!(!questions.is_empty(), "{name}: {clip}");
            for q in questions {
                let qa = q["qa_type"].as_str().unwrap();
                assert!(protocol.taxonomy.applies(task, qa), "{name}: {q}");
            }
        }
        assert_eq!(
            clips[0]["questions"].as_array().unwrap().len(),
            per_clip,
            "{name}: one question per level the task has"
        );
        // GLIMPSE reviews no clips: its split, and its calibration items, are questions.
        let stage = if protocol.taxonomy.clip_review {
            Stage::Clip
        } else {
            Stage::Question
        };
        let splits = store.splits(&campaign, stage, false).await.unwrap();
        assert_eq!(splits.len(), 1, "{name}");
        let other = if stage == Stage::Clip {
            Stage::Question
        } else {
            Stage::Clip
        };
        assert!(
            store
                .splits(&campaign, other, false)
                .await
                .unwrap()
                .is_empty(),
            "{name}"
        );
        store.close().await;
    }
}

/// Splits a printed command line into words, single quotes keeping their spaces.
fn words(line: &str) -> Vec<String> {
    let (mut out, mut word, mut quoted) = (Vec::new(), String::new(), false);
    for ch in line.chars() {
        match ch {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            _ => word.push(ch),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// Runs one printed `curl` line as curl would: its headers, its body (a POST), its URL.
async fn run_curl(client: &reqwest::Client, line: &str) -> (u16, serde_json::Value) {
    let w = words(line);
    assert_eq!(w[0], "curl", "{line}");
    let (mut headers, mut body, mut url) = (Vec::new(), None, None);
    let mut i = 1;
    while i < w.len() {
        match w[i].as_str() {
            "-H" => {
                let (k, v) = w[i + 1].split_once(": ").unwrap();
                headers.push((k.to_string(), v.to_string()));
                i += 1;
            }
            "-d" => {
                body = Some(w[i + 1].clone());
                i += 1;
            }
            u if u.starts_with("http://") => url = Some(u.to_string()),
            other => panic!("`{other}` in {line}"),
        }
        i += 1;
    }
    let url = url.unwrap_or_else(|| panic!("no URL in {line}"));
    let mut r = match &body {
        Some(b) => client.post(&url).body(b.clone()),
        None => client.get(&url),
    };
    for (k, v) in headers {
        r = r.header(k, v);
    }
    let reply = r.send().await.unwrap();
    let status = reply.status().as_u16();
    let text = reply.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
    )
}

/// The API lines `tandem demo` prints work as printed, in their order: the calibration
/// status, the next calibration item, a verdict on it; the queue answers 403 until
/// calibration is passed and then opens.
#[tokio::test]
async fn the_demos_printed_api_lines_work_as_printed() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["demo", "--bind", "127.0.0.1:0"])
        .current_dir(dir.path())
        .env_remove("DATABASE_URL")
        .env_remove("TANDEM_DATA_DIR")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut printed = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if line.starts_with("Press Ctrl-C") {
            break;
        }
        printed.push(line);
    }
    let curls: Vec<&str> = printed
        .iter()
        .filter_map(|l| l.trim_start().strip_prefix("curl ").map(|_| l.trim()))
        .collect();
    assert_eq!(curls.len(), 4, "{printed:#?}");
    let client = reqwest::Client::new();
    let (status, status_reply) = run_curl(&client, curls[0]).await;
    assert_eq!(status, 200, "{status_reply}");
    assert_eq!(status_reply["state"], "in_progress");
    let (status, item) = run_curl(&client, curls[1]).await;
    assert_eq!(status, 200, "{item}");
    assert_eq!(item["item_id"], status_reply["next"]["item"]);
    let (status, mut answer) = run_curl(&client, curls[2]).await;
    assert!(status == 200 || status == 201, "{status}: {answer}");
    let (status, closed) = run_curl(&client, curls[3]).await;
    assert_eq!(status, 403, "{closed}");
    // The rest of the calibration as the answers lead: each names the next item; its
    // known verdict is the manifest's (the demo writes it beside its clips).
    let manifest = std::fs::read_to_string(
        dir.path()
            .join("tandem-demo/sample-clips/calibration.jsonl"),
    )
    .unwrap();
    let known: std::collections::HashMap<String, serde_json::Value> = manifest
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["clip_id"].as_str().unwrap().to_string(),
                v["calibration"].clone(),
            )
        })
        .collect();
    let auth_and_api = curls[2].rsplit_once(" http").unwrap();
    let api = format!("http{}", auth_and_api.1);
    let api = api.split("/calibration/").next().unwrap().to_string();
    let token = words(curls[0])[2].clone();
    while let Some(next) = answer["status"]["next"]["item"]
        .as_str()
        .map(str::to_string)
    {
        let stage = answer["status"]["next"]["stage"].as_i64().unwrap();
        let truth = &known[&next];
        let r = client
            .post(format!("{api}/calibration/{stage}/{next}/verdict"))
            .header("Authorization", token.trim_start_matches("Authorization: "))
            .json(&serde_json::json!({
                "verdict": truth["verdict"],
                "reasons": truth.get("reasons").cloned().unwrap_or(serde_json::json!([]))
            }))
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "{next}: {}", r.status());
        answer = r.json().await.unwrap();
    }
    let (status, queue) = run_curl(&client, curls[3]).await;
    // The printed verdict (valid) is the first item's known one: three of three agree.
    assert_eq!(answer["status"]["state"], "passed", "{answer}");
    assert_eq!(status, 200, "{queue}");
    assert!(queue["total"].as_i64().unwrap() > 0, "{queue}");
    child.kill().unwrap();
    let _ = child.wait();
}
