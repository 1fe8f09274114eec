//! The authorization matrix: every route (pages, API, clips, static files), as every
//! role and as anonymous.

use crate::helpers::*;
use reqwest::{Method, StatusCode};
use serde_json::json;
use tandem::domain::Role;
use tandem::web::{Kind, route_table};

/// Who may use each route. A new route must be added here, or
/// `every_route_is_in_the_matrix` fails.
const MATRIX: &[(&str, &str, &str)] = &[
    ("GET", "/healthz", "public"),
    ("GET", "/readyz", "public"),
    ("GET", "/metrics", "admin"),
    ("GET", "/api/v1/openapi.json", "public"),
    ("GET", "/api/v1/docs", "public"),
    ("GET", "/api/v1/docs/{*file}", "public"),
    ("GET", "/static/{hash}/{file}", "public"),
    ("GET", "/api/v1/me", "signed_in"),
    ("POST", "/api/v1/users", "admin"),
    ("PUT", "/api/v1/users/{name}/roles/{campaign}", "admin"),
    ("POST", "/api/v1/users/{name}/tokens", "admin"),
    ("DELETE", "/api/v1/users/{name}/tokens", "admin"),
    (
        "POST",
        "/api/v1/campaigns/{campaign}/calibration-scores/{validator}/rounds",
        "admin",
    ),
    (
        "DELETE",
        "/api/v1/campaigns/{campaign}/calibration-scores/{validator}/pause",
        "admin",
    ),
    ("POST", "/api/v1/campaigns/{campaign}/known-copies", "admin"),
    ("GET", "/api/v1/campaigns/{campaign}/known-copies", "admin"),
    ("PUT", "/api/v1/campaigns/{campaign}/settings", "admin"),
    ("PUT", "/api/v1/campaigns/{campaign}/study/display", "admin"),
    ("GET", "/admin/campaigns", "admin"),
    ("POST", "/admin/roles", "admin"),
    ("POST", "/admin/pool", "admin"),
    ("POST", "/admin/campaigns", "admin"),
    ("GET", "/api/v1/users", "admin"),
    ("POST", "/api/v1/users/{name}/disable", "admin"),
    ("POST", "/api/v1/users/{name}/enable", "admin"),
    ("GET", "/api/v1/campaigns", "admin validator author"),
    (
        "GET",
        "/api/v1/campaigns/{campaign}/queue/{stage}",
        "validator",
    ),
    (
        "GET",
        "/api/v1/campaigns/{campaign}/queue/{stage}/items",
        "validator",
    ),
    (
        "GET",
        "/api/v1/campaigns/{campaign}/items/{stage}/{item}",
        "validator",
    ),
    (
        "POST",
        "/api/v1/campaigns/{campaign}/items/{stage}/{item}/verdict",
        "validator",
    ),
    (
        "POST",
        "/api/v1/campaigns/{campaign}/items/{stage}/{item}/blind-answer",
        "validator",
    ),
    (
        "GET",
        "/api/v1/campaigns/{campaign}/keys-in-doubt",
        "author admin",
    ),
    (
        "GET",
        "/api/v1/campaigns/{campaign}/splits/{stage}",
        "author admin",
    ),
    (
        "GET",
        "/api/v1/campaigns/{campaign}/splits/{stage}/{item}",
        "author admin",
    ),
    (
        "POST",
        "/api/v1/campaigns/{campaign}/splits/{stage}/{item}/resolution",
        "author",
    ),
    (
        "POST",
        "/api/v1/campaigns/{campaign}/questions/{question}/withdrawal",
        "author",
    ),
    (
        "GET",
        "/api/v1/campaigns/{campaign}/protocol",
        "admin validator author",
    ),
    ("GET", "/api/v1/campaigns/{campaign}/sampling", "admin"),
    ("POST", "/api/v1/campaigns/{campaign}/sampling/run", "admin"),
    ("GET", "/api/v1/campaigns/{campaign}/tasks", "admin"),
    (
        "PUT",
        "/api/v1/campaigns/{campaign}/tasks/{task}/pair",
        "admin",
    ),
    (
        "DELETE",
        "/api/v1/campaigns/{campaign}/tasks/{task}/pair",
        "admin",
    ),
    ("GET", "/api/v1/campaigns/{campaign}/progress", "admin"),
    ("GET", "/api/v1/campaigns/{campaign}/export/{kind}", "admin"),
    ("POST", "/api/v1/campaigns/{campaign}/imports", "admin"),
    (
        "POST",
        "/api/v1/campaigns/{campaign}/imports/folder",
        "admin",
    ),
    (
        "POST",
        "/api/v1/campaigns/{campaign}/exports/retained",
        "admin",
    ),
    (
        "POST",
        "/api/v1/campaigns/{campaign}/exports/paper",
        "admin",
    ),
    ("GET", "/api/v1/campaigns/{campaign}/jobs", "admin"),
    ("GET", "/api/v1/campaigns/{campaign}/jobs/{job}", "admin"),
    ("DELETE", "/api/v1/campaigns/{campaign}/jobs/{job}", "admin"),
    (
        "GET",
        "/api/v1/campaigns/{campaign}/jobs/{job}/result",
        "admin",
    ),
    ("GET", "/api/v1/campaigns/{campaign}/stats", "author admin"),
    (
        "GET",
        "/api/v1/campaigns/{campaign}/calibration",
        "validator",
    ),
    (
        "GET",
        "/api/v1/campaigns/{campaign}/calibration/{stage}/{item}",
        "validator",
    ),
    (
        "POST",
        "/api/v1/campaigns/{campaign}/calibration/{stage}/{item}/verdict",
        "validator",
    ),
    (
        "GET",
        "/api/v1/campaigns/{campaign}/calibration-scores",
        "admin",
    ),
    ("GET", "/api/v1/campaigns/{campaign}/regeneration", "admin"),
    ("GET", "/api/v1/campaigns/{campaign}/audit", "admin"),
    ("GET", "/c/{campaign}/calibration", "validator"),
    (
        "GET",
        "/c/{campaign}/calibration/{stage}/{item}",
        "validator",
    ),
    (
        "POST",
        "/c/{campaign}/calibration/{stage}/{item}",
        "validator",
    ),
    ("GET", "/c/{campaign}/admin/calibration", "admin"),
    ("GET", "/c/{campaign}/admin/sampling", "admin"),
    ("POST", "/c/{campaign}/admin/sampling/run", "admin"),
    ("POST", "/c/{campaign}/admin/calibration/reset", "admin"),
    ("POST", "/c/{campaign}/admin/calibration/lift", "admin"),
    ("POST", "/c/{campaign}/admin/calibration/copy", "admin"),
    ("POST", "/c/{campaign}/admin/calibration/mark", "admin"),
    ("POST", "/c/{campaign}/admin/settings", "admin"),
    ("GET", "/c/{campaign}/admin/audit", "admin"),
    ("GET", "/c/{campaign}/admin/items", "admin"),
    ("GET", "/c/{campaign}/stats", "author admin"),
    ("GET", "/c/{campaign}/stats/{file}", "author admin"),
    ("GET", "/login", "public"),
    ("POST", "/login", "public"),
    ("GET", "/", "signed_in"),
    ("GET", "/c/{campaign}/review/{stage}", "validator"),
    ("GET", "/c/{campaign}/review/{stage}/{item}", "validator"),
    ("POST", "/c/{campaign}/review/{stage}/{item}", "validator"),
    (
        "POST",
        "/c/{campaign}/review/{stage}/{item}/blind",
        "validator",
    ),
    ("GET", "/c/{campaign}/splits/{stage}", "author admin"),
    ("GET", "/c/{campaign}/splits/{stage}/{item}", "author admin"),
    ("POST", "/c/{campaign}/splits/{stage}/{item}", "author"),
    ("GET", "/c/{campaign}/questions/{question}", "author admin"),
    (
        "POST",
        "/c/{campaign}/questions/{question}/withdrawal",
        "author",
    ),
    ("GET", "/c/{campaign}/admin", "admin"),
    ("GET", "/c/{campaign}/admin/pairs", "admin"),
    ("POST", "/c/{campaign}/admin/pairs", "admin"),
    ("GET", "/admin/users", "admin"),
    ("POST", "/admin/users", "admin"),
    ("POST", "/admin/users/{name}/token", "admin"),
    ("POST", "/admin/users/{name}/revoke-tokens", "admin"),
    ("POST", "/admin/users/{name}/{action}", "admin"),
    ("GET", "/c/{campaign}/admin/import", "admin"),
    ("POST", "/c/{campaign}/admin/import/upload", "admin"),
    ("POST", "/c/{campaign}/admin/import/folder", "admin"),
    ("GET", "/c/{campaign}/admin/exports", "admin"),
    ("GET", "/c/{campaign}/admin/exports/{file}", "admin"),
    ("GET", "/api/v1/campaigns/{campaign}/study", "admin"),
    ("GET", "/api/v1/studies", "participant"),
    (
        "GET",
        "/api/v1/studies/{study}/sets/{position}",
        "participant",
    ),
    (
        "POST",
        "/api/v1/studies/{study}/sets/{position}",
        "participant",
    ),
    ("GET", "/study/{study}", "participant"),
    ("GET", "/study/{study}/{position}", "participant"),
    ("POST", "/study/{study}/{position}", "participant"),
    ("GET", "/c/{campaign}/admin/study", "admin"),
    ("POST", "/c/{campaign}/admin/study/display", "admin"),
    ("GET", "/c/{campaign}/study/results", "author admin"),
    ("GET", "/c/{campaign}/baseline/results", "author admin"),
    ("GET", "/study/m/{token}", "participant"),
    ("GET", "/baseline/m/{token}", "baseline"),
    ("GET", "/baseline/{baseline}", "baseline"),
    ("POST", "/baseline/{baseline}/begin", "baseline"),
    ("GET", "/baseline/{baseline}/{seq}", "baseline"),
    ("POST", "/baseline/{baseline}/{seq}", "baseline"),
    ("GET", "/api/v1/baselines", "baseline"),
    ("GET", "/api/v1/baselines/{baseline}", "baseline"),
    ("POST", "/api/v1/baselines/{baseline}/begin", "baseline"),
    (
        "GET",
        "/api/v1/baselines/{baseline}/questions/{seq}",
        "baseline",
    ),
    (
        "POST",
        "/api/v1/baselines/{baseline}/questions/{seq}",
        "baseline",
    ),
    ("PUT", "/api/v1/campaigns/{campaign}/baseline", "admin"),
    ("GET", "/api/v1/campaigns/{campaign}/baseline", "admin"),
    // Invitation links: the token is the credential.
    ("GET", "/join/{token}", "public"),
    ("POST", "/api/v1/join", "public"),
    ("POST", "/api/v1/campaigns/{campaign}/invitations", "admin"),
    ("GET", "/api/v1/campaigns/{campaign}/invitations", "admin"),
    (
        "POST",
        "/api/v1/campaigns/{campaign}/invitations/{participant}/revoke",
        "admin",
    ),
    ("PUT", "/api/v1/campaigns/{campaign}/parts/{part}", "admin"),
    ("GET", "/c/{campaign}/admin/participants", "admin"),
    ("POST", "/c/{campaign}/admin/participants/baseline", "admin"),
    ("POST", "/c/{campaign}/admin/participants/settings", "admin"),
    ("POST", "/c/{campaign}/admin/participants/links", "admin"),
    ("POST", "/c/{campaign}/admin/participants/revoke", "admin"),
    ("GET", "/study/m/{token}/frames", "participant"),
    ("GET", "/media/{token}", "signed_in"),
    ("GET", "/media/{token}/strip", "signed_in"),
    // Last, because it ends the session it is called with.
    ("POST", "/logout", "signed_in"),
];

#[test]
fn every_route_is_in_the_matrix() {
    let mut routes: Vec<(String, String)> = route_table()
        .into_iter()
        .map(|r| (r.method.to_string(), r.path.to_string()))
        .collect();
    let mut matrix: Vec<(String, String)> = MATRIX
        .iter()
        .map(|(m, p, _)| (m.to_string(), p.to_string()))
        .collect();
    routes.sort();
    matrix.sort();
    assert_eq!(
        routes, matrix,
        "the router and the authorization matrix disagree"
    );
}

fn allowed(rule: &str, role: Option<&str>) -> bool {
    match (rule, role) {
        ("public", _) => true,
        (_, None) => false,
        ("signed_in", Some(_)) => true,
        (rule, Some(r)) => rule.split(' ').any(|x| x == r),
    }
}

/// Whether `who` may use a route: a role in the campaign the routes act in, or
/// `ROLE@other`, that role held in another campaign only, which reaches no route of this
/// campaign (`{campaign}`, `{study}`, `{baseline}`) and the routes outside campaigns as its role does.
fn allowed_for(rule: &str, path: &str, who: Option<&str>) -> bool {
    match who.and_then(|w| w.strip_suffix("@other")) {
        Some(_) if rule == "public" || rule == "signed_in" => true,
        Some(_)
            if path.contains("{campaign}")
                || path.contains("{study}")
                || path.contains("{baseline}") =>
        {
            false
        }
        Some(role) => allowed(rule, Some(role)),
        None => allowed(rule, who),
    }
}

#[tokio::test]
async fn every_route_refuses_the_roles_it_does_not_name() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&["MC_F_EGO_STA"], 1, &["OE"]).await;
    let clip = &ids[0];
    crate::study::import_sets(&app, &crate::study::write_sets(&app.source(), 1))
        .await
        .unwrap();
    // People of another campaign, each with one role there and none here.
    let ov = app.member("oval0", Role::Validator, "other", Some(0)).await;
    let oa = app.member("oauthor", Role::Author, "other", None).await;
    let op = app.member("opart", Role::Participant, "other", None).await;
    let base = app.member("base1", Role::Baseline, CAMPAIGN, None).await;
    let ob = app.member("obase", Role::Baseline, "other", None).await;
    // This campaign's baseline is number 1 (set up empty: the routes' rules are what is
    // tried here; taking it is tried in tests/it/baseline.rs).
    sqlx::query(
        "INSERT INTO baselines (id, campaign_id, per_task, seed, created_at)
         SELECT 1, id, 1, 1, 0 FROM campaigns WHERE name = $1",
    )
    .bind(CAMPAIGN)
    .execute(&app.db)
    .await
    .unwrap();
    let roles = [
        "admin",
        "validator",
        "author",
        "participant",
        "baseline",
        "validator@other",
        "author@other",
        "participant@other",
        "baseline@other",
    ];
    let names = [
        "admin1", "val00", "author1", "part1", "base1", "oval0", "oauthor", "opart", "obase",
    ];
    let tokens = [
        &c.admin,
        &c.v0,
        &c.author,
        &c.participant,
        &base,
        &ov,
        &oa,
        &op,
        &ob,
    ];
    let mut webs = Vec::new();
    for n in names {
        webs.push(app.login(n).await);
    }
    // Each person's own opaque clip URL.
    let version: i64 = sqlx::query_scalar("SELECT current_version_id FROM clips")
        .fetch_one(&app.db)
        .await
        .unwrap();
    let mut media = Vec::new();
    for n in names {
        let u = app.store.user_by_name(n).await.unwrap().unwrap();
        media.push(app.store.media_grant(&u, version).unwrap());
    }
    let css = tandem::web::assets::url("app.css");
    let kinds: std::collections::HashMap<&str, Kind> = route_table()
        .into_iter()
        .map(|r| (r.path, r.kind))
        .collect();

    for (method, path, rule) in MATRIX {
        if *method == "POST" && *path == "/login" {
            continue; // public, with its own CSRF cookie: see the sign-in tests
        }
        let kind = kinds[path];
        for who in 0..=roles.len() {
            let role = roles.get(who).copied();
            let concrete = path
                .replace("{campaign}", CAMPAIGN)
                .replace("{stage}", "1")
                .replace("{item}", clip)
                .replace("{task}", "MC_F_EGO_STA")
                .replace("{name}", "val01")
                .replace("{validator}", "val01")
                .replace("{job}", "0")
                .replace("{*file}", "index.html")
                .replace("{action}", "enable")
                .replace("{study}", "1")
                .replace("{position}", "1")
                .replace("{baseline}", "1")
                .replace("{seq}", "1")
                .replace("{participant}", "base1")
                .replace("{part}", "baseline")
                .replace("{file}", "t13.csv")
                .replace("{file}", "t13.csv")
                .replace("{kind}", "decisions")
                .replace("{token}", &media[who.min(roles.len() - 1)])
                .replace("/static/{hash}/{file}", &css);
            let m = Method::from_bytes(method.as_bytes()).unwrap();
            let r = match kind {
                Kind::Api | Kind::Asset => {
                    let body = match *method {
                        "POST" if path.ends_with("verdict") => Some(json!({"verdict": "valid"})),
                        "POST" => Some(json!({"verdict": "accept", "note": "n"})),
                        "PUT" => Some(json!({"rater1": "val01", "rater2": "val00"})),
                        _ => None,
                    };
                    app.call(m, &concrete, role.map(|_| tokens[who].as_str()), body)
                        .await
                }
                Kind::Page | Kind::Media => {
                    let form: Option<&[(&str, &str)]> = if *method == "POST" {
                        Some(&[
                            ("verdict", "valid"),
                            ("note", "n"),
                            ("task", "MC_F_EGO_STA"),
                            ("action", "clear"),
                        ])
                    } else {
                        None
                    };
                    app.page(role.map(|_| &webs[who]), m, &concrete, form).await
                }
            };
            if kind == Kind::Media && role.is_some() {
                // The API token reaches exactly what the same person's session reaches.
                let by_token = app
                    .call(
                        Method::from_bytes(method.as_bytes()).unwrap(),
                        &concrete,
                        Some(tokens[who].as_str()),
                        None,
                    )
                    .await;
                assert_eq!(
                    (by_token.status, by_token.text.len()),
                    (r.status, r.text.len()),
                    "{method} {path} as {role:?}: by token vs by session"
                );
            }
            let to_login = r.status == StatusCode::SEE_OTHER
                && r.location().is_some_and(|l| l.starts_with("/login?next="));
            let outsider = role.is_some_and(|r| r.ends_with("@other"));
            if outsider && kind == Kind::Media {
                // Signed in, so past the guard; but no clip of this campaign is theirs.
                assert!(
                    r.status == StatusCode::FORBIDDEN || r.status == StatusCode::NOT_FOUND,
                    "{method} {path} as {role:?}: {} {}",
                    r.status,
                    r.text
                );
            }
            if allowed_for(rule, path, role) {
                assert!(
                    r.status != StatusCode::UNAUTHORIZED
                        && r.status != StatusCode::FORBIDDEN
                        && !to_login
                        || (kind == Kind::Media && r.status == StatusCode::FORBIDDEN),
                    "{method} {path} as {role:?} should be allowed, got {}: {}",
                    r.status,
                    r.text
                );
            } else {
                match (kind, role) {
                    (Kind::Page, None) => assert!(
                        to_login,
                        "{method} {path} anonymous: {} {:?}",
                        r.status,
                        r.location()
                    ),
                    (_, None) => assert_eq!(
                        r.status,
                        StatusCode::UNAUTHORIZED,
                        "{method} {path} anonymous: {}",
                        r.text
                    ),
                    _ => assert_eq!(
                        r.status,
                        StatusCode::FORBIDDEN,
                        "{method} {path} as {role:?}: {}",
                        r.text
                    ),
                }
                if kind == Kind::Api {
                    assert_eq!(
                        r.body["error"],
                        if role.is_none() {
                            "unauthorized"
                        } else {
                            "forbidden"
                        }
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn a_wrong_or_malformed_token_is_refused() {
    let app = spawn_app().await;
    cast(&app).await;
    for header in ["Bearer tdm_nope", "Basic abc", "Bearer "] {
        let r = app
            .client
            .get(format!("{}/api/v1/me", app.base))
            .header("Authorization", header)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED, "{header}");
    }
}

#[tokio::test]
async fn health_answers_and_unknown_paths_are_404s() {
    let app = spawn_app().await;
    let r = app.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(
        (r.status, r.body["status"].as_str()),
        (StatusCode::OK, Some("ok"))
    );
    let r = app.call(Method::GET, "/api/v1/nowhere", None, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.body["error"], "not_found");
    let r = app.call(Method::GET, "/nowhere", None, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(r.text.contains("There is no such page."));
}

#[tokio::test]
async fn the_openapi_document_describes_every_api_route() {
    let app = spawn_app().await;
    let r = app
        .call(Method::GET, "/api/v1/openapi.json", None, None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    for route in route_table().into_iter().filter(|r| r.kind == Kind::Api) {
        let op = &r.body["paths"][route.path][route.method.to_lowercase()];
        assert!(
            op.is_object(),
            "{} {} is missing from openapi.json",
            route.method,
            route.path
        );
    }
}

#[tokio::test]
async fn every_response_carries_the_security_headers() {
    let app = spawn_app().await;
    cast(&app).await;
    let web = app.login("val00").await;
    for r in [
        app.page(None, Method::GET, "/login", None).await,
        app.page(Some(&web), Method::GET, "/", None).await,
        app.call(Method::GET, "/healthz", None, None).await,
        app.call(Method::GET, "/nowhere", None, None).await,
    ] {
        let csp = r.headers["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
            "{csp}"
        );
        assert!(csp.contains("frame-ancestors 'none'"));
        assert_eq!(r.headers["x-content-type-options"], "nosniff");
        assert_eq!(r.headers["referrer-policy"], "no-referrer");
        assert_eq!(r.headers["x-frame-options"], "DENY");
    }
}

/// A campaign lookup that fails (the database cannot answer it) is that failure, not a
/// refusal: a member told 403 during a database hiccup would take it as a lost role.
/// Here the campaigns table goes away under a running server; the validator's token is
/// still in the server's copies (read a moment earlier), so the campaign lookup is the
/// first statement that fails.
#[tokio::test]
async fn a_campaign_lookup_that_fails_is_an_error_not_a_refusal() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let queue = |campaign: &str| format!("/api/v1/campaigns/{campaign}/queue/1");
    assert_eq!(
        app.get(&queue(CAMPAIGN), &c.v0).await.status,
        StatusCode::OK
    );
    // Another campaign's name: refused as not theirs while the lookup works.
    assert_eq!(
        app.get(&queue("elsewhere"), &c.v0).await.status,
        StatusCode::FORBIDDEN
    );
    sqlx::query("ALTER TABLE campaigns RENAME TO campaigns_away")
        .execute(&app.db)
        .await
        .unwrap();
    let r = app.get(&queue("elsewhere"), &c.v0).await;
    assert_eq!(r.status, StatusCode::INTERNAL_SERVER_ERROR, "{}", r.text);
    sqlx::query("ALTER TABLE campaigns_away RENAME TO campaigns")
        .execute(&app.db)
        .await
        .unwrap();
    assert_eq!(
        app.get(&queue("elsewhere"), &c.v0).await.status,
        StatusCode::FORBIDDEN
    );
}
