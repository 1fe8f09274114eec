//! The authorization matrix: every route, as every role and as anonymous.

use crate::helpers::*;
use reqwest::{Method, StatusCode};
use serde_json::json;
use tandem::web::route_table;

/// Who may use each route. A new route must be added here, or
/// `every_route_is_in_the_matrix` fails.
const MATRIX: &[(&str, &str, &str)] = &[
    ("GET", "/healthz", "public"),
    ("GET", "/api/v1/openapi.json", "public"),
    ("GET", "/api/v1/me", "signed_in"),
    ("GET", "/api/v1/campaigns", "signed_in"),
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
    (
        "GET",
        "/api/v1/campaigns/{campaign}/export/decisions",
        "admin",
    ),
    (
        "GET",
        "/api/v1/campaigns/{campaign}/export/resolutions",
        "admin",
    ),
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

#[tokio::test]
async fn every_route_refuses_the_roles_it_does_not_name() {
    let app = spawn_app().await;
    let c = cast(&app).await;
    let ids = app.import_clips(&["MC_F_EGO_STA"], 1, &["OE"]).await;
    let clip = &ids[0];
    let who: [(Option<&str>, Option<&str>); 5] = [
        (None, None),
        (Some("admin"), Some(c.admin.as_str())),
        (Some("validator"), Some(c.v0.as_str())),
        (Some("author"), Some(c.author.as_str())),
        (Some("participant"), Some(c.participant.as_str())),
    ];
    for (method, path, rule) in MATRIX {
        let concrete = path
            .replace("{campaign}", CAMPAIGN)
            .replace("{stage}", "1")
            .replace("{item}", clip)
            .replace("{task}", "MC_F_EGO_STA");
        let body = match *method {
            "POST" if path.ends_with("verdict") => Some(json!({"verdict": "valid"})),
            "POST" => Some(json!({"verdict": "accept", "note": "n"})),
            "PUT" => Some(json!({"rater1": "val01", "rater2": "val00"})),
            _ => None,
        };
        for (role, token) in who {
            let m = Method::from_bytes(method.as_bytes()).unwrap();
            let r = app.call(m, &concrete, token, body.clone()).await;
            if allowed(rule, role) {
                assert!(
                    r.status != StatusCode::UNAUTHORIZED && r.status != StatusCode::FORBIDDEN,
                    "{method} {path} as {role:?} should be allowed, got {}: {}",
                    r.status,
                    r.text
                );
            } else {
                let expected = if role.is_none() {
                    StatusCode::UNAUTHORIZED
                } else {
                    StatusCode::FORBIDDEN
                };
                assert_eq!(
                    r.status, expected,
                    "{method} {path} as {role:?}: {}",
                    r.text
                );
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
async fn health_answers_and_unknown_paths_are_json_404s() {
    let app = spawn_app().await;
    let r = app.call(Method::GET, "/healthz", None, None).await;
    assert_eq!(
        (r.status, r.body["status"].as_str()),
        (StatusCode::OK, Some("ok"))
    );
    let r = app.call(Method::GET, "/nowhere", None, None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert_eq!(r.body["error"], "not_found");
}

#[tokio::test]
async fn the_openapi_document_describes_every_api_route() {
    let app = spawn_app().await;
    let r = app
        .call(Method::GET, "/api/v1/openapi.json", None, None)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    for route in route_table() {
        let op = &r.body["paths"][route.path][route.method.to_lowercase()];
        assert!(
            op.is_object(),
            "{} {} is missing from openapi.json",
            route.method,
            route.path
        );
    }
}
