//! The browser workspace over HTTP: sign-in, CSRF, the review and resolution forms,
//! the admin's imports, accounts and exports, and what a validator's pages never show.

use crate::helpers::*;
use reqwest::{Method, StatusCode};
use serde_json::json;
use tandem::domain::Role;

const MC: &str = "MC_F_EGO_STA";

#[tokio::test]
async fn sign_in_answers_the_same_for_an_unknown_name_and_a_wrong_password() {
    let app = spawn_app().await;
    cast(&app).await;
    let wrong = app
        .try_login("val00", "not the password at all")
        .await
        .unwrap_err();
    let unknown = app
        .try_login("nobody", "not the password at all")
        .await
        .unwrap_err();
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert_eq!(unknown.status, wrong.status);
    // The page echoes the typed name back into its field; apart from that, and the
    // form's own token, the two answers are the same.
    let strip = |r: &Reply, name: &str| {
        let t = r
            .text
            .replace(&format!("value=\"{name}\""), "value=\"NAME\"");
        let token = csrf_of(&t).unwrap();
        t.replace(&token, "TOKEN")
    };
    assert_eq!(strip(&wrong, "val00"), strip(&unknown, "nobody"));
    assert!(wrong.text.contains("Wrong name or password."));
}

#[tokio::test]
async fn sign_in_is_throttled_after_ten_failures() {
    let app = spawn_app().await;
    cast(&app).await;
    for _ in 0..10 {
        let r = app
            .try_login("val00", "wrong password here")
            .await
            .unwrap_err();
        assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    }
    let r = app.try_login("val00", PASSWORD).await.unwrap_err();
    assert_eq!(
        r.status,
        StatusCode::TOO_MANY_REQUESTS,
        "even the right password waits"
    );
    assert!(r.text.contains("Too many failed sign-ins"));
}

#[tokio::test]
async fn sessions_use_safe_cookies_and_end_at_sign_out() {
    let app = spawn_app().await;
    cast(&app).await;
    let page = app.page(None, Method::GET, "/login", None).await;
    let pre = page.headers["set-cookie"].to_str().unwrap().to_string();
    let token = csrf_of(&page.text).unwrap();
    let r = app
        .client
        .post(format!("{}/login", app.base))
        .header("Cookie", pre.split(';').next().unwrap())
        .form(&[
            ("_csrf", token.as_str()),
            ("name", "val00"),
            ("password", PASSWORD),
            ("next", "//evil.example/"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        r.headers()["location"],
        "/",
        "only local paths are followed"
    );
    let cookie = r
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|c| c.starts_with("tandem_session="))
        .unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );

    let web = app.login("val00").await;
    let r = app
        .page(Some(&web), Method::POST, "/logout", Some(&[]))
        .await;
    assert_eq!(
        (r.status, r.location().as_deref()),
        (StatusCode::SEE_OTHER, Some("/login"))
    );
    let r = app.page(Some(&web), Method::GET, "/", None).await;
    assert!(
        r.location().unwrap().starts_with("/login"),
        "the session is gone"
    );
}

#[tokio::test]
async fn a_form_without_the_right_csrf_token_is_refused() {
    let app = spawn_app().await;
    cast(&app).await;
    let ids = app.import_clips(&[MC], 1, &[]).await;
    let web = app.login("val00").await;
    let path = format!("/c/{CAMPAIGN}/review/1/{}", ids[0]);
    for token in ["", "0123abcd"] {
        let r = app
            .page(
                Some(&web),
                Method::POST,
                &path,
                Some(&[("_csrf", token), ("verdict", "valid")]),
            )
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "token `{token}`");
        assert!(r.text.contains("did not come from this site"));
    }
    // No token at all, and a token for the login form (a different cookie), are refused too.
    let r = app
        .client
        .post(format!("{}{path}", app.base))
        .header("Cookie", &web.cookie)
        .form(&[("verdict", "valid")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 0);
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &path,
            Some(&[("verdict", "valid")]),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::SEE_OTHER,
        "with the token it goes through"
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 1);
}

#[tokio::test]
async fn a_validator_reviews_both_stages_through_the_pages() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 2, &["OE", "CR"]).await;
    let web = app.login("val00").await;
    let base = format!("/c/{CAMPAIGN}/review");

    let q = app
        .page(Some(&web), Method::GET, &format!("{base}/1"), None)
        .await;
    assert!(q.text.contains("0 of 2 decided"), "{}", q.text);
    assert!(q.text.contains(&format!("{base}/1/{}", ids[0])));

    let item = app
        .page(
            Some(&web),
            Method::GET,
            &format!("{base}/1/{}", ids[0]),
            None,
        )
        .await;
    assert_eq!(item.status, StatusCode::OK);
    assert!(item.text.contains("<video id=\"clip\" src=\"/media/"));
    assert!(
        item.text.contains("Physical implausibility") && !item.text.contains("Incorrect answer")
    );

    // A reject with "other" and no note comes back with the problem, nothing stored.
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("{base}/1/{}", ids[0]),
            Some(&[("verdict", "reject"), ("reasons", "other")]),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("needs a note"), "{}", r.text);
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 0);

    // Valid, then on to the next clip.
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("{base}/1/{}", ids[0]),
            Some(&[("verdict", "valid"), ("rendered_at", "0")]),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(r.location().unwrap(), format!("{base}/1/{}", ids[1]));
    let next = app
        .page(Some(&web), Method::GET, &r.location().unwrap(), None)
        .await;
    assert!(
        next.text.contains(&format!("Saved: {} is valid.", ids[0])),
        "the saved verdict is confirmed"
    );
    assert!(
        next.text.contains(&format!(
            "<a href=\"{base}/1/{}\" id=\"change-saved\">Change it <kbd>B</kbd></a>",
            ids[0]
        )),
        "while the partner has not decided, the message links back: {}",
        next.text
    );
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("{base}/1/{}", ids[1]),
            Some(&[
                ("verdict", "reject"),
                ("reasons", "generation_artifact"),
                ("reasons", "prompt_drift"),
                ("note", "morphs"),
            ]),
        )
        .await;
    assert_eq!(
        r.location().unwrap(),
        format!("{base}/1"),
        "the queue when nothing is left"
    );
    let stored: String =
        sqlx::query_scalar("SELECT reasons FROM decisions WHERE seq = 1 AND verdict = 'reject'")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(stored, "generation_artifact;prompt_drift");
    // The confirmation names the reasons in words; a repeat says it recorded nothing.
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("{base}/1/{}", ids[1]),
            Some(&[
                ("verdict", "reject"),
                ("reasons", "generation_artifact"),
                ("reasons", "prompt_drift"),
                ("note", "morphs"),
            ]),
        )
        .await;
    let again = app
        .page(Some(&web), Method::GET, &r.location().unwrap(), None)
        .await;
    assert!(
        again.text.contains(&format!(
            "Already saved (nothing new recorded): {} is reject (Generation artifact, Prompt drift).",
            ids[1]
        )),
        "{}",
        again.text
    );
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, 2);
    let spent: Option<i64> =
        sqlx::query_scalar("SELECT time_spent_ms FROM decisions ORDER BY id LIMIT 1")
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert!(spent.is_some(), "the time spent is recorded");

    // Stage 2 opens once the partner passes the first clip too.
    app.pass(&c.v1, 1, &ids[0]).await;
    let q = app
        .page(Some(&web), Method::GET, &format!("{base}/2"), None)
        .await;
    assert!(q.text.contains("0 of 2 decided"), "{}", q.text);
    let cr = format!("{}_CR", ids[0]);
    let page = app
        .page(Some(&web), Method::GET, &format!("{base}/2/{cr}"), None)
        .await;
    assert!(
        page.text.contains("Single-frame solvable"),
        "L3 offers single_frame_solvable"
    );
    assert!(page.text.contains("keyed answer"));
    let oe = app
        .page(
            Some(&web),
            Method::GET,
            &format!("{base}/2/{}_OE", ids[0]),
            None,
        )
        .await;
    // L1 shows it too, under the same key, but it cannot be ticked.
    assert!(
        oe.text.contains(
            r#"value="single_frame_solvable" data-key="3" data-label="Single-frame solvable" data-only="L3" disabled>"#
        ),
        "L1 shows single_frame_solvable disabled"
    );
    assert!(
        page.text.contains(
            r#"value="single_frame_solvable" data-key="3" data-label="Single-frame solvable" data-only="L3">"#
        ),
        "L3 offers it under the same key"
    );
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("{base}/2/{cr}"),
            Some(&[("verdict", "reject"), ("reasons", "single_frame_solvable")]),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    // A question of the rejected clip never opens.
    let r = app
        .page(
            Some(&web),
            Method::GET,
            &format!("{base}/2/{}_OE", ids[1]),
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn no_page_a_validator_can_reach_shows_a_trace_of_the_partners_verdict() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 2, &["OE"]).await;
    let item = &ids[0];
    let secret = "partner-note-91c2";
    app.verdict(
        &c.v1,
        1,
        item,
        json!({"verdict": "reject", "reasons": ["prompt_drift"], "note": secret}),
    )
    .await;
    let web = app.login("val00").await;
    let post = app
        .page(
            Some(&web),
            Method::POST,
            &format!("/c/{CAMPAIGN}/review/1/{item}"),
            Some(&[("verdict", "valid")]),
        )
        .await;
    assert_eq!(app.outcome(1, item).await, "split");

    let mut replies = vec![post];
    for path in [
        "/".to_string(),
        format!("/c/{CAMPAIGN}/review/1"),
        format!("/c/{CAMPAIGN}/review/2"),
        format!("/c/{CAMPAIGN}/review/1/{item}"),
        format!("/c/{CAMPAIGN}/review/1/{}", ids[1]),
        format!("/c/{CAMPAIGN}/review/2/{item}_OE"),
        format!("/c/{CAMPAIGN}/splits/1"),
        format!("/c/{CAMPAIGN}/splits/1/{item}"),
        format!("/c/{CAMPAIGN}/admin"),
    ] {
        let r = app.page(Some(&web), Method::GET, &path, None).await;
        replies.push(r);
    }
    // Changing the verdict after the partner decided, through the form.
    replies.push(
        app.page(
            Some(&web),
            Method::POST,
            &format!("/c/{CAMPAIGN}/review/1/{item}"),
            Some(&[("verdict", "reject"), ("reasons", "prompt_drift")]),
        )
        .await,
    );
    for r in &replies {
        for trace in [
            "val01", secret, "split", "Split", "both_", "Rater", "accepted", "outcome",
        ] {
            assert!(
                !r.text.contains(trace),
                "`{trace}` appears in a page shown to the validator:\n{}",
                r.text
            );
        }
    }
    let last = replies.last().unwrap();
    assert_eq!(last.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(last.text.contains("is final"));
}

#[tokio::test]
async fn text_from_imports_is_escaped_in_pages() {
    let app = spawn_app().await;
    cast(&app).await;
    let src = app.source();
    let mut line = clip_line(&src, "XSS_1", MC, &["OE"]);
    line["theme"] = json!("<script>alert('theme')</script>");
    line["scenario"] = json!({"event": "<img src=x onerror=alert(1)>"});
    line["questions"][0]["question"] = json!("Which <b>object</b> & why?");
    line["questions"][0]["options"] = json!(["<i>a</i>", "b\"><script>", "c", "d"]);
    let m = write_manifest(&src, "xss.jsonl", &[line]);
    app.import(&m).await.unwrap();
    let web = app.login("val00").await;
    let r = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/review/1/XSS_1"),
            None,
        )
        .await;
    assert!(!r.text.contains("<script>alert"), "{}", r.text);
    assert!(!r.text.contains("<img src=x"));
    assert!(
        r.text
            .contains("&#60;script&#62;alert(&#39;theme&#39;)&#60;/script&#62;"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn an_author_resolves_a_split_through_the_page() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 2, &[]).await;
    for id in &ids {
        app.pass(&c.v0, 1, id).await;
        app.verdict(
            &c.v1,
            1,
            id,
            json!({"verdict": "reject", "reasons": ["other"], "note": "odd shadow"}),
        )
        .await;
    }
    let web = app.login("author1").await;
    let list = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/splits/1"),
            None,
        )
        .await;
    assert!(
        list.text.contains("2 waiting for an author"),
        "{}",
        list.text
    );
    let path = format!("/c/{CAMPAIGN}/splits/1/{}", ids[0]);
    let page = app.page(Some(&web), Method::GET, &path, None).await;
    assert!(page.text.contains("Rater 1: val00") && page.text.contains("Rater 2: val01"));
    assert!(
        page.text.contains("odd shadow"),
        "the author sees the notes"
    );
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &path,
            Some(&[("verdict", "accept"), ("note", "")]),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("needs a note"));
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &path,
            Some(&[("verdict", "accept"), ("note", "shadow is fine")]),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(
        r.location().unwrap(),
        format!("/c/{CAMPAIGN}/splits/1/{}", ids[1])
    );
    assert_eq!(app.outcome(1, &ids[0]).await, "split_accepted");
    let again = app.page(Some(&web), Method::GET, &path, None).await;
    assert!(again.text.contains("Resolved by author1") && !again.text.contains("resolve-form"));
    // An admin may look but not resolve.
    let admin = app.login("admin1").await;
    let path2 = format!("/c/{CAMPAIGN}/splits/1/{}", ids[1]);
    let look = app.page(Some(&admin), Method::GET, &path2, None).await;
    assert_eq!(look.status, StatusCode::OK);
    assert!(!look.text.contains("resolve-form"));
    let r = app
        .page(
            Some(&admin),
            Method::POST,
            &path2,
            Some(&[("verdict", "reject"), ("note", "x")]),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
}

/// Uploads a zip as the import page's form does: the CSRF token is the form's first
/// field.
async fn upload(app: &TestApp, web: &Web, zip: Vec<u8>) -> Reply {
    let part = reqwest::multipart::Part::bytes(zip).file_name("clips.zip");
    let form = reqwest::multipart::Form::new()
        .text("_csrf", web.csrf.clone())
        .part("archive", part);
    let resp = app
        .client
        .post(format!("{}/c/{CAMPAIGN}/admin/import/upload", app.base))
        .header("Cookie", web.cookies())
        .multipart(form)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap();
    let reply = Reply {
        status,
        body: serde_json::Value::Null,
        text,
        headers,
    };
    web.remember(&reply);
    reply
}

#[tokio::test]
async fn an_admin_imports_a_zip_and_reads_the_lines_of_a_broken_manifest() {
    // "Import from a folder" reads under the test's source folder only.
    let app = spawn_app_with(|c| {
        let source = c.data_dir.parent().unwrap().join("source");
        std::fs::create_dir_all(&source).unwrap();
        c.set_import_roots(&[source]).unwrap();
    })
    .await;
    cast(&app).await;
    let web = app.login("admin1").await;
    let src = app.source();
    let good = clip_line(&src, "Z_1", MC, &["OE"]);
    let mut bad = clip_line(&src, "Z_2", MC, &["OE"]);
    bad["questions"][0]["answer"] = json!(9);
    let video = |id: &str| (format!("videos/{id}.mp4"), fake_mp4(id));
    let broken = zip_of(&[
        (
            "manifest.jsonl".into(),
            format!("{good}\n{bad}\n").into_bytes(),
        ),
        video("Z_1"),
        video("Z_2"),
    ]);
    let before = app.dump().await;
    let r = upload(&app, &web, broken).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text);
    assert!(
        r.text
            .contains("line 2, field <code>questions[0].answer</code>"),
        "{}",
        r.text
    );
    // Said without the server's scratch folder, which means nothing to the admin.
    assert!(
        r.text
            .contains("The manifest was refused: 1 problem; nothing was imported."),
        "{}",
        r.text
    );
    let data_dir = app.config.data_dir.display().to_string();
    assert!(
        !r.text.contains("upload-") && !r.text.contains(&data_dir),
        "{}",
        r.text
    );
    assert_eq!(app.dump().await, before);

    let ok = zip_of(&[
        ("manifest.jsonl".into(), format!("{good}\n").into_bytes()),
        video("Z_1"),
    ]);
    // The token in the URL (where logs and Referer headers keep it) is not taken, nor
    // a token that is not the form's first field.
    let part = reqwest::multipart::Part::bytes(ok.clone()).file_name("clips.zip");
    let in_url = app
        .client
        .post(format!(
            "{}/c/{CAMPAIGN}/admin/import/upload?_csrf={}",
            app.base, web.csrf
        ))
        .header("Cookie", web.cookies())
        .multipart(reqwest::multipart::Form::new().part("archive", part))
        .send()
        .await
        .unwrap();
    assert_eq!(in_url.status(), StatusCode::FORBIDDEN);
    let part = reqwest::multipart::Part::bytes(ok.clone()).file_name("clips.zip");
    let after_the_file = app
        .client
        .post(format!("{}/c/{CAMPAIGN}/admin/import/upload", app.base))
        .header("Cookie", web.cookies())
        .multipart(
            reqwest::multipart::Form::new()
                .part("archive", part)
                .text("_csrf", web.csrf.clone()),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(after_the_file.status(), StatusCode::FORBIDDEN);
    assert_eq!(app.dump().await, before, "a refused upload imports nothing");
    let r = upload(&app, &web, ok).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let overview = app
        .page(Some(&web), Method::GET, &r.location().unwrap(), None)
        .await;
    assert!(
        overview
            .text
            .contains("Imported: campaign `default`: 1 new clip(s)"),
        "{}",
        overview.text
    );

    // A zip whose entry climbs out of its folder is refused.
    let evil = zip_of(&[("../manifest.jsonl".into(), b"{}".to_vec())]);
    let r = upload(&app, &web, evil).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("outside its folder"));

    // A manifest already on the server.
    let m = write_manifest(&src, "server.jsonl", &[clip_line(&src, "Z_3", MC, &[])]);
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("/c/{CAMPAIGN}/admin/import/folder"),
            Some(&[("manifest", m.to_str().unwrap())]),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(app.count("SELECT COUNT(*) FROM clips").await, 2);
    // Anything else on the server is refused with one message, whether it exists or
    // not: a missing file, files outside the root, a climb out of it, a relative path,
    // a link inside the root that leads out.
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.jsonl");
    std::fs::write(&secret, "{}\n").unwrap();
    std::os::unix::fs::symlink(&secret, src.join("link.jsonl")).unwrap();
    let before = app.dump().await;
    let mut answers = Vec::new();
    for path in [
        src.join("no-such.jsonl").display().to_string(),
        secret.display().to_string(),
        outside.path().join("no-such.jsonl").display().to_string(),
        format!("{}/../{}", src.display(), "secret.jsonl"),
        "source/server.jsonl".to_string(),
        src.join("link.jsonl").display().to_string(),
        "/etc/passwd".to_string(),
    ] {
        let r = app
            .page(
                Some(&web),
                Method::POST,
                &format!("/c/{CAMPAIGN}/admin/import/folder"),
                Some(&[("manifest", &path)]),
            )
            .await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{path}");
        let said = r
            .text
            .split("class=\"error\"")
            .nth(1)
            .and_then(|t| t.split("</p>").next())
            .unwrap_or_default()
            .to_string();
        assert!(said.contains("under an import root"), "{path}: {}", r.text);
        answers.push(said);
    }
    assert!(
        answers.windows(2).all(|w| w[0] == w[1]),
        "one answer for all: {answers:?}"
    );
    assert_eq!(app.dump().await, before, "nothing was imported");
}

#[tokio::test]
async fn an_admin_creates_accounts_sets_pairs_and_downloads_exports() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 1, &["OE"]).await;
    let web = app.login("admin1").await;
    let r = app
        .page(
            Some(&web),
            Method::POST,
            "/admin/users",
            Some(&[
                ("name", "val02"),
                ("role", "validator"),
                ("index", "2"),
                ("campaign", "default"),
                ("password", ""),
            ]),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    let at = r.text.find("id=\"secret\">").unwrap() + "id=\"secret\">".len();
    let password = r.text[at..].split('<').next().unwrap().to_string();
    assert_eq!(password.len(), 20);
    assert!(
        app.try_login("val02", &password).await.is_ok(),
        "the shown password works"
    );
    let r = app
        .page(
            Some(&web),
            Method::POST,
            "/admin/users",
            Some(&[("name", "val02"), ("role", "author"), ("password", "")]),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("already exists"));
    let r = app
        .page(
            Some(&web),
            Method::POST,
            "/admin/users/val02/token",
            Some(&[]),
        )
        .await;
    assert!(r.text.contains("tdm_"));

    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("/c/{CAMPAIGN}/admin/pairs"),
            Some(&[
                ("task", MC),
                ("rater1", "val02"),
                ("rater2", "val00"),
                ("action", "set"),
            ]),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let page = app
        .page(Some(&web), Method::GET, &r.location().unwrap(), None)
        .await;
    assert!(
        page.text
            .contains("MC_F_EGO_STA is now reviewed by val02 (rater 1) and val00 (rater 2).")
    );

    let v2 = app.store.create_token("val02", "t").await.unwrap();
    app.pass(&v2, 1, &ids[0]).await;
    app.pass(&c.v0, 1, &ids[0]).await;
    let r = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/admin/exports/decisions.csv"),
            None,
        )
        .await;
    assert_eq!(r.headers["content-type"], "text/csv; charset=utf-8");
    assert_eq!(r.text.lines().count(), 3);
    let resp = app
        .client
        .get(format!(
            "{}/c/{CAMPAIGN}/admin/exports/retained.zip",
            app.base
        ))
        .header("Cookie", &web.cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let bytes = resp.bytes().await.unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    let mut jsonl = String::new();
    std::io::Read::read_to_string(
        &mut zip.by_name("default-retained/benchmark.jsonl").unwrap(),
        &mut jsonl,
    )
    .unwrap();
    assert!(jsonl.contains(&ids[0]));
    assert!(
        zip.by_name(&format!("default-retained/videos/{}.mp4", ids[0]))
            .is_ok()
    );
    let overview = app
        .page(
            Some(&web),
            Method::GET,
            &format!("/c/{CAMPAIGN}/admin"),
            None,
        )
        .await;
    assert!(overview.text.contains("val02 + val00"));
}

#[tokio::test]
async fn a_new_account_with_a_short_password_is_refused() {
    let app = spawn_app().await;
    app.user("admin1", Role::Admin, None).await;
    let web = app.login("admin1").await;
    let r = app
        .page(
            Some(&web),
            Method::POST,
            "/admin/users",
            Some(&[("name", "a1"), ("role", "author"), ("password", "short")]),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("at least 12 characters"));
}

#[tokio::test]
async fn someone_else_can_sign_in_on_a_browser_left_signed_in() {
    let app = spawn_app().await;
    cast(&app).await;
    let left = app.login("val00").await;
    let page = app.page(Some(&left), Method::GET, "/login", None).await;
    let pre = page
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("tandem_prelogin="))
        .and_then(|c| c.split(';').next())
        .unwrap()
        .to_string();
    let token = csrf_of(&page.text).unwrap();
    let r = app
        .client
        .post(format!("{}/login", app.base))
        .header("Cookie", format!("{}; {pre}", left.cookie))
        .form(&[
            ("_csrf", token.as_str()),
            ("name", "val01"),
            ("password", PASSWORD),
            ("next", "/"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert!(
        r.headers()
            .get_all("set-cookie")
            .iter()
            .any(|c| c.to_str().unwrap().starts_with("tandem_session="))
    );
}

#[tokio::test]
async fn a_revoked_token_stops_working() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let web = app.login("admin1").await;
    let r = app.get("/api/v1/me", &c.v0).await;
    assert_eq!(r.status, StatusCode::OK);
    let r = app
        .page(
            Some(&web),
            Method::POST,
            "/admin/users/val00/revoke-tokens",
            Some(&[]),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let r = app.get("/api/v1/me", &c.v0).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn adding_a_validator_shows_the_new_pairs_and_changes_nothing_until_confirmed() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    // Task 0 (MC) is reviewed by val00 + val01, task 1 (QC) by val01 + val00; one QC
    // clip is started (it keeps its pair), two are not.
    app.import_clips(&["MC_F_EGO_STA", "QC_F_EGO_DYN"], 3, &[])
        .await;
    assert_eq!(app.pass(&c.v0, 1, "QC_F_EGO_DYN_0000").await.status, 201);
    let web = app.login("admin1").await;
    let before = app.dump().await;
    let form = [
        ("name", "val02"),
        ("role", "validator"),
        ("index", "2"),
        ("campaign", CAMPAIGN),
        ("password", ""),
    ];
    let r = app
        .page(
            Some(&web),
            reqwest::Method::POST,
            "/admin/users",
            Some(&form),
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(r.text.contains("Confirm the new pairs"), "{}", r.text);
    // QC (position 1) goes from (val01, val00) to (val01, val02) with its 2 unstarted clips.
    assert!(
        r.text.contains(
            "<td>QC_F_EGO_DYN</td><td>val01 + val00</td><td>val01 + val02</td><td>2</td>"
        ),
        "{}",
        r.text
    );
    assert!(
        !r.text.contains("<td>MC_F_EGO_STA</td>"),
        "task 0 keeps its pair"
    );
    assert!(r.text.contains("name=\"confirm\" value=\"yes\""));
    assert_eq!(
        app.dump().await,
        before,
        "nothing changes before the confirmation"
    );

    let mut confirmed = form.to_vec();
    confirmed.push(("confirm", "yes"));
    let r = app
        .page(
            Some(&web),
            reqwest::Method::POST,
            "/admin/users",
            Some(&confirmed),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.text
            .contains("The password of val02 (validator in default)"),
        "{}",
        r.text
    );
    let moved = app.queued_second_to("val02", "QC_F_EGO_DYN").await;
    assert_eq!(moved, 2, "the 2 unstarted QC clips moved, as announced");
    // The overview tells who new items go to apart from who reviewed the task.
    let r = app
        .page(
            Some(&web),
            reqwest::Method::GET,
            &format!("/c/{CAMPAIGN}/admin"),
            None,
        )
        .await;
    assert!(
        r.text.contains("<th>QC_F_EGO_DYN</th><td class=\"pair\">val01 + val02</td><td class=\"pair\">val01 + val00 (1)</td>"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn the_queue_filters_lists_undecided_first_and_says_what_waits_in_stage_2() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app
        .import_clips(&["MC_F_EGO_STA", "QC_F_EGO_DYN"], 2, &["OE"])
        .await;
    // val00 decides the first MC clip; val01 passes it too, so its OE question opens.
    assert_eq!(app.pass(&c.v0, 1, &ids[0]).await.status, 201);
    assert_eq!(app.pass(&c.v1, 1, &ids[0]).await.status, 201);
    let web = app.login("val00").await;
    let get = |path: String| {
        let (app, web) = (&app, &web);
        async move {
            let r = app.page(Some(web), Method::GET, &path, None).await;
            assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
            r.text
        }
    };
    let page = get(format!("/c/{CAMPAIGN}/review/1")).await;
    // Undecided first, then the decided one with its verdict and when.
    let first_undecided = page.find(&format!(">{}</a>", ids[1])).unwrap();
    let decided = page.find(&format!(">{}</a>", ids[0])).unwrap();
    assert!(first_undecided < decided, "undecided rows come first");
    let today = tandem::clock::to_rfc3339(tandem::clock::now_micros())[..10].to_string();
    assert!(
        page.contains(&format!("<td>valid</td><td>{today} ")),
        "{page}"
    );
    // Filters.
    let only_qc = get(format!("/c/{CAMPAIGN}/review/1?task=QC_F_EGO_DYN")).await;
    assert!(!only_qc.contains(&format!(">{}</a>", ids[0])));
    assert!(only_qc.contains(&format!(">{}</a>", ids[2])));
    assert!(
        only_qc.contains("2 item(s) left out by the filter"),
        "{only_qc}"
    );
    let decided_only = get(format!("/c/{CAMPAIGN}/review/1?show=decided")).await;
    assert!(decided_only.contains(&format!(">{}</a>", ids[0])));
    assert!(!decided_only.contains(&format!(">{}</a>", ids[1])));
    // Stage 2 rows name the QA type in words.
    let s2 = get(format!("/c/{CAMPAIGN}/review/2")).await;
    assert!(s2.contains("OE · "), "{s2}");
    // Once Stage 1 is done, the page says what waits in Stage 2.
    for id in &ids[1..] {
        assert_eq!(app.pass(&c.v0, 1, id).await.status, 201);
    }
    let done = get(format!("/c/{CAMPAIGN}/review/1")).await;
    assert!(done.contains("You have decided everything in this stage."));
    assert!(
        done.contains("1 question(s) wait for you in Stage 2"),
        "{done}"
    );
}

#[tokio::test]
async fn a_save_that_completes_the_pair_says_it_is_final_and_offers_no_change() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&["MC_F_EGO_STA"], 2, &[]).await;
    assert_eq!(app.pass(&c.v1, 1, &ids[0]).await.status, 201);
    let web = app.login("val00").await;
    let r = app
        .page(
            Some(&web),
            Method::POST,
            &format!("/c/{CAMPAIGN}/review/1/{}", ids[0]),
            Some(&[("verdict", "valid"), ("rendered_at", "0")]),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let next = app
        .page(Some(&web), Method::GET, &r.location().unwrap(), None)
        .await;
    assert!(
        next.text.contains(&format!(
            "Saved: {} is valid (final: both verdicts are in).",
            ids[0]
        )),
        "{}",
        next.text
    );
    assert!(!next.text.contains("change-saved"));
    // The API says the same.
    let r = app.pass(&c.v1, 1, &ids[1]).await;
    assert_eq!(r.body["final"], false, "{}", r.text);
    let r = app.pass(&c.v0, 1, &ids[1]).await;
    assert_eq!(r.body["final"], true, "{}", r.text);
}

#[tokio::test]
async fn a_refused_setting_is_said_without_the_fields_name() {
    let app = spawn_app().await;
    cast(&app).await;
    app.import_clips(&[MC], 1, &[]).await;
    let web = app.login("admin1").await;
    let r = app
        .page(
            Some(&web),
            reqwest::Method::POST,
            &format!("/c/{CAMPAIGN}/admin/study/display"),
            Some(&[("display", "strip"), ("frames", "1")]),
        )
        .await;
    let to = r.location().expect("a redirect with a message");
    let page = app.page(Some(&web), reqwest::Method::GET, &to, None).await;
    assert!(
        page.text
            .contains("Not changed. A strip has 2 to 32 frames, not 1."),
        "{}",
        page.text
    );
    assert!(!page.text.contains("frames: "), "{}", page.text);
}

/// A campaign created with a lab's protocol shows its tasks as the protocol names them
/// (the GLIMPSE-like file: a category with one free attribute, no VGenST axes) and offers
/// "single-frame solvable" on its questions, which the file puts at L3.
#[tokio::test]
async fn review_pages_show_the_campaigns_own_protocol() {
    let app = spawn_app().await;
    let glimpse = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/protocols/glimpse.toml"
    ))
    .unwrap();
    let protocol = tandem::domain::protocol::parse(&glimpse).unwrap();
    app.store
        .create_campaign(CAMPAIGN, &protocol)
        .await
        .unwrap();
    let _c = cast(&app).await;
    let ids = app.import_clips(&["TRAJ"], 1, &["MC"]).await;
    let web = app.login("val00").await;
    let base = format!("/c/{CAMPAIGN}/review");
    // No clip review (real videos): the question is open from the start.
    let question = format!("{}_MC", ids[0]);
    let q = app
        .page(
            Some(&web),
            Method::GET,
            &format!("{base}/2/{question}"),
            None,
        )
        .await;
    assert!(
        q.text
            .contains("<p class=\"meta\">TRAJ · Trajectory Analysis · motion"),
        "{}",
        q.text
    );
    assert!(!q.text.contains("figural"), "{}", q.text);
    assert_eq!(q.status, StatusCode::OK, "{}", q.text);
    assert!(
        q.text.contains("value=\"single_frame_solvable\"")
            && !q.text.contains("(L3 questions only)"),
        "{}",
        q.text
    );
    // The reasons and their keys are the protocol's: GLIMPSE's question checks, not
    // VGenST's, and the legend names the keys they have.
    assert!(
        q.text.contains(r#"value="reverse_mismatch" data-key="4" data-label="Its reversed direction does not hold""#)
            && q.text.contains(r#"value="other" data-key="5" data-label="Other" data-only="every level" data-note="1""#)
            && !q.text.contains("incorrect_answer")
            && q.text.contains("<kbd>1</kbd>–<kbd>5</kbd> reasons"),
        "{}",
        q.text
    );
}

/// The admin creates a campaign from the campaigns page with a shipped protocol or a
/// pasted one; a broken protocol comes back with each problem's line and field and
/// creates nothing, and so does a name already taken.
#[tokio::test]
async fn the_admin_creates_a_campaign_with_a_protocol_from_the_campaigns_page() {
    let app = spawn_app().await;
    let _c = cast(&app).await;
    let web = app.login("admin1").await;
    let page = app
        .page(Some(&web), Method::GET, "/admin/campaigns", None)
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.text.contains("GLIMPSE-like") && page.text.contains("TUMTraffic-VideoQA-like"),
        "{}",
        page.text
    );
    let r = app
        .page(
            Some(&web),
            Method::POST,
            "/admin/campaigns",
            Some(&[("name", "glimpse"), ("protocol", "glimpse"), ("text", "")]),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    assert_eq!(r.location().unwrap(), "/c/glimpse/admin");
    let campaign = app.store.campaign("glimpse").await.unwrap();
    assert_eq!(campaign.taxonomy.name, "GLIMPSE-like");
    let overview = app
        .page(Some(&web), Method::GET, "/c/glimpse/admin", None)
        .await;
    assert!(
        overview.text.contains("FORENSIC") && overview.text.contains("Protocol: GLIMPSE-like"),
        "{}",
        overview.text
    );

    let broken = "[protocol]\nname = \"lab\"\nversion = 1\n\n[[task]]\ncode = \"A\"\nname = \"a\"\nqa_types = [\"YN\", \"MC\"]\n\n[[qa_type]]\ncode = \"YN\"\nname = \"yes/no\"\nlevel = \"L9\"\n\n[[reason]]\nstage = 1\ncode = \"bad\"\nlabel = \"Bad clip\"\nkey = 1\n\n[[reason]]\nstage = 2\ncode = \"wrong\"\nlabel = \"Wrong\"\nkey = 1\n";
    let r = app
        .page(
            Some(&web),
            Method::POST,
            "/admin/campaigns",
            Some(&[("name", "lab"), ("protocol", "own"), ("text", broken)]),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        r.text
            .contains("line 8, task[1].qa_types[2]: names QA type `MC`")
            && r.text
                .contains("line 13, qa_type[1].level: unknown level `L9`"),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("qa_types = [&#34;YN&#34;, &#34;MC&#34;]"),
        "the text comes back: {}",
        r.text
    );
    let r = app
        .page(
            Some(&web),
            Method::POST,
            "/admin/campaigns",
            Some(&[("name", "glimpse"), ("protocol", "vgenst"), ("text", "")]),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        r.text.contains("a campaign named `glimpse` exists"),
        "{}",
        r.text
    );
    let mut names = app.store.campaign_names().await.unwrap();
    names.sort();
    assert_eq!(names, ["default", "glimpse"]);
}

/// The item ids a list page links or names in its first column, in order.
fn first_column(html: &str) -> Vec<String> {
    html.split("<tr")
        .skip(1)
        .filter_map(|row| {
            let row = row.split_once("><td>")?.1;
            let cell = row.split("</td>").next()?;
            let text = match cell.find('>') {
                Some(i) if cell.starts_with("<a ") => cell[i + 1..].trim_end_matches("</a>"),
                _ => cell,
            };
            Some(text.to_string())
        })
        .collect()
}

/// The `href` of a link with this `rel` (the pager's), unescaped.
fn rel_link(html: &str, rel: &str) -> Option<String> {
    let at = html.find(&format!("rel=\"{rel}\""))?;
    let start = html[..at].rfind("href=\"")? + 6;
    let end = start + html[start..].find('"')?;
    Some(html[start..end].replace("&amp;", "&").replace("&#38;", "&"))
}

#[tokio::test]
async fn long_lists_page_by_the_row_beside_them_and_find_an_id_by_its_start() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 260, &["OE"]).await;
    assert_eq!(app.pass(&c.v0, 1, &ids[3]).await.status, 201);
    let get = |web: &Web, path: String| {
        let (app, web) = (&app, web.clone());
        async move {
            let r = app.page(Some(&web), Method::GET, &path, None).await;
            assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
            r.text
        }
    };
    // The validator's queue: the first page holds 250 rows, undecided first.
    let val = app.login("val00").await;
    let first = get(&val, format!("/c/{CAMPAIGN}/review/1")).await;
    let rows = first_column(&first);
    assert_eq!(rows.len(), 250);
    assert_eq!(rows[0], ids[0]);
    assert!(
        !rows.contains(&ids[3]),
        "the decided row waits for the last page"
    );
    assert!(first.contains("rows 1-250 of 260 · page 1 of 2"), "{first}");
    assert!(rel_link(&first, "prev").is_none());
    let next = rel_link(&first, "next").expect("a next page");
    let second = get(&val, next).await;
    let rows2 = first_column(&second);
    assert_eq!(rows2.len(), 10);
    assert!(
        second.contains("rows 251-260 of 260 · page 2 of 2"),
        "{second}"
    );
    // The same page by its number, as the pager's jump asks for it.
    let jumped = get(&val, format!("/c/{CAMPAIGN}/review/1?page=2")).await;
    assert_eq!(first_column(&jumped), rows2);
    assert!(
        jumped.contains("name=\"page\" min=\"1\" max=\"2\" placeholder=\"2\""),
        "{jumped}"
    );
    let beyond = get(&val, format!("/c/{CAMPAIGN}/review/1?page=9")).await;
    assert_eq!(
        first_column(&beyond).last(),
        Some(&ids[3]),
        "past the end: the last page"
    );
    let refused = app
        .page(
            Some(&val),
            Method::GET,
            &format!("/c/{CAMPAIGN}/review/1?page=0"),
            None,
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.text
    );
    assert!(
        refused.text.contains("is not a page number"),
        "{}",
        refused.text
    );
    assert_eq!(rows2.last(), Some(&ids[3]), "the decided row comes last");
    let mut all = [rows, rows2].concat();
    all.sort();
    assert_eq!(all, ids, "every row once");
    // The last page, straight from the first.
    // It holds the list's last 250 rows, so it overlaps the first page.
    let last = get(&val, rel_link(&first, "last").expect("a last page")).await;
    let last_rows = first_column(&last);
    assert_eq!(last_rows.len(), 250);
    assert_eq!(last_rows[0], ids[11]);
    assert_eq!(last_rows.last(), Some(&ids[3]));
    assert!(rel_link(&last, "next").is_none() && rel_link(&last, "last").is_none());
    // Back to the first page by its link.
    let back = get(&val, rel_link(&second, "prev").expect("a previous page")).await;
    assert_eq!(first_column(&back), first_column(&first));
    // An id prefix, kept by the filter form.
    let found = get(
        &val,
        format!(
            "/c/{CAMPAIGN}/review/1?id={}",
            &ids[259][..ids[259].len() - 1]
        ),
    )
    .await;
    assert_eq!(first_column(&found), ids[250..260].to_vec());
    assert!(found.contains("10 item(s)"), "{found}");
    // The admin's list reaches the 260th item by pages and by its id's start.
    let admin = app.login("admin1").await;
    let list = get(
        &admin,
        format!("/c/{CAMPAIGN}/admin/items?stage=1&show=open"),
    )
    .await;
    assert_eq!(first_column(&list).len(), 250);
    let next = rel_link(&list, "next").expect("a next page");
    assert!(
        next.contains("stage=1") && next.contains("show=open"),
        "{next}"
    );
    let last = get(&admin, next).await;
    assert_eq!(first_column(&last).last(), Some(&ids[259]));
    assert!(last.contains("rows 251-260 of 260 · page 2 of 2"), "{last}");
    let jumped = get(
        &admin,
        format!("/c/{CAMPAIGN}/admin/items?stage=1&show=open&page=2"),
    )
    .await;
    assert_eq!(first_column(&jumped), first_column(&last));
    let found = get(
        &admin,
        format!(
            "/c/{CAMPAIGN}/admin/items?stage=1&show=open&id={}",
            ids[259]
        ),
    )
    .await;
    assert_eq!(first_column(&found), vec![ids[259].clone()]);
    // A prefix no id has is said; one that no id could have is named.
    let none = get(&admin, format!("/c/{CAMPAIGN}/admin/items?stage=1&id=ZZ")).await;
    assert!(
        first_column(&none).is_empty() && none.contains("0 item(s)"),
        "{none}"
    );
    let bad = app
        .page(
            Some(&admin),
            Method::GET,
            &format!("/c/{CAMPAIGN}/admin/items?id=a%20b"),
            None,
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text);
    assert!(bad.text.contains("id"), "{}", bad.text);
    // The audit finds a clip by the start of its id, and a question by its own.
    let audit = get(
        &admin,
        format!(
            "/c/{CAMPAIGN}/admin/audit?id={}",
            &ids[259][..ids[259].len() - 1]
        ),
    )
    .await;
    for id in &ids[250..260] {
        assert!(audit.contains(&format!(">{id}</a>")), "{id} in the audit");
    }
    assert!(!audit.contains(&format!(">{}</a>", ids[249])));
    let question = format!("{}_OE", ids[3]);
    assert_eq!(app.pass(&c.v1, 1, &ids[3]).await.status, 201);
    assert_eq!(app.pass(&c.v0, 2, &question).await.status, 201);
    let audit = get(&admin, format!("/c/{CAMPAIGN}/admin/audit?id={question}")).await;
    assert!(audit.contains(&format!("<td>{question}</td>")), "{audit}");
    assert!(
        !audit.contains(&format!("<td>{}</td>", ids[3])),
        "the clip's own events do not start with the question's id: {audit}"
    );
}

/// The rows of a page's table body, each as its whole text.
fn body_rows(html: &str) -> Vec<String> {
    let Some(body) = html.split("<tbody>").nth(1) else {
        return Vec::new();
    };
    let body = body.split("</tbody>").next().unwrap_or_default();
    body.split("<tr>")
        .skip(1)
        .map(|r| r.trim().trim_end_matches("</tr>").to_string())
        .collect()
}

#[tokio::test]
async fn the_audit_pages_by_the_event_beside_it_and_shows_each_event_once() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    // One import: 260 events at the same time, which a page must still cut between.
    let ids = app.import_clips(&[MC], 260, &["OE"]).await;
    for id in &ids[..30] {
        assert_eq!(app.pass(&c.v0, 1, id).await.status, 201);
        assert_eq!(app.pass(&c.v1, 1, id).await.status, 201);
    }
    // 260 imports, 60 verdicts, 30 outcomes.
    let total = 350;
    let admin = app.login("admin1").await;
    let get = |path: String| {
        let (app, web) = (&app, admin.clone());
        async move {
            let r = app.page(Some(&web), Method::GET, &path, None).await;
            assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
            r.text
        }
    };
    // Walks a list by one link, from a page, collecting its rows.
    let walk = |start: String, rel: &'static str| {
        let get = &get;
        async move {
            let mut pages = Vec::new();
            let mut next = Some(start);
            while let Some(path) = next {
                let page = get(path).await;
                next = rel_link(&page, rel);
                pages.push(body_rows(&page));
                assert!(pages.len() <= 3, "a list of {total} events in two pages");
            }
            pages
        }
    };
    let first = get(format!("/c/{CAMPAIGN}/admin/audit")).await;
    assert!(first.contains("rows 1-200 of 350 · page 1 of 2"), "{first}");
    let forward = walk(format!("/c/{CAMPAIGN}/admin/audit"), "next").await;
    assert_eq!(
        forward.iter().map(Vec::len).collect::<Vec<_>>(),
        vec![200, 150]
    );
    let newest_first = forward.concat();
    let mut once = newest_first.clone();
    once.sort();
    once.dedup();
    assert_eq!(once.len(), total, "each event once");
    assert!(
        newest_first[0].contains("<td>outcome</td>"),
        "{}",
        newest_first[0]
    );
    assert!(newest_first[total - 1].contains("<td>import</td>"));
    // Back from the last page: the same events, the same pages.
    let last = rel_link(&first, "last").expect("a last page");
    let mut backward = walk(last, "prev").await;
    backward.reverse();
    assert_eq!(backward.concat(), newest_first);
    // Filtered, the trail reads in time order, paged the other way round.
    let common = ids[0]
        .char_indices()
        .take_while(|(i, ch)| ids.iter().all(|id| id[*i..].starts_with(*ch)))
        .map(|(_, ch)| ch)
        .collect::<String>();
    assert!(!common.is_empty());
    let filtered = walk(format!("/c/{CAMPAIGN}/admin/audit?id={common}"), "next").await;
    let mut in_time_order = filtered.concat();
    in_time_order.reverse();
    assert_eq!(in_time_order, newest_first);
    // A page position that is not one is named.
    let bad = app
        .page(
            Some(&admin),
            Method::GET,
            &format!("/c/{CAMPAIGN}/admin/audit?after=12.x"),
            None,
        )
        .await;
    assert!(
        bad.text.contains("12.x") && bad.text.contains("TIME.KIND.ROW"),
        "{}",
        bad.text
    );
}

#[tokio::test]
async fn the_author_finds_a_split_by_the_start_of_its_id() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 3, &["OE"]).await;
    for id in &ids[..2] {
        assert_eq!(app.pass(&c.v0, 1, id).await.status, 201);
        assert_eq!(app.reject(&c.v1, 1, id, "prompt_drift").await.status, 201);
    }
    let web = app.login("author1").await;
    let get = |path: String| {
        let (app, web) = (&app, &web);
        async move { app.page(Some(web), Method::GET, &path, None).await }
    };
    let all = get(format!("/c/{CAMPAIGN}/splits/1")).await;
    assert_eq!(first_column(&all.text), ids[..2].to_vec());
    assert!(all.text.contains("<span>2 item(s)</span>"), "{}", all.text);
    let one = get(format!("/c/{CAMPAIGN}/splits/1?id={}", ids[1])).await;
    assert_eq!(first_column(&one.text), vec![ids[1].clone()]);
    assert!(
        one.text.contains("2 waiting for an author."),
        "{}",
        one.text
    );
    let bad = get(format!("/c/{CAMPAIGN}/splits/1?after=u:{}", ids[2])).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text);
    assert!(bad.text.contains(&ids[2]), "{}", bad.text);
}

/// What axe-core found on the pages (the workspace walk): no table header without a
/// name, no two navigation regions of one name, and buttons named with the text they
/// show (the player's Home and End).
#[tokio::test]
async fn headers_regions_and_buttons_have_the_names_they_show() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&[MC], 2, &["OE"]).await;
    app.pass(&c.v0, 1, &ids[0]).await;
    let admin = app.login("admin1").await;
    let val = app.login("val00").await;
    let mut pages = Vec::new();
    for path in [
        "stats",
        "admin/participants",
        "admin/calibration",
        "admin/study",
        "baseline/results",
        "admin/items?stage=1",
        "admin/audit",
    ] {
        let r = app
            .page(
                Some(&admin),
                Method::GET,
                &format!("/c/{CAMPAIGN}/{path}"),
                None,
            )
            .await;
        pages.push((path.to_string(), r));
    }
    for path in [format!("review/1/{}", ids[1]), "review/1".to_string()] {
        let r = app
            .page(
                Some(&val),
                Method::GET,
                &format!("/c/{CAMPAIGN}/{path}"),
                None,
            )
            .await;
        pages.push((path, r));
    }
    for (path, r) in &pages {
        if r.status != StatusCode::OK {
            continue;
        }
        let t = &r.text;
        assert!(!t.contains("<th></th>"), "{path}: a header without a name");
        let navs: Vec<&str> = t
            .match_indices("<nav ")
            .filter_map(|(i, _)| t[i..].split_once('>').map(|(tag, _)| tag))
            .collect();
        let unique: std::collections::BTreeSet<&&str> = navs.iter().collect();
        assert_eq!(unique.len(), navs.len(), "{path}: {navs:?}");
    }
    let (_, item) = &pages[pages.len() - 2];
    assert_eq!(item.status, StatusCode::OK, "{}", item.text);
    for (label, shown) in [("Home: first frame", "Home"), ("End: last frame", "End")] {
        assert!(
            item.text
                .contains(&format!("aria-label=\"{label}\"><kbd>{shown}</kbd>")),
            "{label}"
        );
    }
    let checked = pages
        .iter()
        .filter(|(_, r)| r.status == StatusCode::OK)
        .count();
    assert!(checked >= 6, "{checked} pages checked");
}
