//! Accounts per campaign: one server runs a VGenST and a GLIMPSE campaign for two teams.
//! A person holds one role per campaign (validator, author or participant), reaches
//! only the campaigns they hold a role in, and may hold different roles in different
//! campaigns; admins are server-wide.

use crate::helpers::*;
use reqwest::{Method, StatusCode};
use tandem::domain::Role;
use tandem::error::Error;

const GLIMPSE: &str = "glimpse";

/// The default campaign (VGenST) with val00, val01 and author1, and a GLIMPSE-like
/// campaign with its own team: gval0, gval1 and gauthor. Both have clips.
struct Teams {
    v0: String,
    g0: String,
    author: String,
    gauthor: String,
    admin: String,
}

async fn two_teams(app: &TestApp) -> Teams {
    let c = cast(app).await;
    app.import_clips(&["MC_F_EGO_STA"], 2, &["OE"]).await;
    let text = tandem::domain::protocol::shipped("glimpse").unwrap();
    let protocol = tandem::domain::protocol::parse(text).unwrap();
    app.store.create_campaign(GLIMPSE, &protocol).await.unwrap();
    let g0 = app.member("gval0", Role::Validator, GLIMPSE, Some(0)).await;
    app.member("gval1", Role::Validator, GLIMPSE, Some(1)).await;
    let gauthor = app.member("gauthor", Role::Author, GLIMPSE, None).await;
    let manifest =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/protocols/glimpse.jsonl");
    tandem::app::import_manifest(&app.store, &app.config, GLIMPSE, &manifest)
        .await
        .unwrap();
    Teams {
        v0: c.v0,
        g0,
        author: c.author,
        gauthor,
        admin: c.admin,
    }
}

async fn campaigns(app: &TestApp, token: &str) -> Vec<String> {
    let r = app.get("/api/v1/campaigns", token).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    serde_json::from_value(r.body["campaigns"].clone()).unwrap()
}

#[tokio::test]
async fn each_team_reaches_its_own_campaign_only() {
    let app = spawn_app().await;
    let t = two_teams(&app).await;
    assert_eq!(campaigns(&app, &t.v0).await, ["default"]);
    assert_eq!(campaigns(&app, &t.g0).await, [GLIMPSE]);
    assert_eq!(campaigns(&app, &t.admin).await, ["default", GLIMPSE]);

    // Each validator reviews their own campaign, and no other.
    let own = app
        .get(&format!("/api/v1/campaigns/{GLIMPSE}/queue/2"), &t.g0)
        .await;
    assert_eq!(own.status, StatusCode::OK, "{}", own.text);
    assert!(
        own.body["total"].as_i64().unwrap() > 0,
        "gval0 has GLIMPSE questions: {}",
        own.text
    );
    for (token, path) in [
        (&t.g0, "/api/v1/campaigns/default/queue/1".to_string()),
        (&t.v0, format!("/api/v1/campaigns/{GLIMPSE}/queue/2")),
        (&t.v0, format!("/api/v1/campaigns/{GLIMPSE}/protocol")),
        (&t.gauthor, "/api/v1/campaigns/default/splits/1".to_string()),
        (&t.author, format!("/api/v1/campaigns/{GLIMPSE}/stats")),
        // A campaign that does not exist answers as one that is not theirs.
        (&t.g0, "/api/v1/campaigns/nowhere/queue/1".to_string()),
    ] {
        let r = app.get(&path, token).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{path}: {}", r.text);
        assert_eq!(r.body["error"], "forbidden");
    }
    let r = app
        .get(&format!("/api/v1/campaigns/{GLIMPSE}/splits/2"), &t.gauthor)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);

    // A verdict on the other campaign's item is refused, and nothing is written.
    let before = app.count("SELECT COUNT(*) FROM decisions").await;
    let r = app
        .call(
            Method::POST,
            &format!("/api/v1/campaigns/{GLIMPSE}/items/2/G_TRAJ_0001_MC/verdict"),
            Some(&t.v0),
            Some(serde_json::json!({"verdict": "valid"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    assert_eq!(app.count("SELECT COUNT(*) FROM decisions").await, before);

    // The pages say the same: the home page leads each person to their own campaign.
    let web = app.login("gval0").await;
    let home = app.page(Some(&web), Method::GET, "/", None).await;
    assert_eq!(home.status, StatusCode::SEE_OTHER);
    assert_eq!(home.location().as_deref(), Some("/c/glimpse/review/2"));
    let r = app
        .page(Some(&web), Method::GET, "/c/default/review/1", None)
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(
        r.text.contains("You hold no role in this campaign."),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn one_person_holds_a_role_in_each_of_two_campaigns() {
    let app = spawn_app().await;
    two_teams(&app).await;
    let lead = app.member("lead", Role::Author, "default", None).await;
    app.store
        .set_role("lead", GLIMPSE, Some(Role::Author))
        .await
        .unwrap();
    assert_eq!(campaigns(&app, &lead).await, ["default", GLIMPSE]);
    for path in [
        "/api/v1/campaigns/default/splits/1".to_string(),
        format!("/api/v1/campaigns/{GLIMPSE}/splits/2"),
    ] {
        let r = app.get(&path, &lead).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.text);
    }
    let me = app.get("/api/v1/me", &lead).await;
    assert_eq!(me.body["admin"], false);
    assert_eq!(
        me.body["roles"],
        serde_json::json!([
            {"campaign": "default", "role": "author"},
            {"campaign": GLIMPSE, "role": "author"}
        ])
    );
    let web = app.login("lead").await;
    let home = app.page(Some(&web), Method::GET, "/", None).await;
    assert_eq!(home.status, StatusCode::OK);
    assert!(
        home.text.contains("href=\"/c/default/splits/1\"")
            && home.text.contains("href=\"/c/glimpse/splits/2\""),
        "{}",
        home.text
    );

    // A role changes at once on this server: as a participant of the default campaign,
    // lead no longer reads its splits; with no role there, not even its name.
    app.store
        .set_role("lead", "default", Some(Role::Participant))
        .await
        .unwrap();
    let r = app.get("/api/v1/campaigns/default/splits/1", &lead).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    assert_eq!(
        r.body["detail"],
        "A participant of this campaign may not use this."
    );
    assert_eq!(campaigns(&app, &lead).await, [GLIMPSE]);
    app.store.set_role("lead", "default", None).await.unwrap();
    let r = app.get("/api/v1/campaigns/default/splits/1", &lead).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.text);
    // Then lead joins the default campaign's pool: its validator.
    app.store
        .add_to_pool(
            "lead",
            tandem::store::accounts::PoolPlacement {
                campaign: "default".into(),
                index: 2,
            },
        )
        .await
        .unwrap();
    let r = app.get("/api/v1/campaigns/default/queue/1", &lead).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
}

#[tokio::test]
async fn a_second_role_in_one_campaign_and_other_misuses_are_refused() {
    let app = spawn_app().await;
    two_teams(&app).await;
    let before = app.dump().await;
    let refused = [
        // A validator keeps their pool place.
        app.store
            .set_role("gval0", GLIMPSE, Some(Role::Author))
            .await,
        app.store.set_role("gval0", GLIMPSE, None).await,
        // Validators join through the pool, with an index.
        app.store
            .set_role("author1", "default", Some(Role::Validator))
            .await,
        // Admins are server-wide.
        app.store
            .set_role("admin1", "default", Some(Role::Author))
            .await,
        app.store
            .set_role("gauthor", GLIMPSE, Some(Role::Admin))
            .await,
        app.store
            .set_role("nobody", GLIMPSE, Some(Role::Author))
            .await,
        app.store
            .set_role("gauthor", "nowhere", Some(Role::Author))
            .await,
        // An author of the campaign cannot also join its pool.
        app.store
            .add_to_pool(
                "gauthor",
                tandem::store::accounts::PoolPlacement {
                    campaign: GLIMPSE.into(),
                    index: 5,
                },
            )
            .await,
    ];
    for (i, r) in refused.iter().enumerate() {
        assert!(
            matches!(
                r,
                Err(Error::Conflict(_)
                    | Error::Field { .. }
                    | Error::Invalid(_)
                    | Error::NotFound(_))
            ),
            "misuse {i} was not refused: {r:?}"
        );
    }
    assert!(
        matches!(&refused[0], Err(Error::Conflict(m)) if m.contains("validator pool")),
        "{:?}",
        refused[0]
    );
    assert!(
        matches!(&refused[7], Err(Error::Conflict(m)) if m.contains("one role per campaign")),
        "{:?}",
        refused[7]
    );
    // A new account names its campaign (an admin none).
    let hash = tandem::auth::hash_password(PASSWORD).unwrap();
    for (role, campaign, index) in [
        (Role::Author, None, None),
        (Role::Admin, Some("default".to_string()), None),
        (Role::Author, Some("default".to_string()), Some(3)),
        (Role::Validator, Some("default".to_string()), None),
    ] {
        let r = app
            .store
            .add_user("newbie", role, &hash, campaign, index)
            .await;
        assert!(matches!(r, Err(Error::Field { .. })), "{role}: {r:?}");
    }
    assert_eq!(app.dump().await, before, "nothing was written");
}

#[tokio::test]
async fn the_accounts_page_shows_and_sets_each_campaigns_roles() {
    let app = spawn_app().await;
    two_teams(&app).await;
    app.member("lead", Role::Author, "default", None).await;
    let web = app.login("admin1").await;
    let page = app
        .page(Some(&web), Method::GET, "/admin/users", None)
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.text.contains("validator #0 in glimpse"),
        "{}",
        page.text
    );
    assert!(page.text.contains("author in default"), "{}", page.text);
    let r = app
        .page(
            Some(&web),
            Method::POST,
            "/admin/roles",
            Some(&[
                ("name", "lead"),
                ("campaign", GLIMPSE),
                ("role", "participant"),
            ]),
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let page = app
        .page(Some(&web), Method::GET, "/admin/users", None)
        .await;
    assert!(
        page.text
            .contains("author in default, participant in glimpse"),
        "{}",
        page.text
    );
    assert!(
        page.text.contains("lead is a participant of glimpse."),
        "{}",
        page.text
    );
    // A refusal is said on the page, and nothing changes.
    let r = app
        .page(
            Some(&web),
            Method::POST,
            "/admin/roles",
            Some(&[("name", "gval0"), ("campaign", GLIMPSE), ("role", "none")]),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text.contains("validator pool"), "{}", r.text);
    let gval0 = app.store.user_by_name("gval0").await.unwrap().unwrap();
    assert_eq!(gval0.describe(), "validator in glimpse");
    // A validator of one campaign is placed in another's pool from the same page.
    assert!(page.text.contains("id=\"pool-form\""), "{}", page.text);
    let place = |index: &'static str| {
        let (app, web) = (&app, web.clone());
        async move {
            app.page(
                Some(&web),
                Method::POST,
                "/admin/pool",
                Some(&[("name", "val00"), ("campaign", GLIMPSE), ("index", index)]),
            )
            .await
        }
    };
    let r = place("two").await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        r.text.contains("pool index `two` is not a number"),
        "{}",
        r.text
    );
    let r = place("2").await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let val00 = app.store.user_by_name("val00").await.unwrap().unwrap();
    assert_eq!(
        val00.role_in(app.store.campaign(GLIMPSE).await.unwrap().id),
        Some(Role::Validator)
    );
    let page = app
        .page(Some(&web), Method::GET, "/admin/users", None)
        .await;
    assert!(
        page.text
            .contains("val00 is a validator of glimpse, at pool index 2."),
        "{}",
        page.text
    );
    assert!(
        page.text.contains("validator #2 in glimpse"),
        "{}",
        page.text
    );
    // A place that re-pairs tasks of the other campaign waits for a confirmation
    // (task 1's items are reviewed by val01 + val00; a third validator changes that).
    app.import_clips(&["QC_F_EGO_DYN"], 1, &[]).await;
    let form = [("name", "gval0"), ("campaign", "default"), ("index", "2")];
    let asked = app
        .page(Some(&web), Method::POST, "/admin/pool", Some(&form))
        .await;
    assert_eq!(asked.status, StatusCode::OK, "{}", asked.text);
    assert!(
        asked.text.contains("action=\"/admin/pool\"")
            && asked.text.contains("Place gval0 and re-pair these tasks"),
        "{}",
        asked.text
    );
    let gval0 = app.store.user_by_name("gval0").await.unwrap().unwrap();
    assert_eq!(gval0.describe(), "validator in glimpse", "nothing yet");
    let confirmed = [form.to_vec(), vec![("confirm", "yes")]].concat();
    let r = app
        .page(Some(&web), Method::POST, "/admin/pool", Some(&confirmed))
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text);
    let gval0 = app.store.user_by_name("gval0").await.unwrap().unwrap();
    let default = app.store.campaign("default").await.unwrap();
    assert_eq!(gval0.role_in(default.id), Some(Role::Validator));
}

/// An admin manages accounts through the API as through the accounts page: creates
/// them (a password made and given once), gives and takes roles, issues and revokes
/// tokens; a placement that moves work waits for a confirmation.
#[tokio::test]
async fn an_admin_manages_accounts_and_tokens_through_the_api() {
    use serde_json::json;
    let app = spawn_app().await;
    let c = cast(&app).await;
    // Task 1 (QC) is reviewed by val01 + val00; a third validator changes its pair.
    app.import_clips(&["MC_F_EGO_STA", "QC_F_EGO_DYN"], 1, &[])
        .await;
    let r = app
        .call(
            Method::POST,
            "/api/v1/users",
            Some(&c.admin),
            Some(json!({"name": "writer", "role": "author", "campaign": CAMPAIGN})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert_eq!(r.body["user"]["name"], "writer");
    assert!(
        r.body["password"].as_str().is_some_and(|p| p.len() >= 12),
        "{}",
        r.text
    );
    // The same name again: refused.
    let again = app
        .call(
            Method::POST,
            "/api/v1/users",
            Some(&c.admin),
            Some(json!({"name": "writer", "role": "author", "campaign": CAMPAIGN})),
        )
        .await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.text);
    // A validator placed where the pool's default pairs change: asked, then done.
    let placing = json!({"name": "val02", "role": "validator", "campaign": CAMPAIGN, "index": 2, "password": PASSWORD});
    let r = app
        .call(
            Method::POST,
            "/api/v1/users",
            Some(&c.admin),
            Some(placing.clone()),
        )
        .await;
    assert_eq!(r.status, StatusCode::CONFLICT, "{}", r.text);
    assert!(
        r.body["detail"].as_str().unwrap().contains("confirm"),
        "{}",
        r.text
    );
    assert!(app.store.user_by_name("val02").await.unwrap().is_none());
    let mut confirmed = placing;
    confirmed["confirm"] = json!(true);
    let r = app
        .call(
            Method::POST,
            "/api/v1/users",
            Some(&c.admin),
            Some(confirmed),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    assert!(
        r.body.get("password").is_none(),
        "a typed password is not sent back"
    );
    // A token for the new author works at once; revoked, it does not.
    let r = app
        .call(
            Method::POST,
            "/api/v1/users/writer/tokens",
            Some(&c.admin),
            Some(json!({"label": "notebook"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.text);
    let token = r.body["token"].as_str().unwrap().to_string();
    let me = app.get("/api/v1/me", &token).await;
    assert_eq!(
        me.body["roles"],
        json!([{"campaign": CAMPAIGN, "role": "author"}])
    );
    // Its role taken away, then given as participant.
    let role = format!("/api/v1/users/writer/roles/{CAMPAIGN}");
    let r = app
        .call(
            Method::PUT,
            &role,
            Some(&c.admin),
            Some(json!({"role": null})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["roles"], json!([]));
    let splits = format!("/api/v1/campaigns/{CAMPAIGN}/splits/1");
    assert_eq!(app.get(&splits, &token).await.status, StatusCode::FORBIDDEN);
    let r = app
        .call(
            Method::PUT,
            &role,
            Some(&c.admin),
            Some(json!({"role": "participant"})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text);
    assert_eq!(r.body["roles"][0]["role"], "participant");
    let r = app
        .call(
            Method::DELETE,
            "/api/v1/users/writer/tokens",
            Some(&c.admin),
            None,
        )
        .await;
    assert_eq!(
        r.body,
        json!({"user": "writer", "revoked": 1}),
        "{}",
        r.text
    );
    assert_eq!(
        app.get("/api/v1/me", &token).await.status,
        StatusCode::UNAUTHORIZED
    );
    // None of it for anyone else.
    for t in [&c.author, &c.v0] {
        let r = app
            .call(
                Method::POST,
                "/api/v1/users",
                Some(t),
                Some(json!({"name": "x", "role": "admin"})),
            )
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN);
    }
}
