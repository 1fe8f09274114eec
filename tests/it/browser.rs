//! A real headless Chromium, driven through chromedriver (WebDriver), reviewing by
//! keyboard only. Skipped with a message when chromedriver is not installed, unless
//! `TANDEM_REQUIRE_BROWSER=1` (as `.ci/run` sets it), which makes a missing browser an
//! error.

use crate::helpers::*;
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tandem::domain::Role;

const ENTER: &str = "\u{E007}";
const TAB: &str = "\u{E004}";
const ESCAPE: &str = "\u{E00C}";

struct Driver {
    child: Child,
    _profile: tempfile::TempDir,
    base: String,
    session: String,
    http: reqwest::Client,
}

impl Drop for Driver {
    fn drop(&mut self) {
        // End the browser session, then the driver; the profile folder goes last.
        let host = self.base.trim_start_matches("http://").to_string();
        if let Ok(mut s) = std::net::TcpStream::connect(&host) {
            use std::io::{Read, Write};
            let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
            let _ = write!(
                s,
                "DELETE /session/{} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                self.session
            );
            let mut sink = Vec::new();
            let _ = s.read_to_end(&mut sink);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn find_tool(env: &str, candidates: &[&str]) -> Option<String> {
    if let Ok(p) = std::env::var(env) {
        return Some(p);
    }
    candidates
        .iter()
        .find(|c| std::path::Path::new(c).exists())
        .map(|c| c.to_string())
}

/// Starts chromedriver and a headless Chromium session, or says why not.
async fn driver() -> Option<Driver> {
    let required = std::env::var("TANDEM_REQUIRE_BROWSER").is_ok_and(|v| v == "1");
    let driver_bin = find_tool("CHROMEDRIVER", &["/usr/bin/chromedriver"]);
    let chrome_bin = find_tool(
        "CHROMIUM",
        &["/usr/bin/chromium", "/usr/bin/chromium-browser"],
    );
    let (Some(driver_bin), Some(chrome_bin)) = (driver_bin, chrome_bin) else {
        assert!(
            !required,
            "TANDEM_REQUIRE_BROWSER=1 but chromium or chromedriver is missing"
        );
        // Past the harness's output capture, so that the skip is seen.
        use std::io::Write;
        let _ = std::io::stderr().write_all(
            b"note: a browser test was SKIPPED: install Debian's chromium and chromium-driver to run it\n",
        );
        return None;
    };
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let child = Command::new(&driver_bin)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let http = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    for _ in 0..100 {
        if let Ok(r) = http.get(format!("{base}/status")).send().await
            && r.json::<Value>()
                .await
                .is_ok_and(|v| v["value"]["ready"] == true)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let profile = tempfile::tempdir().unwrap();
    let caps = json!({"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
        "binary": chrome_bin,
        "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", "--window-size=1400,1000",
                 format!("--user-data-dir={}", profile.path().display())]
    }}}});
    let r: Value = http
        .post(format!("{base}/session"))
        .json(&caps)
        .send()
        .await
        .expect("new session")
        .json()
        .await
        .unwrap();
    let session = r["value"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no WebDriver session: {r}"))
        .to_string();
    Some(Driver {
        child,
        _profile: profile,
        base,
        session,
        http,
    })
}

impl Driver {
    async fn cmd(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut req = self.http.request(
            method,
            format!("{}/session/{}{path}", self.base, self.session),
        );
        req = req.json(&body.unwrap_or(json!({})));
        let v: Value = req.send().await.unwrap().json().await.unwrap();
        v["value"].clone()
    }

    async fn go(&self, url: &str) {
        self.cmd(reqwest::Method::POST, "/url", Some(json!({"url": url})))
            .await;
    }

    async fn url(&self) -> String {
        self.cmd(reqwest::Method::GET, "/url", None)
            .await
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    async fn source(&self) -> String {
        self.cmd(reqwest::Method::GET, "/source", None)
            .await
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Presses keys, one after another, on whatever has the focus.
    /// `key` pressed while `modifier` is held (Shift, Control: WebDriver's codes).
    async fn chord(&self, modifier: &str, key: &str) {
        let actions = json!([
            {"type": "keyDown", "value": modifier},
            {"type": "keyDown", "value": key},
            {"type": "keyUp", "value": key},
            {"type": "keyUp", "value": modifier},
        ]);
        self.cmd(
            reqwest::Method::POST,
            "/actions",
            Some(json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]})),
        )
        .await;
    }

    async fn keys(&self, text: &str) {
        let mut actions = Vec::new();
        for ch in text.chars() {
            actions.push(json!({"type": "keyDown", "value": ch.to_string()}));
            actions.push(json!({"type": "keyUp", "value": ch.to_string()}));
        }
        self.cmd(
            reqwest::Method::POST,
            "/actions",
            Some(json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]})),
        )
        .await;
    }

    /// Waits (up to 30 s) until the page is no longer `from`, and returns the new URL.
    async fn moved_from(&self, from: &str) -> String {
        for _ in 0..300 {
            let u = self.url().await;
            if u != from {
                // Let the new page's script attach its key handlers.
                self.wait_ready().await;
                return u;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the page stayed at {from}");
    }

    /// Runs a script in the page and returns what it returns.
    async fn exec(&self, script: &str, args: Vec<Value>) -> Value {
        self.cmd(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
        .await
    }

    /// Polls `script` until it returns something truthy (up to 30 s), and returns it.
    async fn until(&self, what: &str, script: &str) -> Value {
        let mut last = Value::Null;
        for _ in 0..600 {
            last = self.exec(script, vec![]).await;
            let truthy = match &last {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.is_empty(),
                _ => true,
            };
            if truthy {
                return last;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("waited 30 s for {what}; last answer: {last}");
    }

    /// Waits until the player is at rest: no step or seek under way, its frame presented.
    async fn settled(&self) {
        self.until(
            "the player to settle",
            "const v = document.getElementById('clip'); return !!(window.tandemPlayer && v \
             && v.readyState >= 2 && window.tandemPlayer.settled());",
        )
        .await;
    }

    /// The index a counter clip shows on screen, read from the video drawn on a canvas
    /// (-1 if a column is neither black nor white, i.e. not a clean frame).
    async fn frame(&self) -> i64 {
        self.exec(READ_COUNTER, vec![]).await.as_i64().unwrap_or(-2)
    }

    /// The trimmed text of the first element `css` matches.
    async fn element_text(&self, css: &str) -> String {
        self.exec(
            "const e = document.querySelector(arguments[0]); return e ? e.textContent.trim() : null;",
            vec![json!(css)],
        )
        .await
        .as_str()
        .unwrap_or_else(|| panic!("no element {css}"))
        .to_string()
    }

    async fn element(&self, css: &str) -> String {
        let v = self
            .cmd(
                reqwest::Method::POST,
                "/element",
                Some(json!({"using": "css selector", "value": css})),
            )
            .await;
        v.as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}: {v}"))
            .to_string()
    }

    /// Clicks an element with the mouse.
    async fn click(&self, css: &str) {
        let id = self.element(css).await;
        self.cmd(reqwest::Method::POST, &format!("/element/{id}/click"), None)
            .await;
    }

    /// Makes the page's viewport `w` x `h` CSS pixels.
    async fn viewport(&self, w: i64, h: i64) {
        for _ in 0..3 {
            let inner = self.exec("return [innerWidth, innerHeight];", vec![]).await;
            let (iw, ih) = (
                inner[0].as_i64().unwrap_or(w),
                inner[1].as_i64().unwrap_or(h),
            );
            if (iw, ih) == (w, h) {
                return;
            }
            let rect = self.cmd(reqwest::Method::GET, "/window/rect", None).await;
            let (ow, oh) = (
                rect["width"].as_i64().unwrap_or(w),
                rect["height"].as_i64().unwrap_or(h),
            );
            self.cmd(
                reqwest::Method::POST,
                "/window/rect",
                Some(json!({"width": ow + w - iw, "height": oh + h - ih})),
            )
            .await;
        }
    }

    /// Waits until a new document has replaced the one of `marker` (set by `mark`).
    async fn mark(&self) {
        self.exec("window.__tandemOld = true;", vec![]).await;
    }

    async fn reloaded(&self) {
        self.until(
            "a new page",
            "return !window.__tandemOld && document.readyState === 'complete';",
        )
        .await;
    }

    async fn wait_ready(&self) {
        for _ in 0..100 {
            let r = self
                .cmd(
                    reqwest::Method::POST,
                    "/execute/sync",
                    Some(json!({"script": "return document.readyState", "args": []})),
                )
                .await;
            if r == "complete" {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

const ARROW_LEFT: &str = "\u{E012}";
const ARROW_RIGHT: &str = "\u{E014}";
const SHIFT: &str = "\u{E008}";
const ARROW_DOWN: &str = "\u{E015}";
const HOME: &str = "\u{E011}";
const END: &str = "\u{E010}";

/// Reads the index a counter clip's frame carries: eight 40-pixel columns, the n-th
/// white when bit n is set.
const READ_COUNTER: &str = "const v = document.getElementById('clip');
  const c = document.createElement('canvas'); c.width = 320; c.height = 240;
  const x = c.getContext('2d'); x.drawImage(v, 0, 0, 320, 240);
  const d = x.getImageData(0, 0, 320, 240).data; let n = 0;
  for (let b = 0; b < 8; b++) {
    const y = d[(120 * 320 + b * 40 + 20) * 4];
    if (y > 200) n |= 1 << b; else if (y > 60) return -1;
  }
  return n;";

/// Whether ffmpeg is here to make test clips; a browser test that needs it is skipped
/// without it, unless the browser tests are required (then ffmpeg is too).
fn ffmpeg_or_skip() -> bool {
    if has_ffmpeg() {
        return true;
    }
    assert!(
        !std::env::var("TANDEM_REQUIRE_BROWSER").is_ok_and(|v| v == "1"),
        "TANDEM_REQUIRE_BROWSER=1 but ffmpeg is missing (the player tests make their clips with it)"
    );
    use std::io::Write;
    let _ = std::io::stderr()
        .write_all(b"note: a browser test was SKIPPED: it makes its clips with ffmpeg\n");
    false
}

/// A WebM clip whose every frame shows its own index in binary, as eight columns of
/// 40 x 240 pixels, white for a 1 bit: flat areas that survive compression.
fn counter_clip(dir: &std::path::Path, name: &str, fps: u32, seconds: u32) -> String {
    std::fs::create_dir_all(dir.join("videos")).unwrap();
    let file = format!("videos/{name}.webm");
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg(format!(
            "color=c=black:s=320x240:r={fps}:d={seconds},format=yuv420p"
        ))
        .arg("-vf")
        .arg("geq=lum='if(mod(floor(N/pow(2\\,floor(X/40)))\\,2)\\,235\\,16)':cb=128:cr=128")
        .args(["-c:v", "libvpx-vp9", "-b:v", "300k", "-g"])
        .arg(fps.to_string())
        .arg(dir.join(&file))
        .status()
        .expect("run ffmpeg");
    assert!(status.success(), "ffmpeg made no {file}");
    file
}

/// Two counter clips, at 8 and at 30 fps, imported through the manifest import.
async fn counter_campaign(app: &TestApp) -> Vec<(String, std::path::PathBuf, i64)> {
    let src = app.source();
    let mut lines = Vec::new();
    let mut clips = Vec::new();
    for (id, fps, seconds) in [("COUNT_08", 8, 4), ("COUNT_30", 30, 3)] {
        let file = counter_clip(&src, id, fps, seconds);
        lines.push(json!({
            "clip_id": id, "task": "MC_F_EGO_STA", "file": file, "theme": "a frame counter",
            "scene_graph": {}, "scenario": {}, "questions": []
        }));
        clips.push((id.to_string(), src.join(&file), i64::from(fps * seconds)));
    }
    let m = write_manifest(&src, "counters.jsonl", &lines);
    app.import(&m).await.unwrap();
    clips
}

/// Steps through a counter clip of `frames` frames by keyboard, before and after playing
/// it, and checks that every step shows exactly the next (or previous) frame.
async fn steps_are_one_frame(d: &Driver, clip: &str, frames: i64, rate: bool) {
    let frameno = "return document.getElementById('frameno').textContent;";
    let check = async |expected: i64, after: &str| {
        d.settled().await;
        assert_eq!(d.frame().await, expected, "{clip}: the frame after {after}");
        if rate {
            assert_eq!(
                d.exec(frameno, vec![]).await,
                json!(format!("frame {} / {frames}", expected + 1)),
                "{clip}: the frame number shown after {after}"
            );
        }
    };
    check(0, "opening the page").await;
    // Before the clip was ever played.
    for k in 1..=12 {
        d.keys(ARROW_RIGHT).await;
        check(k, &format!("{k} steps forward")).await;
    }
    for k in (9..=11).rev() {
        d.keys(ARROW_LEFT).await;
        check(k, "a step back").await;
    }
    d.keys(END).await;
    check(frames - 1, "End").await;
    d.keys(ARROW_LEFT).await;
    check(frames - 2, "a step back from the last frame").await;
    d.keys(ARROW_RIGHT).await;
    d.keys(ARROW_RIGHT).await;
    check(frames - 1, "a step past the last frame").await;
    d.keys(HOME).await;
    check(0, "Home").await;
    d.keys(ARROW_LEFT).await;
    check(0, "a step before the first frame").await;
    // After playing: pause somewhere past a second, then step from there.
    d.keys(" ").await;
    d.until(
        "the clip to play past 1 s",
        "return document.getElementById('clip').currentTime > 1.0;",
    )
    .await;
    d.keys(" ").await;
    d.settled().await;
    let at = d.frame().await;
    assert!(
        at > 0 && at < frames - 8,
        "{clip}: paused at frame {at} after playing"
    );
    if rate {
        check(at, "pausing").await;
    }
    for k in 1..=6 {
        d.keys(ARROW_RIGHT).await;
        check(at + k, &format!("{k} steps forward after playing")).await;
    }
    d.keys(ARROW_LEFT).await;
    d.keys(ARROW_LEFT).await;
    check(at + 4, "two quick steps back after playing").await;
    // A frame of the strip shows that frame: its middle frame of the third eighth.
    d.click("#strip .tiles li:nth-child(3) button").await;
    check((5 * frames) / 16, "a click on the strip's third frame").await;
}

async fn demo_campaign(app: &TestApp) -> Vec<String> {
    let src = app.source();
    let manifest =
        tandem::demo::write_sample_manifest(&src, &tandem::domain::taxonomy::Taxonomy::vgenst())
            .unwrap();
    app.import(&manifest).await.unwrap();
    sqlx::query_scalar("SELECT clip_key FROM clips ORDER BY id")
        .fetch_all(&app.db)
        .await
        .unwrap()
}

async fn sign_in_by_keyboard(d: &Driver, app: &TestApp, name: &str) -> String {
    d.go(&format!("{}/login", app.base)).await;
    d.wait_ready().await;
    let login = d.url().await;
    d.keys(&format!("{name}{TAB}{PASSWORD}{ENTER}")).await;
    d.moved_from(&login).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_validator_reviews_stage_1_and_stage_2_by_keyboard_only() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    app.user("val00", Role::Validator, Some(0)).await;
    let v1 = app.user("val01", Role::Validator, Some(1)).await;
    let clips = demo_campaign(&app).await;
    // With two validators val00 is in every pair: task t -> (t mod 2, (t+1) mod 2).
    let first = &clips[0];

    let at = sign_in_by_keyboard(&d, &app, "val00").await;
    assert!(at.ends_with(&format!("/c/{CAMPAIGN}/review/1")), "{at}");
    assert!(d.source().await.contains("0 of 12 decided"));

    // Enter opens the next clip; R, 2, N, a note, Esc, Enter rejects it and moves on.
    d.keys(ENTER).await;
    let item = d.moved_from(&at).await;
    assert!(item.ends_with(&format!("/review/1/{first}")), "{item}");
    d.keys(" ").await; // play
    d.keys("\u{E012}\u{E014}").await; // one frame back and forward
    d.keys("r2n").await;
    d.keys("flickers at the end").await;
    d.keys(&format!("{ESCAPE}{ENTER}")).await;
    let next = d.moved_from(&item).await;
    assert!(next.ends_with(&format!("/review/1/{}", clips[1])), "{next}");
    assert!(
        d.source()
            .await
            .contains(&format!("Saved: {first} is reject (Generation artifact)."))
    );

    // V, Enter on the next ten clips.
    let mut here = next;
    for _ in 1..11 {
        d.keys(&format!("v{ENTER}")).await;
        here = d.moved_from(&here).await;
    }
    let stored: Vec<(String, String, String, Option<i64>)> = sqlx::query_as(
        "SELECT c.clip_key, d.verdict, d.reasons || '|' || d.note, d.time_spent_ms FROM decisions d
         JOIN items i ON i.id = d.item_id JOIN clips c ON c.current_version_id = i.clip_version_id AND i.stage = 1
         ORDER BY d.id",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(stored.len(), 11);
    assert_eq!(
        (stored[0].1.as_str(), stored[0].2.as_str()),
        ("reject", "generation_artifact|flickers at the end")
    );
    assert!(stored[1..].iter().all(|s| s.1 == "valid"));
    assert!(
        stored.iter().all(|s| s.3.is_some()),
        "time spent is recorded"
    );

    // The partner passes the second clip: its questions open in Stage 2.
    app.pass(&v1, 1, &clips[1]).await;
    d.keys("q").await; // back to the queue
    let queue1 = d.moved_from(&here).await;
    assert!(queue1.ends_with("/review/1"), "{queue1}");
    d.keys("2").await; // Stage 2
    let queue2 = d.moved_from(&queue1).await;
    assert!(queue2.ends_with("/review/2"), "{queue2}");
    d.keys(ENTER).await;
    let q = d.moved_from(&queue2).await;
    assert!(q.contains(&format!("/review/2/{}_", clips[1])), "{q}");
    assert!(d.source().await.contains("keyed answer"));
    d.keys(&format!("r1{ENTER}")).await;
    let after = d.moved_from(&q).await;
    assert!(after.contains("/review/2/"), "{after}");
    let stage2: (String, String) = sqlx::query_as(
        "SELECT d.verdict, d.reasons FROM decisions d JOIN items i ON i.id = d.item_id WHERE i.stage = 2",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(
        stage2,
        ("reject".to_string(), "incorrect_answer".to_string())
    );
}

/// A GLIMPSE-like campaign reviewed by keyboard: no clip review, so the validator starts
/// at the questions; its own reasons under their digits, a linked pair of yes/no
/// questions (one question asked in both directions) reviewed one direction after the
/// other, and the pair counted as a pair: not retained when one direction is rejected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_linked_pair_of_a_glimpse_campaign_is_reviewed_by_keyboard() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    let protocol = app.campaign_on("glimpse").await;
    app.user("val00", Role::Validator, Some(0)).await;
    let v1 = app.user("val01", Role::Validator, Some(1)).await;
    let admin = app.user("admin1", Role::Admin, None).await;
    let src = app.source();
    let manifest = tandem::demo::write_sample_manifest(&src, &protocol.taxonomy).unwrap();
    // The second sample clip (task TEMP) asks a yes/no question in both directions, and
    // nothing else: it alone is imported.
    let clip = "TEMP_D01";
    let line: String = std::fs::read_to_string(&manifest)
        .unwrap()
        .lines()
        .filter(|l| l.contains(&format!("\"clip_id\":\"{clip}\"")))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(!line.is_empty());
    std::fs::write(&manifest, line).unwrap();
    app.import(&manifest).await.unwrap();
    let (yes, reverse) = (format!("{clip}_YN"), format!("{clip}_YNR"));

    // No clip review (real videos): the validator starts in Stage 2.
    let queue2 = sign_in_by_keyboard(&d, &app, "val00").await;
    assert!(
        queue2.ends_with(&format!("/c/{CAMPAIGN}/review/2")),
        "{queue2}"
    );
    d.keys(ENTER).await;
    let first = d.moved_from(&queue2).await;
    assert!(first.ends_with(&format!("/review/2/{yes}")), "{first}");
    let page = d.source().await;
    assert!(
        page.contains("Its reversed direction does not hold") && !page.contains("Incorrect answer"),
        "GLIMPSE's reasons, not VGenST's"
    );
    // The page names the other direction of the pair, with its text and its key, so
    // that both keys are checked together.
    assert!(
        page.contains(&format!(
            "asked the other way round as <code>{reverse}</code>"
        )) && page.contains("reach the middle of the frame before it starts moving")
            && page.contains("keyed <strong class=\"linked-key\">B: no</strong>"),
        "{page}"
    );
    d.keys(&format!("v{ENTER}")).await;
    let second = d.moved_from(&first).await;
    assert!(
        second.ends_with(&format!("/review/2/{reverse}")),
        "{second}"
    );
    // `4` is GLIMPSE's "its reversed direction does not hold".
    d.keys(&format!("r4{ENTER}")).await;
    d.moved_from(&second).await;
    let stored: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT i.item_key, d.verdict, d.reasons FROM decisions d JOIN items i ON i.id = d.item_id
         WHERE i.stage = 2 ORDER BY d.id",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(
        stored,
        [
            (yes.clone(), "valid".to_string(), String::new()),
            (
                reverse.clone(),
                "reject".to_string(),
                "reverse_mismatch".to_string()
            ),
        ]
    );
    // The partner agrees: one direction holds, the other does not, so the pair is out.
    assert_eq!(
        app.pass(&v1, 2, &yes).await.status,
        reqwest::StatusCode::CREATED
    );
    assert_eq!(
        app.reject(&v1, 2, &reverse, "reverse_mismatch")
            .await
            .status,
        reqwest::StatusCode::CREATED
    );
    let stats = app
        .get(&format!("/api/v1/campaigns/{CAMPAIGN}/stats"), &admin)
        .await;
    assert_eq!(
        stats.body["pairs"],
        json!([{"task": "TEMP", "pairs": 1, "reviewed": 1, "retained": 0, "rejected": 1}]),
        "{:?}",
        stats.body
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_author_resolves_a_split_by_keyboard_only() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    let v0 = app.user("val00", Role::Validator, Some(0)).await;
    let v1 = app.user("val01", Role::Validator, Some(1)).await;
    app.user("lead", Role::Author, None).await;
    let clips = demo_campaign(&app).await;
    app.pass(&v0, 1, &clips[0]).await;
    app.reject(&v1, 1, &clips[0], "generation_artifact").await;

    let at = sign_in_by_keyboard(&d, &app, "lead").await;
    assert!(at.ends_with(&format!("/c/{CAMPAIGN}/splits/1")), "{at}");
    d.keys(ENTER).await;
    let item = d.moved_from(&at).await;
    assert!(item.ends_with(&format!("/splits/1/{}", clips[0])), "{item}");
    let page = d.source().await;
    assert!(page.contains("Rater 1: val00") && page.contains("Rater 2: val01"));
    d.keys("an").await;
    // Shift+Enter is a new line in the note; Enter resolves from it.
    d.keys("the flicker is the lamp").await;
    d.chord(SHIFT, ENTER).await;
    d.keys("by design").await;
    d.keys(ENTER).await;
    d.moved_from(&item).await;
    assert_eq!(app.outcome(1, &clips[0]).await, "split_accepted");
    let note: String = sqlx::query_scalar("SELECT note FROM resolutions")
        .fetch_one(&app.db)
        .await
        .unwrap();
    // (A form sends a text box's new lines as CR LF.)
    assert_eq!(note, "the flicker is the lamp\r\nby design");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_participant_answers_two_sets_by_keyboard_and_a_tie_is_refused() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    crate::study::import_sets(&app, &crate::study::write_sets(&app.source(), 2))
        .await
        .unwrap();
    app.user("p1", Role::Participant, None).await;

    let at = sign_in_by_keyboard(&d, &app, "p1").await;
    assert!(at.ends_with("/study/1"), "{at}");
    assert!(d.source().await.contains("0 of 2 sets answered"));
    d.keys(ENTER).await;
    let set1 = d.moved_from(&at).await;
    assert!(set1.ends_with("/study/1/1"), "{set1}");

    // Focus starts on clip A's photorealism; Tab walks one question for every clip
    // (A, B, C, D), then the next question. A and B both get rank 1 for photorealism.
    let axis = |values: [&str; 4]| {
        values
            .iter()
            .map(|v| format!("{v}{TAB}"))
            .collect::<String>()
    };
    let labels = d
        .exec(
            "return [...document.querySelectorAll('#study-form select')].map(s => s.getAttribute('aria-label'));",
            vec![],
        )
        .await;
    assert_eq!(labels[0], json!("Photorealism: rank of clip A"));
    assert_eq!(labels[5], json!("Temporal coherence: rank of clip B"));
    assert_eq!(labels[15], json!("Real or generated: clip D"));
    // The videos' own controls take no tab stop (P plays them, a click works): from
    // clip A's first answer, Shift+Tab reaches "Play all", and Tab comes back.
    let focused = "return document.activeElement.id;";
    d.chord(SHIFT, TAB).await;
    assert_eq!(d.exec(focused, vec![]).await, json!("play-all"));
    d.keys(TAB).await;
    assert_eq!(d.exec(focused, vec![]).await, json!("r0_0"));
    d.keys(&axis(["1", "1", "3", "4"])).await;
    // The tie is marked on the two cells at fault as soon as it is made.
    let tied = "return [...document.querySelectorAll('select.tie')].map(s => s.id);";
    assert_eq!(d.exec(tied, vec![]).await, json!(["r0_0", "r0_1"]));
    d.keys(&axis(["1", "2", "3", "4"])).await;
    d.keys(&axis(["1", "2", "3", "4"])).await;
    d.keys(&axis(["r", "r", "r", "g"])).await;
    d.keys(ENTER).await;
    let page = String::from(
        d.until(
            "the tie to be refused",
            "return document.getElementById('problems') && document.body.innerHTML;",
        )
        .await
        .as_str()
        .unwrap(),
    );
    assert!(
        page.contains("Photorealism: rank 1 is given to A and B; ties are not allowed"),
        "{page}"
    );
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM study_responses")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(stored, 0, "a refused answer stores nothing");
    d.wait_ready().await;
    assert_eq!(d.exec(tied, vec![]).await, json!(["r0_0", "r0_1"]));
    // One key plays every clip together from its start (B was further on).
    d.exec(
        "const v = document.querySelectorAll('.study-clip video')[1]; v.currentTime = 1.5;",
        vec![],
    )
    .await;
    d.keys("p").await;
    let times = d
        .until(
            "every clip to play",
            "const vs = [...document.querySelectorAll('.study-clip video')]; \
             return vs.every(v => !v.paused) && vs.map(v => v.currentTime);",
        )
        .await;
    let times: Vec<f64> = times
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_f64().unwrap())
        .collect();
    let (lo, hi) = times
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), t| (lo.min(*t), hi.max(*t)));
    assert!(
        hi < 1.0 && hi - lo < 0.25,
        "together from the start: {times:?}"
    );
    // The choices are kept: B's photorealism (the next answer) becomes 2, and the set is saved.
    d.keys(&format!("{TAB}2")).await;
    assert_eq!(d.exec(tied, vec![]).await, json!([]));
    d.keys(ENTER).await;
    let set2 = d.moved_from(&set1).await;
    assert!(set2.ends_with("/study/1/2"), "{set2}");
    for values in [
        ["2", "1", "4", "3"],
        ["1", "2", "3", "4"],
        ["4", "3", "2", "1"],
        ["g", "r", "r", "r"],
    ] {
        d.keys(&axis(values)).await;
    }
    d.keys(ENTER).await;
    let end = d.moved_from(&set2).await;
    assert!(end.ends_with("/study/1"), "{end}");
    assert!(d.source().await.contains("You have answered every set"));

    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT r.axis, r.value FROM study_responses r WHERE r.origin = 'web' ORDER BY r.id",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(rows.len(), 2 * 4 * 4);
    let fakes = rows
        .iter()
        .filter(|(a, v)| a == "real_fake" && v == "fake")
        .count();
    assert_eq!(fakes, 2);
    let p1: Vec<&str> = rows
        .iter()
        .filter(|(a, _)| a == "photorealism")
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(p1, ["1", "2", "3", "4", "2", "1", "4", "3"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_known_rate_a_step_shows_the_next_presented_frame_at_8_and_30_fps() {
    let Some(d) = driver().await else { return };
    if !ffmpeg_or_skip() {
        return;
    }
    let app = spawn_app().await;
    app.user("val00", Role::Validator, Some(0)).await;
    app.user("val01", Role::Validator, Some(1)).await;
    let clips = counter_campaign(&app).await;
    // The import read each clip's rate; a clip whose file said none (as one the
    // import could not read) keeps none.
    sqlx::query("UPDATE clip_versions SET fps = NULL, frame_count = NULL, constant_rate = NULL")
        .execute(&app.db)
        .await
        .unwrap();
    sign_in_by_keyboard(&d, &app, "val00").await;
    for (clip, _, frames) in &clips {
        d.go(&format!("{}/c/{CAMPAIGN}/review/1/{clip}", app.base))
            .await;
        d.wait_ready().await;
        // The store keeps no frame rate: the page has none, and the player steps by
        // the frames the browser presents.
        assert_eq!(
            d.exec(
                "return document.getElementById('clip').dataset.fps || null;",
                vec![]
            )
            .await,
            Value::Null
        );
        d.settled().await;
        assert_eq!(
            d.exec("return window.tandemPlayer.mode();", vec![]).await,
            json!("presented")
        );
        steps_are_one_frame(&d, clip, *frames, false).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_rate_and_count_read_at_import_a_step_goes_to_the_middle_of_the_next_frame() {
    let Some(d) = driver().await else { return };
    if !ffmpeg_or_skip() {
        return;
    }
    let app = spawn_app().await;
    app.user("val00", Role::Validator, Some(0)).await;
    app.user("val01", Role::Validator, Some(1)).await;
    let clips = counter_campaign(&app).await;
    sign_in_by_keyboard(&d, &app, "val00").await;
    for (clip, file, frames) in &clips {
        // What the store will keep per clip version, read as the import will read it.
        let t = tandem::io::video::probe_timing(file).unwrap();
        assert!(t.constant);
        assert_eq!(t.frames, u64::try_from(*frames).unwrap());
        d.go(&format!("{}/c/{CAMPAIGN}/review/1/{clip}", app.base))
            .await;
        d.wait_ready().await;
        // The import read the same timing, and the page carries it for the player.
        let drawn = d
            .exec(
                "const v = document.getElementById('clip'); \
                 return [parseFloat(v.dataset.fps), parseInt(v.dataset.frames, 10)];",
                vec![],
            )
            .await;
        assert_eq!(drawn[0].as_f64(), Some(t.fps), "{clip}: the rate drawn");
        assert_eq!(drawn[1].as_u64(), Some(t.frames), "{clip}: the count drawn");
        d.settled().await;
        assert_eq!(
            d.exec("return window.tandemPlayer.mode();", vec![]).await,
            json!("rate")
        );
        steps_are_one_frame(&d, clip, *frames, true).await;
        // Each step lands in the middle of its frame.
        let mid = d
            .exec(
                "const v = document.getElementById('clip'); \
                 return v.currentTime * parseFloat(v.dataset.fps) % 1;",
                vec![],
            )
            .await
            .as_f64()
            .unwrap();
        assert!((mid - 0.5).abs() < 0.01, "{clip}: {mid} of a frame");
    }
}

/// Which reasons of the verdict form are ticked, in the page's order.
const TICKED: &str =
    "return [...document.querySelectorAll('input[name=reasons]:checked')].map(b => b.value);";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reason_key_ticks_the_same_reason_on_l1_l2_and_l3_questions() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    let v0 = app.user("val00", Role::Validator, Some(0)).await;
    let v1 = app.user("val01", Role::Validator, Some(1)).await;
    let clips = demo_campaign(&app).await;
    app.pass(&v0, 1, &clips[0]).await;
    app.pass(&v1, 1, &clips[0]).await;
    let questions: Vec<(String, String)> = sqlx::query_as(
        "SELECT q.question_key, q.level FROM questions q JOIN clips c ON c.current_version_id = q.clip_version_id
         WHERE c.clip_key = $1 ORDER BY q.level",
    )
    .bind(&clips[0])
    .fetch_all(&app.db)
    .await
    .unwrap();
    let levels: Vec<&str> = questions.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(levels, ["L1", "L2", "L3"]);
    let stage2 = [
        "incorrect_answer",
        "ambiguous_options",
        "single_frame_solvable",
        "language_prior_shortcut",
        "other",
    ];
    sign_in_by_keyboard(&d, &app, "val00").await;
    for (q, level) in &questions {
        d.go(&format!("{}/c/{CAMPAIGN}/review/2/{q}", app.base))
            .await;
        d.wait_ready().await;
        // Every reason is on the page, each with its key beside it.
        let shown = d
            .exec(
                "return [...document.querySelectorAll('#reasons label')].map(l => \
                 [l.querySelector('kbd').textContent, l.querySelector('input').value, \
                  l.querySelector('input').disabled]);",
                vec![],
            )
            .await;
        let expected: Vec<Value> = stage2
            .iter()
            .enumerate()
            .map(|(i, r)| {
                json!([
                    (i + 1).to_string(),
                    r,
                    *r == "single_frame_solvable" && level != "L3"
                ])
            })
            .collect();
        assert_eq!(shown, json!(expected), "{level}");
        for (i, reason) in stage2.iter().enumerate() {
            let key = (i + 1).to_string();
            d.keys(&key).await;
            let ticked = d.exec(TICKED, vec![]).await;
            if *reason == "single_frame_solvable" && level != "L3" {
                assert_eq!(ticked, json!([]), "{level}: key {key} ticks nothing");
                let said = d
                    .exec(
                        "return document.getElementById('problem').textContent;",
                        vec![],
                    )
                    .await;
                assert!(
                    said.as_str().unwrap().contains("L3 questions only"),
                    "{level}: {said}"
                );
                continue;
            }
            assert_eq!(ticked, json!([reason]), "{level}: key {key}");
            d.keys(&key).await;
            assert_eq!(
                d.exec(TICKED, vec![]).await,
                json!([]),
                "{level}: key {key} again"
            );
        }
        // Key 4 is the language-prior shortcut on every level.
        let at = d.url().await;
        d.keys(&format!("r4{ENTER}")).await;
        d.moved_from(&at).await;
    }
    let stored: Vec<String> = sqlx::query_scalar(
        "SELECT d.reasons FROM decisions d JOIN items i ON i.id = d.item_id WHERE i.stage = 2 ORDER BY d.id",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(stored, vec!["language_prior_shortcut"; 3]);
}

async fn time_spent_of(app: &TestApp, clip: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT d.time_spent_ms FROM decisions d JOIN items i ON i.id = d.item_id
         JOIN clips c ON c.current_version_id = i.clip_version_id AND i.stage = 1
         WHERE c.clip_key = $1 ORDER BY d.id DESC LIMIT 1",
    )
    .bind(clip)
    .fetch_one(&app.db)
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_spent_and_the_video_position_survive_a_refused_save() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    app.user("val00", Role::Validator, Some(0)).await;
    app.user("val01", Role::Validator, Some(1)).await;
    let clips = demo_campaign(&app).await;
    let queue = sign_in_by_keyboard(&d, &app, "val00").await;
    // The item's page is drawn after this key, so its time is counted from no earlier.
    let opened = std::time::Instant::now();
    d.keys(ENTER).await;
    let item = d.moved_from(&queue).await;
    // ... and it is on screen from here.
    let shown = std::time::Instant::now();
    assert!(item.ends_with(&clips[0]), "{item}");
    d.settled().await;
    for _ in 0..5 {
        d.keys(ARROW_RIGHT).await;
    }
    d.settled().await;
    let position = d
        .exec(
            "return document.getElementById('clip').currentTime;",
            vec![],
        )
        .await
        .as_f64()
        .unwrap();
    assert!(position > 0.2, "five frames in: {position}");
    let rendered_at = d
        .exec(
            "return document.querySelector('[name=rendered_at]').value;",
            vec![],
        )
        .await;
    // The validator looks for a while (real time: the page measures it with the
    // browser's own clock), then rejects without a reason: refused on the page,
    // nothing sent.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let waited = shown.elapsed();
    d.keys(&format!("r{ENTER}")).await;
    let said = d
        .until(
            "the page to refuse a reject without a reason",
            "const p = document.getElementById('problem'); return !p.hidden && p.textContent;",
        )
        .await;
    assert!(
        said.as_str()
            .unwrap()
            .starts_with("A reject needs a reason"),
        "{said}"
    );
    assert_eq!(d.url().await, item);
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 0);
    // With a reason but a note the server refuses (too long: the text box would not
    // take it by typing): the page is drawn again with the time and the position.
    d.keys("2").await;
    d.exec(
        "document.getElementById('note').value = 'x'.repeat(4001);",
        vec![],
    )
    .await;
    d.mark().await;
    d.keys(ENTER).await;
    d.reloaded().await;
    let page = d.source().await;
    assert!(
        page.contains("The note is longer than 4000 characters."),
        "{page}"
    );
    assert!(!page.contains("note: "), "no field id in the message");
    let kept = async |what: &str| {
        assert_eq!(
            d.exec(
                "return document.querySelector('[name=rendered_at]').value;",
                vec![]
            )
            .await,
            rendered_at,
            "{what}: the page keeps when the item was first shown"
        );
        let carried = d
            .exec(
                "return parseInt(document.querySelector('[name=spent_before]').value, 10);",
                vec![],
            )
            .await
            .as_i64()
            .unwrap();
        assert!(carried >= 1500, "{what}: carried {carried} ms");
    };
    kept("a save the server refused").await;
    d.settled().await;
    let back = d
        .until(
            "the video back where it was",
            "const v = document.getElementById('clip'); return v.readyState >= 2 && v.currentTime;",
        )
        .await
        .as_f64()
        .unwrap();
    assert!((back - position).abs() < 0.01, "{back} against {position}");
    assert_eq!(d.exec(TICKED, vec![]).await, json!(["generation_artifact"]));
    // The same refusal without the page's script (a reject without a reason, sent as
    // a browser without scripts sends it): said for people, and the time still kept.
    d.exec(
        "document.querySelectorAll('input[name=reasons]').forEach(b => b.checked = false); \
         document.getElementById('note').value = '';",
        vec![],
    )
    .await;
    d.mark().await;
    d.exec("document.getElementById('verdict-form').submit();", vec![])
        .await;
    d.reloaded().await;
    let page = d.source().await;
    assert!(
        page.contains("A reject verdict needs at least one reason."),
        "{page}"
    );
    assert!(!page.contains("reasons: "), "no field id in the message");
    kept("a save refused without the page's script").await;
    assert!(
        d.exec(
            "return document.getElementById('v-reject').checked;",
            vec![]
        )
        .await
        .as_bool()
        .unwrap()
    );
    d.wait_ready().await;
    d.keys(&format!("2{ENTER}")).await;
    d.moved_from(&item).await;
    let total = opened.elapsed();
    let spent = time_spent_of(&app, &clips[0]).await;
    assert!(
        spent >= i64::try_from(waited.as_millis()).unwrap(),
        "{spent} ms recorded, {waited:?} waited before the first refusal"
    );
    assert!(
        spent <= i64::try_from(total.as_millis()).unwrap(),
        "{spent} ms recorded, the page was open {total:?} at most"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_time_spent_leaves_out_the_time_the_tab_was_hidden() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    app.user("val00", Role::Validator, Some(0)).await;
    app.user("val01", Role::Validator, Some(1)).await;
    let clips = demo_campaign(&app).await;
    let queue = sign_in_by_keyboard(&d, &app, "val00").await;
    // The item's page is drawn after this key, so its time is counted from no earlier.
    let opened = std::time::Instant::now();
    d.keys(ENTER).await;
    let item = d.moved_from(&queue).await;
    d.exec(
        "window.seen = []; document.addEventListener('visibilitychange', \
         () => seen.push(document.visibilityState));",
        vec![],
    )
    .await;
    // Another tab in front for two seconds (real time, measured by the browser).
    let review = d.cmd(reqwest::Method::GET, "/window", None).await;
    let other = d
        .cmd(
            reqwest::Method::POST,
            "/window/new",
            Some(json!({"type": "tab"})),
        )
        .await;
    d.cmd(
        reqwest::Method::POST,
        "/window",
        Some(json!({"handle": other["handle"]})),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(2000)).await;
    d.cmd(reqwest::Method::DELETE, "/window", None).await;
    d.cmd(
        reqwest::Method::POST,
        "/window",
        Some(json!({"handle": review})),
    )
    .await;
    d.until(
        "the review tab to be visible again",
        "return document.visibilityState === 'visible' && seen.includes('hidden');",
    )
    .await;
    d.keys(&format!("v{ENTER}")).await;
    d.moved_from(&item).await;
    let open = i64::try_from(opened.elapsed().as_millis()).unwrap();
    let spent = time_spent_of(&app, &clips[0]).await;
    assert!(
        spent <= open - 1500,
        "{spent} ms recorded of {open} ms open, two seconds of them hidden"
    );
}

const PLAYING: &str = "return !document.getElementById('clip').paused;";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_control_keeps_the_keys_and_the_note_takes_letters_only_when_asked() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    app.user("val00", Role::Validator, Some(0)).await;
    app.user("val01", Role::Validator, Some(1)).await;
    let clips = demo_campaign(&app).await;
    let queue = sign_in_by_keyboard(&d, &app, "val00").await;
    d.keys(ENTER).await;
    let item = d.moved_from(&queue).await;
    d.settled().await;

    // The speed menu, chosen with the mouse, gives the keys back to the page.
    d.click("#speed option[value='0.5']").await;
    assert_eq!(
        d.exec(
            "return [document.getElementById('clip').playbackRate, document.activeElement.id];",
            vec![]
        )
        .await,
        json!([0.5, ""]),
        "the speed changed and the menu let go of the focus"
    );
    d.keys("]").await;
    assert_eq!(
        d.exec(
            "return document.getElementById('clip').playbackRate;",
            vec![]
        )
        .await,
        json!(1),
        "] works right after the menu"
    );
    // Opened and closed without a change (Esc closes the browser's list), the menu
    // keeps the focus but not the keys; Esc again leaves it.
    d.click("#speed").await;
    d.keys(ESCAPE).await;
    d.keys(" ").await;
    d.until("Space to play with the menu focused", PLAYING)
        .await;
    d.keys(" ").await;
    d.keys(ESCAPE).await;
    assert_eq!(
        d.exec("return document.activeElement === document.body;", vec![])
            .await,
        json!(true),
        "Esc leaves the menu"
    );
    // The scrub bar and the loop box, too.
    d.click("#loop").await;
    d.keys("l").await;
    assert!(
        d.exec("return document.getElementById('loop').checked;", vec![])
            .await
            .as_bool()
            .unwrap(),
        "L toggles the loop back after a click on it"
    );

    // "Other" without a note is refused on the page, and the focus stays where it was:
    // N then goes to the note without typing an "n".
    d.keys(&format!("r4{ENTER}")).await;
    let said = d
        .until(
            "the page to ask for a note",
            "const p = document.getElementById('problem'); return !p.hidden && p.textContent;",
        )
        .await;
    assert!(said.as_str().unwrap().contains("needs a note"), "{said}");
    assert_eq!(
        d.exec("return document.activeElement.id;", vec![]).await,
        json!(""),
        "the focus is not moved into the note"
    );
    d.keys("n").await;
    assert_eq!(
        d.exec("return document.activeElement.id;", vec![]).await,
        json!("note")
    );
    d.keys("no sign of the bar").await;
    assert_eq!(
        d.exec("return document.getElementById('note').value;", vec![])
            .await,
        json!("no sign of the bar"),
        "keys in the note are text"
    );
    d.keys(&format!("{ESCAPE}{ENTER}")).await;
    d.moved_from(&item).await;
    let note: String = sqlx::query_scalar("SELECT note FROM decisions")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(note, "no sign of the bar");

    // Single-key shortcuts can be turned off, and stay off.
    let second = d.url().await;
    d.click("#pref-keys").await;
    d.keys("v ").await;
    assert_eq!(
        d.exec(
            "return [document.getElementById('v-valid').checked, !document.getElementById('clip').paused];",
            vec![]
        )
        .await,
        json!([false, false]),
        "V and Space do nothing with the shortcuts off"
    );
    d.go(&second).await;
    d.wait_ready().await;
    assert_eq!(
        d.exec(
            "return document.getElementById('pref-keys').checked;",
            vec![]
        )
        .await,
        json!(false)
    );
    d.keys("v").await;
    assert_eq!(
        d.exec("return document.getElementById('v-valid').checked;", vec![])
            .await,
        json!(false)
    );
    d.click("#pref-keys").await;
    d.keys("v").await;
    assert_eq!(
        d.exec("return document.getElementById('v-valid').checked;", vec![])
            .await,
        json!(true)
    );

    // The first Tab reaches a link past the navigation, shown when focused.
    d.go(&second).await;
    d.wait_ready().await;
    d.keys(TAB).await;
    assert_eq!(
        d.exec(
            "const a = document.activeElement; return [a.className, a.getAttribute('href'), \
             a.getBoundingClientRect().top >= 0];",
            vec![]
        )
        .await,
        json!(["skip", "#main", true])
    );
    assert_eq!(clips.len(), 12);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enter_on_a_final_item_only_says_it_is_final() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    let v0 = app.user("val00", Role::Validator, Some(0)).await;
    let v1 = app.user("val01", Role::Validator, Some(1)).await;
    let clips = demo_campaign(&app).await;
    app.pass(&v0, 1, &clips[0]).await;
    app.reject(&v1, 1, &clips[0], "generation_artifact").await;
    sign_in_by_keyboard(&d, &app, "val00").await;
    let item = format!("{}/c/{CAMPAIGN}/review/1/{}", app.base, clips[0]);
    d.go(&item).await;
    d.wait_ready().await;
    d.mark().await;
    d.keys(ENTER).await;
    let said = d
        .until(
            "the page to say the verdict is final",
            "const p = document.getElementById('problem'); return !p.hidden && p.textContent;",
        )
        .await;
    assert!(said.as_str().unwrap().contains("final"), "{said}");
    assert_eq!(
        d.exec(
            "return [!!window.__tandemOld, document.getElementById('v-valid').checked];",
            vec![]
        )
        .await,
        json!([true, true]),
        "the same page, the verdict given still shown"
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 2);
    // R and a reason's digit do not move the controls either: the page keeps showing
    // the verdict that was stored.
    d.keys("r1").await;
    assert_eq!(
        d.exec(
            "return [document.getElementById('v-valid').checked, \
             document.getElementById('v-reject').checked, \
             document.querySelectorAll('input[name=reasons]:checked').length, \
             document.getElementById('problem').textContent];",
            vec![]
        )
        .await,
        json!([true, false, 0, said]),
        "the controls stay, and the page still says why once"
    );
    // Posted anyway (without the page's script), the refusal still shows the verdict.
    d.exec("document.getElementById('verdict-form').submit();", vec![])
        .await;
    d.reloaded().await;
    assert_eq!(
        d.exec("return document.getElementById('v-valid').checked;", vec![])
            .await,
        json!(true)
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 2);
}

/// Shift+arrows jump ten frames; after a click with the mouse on a strip frame or a
/// player button, V and Enter save (the control gives the keys back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shift_arrows_jump_ten_frames_and_enter_saves_after_a_click_on_the_player() {
    let Some(d) = driver().await else { return };
    if !ffmpeg_or_skip() {
        return;
    }
    let app = spawn_app().await;
    app.user("val00", Role::Validator, Some(0)).await;
    app.user("val01", Role::Validator, Some(1)).await;
    let clips = counter_campaign(&app).await;
    sign_in_by_keyboard(&d, &app, "val00").await;
    let item = format!("{}/c/{CAMPAIGN}/review/1/{}", app.base, clips[1].0);
    d.go(&item).await;
    d.wait_ready().await;
    d.settled().await;
    assert_eq!(d.frame().await, 0);
    for (key, expected) in [(ARROW_RIGHT, 10), (ARROW_RIGHT, 20), (ARROW_LEFT, 10)] {
        d.chord(SHIFT, key).await;
        d.settled().await;
        assert_eq!(d.frame().await, expected, "Shift+arrow to frame {expected}");
    }
    assert!(
        d.exec(
            "return document.querySelector('.keys').textContent;",
            vec![]
        )
        .await
        .as_str()
        .unwrap()
        .contains("ten frames"),
        "the key legend names it"
    );
    // A click on the picture plays it, a second one pauses it.
    d.click("#clip").await;
    d.until(
        "a click to play",
        "return !document.getElementById('clip').paused;",
    )
    .await;
    d.click("#clip").await;
    d.until(
        "a second click to pause",
        "return document.getElementById('clip').paused;",
    )
    .await;
    // A click on the strip's third frame, then V and Enter: saved, on to the next item.
    d.click("#strip .tiles li:nth-child(3) button").await;
    d.settled().await;
    assert_eq!(
        d.exec("return document.activeElement === document.body;", vec![])
            .await,
        json!(true),
        "the strip frame let go of the focus"
    );
    d.keys(&format!("v{ENTER}")).await;
    d.moved_from(&item).await;
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 1);
    // The same after a click on a player button.
    let other = format!("{}/c/{CAMPAIGN}/review/1/{}", app.base, clips[0].0);
    d.go(&other).await;
    d.wait_ready().await;
    d.settled().await;
    d.click("button[data-action='forward']").await;
    d.settled().await;
    assert_eq!(d.frame().await, 1, "the button stepped");
    d.keys(&format!("v{ENTER}")).await;
    d.moved_from(&other).await;
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 2);
}

/// A queue's filters apply on change and on Enter, by keyboard, without opening an
/// item (Enter elsewhere on the queue still opens the next one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_filter_applies_by_keyboard_and_the_review_follows_it() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    app.user("val00", Role::Validator, Some(0)).await;
    app.user("val01", Role::Validator, Some(1)).await;
    demo_campaign(&app).await;
    // The second task, with a second clip: the queue's next item is of the first task,
    // so only a review that follows the filter stays in the second.
    let task = tandem::domain::taxonomy::Taxonomy::vgenst().tasks[1]
        .code
        .clone();
    let src = app.source();
    let sample = std::fs::read_to_string(src.join("manifest.jsonl")).unwrap();
    let line = sample.lines().find(|l| l.contains(&task)).unwrap();
    let (from, to) = (format!("{task}_D01"), format!("{task}_D21"));
    std::fs::copy(
        src.join(format!("videos/{from}.webm")),
        src.join(format!("videos/{to}.webm")),
    )
    .unwrap();
    std::fs::write(src.join("more.jsonl"), line.replace(&from, &to) + "\n").unwrap();
    app.import(&src.join("more.jsonl")).await.unwrap();
    let clips: Vec<String> = sqlx::query_scalar("SELECT clip_key FROM clips ORDER BY id")
        .fetch_all(&app.db)
        .await
        .unwrap();
    let of_task = clips.iter().filter(|c| c.starts_with(&task)).count();
    assert_eq!(of_task, 2, "{clips:?}");
    let queue = sign_in_by_keyboard(&d, &app, "val00").await;
    assert!(queue.ends_with("/review/1"), "{queue}");
    // The task menu: focused, two steps down choose the second task, applied at once.
    d.exec(
        "document.querySelector('select[name=task]').focus();",
        vec![],
    )
    .await;
    d.keys(ARROW_DOWN).await;
    let first = d.moved_from(&queue).await;
    d.exec(
        "document.querySelector('select[name=task]').focus();",
        vec![],
    )
    .await;
    d.keys(ARROW_DOWN).await;
    let filtered = d.moved_from(&first).await;
    assert!(
        filtered.contains("/review/1?") && filtered.contains(&format!("task={task}")),
        "{filtered}"
    );
    // Enter in the other menu applies it too, and opens no item.
    d.exec(
        "const s = document.querySelector('select[name=show]'); s.focus(); \
         s.value = 'undecided';",
        vec![],
    )
    .await;
    d.keys(ENTER).await;
    let shown = d.moved_from(&filtered).await;
    assert!(
        shown.contains("/review/1?") && shown.contains("show=undecided"),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("task={task}")),
        "the task filter is kept: {shown}"
    );
    // Outside the filters Enter opens the next item the filter holds, the filter kept;
    // Q goes back to the filtered list.
    d.exec("document.activeElement.blur();", vec![]).await;
    d.keys(ENTER).await;
    let item = d.moved_from(&shown).await;
    assert!(
        item.contains(&format!("/review/1/{task}")) && item.contains(&format!("task={task}")),
        "{item}"
    );
    d.wait_ready().await;
    d.keys("q").await;
    let back = d.moved_from(&item).await;
    assert_eq!(
        back,
        format!(
            "{}/c/{CAMPAIGN}/review/1?task={task}&show=undecided",
            app.base
        )
    );
    d.wait_ready().await;
    d.keys(ENTER).await;
    let mut at = d.moved_from(&back).await;
    assert_eq!(at, item);
    // Each save opens the filter's next item, until the filter holds no more: then its
    // list, which says so.
    let mut decided = 0;
    while at.contains(&format!("/review/1/{task}")) {
        d.wait_ready().await;
        d.keys(&format!("v{ENTER}")).await;
        decided += 1;
        at = d.moved_from(&at).await;
        assert!(
            at.contains(&format!("task={task}")),
            "the filter is kept: {at}"
        );
    }
    assert_eq!(decided, of_task);
    assert!(at.contains("/review/1?"), "{at}");
    d.wait_ready().await;
    let said = d
        .exec(
            "const p = document.getElementById('filter-done'); return p && p.textContent;",
            vec![],
        )
        .await;
    assert!(
        said.as_str()
            .is_some_and(|s| s.starts_with("Nothing under this filter waits for you.")),
        "{said}"
    );
    // B there goes back to the item just saved, the filter kept.
    d.keys("b").await;
    let last = d.moved_from(&at).await;
    assert!(
        last.contains(&format!("/review/1/{task}_D21?task={task}")),
        "{last}"
    );
}

/// B goes back to the item before, its saved verdict shown and still changeable by
/// keyboard while the partner has not decided; F goes forward again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn b_goes_back_to_the_item_before_and_f_forward_again() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    app.user("val00", Role::Validator, Some(0)).await;
    app.user("val01", Role::Validator, Some(1)).await;
    let clips = demo_campaign(&app).await;
    let queue = sign_in_by_keyboard(&d, &app, "val00").await;
    d.keys(ENTER).await;
    let first = d.moved_from(&queue).await;
    d.settled().await;
    d.keys(&format!("v{ENTER}")).await;
    let second = d.moved_from(&first).await;
    d.wait_ready().await;
    d.keys("b").await;
    assert_eq!(d.moved_from(&second).await, first);
    d.wait_ready().await;
    assert_eq!(
        d.exec("return document.getElementById('v-valid').checked;", vec![])
            .await,
        json!(true),
        "the saved verdict is shown"
    );
    // Changed there by keyboard: the partner has not decided yet.
    d.keys(&format!("r2{ENTER}")).await;
    d.moved_from(&first).await;
    let verdicts: Vec<String> = sqlx::query_scalar("SELECT verdict FROM decisions ORDER BY seq")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_eq!(
        verdicts,
        ["valid", "reject"],
        "a change, kept beside the first"
    );
    d.wait_ready().await;
    d.keys("b").await;
    let back = d.moved_from(&second).await;
    d.wait_ready().await;
    d.keys("f").await;
    assert_eq!(d.moved_from(&back).await, second);
    assert!(second.ends_with(&clips[1]), "{second}");
}

/// The bottom of an element, and the viewport's height.
async fn bottom(d: &Driver, css: &str) -> (f64, f64) {
    let v = d
        .exec(
            "const e = document.querySelector(arguments[0]); \
             return [e.getBoundingClientRect().bottom, innerHeight];",
            vec![json!(css)],
        )
        .await;
    (v[0].as_f64().unwrap(), v[1].as_f64().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_1366_by_768_the_prompt_and_the_verdict_are_seen_without_scrolling() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    let v0 = app.user("val00", Role::Validator, Some(0)).await;
    let v1 = app.user("val01", Role::Validator, Some(1)).await;
    let clips = demo_campaign(&app).await;
    app.pass(&v0, 1, &clips[1]).await;
    app.pass(&v1, 1, &clips[1]).await;
    let queue = sign_in_by_keyboard(&d, &app, "val00").await;
    d.viewport(1366, 768).await;
    d.keys(ENTER).await;
    let first = d.moved_from(&queue).await;
    d.settled().await;
    let stage2 = format!("{}/c/{CAMPAIGN}/review/2", app.base);
    let l3: String = sqlx::query_scalar(
        "SELECT q.question_key FROM questions q JOIN clips c ON c.current_version_id = q.clip_version_id
         WHERE c.clip_key = $1 AND q.level = 'L3'",
    )
    .bind(&clips[1])
    .fetch_one(&app.db)
    .await
    .unwrap();
    for (page, url) in [
        ("Stage 1", first.clone()),
        ("Stage 2", format!("{stage2}/{l3}")),
    ] {
        d.go(&url).await;
        d.wait_ready().await;
        for css in [
            ".context",
            "#verdict-form button[type=submit]",
            ".player video",
            "#strip",
        ] {
            let (b, h) = bottom(&d, css).await;
            assert!(b <= h, "{page}: {css} ends at {b}, below the {h} px window");
        }
        let theme = d
            .exec(
                "return document.querySelector('.context').innerText;",
                vec![],
            )
            .await;
        assert!(
            theme.as_str().unwrap().contains("THEME") || theme.as_str().unwrap().contains("Theme"),
            "{theme}"
        );
        assert!(
            !d.exec(
                "return !!document.querySelector('.context details');",
                vec![]
            )
            .await
            .as_bool()
            .unwrap(),
            "{page}: nothing folded"
        );
    }

    // No jump after a save: the review starts where it started before.
    d.go(&first).await;
    d.wait_ready().await;
    let top = "return document.querySelector('.review').getBoundingClientRect().top;";
    let before = d.exec(top, vec![]).await;
    d.keys(&format!("v{ENTER}")).await;
    d.moved_from(&first).await;
    assert!(d.source().await.contains("Saved: "), "a flash is shown");
    assert_eq!(d.exec(top, vec![]).await, before);

    // A clip with a realistic context (a scene graph of 12 objects, three events, an
    // L3 question with long options) makes the page taller than the window: read to
    // its end, the player and the verdict stay in view.
    let src = app.source();
    let sample = std::fs::read_to_string(src.join("manifest.jsonl")).unwrap();
    let (from, to) = (clips[1].clone(), clips[1].replace("_D01", "_D41"));
    let mut line: Value =
        serde_json::from_str(&sample.lines().nth(1).unwrap().replace(&from, &to)).unwrap();
    std::fs::copy(
        src.join(format!("videos/{from}.webm")),
        src.join(format!("videos/{to}.webm")),
    )
    .unwrap();
    let objects: Vec<Value> = (0..12)
        .map(|i| {
            json!({"id": format!("object_{i}"), "category": "a wooden chair with a tall carved back",
                   "colour": "dark walnut brown", "position": [i, 2 * i, 0],
                   "relations": [{"left_of": format!("object_{}", (i + 1) % 12)}]})
        })
        .collect();
    line["scene_graph"] = json!({ "objects": objects });
    line["scenario"] = json!({"events": [
        "a person walks in from the left edge of the frame and stops beside the table",
        "the person lifts the red cup from the table and turns towards the camera",
        "the person puts the cup down on the chair nearest the window and leaves"]});
    for q in line["questions"].as_array_mut().unwrap() {
        q["options"] = json!([
            "the red cup ends on the chair nearest the window, beside the tall lamp",
            "the red cup ends on the table, where it stood when the clip began",
            "the red cup is carried out of the frame by the person as they leave",
            "the red cup falls to the floor when the person turns towards the camera"
        ]);
    }
    std::fs::write(src.join("tall.jsonl"), line.to_string() + "\n").unwrap();
    app.import(&src.join("tall.jsonl")).await.unwrap();
    app.pass(&v1, 1, &to).await;
    let tall_l3 = format!("{stage2}/{}", l3.replace(&from, &to));
    for (page, url) in [
        (
            "Stage 1",
            format!("{}/c/{CAMPAIGN}/review/1/{to}", app.base),
        ),
        ("Stage 2", tall_l3),
    ] {
        if page == "Stage 2" {
            // Its questions open once both validators passed the clip.
            app.pass(&v0, 1, &to).await;
        }
        for (w, h) in [(1366, 768), (1920, 1080)] {
            d.viewport(w, h).await;
            d.go(&url).await;
            d.wait_ready().await;
            let tall = d
                .exec("return document.documentElement.scrollHeight;", vec![])
                .await
                .as_f64()
                .unwrap();
            assert!(tall > h as f64, "{page} at {w}x{h}: {tall} px tall");
            d.exec(
                "window.scrollTo(0, document.documentElement.scrollHeight);",
                vec![],
            )
            .await;
            d.settled().await;
            for css in [
                ".player video",
                "#verdict-form button[type=submit]",
                "#v-valid",
            ] {
                let r = d
                    .exec(
                        "const r = document.querySelector(arguments[0]).getBoundingClientRect(); \
                         return [r.top, r.bottom, innerHeight];",
                        vec![json!(css)],
                    )
                    .await;
                let (top, bottom, inner) = (
                    r[0].as_f64().unwrap(),
                    r[1].as_f64().unwrap(),
                    r[2].as_f64().unwrap(),
                );
                assert!(
                    top >= 0.0 && bottom <= inner,
                    "{page} at {w}x{h}, read to the end: {css} at {top}..{bottom} of {inner}"
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_study_shown_as_strips_numbers_each_frame_in_a_tile_of_its_own() {
    let Some(d) = driver().await else { return };
    if !ffmpeg_or_skip() {
        return;
    }
    let app = spawn_app().await;
    crate::study::import_sets(&app, &crate::study::write_sets(&app.source(), 1))
        .await
        .unwrap();
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    tandem::app::set_study_display(
        &app.store,
        &app.config,
        &campaign,
        tandem::domain::study::Display::Strip,
        6,
    )
    .await
    .unwrap();
    app.user("p1", Role::Participant, None).await;
    let at = sign_in_by_keyboard(&d, &app, "p1").await;
    d.keys(ENTER).await;
    d.moved_from(&at).await;
    let tiles = d
        .until(
            "the strips cut into tiles",
            "const s = [...document.querySelectorAll('.study-clip .strip')]; \
             return s.length && s.every(x => x.querySelector('.tiles')) && s.map(x => \
             [...x.querySelectorAll('.tile-label')].map(l => l.textContent));",
        )
        .await;
    assert_eq!(
        tiles,
        json!(vec![["1", "2", "3", "4", "5", "6"]; 4]),
        "six frames a clip, numbered in order"
    );
    // The tiles stand apart, each showing one frame of the strip.
    let apart = d
        .exec(
            "const t = [...document.querySelectorAll('.study-clip:first-child .tile')]\
             .map(x => x.getBoundingClientRect()); \
             return t.slice(1).every((r, i) => r.left >= t[i].right + 4 || r.top >= t[i].bottom + 4);",
            vec![],
        )
        .await;
    assert_eq!(apart, json!(true));
    assert_eq!(
        d.exec("return document.getElementById('play-all');", vec![])
            .await,
        Value::Null,
        "no videos, nothing to play"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adding_a_validator_in_the_browser_shows_the_new_pairs_and_waits_for_a_confirmation() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    let c = cast(&app).await;
    // Task 0 (MC) is reviewed by val00 + val01, task 1 (QC) by val01 + val00; one QC
    // clip is started (it keeps its pair), two are not.
    app.import_clips(&["MC_F_EGO_STA", "QC_F_EGO_DYN"], 3, &[])
        .await;
    assert_eq!(app.pass(&c.v0, 1, "QC_F_EGO_DYN_0000").await.status, 201);
    // What a re-pairing changes: the accounts, the pools, the tasks' pairs, the queues.
    let pairing = || async {
        let rows: Vec<(String,)> = sqlx::query_as(
            "SELECT 'user ' || name FROM users
             UNION ALL SELECT 'pool ' || user_id || ' ' || pool_index FROM pool_members
             UNION ALL SELECT 'task ' || code || ' ' || COALESCE(rater1_id, 0) || ' ' || COALESCE(rater2_id, 0) FROM tasks
             UNION ALL SELECT 'item ' || item_key || ' ' || COALESCE(queue1, 0) || ' ' || COALESCE(queue2, 0) FROM items
             ORDER BY 1",
        )
        .fetch_all(&app.db)
        .await
        .unwrap();
        rows.into_iter().map(|r| r.0).collect::<Vec<_>>()
    };
    let before = pairing().await;
    sign_in_by_keyboard(&d, &app, "admin1").await;

    let fill_and_create = || async {
        d.go(&format!("{}/admin/users", app.base)).await;
        d.wait_ready().await;
        d.exec(
            "const f = document.querySelector('form.stack'); \
             const set = (n, v) => { f.querySelector('[name=' + n + ']').value = v; }; \
             set('name', 'val02'); set('role', 'validator'); set('index', '2'); \
             set('campaign', arguments[0]); return true;",
            vec![json!(CAMPAIGN)],
        )
        .await;
        d.mark().await;
        d.click("form.stack button[type=submit]").await;
        d.reloaded().await;
        let page = d.source().await;
        assert!(page.contains("Confirm the new pairs"), "{page}");
        // QC (position 1) goes from (val01, val00) to (val01, val02) with its 2
        // unstarted clips; MC keeps its pair.
        assert!(
            page.contains(
                "<td>QC_F_EGO_DYN</td><td>val01 + val00</td><td>val01 + val02</td><td>2</td>"
            ),
            "{page}"
        );
        assert!(!page.contains("<td>MC_F_EGO_STA</td>"), "{page}");
    };

    // Shown, then cancelled: nothing changed.
    fill_and_create().await;
    assert_eq!(
        pairing().await,
        before,
        "nothing changes before the confirmation"
    );
    d.mark().await;
    d.click("form.inline + a").await;
    d.reloaded().await;
    assert!(d.url().await.ends_with("/admin/users"));
    assert_eq!(
        pairing().await,
        before,
        "a cancelled confirmation changes nothing"
    );

    // Shown again, then confirmed: the account exists and the announced items moved.
    fill_and_create().await;
    d.mark().await;
    d.click("form.inline button.primary").await;
    d.reloaded().await;
    let page = d.source().await;
    assert!(
        page.contains("The password of val02 (validator in default)"),
        "{page}"
    );
    let moved = app.queued_second_to("val02", "QC_F_EGO_DYN").await;
    assert_eq!(moved, 2, "the 2 unstarted QC clips moved, as announced");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_baseline_participant_comes_by_link_and_answers_every_question_by_keyboard() {
    if !ffmpeg_or_skip() {
        return;
    }
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    crate::baseline::campaign_with_real_clips(&app).await;
    let admin = app.store.create_token("admin1", "t").await.unwrap();
    let (id, links) = crate::baseline::baseline_with_links(&app, &admin, 1).await;

    // The link opens the consent page at a clean URL; Enter on the focused button begins.
    d.go(&format!("{}{}?pid=P-1", app.base, links[0])).await;
    d.wait_ready().await;
    let start = d.url().await;
    assert_eq!(start, format!("{}/baseline/{id}", app.base));
    assert!(d.source().await.contains("You may stop at any time."));
    d.keys(ENTER).await;
    let mut at = d.moved_from(&start).await;
    assert_eq!(at, format!("{}/baseline/{id}/1", app.base));
    d.until(
        "the clip to load",
        "const v = document.querySelector('.baseline-clip video'); return v && v.readyState >= 2;",
    )
    .await;
    // Enter before a choice saves nothing and says why.
    d.keys(ENTER).await;
    d.until(
        "the hint to choose first",
        "return !document.getElementById('choose-first').hidden;",
    )
    .await;
    assert_eq!(d.url().await, at);

    // Every presentation: the letter of the option that is the key (the glass orb), then
    // Enter; the options stand in another order each time.
    let mut letters = std::collections::HashSet::new();
    let mut n = 0;
    while at != start {
        let letter = d
            .exec(
                "return [...document.querySelectorAll('label.choice')].find(l => l.textContent.includes('a glass orb')).querySelector('input').value;",
                vec![],
            )
            .await;
        let letter = letter.as_str().unwrap().to_string();
        letters.insert(letter.clone());
        d.keys(&letter.to_lowercase()).await;
        let checked = d
            .exec(
                "const c = document.querySelector('input[name=chosen]:checked'); return c && c.value;",
                vec![],
            )
            .await;
        assert_eq!(checked, json!(letter));
        d.keys(ENTER).await;
        at = d.moved_from(&at).await;
        n += 1;
    }
    assert_eq!(n, 32);
    assert_eq!(letters.len(), 4, "the key stood at every position");
    let code: String = sqlx::query_scalar("SELECT completion_code FROM invitations")
        .fetch_one(&app.db)
        .await
        .unwrap();
    let shown = d
        .until(
            "the completion code",
            "const c = document.getElementById('completion-code'); return c && c.textContent;",
        )
        .await;
    assert_eq!(shown, json!(code));
    // Every answer stored, each the key: the chosen position shows option C.
    let answers: Vec<(String, String)> =
        sqlx::query_as("SELECT shown, chosen FROM baseline_answers WHERE origin = 'web'")
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert_eq!(answers.len(), 32);
    for (shown, chosen) in answers {
        let at = usize::from(chosen.as_bytes()[0] - b'A');
        assert_eq!(shown.as_bytes()[at], b'C', "{shown} {chosen}");
    }
}

/// The review workspace with its media in an S3-compatible bucket: the clip plays and
/// seeks (byte ranges from the bucket through Tandem), the strip is drawn from a fetched
/// copy and stored in the bucket, and a verdict by keyboard is saved as anywhere else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_validator_reviews_clips_whose_media_live_in_a_bucket() {
    let Some(d) = driver().await else { return };
    let (app, s3) = crate::s3::spawn_app_on_s3("review").await;
    app.user("val00", Role::Validator, Some(0)).await;
    app.user("val01", Role::Validator, Some(1)).await;
    let clips = demo_campaign(&app).await;
    let stored = s3.objects("review");
    assert!(
        !stored.is_empty() && stored.iter().all(|n| n.len() == 64),
        "{stored:?}"
    );

    let at = sign_in_by_keyboard(&d, &app, "val00").await;
    d.keys(ENTER).await;
    let item = d.moved_from(&at).await;
    assert!(item.ends_with(&format!("/review/1/{}", clips[0])), "{item}");
    d.settled().await;
    let duration = d
        .until(
            "the clip's duration",
            "const v = document.getElementById('clip'); return v && isFinite(v.duration) && v.duration;",
        )
        .await
        .as_f64()
        .unwrap();
    // A seek near the end needs a range from the middle of the object.
    d.exec(
        "const v = document.getElementById('clip'); v.currentTime = v.duration * 0.8;",
        vec![],
    )
    .await;
    d.settled().await;
    let t = d
        .exec(
            "return document.getElementById('clip').currentTime;",
            vec![],
        )
        .await
        .as_f64()
        .unwrap();
    assert!((t - duration * 0.8).abs() < 0.5, "at {t} of {duration}");
    if has_ffmpeg() {
        d.until(
            "the strip drawn from the bucket",
            "const i = document.querySelector('#strip img'); return i && i.complete && i.naturalWidth > 0;",
        )
        .await;
        assert!(
            s3.objects("review")
                .iter()
                .any(|n| n.ends_with(".strip.jpg")),
            "the strip is stored in the bucket"
        );
    }
    d.keys(&format!("v{ENTER}")).await;
    d.moved_from(&item).await;
    let verdicts: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM decisions")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(verdicts, 1);
    assert!(
        std::fs::read_dir(&app.config.media_dir)
            .map(|e| e
                .flatten()
                .filter(|e| tandem::io::objects::is_stored_name(&e.file_name().to_string_lossy()))
                .count())
            .unwrap_or(0)
            == 0,
        "nothing stored in the local folder"
    );
}

/// A campaign of the paper's size: 12 tasks of 100 clips, 9,800 questions. val00 reviews
/// tasks 1 (with val01) and 12 (with val11); both pairs pass those clips, so val00's
/// Stage 2 queue holds their questions. Returns every question id in the admin list's
/// order (task, then id).
async fn paper_size_campaign(app: &TestApp) -> Vec<String> {
    let tax = tandem::domain::taxonomy::Taxonomy::vgenst();
    let mut tokens = Vec::new();
    for v in 0..12 {
        tokens.push(
            app.user(&format!("val{v:02}"), Role::Validator, Some(v))
                .await,
        );
    }
    app.user("admin1", Role::Admin, None).await;
    let src = app.source();
    let mut lines = Vec::new();
    for task in &tax.tasks {
        let qa: Vec<&str> = tax.applicability[&task.code]
            .iter()
            .map(String::as_str)
            .collect();
        for i in 0..100 {
            let id = format!("{}_{i:04}", task.code);
            lines.push(clip_line(&src, &id, &task.code, &qa));
        }
    }
    let m = write_manifest(&src, "paper.jsonl", &lines);
    app.import(&m).await.unwrap();
    for (t, (a, b)) in [(0, (0, 1)), (11, (11, 0))] {
        for i in 0..100 {
            let id = format!("{}_{i:04}", tax.tasks[t].code);
            assert_eq!(app.pass(&tokens[a], 1, &id).await.status, 201);
            assert_eq!(app.pass(&tokens[b], 1, &id).await.status, 201);
        }
    }
    sqlx::query_scalar(
        "SELECT i.item_key FROM items i JOIN tasks t ON t.id = i.task_id
         WHERE i.stage = 2 AND i.is_current = 1 AND i.calibration = 0
         ORDER BY t.position, i.item_key",
    )
    .fetch_all(&app.db)
    .await
    .unwrap()
}

/// The rows of the page's list (its first column's text).
async fn listed(d: &Driver) -> Vec<String> {
    let v = d
        .exec(
            "return [...document.querySelectorAll('table.items tbody tr td:first-child')] \
             .map(td => td.textContent.trim());",
            vec![],
        )
        .await;
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_papers_size_lists_come_in_pages_and_any_item_is_found_by_its_id() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    let questions = paper_size_campaign(&app).await;
    assert_eq!(questions.len(), 9_800);
    let tax = tandem::domain::taxonomy::Taxonomy::vgenst();
    let last_task = &tax.tasks[11].code;
    sign_in_by_keyboard(&d, &app, "val00").await;
    d.viewport(1366, 768).await;
    // The validator's Stage 2 queue: one page of 250 rows, not 1,600.
    let queue = format!("{}/c/{CAMPAIGN}/review/2", app.base);
    d.go(&queue).await;
    d.wait_ready().await;
    let rows = listed(&d).await;
    assert_eq!(rows.len(), 250, "the first page");
    let mine = questions
        .iter()
        .filter(|q| q.starts_with(&tax.tasks[0].code) || q.starts_with(last_task.as_str()))
        .count();
    let words = d.element_text("nav.pager span").await;
    let pages = mine.div_ceil(250);
    let mine_words = tandem::report::format::thousands(mine as i64);
    assert_eq!(
        words,
        format!("rows 1-250 of {mine_words} · page 1 of {pages}")
    );
    // A prefix search by keyboard: the clip's questions only, the filter kept.
    let clip = format!("{last_task}_0099");
    d.exec("document.querySelector('input[name=id]').focus();", vec![])
        .await;
    d.keys(&format!("{clip}{ENTER}")).await;
    let found = d.moved_from(&queue).await;
    assert!(found.contains(&format!("id={clip}")), "{found}");
    // (In the queue's order, the questions' order in the clip: compared as sets.)
    let mut rows = listed(&d).await;
    rows.sort();
    let expected: Vec<String> = questions
        .iter()
        .filter(|q| q.starts_with(&clip))
        .cloned()
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(rows, expected);
    // The admin: every question of the stage, 250 a page; the 9,800th by the last page
    // and by the start of its id.
    d.cmd(reqwest::Method::DELETE, "/cookie", None).await;
    sign_in_by_keyboard(&d, &app, "admin1").await;
    let list = format!("{}/c/{CAMPAIGN}/admin/items?stage=2&show=all", app.base);
    d.go(&list).await;
    d.wait_ready().await;
    assert_eq!(listed(&d).await, questions[..250].to_vec());
    assert_eq!(
        d.element_text("nav.pager span").await,
        "rows 1-250 of 9,800 · page 1 of 40"
    );
    d.click("nav.pager a[rel=last]").await;
    let last = d.moved_from(&list).await;
    assert_eq!(listed(&d).await, questions[9_550..].to_vec(), "{last}");
    // The page before the last, by its link: the rows just before.
    d.click("nav.pager a[rel=prev]").await;
    d.moved_from(&last).await;
    assert_eq!(listed(&d).await, questions[9_300..9_550].to_vec());
    let here = d.url().await;
    let ninety_eight_hundredth = &questions[9_799];
    d.exec("document.querySelector('input[name=id]').focus();", vec![])
        .await;
    d.keys(&format!("{ninety_eight_hundredth}{ENTER}")).await;
    d.moved_from(&here).await;
    assert_eq!(listed(&d).await, vec![ninety_eight_hundredth.clone()]);
    // A page by its number, typed into the pager's jump.
    d.go(&list).await;
    d.wait_ready().await;
    d.exec(
        "document.querySelector('nav.pager input[name=page]').focus();",
        vec![],
    )
    .await;
    d.keys(&format!("20{ENTER}")).await;
    d.moved_from(&list).await;
    assert_eq!(listed(&d).await, questions[4_750..5_000].to_vec());
    assert_eq!(
        d.element_text("nav.pager span").await,
        "rows 4,751-5,000 of 9,800 · page 20 of 40"
    );
}

/// A calibration miss marks the known flaw on the scrub bar, and G goes to its first
/// frame.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_calibration_miss_g_goes_to_the_known_flaw_marked_on_the_bar() {
    let Some(d) = driver().await else { return };
    if !ffmpeg_or_skip() {
        return;
    }
    let app = spawn_app().await;
    let v0 = app.user("val00", Role::Validator, Some(0)).await;
    app.user("val01", Role::Validator, Some(1)).await;
    let src = app.source();
    let file = counter_clip(&src, "CAL_COUNT", 10, 4);
    let line = json!({
        "clip_id": "CAL_COUNT", "task": "MC_F_EGO_STA", "file": file, "theme": "a frame counter",
        "scene_graph": {}, "scenario": {}, "questions": [],
        "calibration": {"verdict": "reject", "reasons": ["generation_artifact"],
                        "note": "the counter skips", "flaw": {"frames": [25, 30]}}
    });
    let m = write_manifest(&src, "cal.jsonl", &[line]);
    app.import(&m).await.unwrap();
    // The miss, through the API; the page then shows the known verdict.
    let r = app
        .call(
            reqwest::Method::POST,
            &format!("/api/v1/campaigns/{CAMPAIGN}/calibration/1/CAL_COUNT/verdict"),
            Some(&v0),
            Some(json!({"verdict": "valid"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    sign_in_by_keyboard(&d, &app, "val00").await;
    d.viewport(1366, 768).await;
    d.go(&format!(
        "{}/c/{CAMPAIGN}/calibration/1/CAL_COUNT",
        app.base
    ))
    .await;
    d.wait_ready().await;
    d.settled().await;
    assert_eq!(d.frame().await, 0, "the clip opens on its first frame");
    // The band sits over the bar from 2.4 s to 3.0 s of the 4 s clip.
    let band = d
        .until(
            "the flaw's band",
            "const b = document.querySelector('.flaw-mark'); const s = document.getElementById('scrub'); \
             if (!b || b.hidden || !s.offsetWidth) return null; \
             return [(b.offsetLeft - s.offsetLeft) / s.offsetWidth, b.offsetWidth / s.offsetWidth];",
        )
        .await;
    let (left, width) = (band[0].as_f64().unwrap(), band[1].as_f64().unwrap());
    assert!((left - 0.6).abs() < 0.02, "starts at {left} of the bar");
    assert!((width - 0.15).abs() < 0.02, "spans {width} of the bar");
    d.keys("g").await;
    d.settled().await;
    assert_eq!(d.frame().await, 24, "G shows frame 25 (index 24)");
    assert!(
        d.exec("return document.getElementById('clip').paused;", vec![])
            .await
            .as_bool()
            .unwrap()
    );
}

/// The blind key check by keyboard: the key is nowhere on the page until the answer is
/// saved; a letter picks it, Enter saves it, then the key and the verdict come.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_blind_key_check_the_key_shows_only_after_the_answer_typed_blind() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    let c = cast(&app).await;
    // The demo's clips: real videos, so that the player has a position to keep.
    let ids = blind_demo_campaign(&app, &c).await;
    // The first question of the first clip, and an answer that is not its key.
    let (q, options, key): (String, String, i64) = sqlx::query_as(
        "SELECT q.question_key, q.options, q.answer FROM questions q
         JOIN clips c ON c.current_version_id = q.clip_version_id
         WHERE c.clip_key = $1 ORDER BY q.id LIMIT 1",
    )
    .bind(&ids[0])
    .fetch_one(&app.db)
    .await
    .unwrap();
    let n = serde_json::from_str::<Vec<Value>>(&options).unwrap().len();
    let mine = (usize::try_from(key).unwrap() + 1) % n;
    let letter = |i: usize| char::from(b'A' + u8::try_from(i).unwrap());
    sign_in_by_keyboard(&d, &app, "val00").await;
    d.viewport(1366, 768).await;
    let queue = format!("{}/c/{CAMPAIGN}/review/2", app.base);
    let item = format!("{queue}/{q}");
    d.go(&queue).await;
    d.wait_ready().await;
    d.go(&item).await;
    d.wait_ready().await;
    let shown = |script: &'static str| {
        let d = &d;
        async move { d.exec(script, vec![]).await }
    };
    assert_eq!(
        shown("return [!!document.querySelector('.key-mark, li.keyed'), !!document.getElementById('verdict-form'), !!document.getElementById('blind-form')];").await,
        json!([false, false, true]),
        "the key and the verdict wait for the answer"
    );
    // B keeps its meaning (back), never option B: a following Enter cannot save B.
    d.keys("b").await;
    assert_eq!(d.moved_from(&item).await, queue);
    assert_eq!(app.count("SELECT COUNT(*) FROM blind_answers").await, 0);
    d.go(&item).await;
    d.wait_ready().await;
    // The question is on screen from here; the validator looks for a while.
    let opened = std::time::Instant::now();
    // Enter with nothing chosen says so, and sends nothing.
    d.keys(ENTER).await;
    assert_eq!(
        shown("return document.getElementById('choose-first').hidden;").await,
        json!(false)
    );
    d.settled().await;
    for _ in 0..5 {
        d.keys(ARROW_RIGHT).await;
    }
    d.settled().await;
    let position = shown("return document.getElementById('clip').currentTime;")
        .await
        .as_f64()
        .unwrap();
    assert!(position > 0.1, "five frames in: {position}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // The answer is picked by its number. The first Enter asks, the second saves.
    d.keys(&(mine + 1).to_string()).await;
    assert_eq!(
        d.exec(
            &format!(
                "return document.getElementById('choice-{}').checked;",
                letter(mine)
            ),
            vec![]
        )
        .await,
        json!(true)
    );
    d.keys(ENTER).await;
    let asked = d
        .until(
            "the page to ask before the answer is final",
            "const p = document.getElementById('confirm-blind'); return !p.hidden && p.textContent;",
        )
        .await;
    assert!(
        asked
            .as_str()
            .unwrap()
            .starts_with(&format!("Save {} as your answer?", letter(mine))),
        "{asked}"
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM blind_answers").await, 0);
    let blind_wall = opened.elapsed();
    d.keys(ENTER).await;
    let said = d
        .until(
            "the answer beside the key",
            "const p = document.getElementById('blind-answer'); return p ? p.textContent : null;",
        )
        .await;
    assert!(
        said.as_str().unwrap().contains(&format!(
            "Your answer without the key: {}. The key: {}",
            letter(mine),
            letter(usize::try_from(key).unwrap())
        )),
        "{said}"
    );
    assert_eq!(
        shown("return [!!document.querySelector('.key-mark'), !!document.getElementById('verdict-form')];").await,
        json!([true, true])
    );
    // The video is where the answer left it, not back at the first frame.
    let kept = d
        .until(
            "the video at its position again",
            "const v = document.getElementById('clip'); return v && v.readyState >= 1 && v.currentTime > 0 ? v.currentTime : null;",
        )
        .await;
    assert!(
        (kept.as_f64().unwrap() - position).abs() < 0.002,
        "{kept} against {position}"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let at = d.url().await;
    d.keys(&format!("v{ENTER}")).await;
    d.moved_from(&at).await;
    let whole = opened.elapsed();
    let (verdict, spent): (String, i64) = sqlx::query_as(
        "SELECT d.verdict, d.time_spent_ms FROM decisions d JOIN items i ON i.id = d.item_id WHERE i.stage = 2",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(verdict, "valid");
    let (answer, agrees, blind_spent): (i64, i64, i64) =
        sqlx::query_as("SELECT answer, agrees, time_spent_ms FROM blind_answers")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!((answer, agrees), (i64::try_from(mine).unwrap(), 0));
    // Both times are stored: the answer's, and the decision's from the question first
    // shown, the answer's included (never more than the time it was open).
    let ms = |t: Duration| i64::try_from(t.as_millis()).unwrap();
    assert!(
        blind_spent >= 1500 && blind_spent <= ms(blind_wall) + 1000,
        "{blind_spent} ms blind, {blind_wall:?} on the page"
    );
    assert!(
        spent >= blind_spent + 500 && spent <= ms(whole) + 1000,
        "{spent} ms for the decision, {blind_spent} ms of it blind, {whole:?} in all"
    );
}

/// The statistics page's review quality at 1366x768: a row and a bar per validator,
/// bounds said as bounds (no known items), the plot inside the page's width.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_quality_section_reads_at_a_laptops_size() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&["MC_F_EGO_STA"], 12, &[]).await;
    // Twelve ratings each: two rejects by val00, three by val01 (one shared).
    for (i, id) in ids.iter().enumerate() {
        for (token, rejects) in [(&c.v0, [0, 1].as_slice()), (&c.v1, [1, 2, 3].as_slice())] {
            let r = if rejects.contains(&i) {
                app.reject(token, 1, id, "generation_artifact").await
            } else {
                app.pass(token, 1, id).await
            };
            assert_eq!(r.status, 201, "{}", r.text);
        }
    }
    sign_in_by_keyboard(&d, &app, "admin1").await;
    d.viewport(1366, 768).await;
    d.go(&format!("{}/c/{CAMPAIGN}/stats", app.base)).await;
    d.wait_ready().await;
    let seen = d
        .exec(
            "const h = [...document.querySelectorAll('h2')].find(h => h.textContent === 'How good the review is'); \
             h.scrollIntoView(); \
             const s = h.closest('section'); \
             const rows = [...s.querySelectorAll('table.quality tbody tr')].map(r => [...r.children].map(c => c.textContent)); \
             const svg = s.querySelector('.plot svg'); const b = svg.getBoundingClientRect(); \
             return {rows, svg: [b.left, b.right, b.height], inner: window.innerWidth, \
                     scroll: document.documentElement.scrollWidth, names: svg.textContent};",
            vec![],
        )
        .await;
    let rows = seen["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r[0].as_str().unwrap()).collect();
    assert_eq!(names, ["val00", "val01"], "{seen}");
    for r in rows {
        assert_eq!(r[2], "12", "twelve counted verdicts: {r}");
        assert!(
            r[4].as_str().unwrap().ends_with("(bounds)")
                && r[5].as_str().unwrap().ends_with("(bounds)"),
            "without known items the figures are bounds: {r}"
        );
    }
    let inner = seen["inner"].as_f64().unwrap();
    let (left, right, height) = (
        seen["svg"][0].as_f64().unwrap(),
        seen["svg"][1].as_f64().unwrap(),
        seen["svg"][2].as_f64().unwrap(),
    );
    assert!(
        left >= 0.0 && right <= inner && height > 100.0,
        "the plot fits: {seen}"
    );
    assert!(
        seen["scroll"].as_f64().unwrap() <= inner,
        "no sideways scrolling: {seen}"
    );
    let text = seen["names"].as_str().unwrap();
    assert!(
        text.contains("val00") && text.contains("val01") && text.contains("Not identified"),
        "{text}"
    );
}

/// A page's text or a URL with what differs by design between two items masked: the
/// item's id, clip tokens (long runs of letters and digits) and times in µs or ms.
fn masked(text: &str, id: &str) -> String {
    let text = text.replace(id, "ID");
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let token = word.len() >= 20 && word.chars().any(|c| c.is_ascii_digit());
        let time = word.len() >= 12 && word.chars().all(|c| c.is_ascii_digit());
        out.push_str(if token {
            "TOKEN"
        } else if time {
            "TIME"
        } else {
            word
        });
        word.clear();
    };
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() || ch == '-' || ch == '_' {
            word.push(ch);
        } else {
            flush(&mut word, &mut out);
            out.push(ch);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// A validator cannot tell a known item of the live queue from a real one: the page
/// Chromium draws and every URL it loads are the same, ids, tokens and times aside.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_item_looks_and_loads_exactly_like_a_real_one() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    let _c = cast(&app).await;
    let src = app.source();
    let real = clip_line(&src, "MC_F_EGO_STA_0001", "MC_F_EGO_STA", &["OE"]);
    let mut known = clip_line(&src, "MC_F_EGO_STA_0002", "MC_F_EGO_STA", &["OE"]);
    known["known"] = json!({"verdict": "reject", "reasons": ["generation_artifact"],
                            "note": "a planted flicker"});
    let m = write_manifest(&src, "m.jsonl", &[real, known]);
    app.import(&m).await.unwrap();
    sign_in_by_keyboard(&d, &app, "val00").await;
    d.viewport(1366, 768).await;
    let mut seen = Vec::new();
    for id in ["MC_F_EGO_STA_0001", "MC_F_EGO_STA_0002"] {
        d.go(&format!("{}/c/{CAMPAIGN}/review/1/{id}", app.base))
            .await;
        d.wait_ready().await;
        d.until(
            "the clip requested",
            "return performance.getEntriesByType('resource').some(e => e.name.includes('/media/')) || null;",
        )
        .await;
        d.settled().await;
        let page = d
            .exec("return document.documentElement.outerHTML;", vec![])
            .await;
        let loads = d
            .exec(
                "return performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource')).map(e => e.name);",
                vec![],
            )
            .await;
        let mut loads: Vec<String> = loads
            .as_array()
            .unwrap()
            .iter()
            .map(|u| masked(u.as_str().unwrap(), id))
            .collect();
        loads.sort();
        let page = masked(page.as_str().unwrap(), id);
        assert!(
            !page.contains("flicker") && !page.contains("known"),
            "{page}"
        );
        seen.push((page, loads));
    }
    assert!(
        seen[0].1.iter().any(|u| u.contains("/media/")),
        "{:?}",
        seen[0].1
    );
    assert_eq!(seen[0].1, seen[1].1, "the URLs each page loads");
    assert_eq!(seen[0].0, seen[1].0, "the pages as drawn");
}

/// axe-core's checks (WCAG 2.1 A and AA rules) on the pages of a day's work, from
/// the copy `.ci/run` fetches (`TANDEM_AXE`, the path of `axe.min.js`): no violation
/// of any impact on any of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn axe_finds_nothing_on_the_pages_of_a_days_work() {
    let Some(axe) = axe_script() else { return };
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = demo_campaign(&app).await;
    // A split for the author, and a clip both passed, whose questions open.
    assert_eq!(app.pass(&c.v0, 1, &ids[0]).await.status, 201);
    assert_eq!(
        app.reject(&c.v1, 1, &ids[0], "generation_artifact")
            .await
            .status,
        201
    );
    assert_eq!(app.pass(&c.v0, 1, &ids[1]).await.status, 201);
    assert_eq!(app.pass(&c.v1, 1, &ids[1]).await.status, 201);
    let question: String = sqlx::query_scalar(
        "SELECT i.item_key FROM items i JOIN items p ON p.id = i.parent_item_id
         WHERE i.stage = 2 AND p.item_key = $1 ORDER BY i.id LIMIT 1",
    )
    .bind(&ids[1])
    .fetch_one(&app.db)
    .await
    .unwrap();
    let check = |path: String| {
        let (d, app, axe) = (&d, &app, axe.clone());
        async move {
            d.go(&format!("{}{path}", app.base)).await;
            d.wait_ready().await;
            d.exec(&axe, vec![]).await;
            let found = d
                .exec(
                    "return axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})\
                       .then(r => r.violations.map(v => v.id + ' (' + v.impact + '): ' + v.nodes.map(n => n.target.join(' ')).join(', ')));",
                    vec![],
                )
                .await;
            assert_eq!(found, json!([]), "axe on {path}");
        }
    };
    sign_in_by_keyboard(&d, &app, "val00").await;
    for stage in [1, 2] {
        check(format!("/c/{CAMPAIGN}/review/{stage}")).await;
    }
    check(format!("/c/{CAMPAIGN}/review/1/{}", ids[2])).await;
    check(format!("/c/{CAMPAIGN}/review/2/{question}")).await;
    assert!(
        d.source().await.contains("id=\"verdict-form\""),
        "the item itself"
    );
    check(format!("/c/{CAMPAIGN}/stats")).await;
    d.cmd(reqwest::Method::DELETE, "/cookie", None).await;
    sign_in_by_keyboard(&d, &app, "author1").await;
    check(format!("/c/{CAMPAIGN}/splits/1")).await;
    check(format!("/c/{CAMPAIGN}/splits/1/{}", ids[0])).await;
    // A question both passed, with the withdrawal form.
    assert_eq!(app.pass(&c.v0, 2, &question).await.status, 201);
    assert_eq!(app.pass(&c.v1, 2, &question).await.status, 201);
    check(format!("/c/{CAMPAIGN}/questions/{question}")).await;
    assert!(d.source().await.contains("id=\"withdraw-form\""));
    d.cmd(reqwest::Method::DELETE, "/cookie", None).await;
    sign_in_by_keyboard(&d, &app, "admin1").await;
    for path in ["/admin/users", "/admin/campaigns"] {
        check(path.to_string()).await;
    }
    for path in [
        "admin",
        "admin/items?stage=1&show=all",
        "admin/pairs",
        "admin/audit",
        "admin/exports",
        "admin/calibration",
    ] {
        check(format!("/c/{CAMPAIGN}/{path}")).await;
    }
    // The check sees a fault when there is one: an image without a text alternative.
    let found = d
        .exec(
            "const i = document.createElement('img'); i.src = '/static/none.png'; document.querySelector('main').appendChild(i);\
             return axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a']}}).then(r => r.violations.map(v => v.id));",
            vec![],
        )
        .await;
    assert_eq!(found, json!(["image-alt"]));
}

/// axe-core's script, when `TANDEM_AXE` names it; required with `TANDEM_REQUIRE_AXE=1`.
fn axe_script() -> Option<String> {
    let required = std::env::var("TANDEM_REQUIRE_AXE").is_ok_and(|v| v == "1");
    let script = std::env::var("TANDEM_AXE")
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok());
    if script.is_none() {
        assert!(
            !required,
            "TANDEM_REQUIRE_AXE=1 but TANDEM_AXE names no readable axe.min.js"
        );
        use std::io::Write;
        let _ = std::io::stderr().write_all(
            b"note: an accessibility test was SKIPPED: set TANDEM_AXE to axe-core's axe.min.js\n",
        );
    }
    script
}

/// The demo's clips (real videos, so that the player has a position to keep) with the
/// blind key check on, the first clip passed by both: its questions wait in Stage 2.
async fn blind_demo_campaign(app: &TestApp, c: &Cast) -> Vec<String> {
    let ids = demo_campaign(app).await;
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    app.store
        .set_settings(
            &campaign,
            tandem::store::catalog::Settings {
                blind_key_check: true,
                ..campaign.settings
            },
        )
        .await
        .unwrap();
    for token in [&c.v0, &c.v1] {
        assert_eq!(app.pass(token, 1, &ids[0]).await.status, 201);
    }
    ids
}

/// The author's day with a key in doubt, by keyboard: from the list under the Stage 2
/// splits to the question's page, `N` for the note, Enter withdraws; the list then says
/// so and the retained benchmark leaves the question out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_author_withdraws_a_question_whose_key_is_in_doubt_by_keyboard() {
    let Some(d) = driver().await else { return };
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = blind_demo_campaign(&app, &c).await;
    // Both validators answer the first question blind otherwise than its key, then pass it.
    let (q, key): (String, i64) = sqlx::query_as(
        "SELECT q.question_key, q.answer FROM questions q
         JOIN clips c ON c.current_version_id = q.clip_version_id
         WHERE c.clip_key = $1 ORDER BY q.id LIMIT 1",
    )
    .bind(&ids[0])
    .fetch_one(&app.db)
    .await
    .unwrap();
    for token in [&c.v0, &c.v1] {
        let r = app
            .call(
                reqwest::Method::POST,
                &format!("/api/v1/campaigns/{CAMPAIGN}/items/2/{q}/blind-answer"),
                Some(token),
                Some(json!({"answer": (key + 1) % 2})),
            )
            .await;
        assert_eq!(r.status, reqwest::StatusCode::CREATED, "{}", r.text);
        assert_eq!(app.pass(token, 2, &q).await.status, 201);
    }
    sign_in_by_keyboard(&d, &app, "author1").await;
    let list = format!("{}/c/{CAMPAIGN}/splits/2", app.base);
    d.go(&list).await;
    d.wait_ready().await;
    d.exec(
        &format!("document.querySelector('#keys-in-doubt a[href$=\"/questions/{q}\"]').focus();"),
        vec![],
    )
    .await;
    d.keys(ENTER).await;
    let page = d.moved_from(&list).await;
    assert!(
        page.ends_with(&format!("/c/{CAMPAIGN}/questions/{q}")),
        "{page}"
    );
    assert!(d.source().await.contains("id=\"key-in-doubt\""));
    // Enter with no note is refused on the page; N, a note, Enter withdraws.
    d.keys("n").await;
    d.keys(ENTER).await;
    d.until(
        "the note to be asked for",
        "return !document.getElementById('problem').hidden && document.getElementById('problem').textContent;",
    )
    .await;
    assert_eq!(app.count("SELECT COUNT(*) FROM withdrawals").await, 0);
    d.keys(&format!("both saw the square stop{ENTER}")).await;
    d.moved_from(&page).await;
    assert!(
        d.source().await.contains("Withdrawn: "),
        "the flash says so"
    );
    let note: String = sqlx::query_scalar("SELECT note FROM withdrawals")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(note, "both saw the square stop");
    let campaign = app.store.campaign(CAMPAIGN).await.unwrap();
    let (clips, counts) = app.store.retained(&campaign).await.unwrap();
    assert_eq!(counts.questions_withdrawn, 1);
    assert!(
        clips
            .iter()
            .all(|c| c.questions.iter().all(|x| x.question_id != q))
    );
}
