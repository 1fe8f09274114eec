//! The API's replies against its OpenAPI document: every reply the integration tests
//! receive through `TestApp` from a documented route is checked here, its status
//! against the statuses the document declares for the route and its JSON body against
//! the declared schema (JSON Schema 2020-12, as OpenAPI 3.1 has it), made strict: an
//! object with a field the schema does not name fails. A reply that does not match
//! fails the test that received it.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

struct Contract {
    doc: Value,
    /// (method, path template split into segments)
    routes: Vec<(String, Vec<String>)>,
    defs: Value,
    validators: Mutex<HashMap<(String, String, u16), Arc<jsonschema::Validator>>>,
}

/// The document's schemas, strict: an object schema admits no field it does not name
/// (`additionalProperties: false`, or `unevaluatedProperties: false` on a schema made of
/// `allOf` parts, whose parts are left open so that the whole can be closed).
fn strict_defs(doc: &Value) -> Value {
    let text = doc["components"]["schemas"]
        .to_string()
        .replace("#/components/schemas/", "#/$defs/");
    let mut defs: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    let mut parts = std::collections::HashSet::new();
    for s in defs.values() {
        for p in s["allOf"].as_array().into_iter().flatten() {
            if let Some(r) = p["$ref"].as_str() {
                parts.insert(r.trim_start_matches("#/$defs/").to_string());
            }
        }
    }
    for (name, s) in defs.iter_mut() {
        let Some(o) = s.as_object_mut() else { continue };
        if o.contains_key("allOf") {
            o.insert("unevaluatedProperties".into(), json!(false));
        } else if o.contains_key("properties")
            && !o.contains_key("additionalProperties")
            && !parts.contains(name)
        {
            o.insert("additionalProperties".into(), json!(false));
        }
    }
    Value::Object(defs)
}

static CONTRACT: LazyLock<Contract> = LazyLock::new(|| {
    let doc = serde_json::to_value(tandem::web::document()).unwrap();
    let mut routes = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            routes.push((
                method.to_uppercase(),
                path.split('/').map(str::to_string).collect(),
            ));
        }
    }
    Contract {
        defs: strict_defs(&doc),
        doc,
        routes,
        validators: Mutex::new(HashMap::new()),
    }
});

/// The documented route a request went to: the template with the most literal segments
/// among those that match.
fn template(method: &str, path: &str) -> Option<String> {
    let segs: Vec<&str> = path.split('/').collect();
    CONTRACT
        .routes
        .iter()
        .filter(|(m, t)| {
            m == method
                && t.len() == segs.len()
                && t.iter()
                    .zip(&segs)
                    .all(|(a, b)| (a.starts_with('{') && !b.is_empty()) || a == b)
        })
        .max_by_key(|(_, t)| t.iter().filter(|s| !s.starts_with('{')).count())
        .map(|(_, t)| t.join("/"))
}

/// Checks one reply; panics with what differs.
pub fn check(method: &str, path: &str, status: u16, content_type: Option<&str>, text: &str) {
    let Some(route) = template(method, path) else {
        return;
    };
    let op = &CONTRACT.doc["paths"][&route][method.to_lowercase()];
    let reply = &op["responses"][status.to_string()];
    assert!(
        reply.is_object(),
        "{method} {path} answered {status}, which the OpenAPI document does not declare for {route}: {text}"
    );
    let Some(content) = reply["content"].as_object() else {
        return;
    };
    let json = content_type.is_some_and(|c| c.starts_with("application/json"));
    let Some(schema) = content.get("application/json").map(|c| &c["schema"]) else {
        return;
    };
    assert!(
        json,
        "{method} {path} answered {status} with {content_type:?}, the document says JSON: {text}"
    );
    let key = (method.to_string(), route.clone(), status);
    let validator = {
        let mut cache = CONTRACT.validators.lock().unwrap();
        cache
            .entry(key)
            .or_insert_with(|| {
                let schema: Value = serde_json::from_str(
                    &schema
                        .to_string()
                        .replace("#/components/schemas/", "#/$defs/"),
                )
                .unwrap();
                let root = json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "$defs": CONTRACT.defs,
                    "allOf": [schema],
                });
                Arc::new(
                    jsonschema::draft202012::new(&root)
                        .unwrap_or_else(|e| panic!("the schema of {route} {status}: {e}")),
                )
            })
            .clone()
    };
    let body: Value = serde_json::from_str(text).unwrap_or_else(|e| {
        panic!("{method} {path} answered {status} with JSON that does not parse ({e}): {text}")
    });
    let errors: Vec<String> = validator
        .iter_errors(&body)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{method} {path} answered {status} with a body that does not match the document's schema for {route}:\n{}\nbody: {text}",
        errors.join("\n")
    );
}

/// The checker fails a reply the document does not allow (so that the check above can
/// fail at all).
#[test]
fn a_reply_that_breaks_the_document_is_caught() {
    let ok = r#"{"campaigns": ["default"]}"#;
    check(
        "GET",
        "/api/v1/campaigns",
        200,
        Some("application/json"),
        ok,
    );
    for (status, body) in [
        (200, r#"{"campaigns": "default"}"#),
        (200, r#"{"campaigns": [], "extra": 1}"#),
        (200, r#"{}"#),
        (404, r#"{"error": "lost", "detail": "x"}"#),
        (418, r#"{"error": "internal", "detail": "x"}"#),
    ] {
        let caught = std::panic::catch_unwind(|| {
            check(
                "GET",
                "/api/v1/campaigns",
                status,
                Some("application/json"),
                body,
            )
        });
        assert!(caught.is_err(), "{status} {body} passed");
    }
    // A flattened reply is closed as a whole: a field of neither part fails.
    let score = r#"{"validator": "v", "state": "passed", "round": 1, "decided": 1, "agreed": 1, "total": 1, "pool": 1, "required": 1, "threshold": 0.8, "next": null}"#;
    let scores = format!(
        r#"{{"validators": [{score}], "settings": {{"target_per_task": 1, "calibration_threshold": 0.8, "calibration_min_items": 1}}}}"#
    );
    check(
        "GET",
        "/api/v1/campaigns/c/calibration-scores",
        200,
        Some("application/json"),
        &scores,
    );
    let bad = scores.replace(r#""validator": "v""#, r#""validator": "v", "extra": 2"#);
    let caught = std::panic::catch_unwind(|| {
        check(
            "GET",
            "/api/v1/campaigns/c/calibration-scores",
            200,
            Some("application/json"),
            &bad,
        )
    });
    assert!(caught.is_err(), "{bad} passed");
}
