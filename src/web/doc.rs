//! The OpenAPI document, made from the route table: each API route's handler carries
//! its `#[utoipa::path]` (path, parameters, body, replies and their types), the table
//! says who may use it, and this adds what every route shares (the bearer scheme, who
//! may call it, the one error reply under each status the route can answer). Served at
//! `/api/v1/openapi.json` (made once, on its first request, from every route) and
//! rendered for people by Swagger UI at `/api/v1/docs/`.

use super::routes::{Access, Kind, Route, RouteSpec};
use crate::domain::Role;
use crate::error::{ErrorBody, ErrorKind};
use crate::web::routes::api;
use axum::Extension;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use std::sync::{Arc, LazyLock};
use utoipa::openapi::path::{Operation, PathItem, Paths};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{
    ComponentsBuilder, ContentBuilder, InfoBuilder, OpenApi, OpenApiBuilder, Ref, RefOr,
};
use utoipa::{PartialSchema, ToSchema};

fn operation_mut<'a>(item: &'a mut PathItem, method: &str) -> Option<&'a mut Operation> {
    match method {
        "GET" => item.get.as_mut(),
        "POST" => item.post.as_mut(),
        "PUT" => item.put.as_mut(),
        "DELETE" => item.delete.as_mut(),
        "PATCH" => item.patch.as_mut(),
        _ => None,
    }
}

/// Who may use a route, in words.
pub fn who(access: Access) -> String {
    let role = |r: &Role| match r {
        Role::Admin => "admins",
        Role::Validator => "validators of the campaign",
        Role::Author => "authors of the campaign",
        Role::Participant => "participants",
        Role::Baseline => "baseline participants",
    };
    match access {
        Access::Public => "anyone".into(),
        Access::SignedIn => "any signed-in account".into(),
        Access::Roles(rs) => {
            let words: Vec<&str> = rs.iter().map(role).collect();
            match words.as_slice() {
                [] => "no one".into(),
                [one] => (*one).into(),
                [init @ .., last] => format!("{} and {last}", init.join(", ")),
            }
        }
    }
}

/// The error kinds a status carries, in words for the document.
fn error_reply(status: u16) -> Option<(&'static str, ErrorKind)> {
    Some(match status {
        400 => (
            "The path, query or body could not be read (`bad_request`)",
            ErrorKind::BadRequest,
        ),
        401 => (
            "No valid API token (`unauthorized`)",
            ErrorKind::Unauthorized,
        ),
        403 => (
            "The caller's role may not use this here (`forbidden`)",
            ErrorKind::Forbidden,
        ),
        404 => (
            "No such thing, or not the caller's (`not_found`)",
            ErrorKind::NotFound,
        ),
        405 => (
            "The route does not take this method (`method_not_allowed`; `Allow` lists what it takes)",
            ErrorKind::MethodNotAllowed,
        ),
        408 => (
            "The request took too long and was not carried out (`timeout`)",
            ErrorKind::Timeout,
        ),
        409 => (
            "It conflicts with the record (`conflict`)",
            ErrorKind::Conflict,
        ),
        413 => ("The body is too large (`too_large`)", ErrorKind::TooLarge),
        415 => (
            "The body is not sent as JSON (`unsupported_media_type`)",
            ErrorKind::UnsupportedMediaType,
        ),
        422 => (
            "A value breaks a rule (`invalid`, with the `field`) or a file has problems (`rejected`, with the `problems`); nothing was stored",
            ErrorKind::Invalid,
        ),
        429 => (
            "Too many attempts (`too_many_requests`; `Retry-After` says when to try again)",
            ErrorKind::TooManyRequests,
        ),
        500 => (
            "A fault of the server, in its log (`internal`)",
            ErrorKind::Internal,
        ),
        503 => (
            "The database or the disk cannot serve now (`unavailable`; `Retry-After` says when to try again)",
            ErrorKind::Unavailable,
        ),
        _ => return None,
    })
}

/// The error statuses a route can answer, from its rule and what it takes: 401 and 403
/// from the guard, 404 for a path that names something, 400 and 422 for anything it
/// reads, 413 and 415 for a body, 409 for a write (a write that meets another storing
/// the same thing at once is refused whole), and for every route 405 (another method),
/// 408 (its time limit), 500 and 503 (the database cannot serve). A handler declares
/// the 409s of its own rules, with their words.
fn error_statuses(spec: &RouteSpec, op: &Operation) -> Vec<u16> {
    let params = op.parameters.as_ref().is_some_and(|p| !p.is_empty());
    let body = op.request_body.is_some();
    let mut out = vec![405, 408, 500, 503];
    if params || body {
        out.extend([400, 422]);
    }
    if body {
        out.extend([413, 415]);
    }
    if spec.method != "GET" {
        out.push(409);
    }
    if spec.path.contains('{') {
        out.push(404);
    }
    match spec.access {
        Access::Public => {}
        Access::SignedIn => out.push(401),
        Access::Roles(_) => out.extend([401, 403]),
    }
    out
}

/// Adds the route's rule and its shared replies to its operation.
fn decorate(spec: &RouteSpec, op: &mut Operation) {
    let rule = format!("Who may call this: {}.", who(spec.access));
    op.description = Some(match op.description.take() {
        Some(d) if !d.is_empty() => format!("{rule}\n\n{d}"),
        _ => rule,
    });
    if spec.access != Access::Public {
        op.security = Some(vec![SecurityRequirement::new(
            "bearer",
            Vec::<String>::new(),
        )]);
    }
    for status in error_statuses(spec, op) {
        op.responses
            .responses
            .entry(status.to_string())
            .or_insert_with(|| RefOr::T(ResponseBuilder::new().build()));
    }
    let error = ContentBuilder::new()
        .schema(Some(Ref::from_schema_name(ErrorBody::name())))
        .build();
    for (status, reply) in op.responses.responses.iter_mut() {
        // A status that is not a number (`default`) has no error reply to describe.
        let Some((words, _)) = status.parse().ok().and_then(error_reply) else {
            continue;
        };
        if let RefOr::T(r) = reply {
            if r.description.is_empty() {
                r.description = words.to_string();
            }
            if r.content.is_empty() {
                r.content
                    .insert("application/json".into(), RefOr::T(error.clone()));
            }
        }
    }
}

/// The whole document, of these routes.
pub fn document(routes: Vec<Route>) -> OpenApi {
    let mut paths = Paths::new();
    let mut components = ComponentsBuilder::new()
        .security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "An API token: `tandem token create NAME`, or the accounts page",
                    ))
                    .build(),
            ),
        )
        .schema(ErrorBody::name(), ErrorBody::schema())
        .build();
    let mut error_schemas = Vec::new();
    ErrorBody::schemas(&mut error_schemas);
    components.schemas.extend(error_schemas);
    for route in routes {
        let Some(doc) = route.doc else { continue };
        let api = doc();
        components.schemas.extend(api.schemas);
        for (path, mut item) in api.paths.paths {
            if let Some(op) = operation_mut(&mut item, route.spec.method) {
                decorate(&route.spec, op);
            }
            match paths.paths.get_mut(&path) {
                Some(existing) => existing.merge_operations(item),
                None => {
                    paths.paths.insert(path, item);
                }
            }
        }
    }
    let tags = [
        (
            "review",
            "Validators: the queue, items and verdicts (both stages)",
        ),
        ("authors", "Authors: splits and their resolutions"),
        ("calibration", "Calibration before review, and its scores"),
        ("campaigns", "Campaigns, their protocol and progress"),
        ("pairs", "Who reviews which task"),
        (
            "sampling",
            "Sampled review (a protocol's `[[sampling]]` rules)",
        ),
        ("statistics", "The QC tables and the study's tables"),
        (
            "imports",
            "A manifest and its videos (new clips, new versions), by upload or from an import root: jobs",
        ),
        (
            "exports",
            "Records, the regeneration work list, the audit trail, the retained benchmark and the paper bundle",
        ),
        (
            "jobs",
            "Long operations (imports, archives): poll one until it ends, download what it made",
        ),
        (
            "study",
            "The blind study: participants' sets and answers, its set-up",
        ),
        (
            "baseline",
            "The human baseline: participants' questions and answers, its set-up",
        ),
        (
            "invitations",
            "Invitation links for participants: made, exchanged, revoked; what participants read first",
        ),
        ("accounts", "Accounts"),
        ("operations", "Health, readiness and metrics"),
        ("documentation", "This document"),
    ]
    .into_iter()
    .map(|(name, d)| TagBuilder::new().name(name).description(Some(d)).build())
    .collect::<Vec<_>>();
    OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("Tandem API")
                .version(env!("CARGO_PKG_VERSION"))
                .description(Some(DESCRIPTION))
                .build(),
        )
        .paths(paths)
        .components(Some(components))
        .tags(Some(tags))
        .build()
}

const DESCRIPTION: &str = "Paired human quality control for generated-video benchmarks. \
Authenticate with `Authorization: Bearer TOKEN` (tokens from `tandem token create NAME`). \
Every error is the one JSON `ErrorBody` (`error`, `detail`, and `field` or `problems` where \
they apply). A validator's replies never carry the partner's verdict or an item's outcome. \
Roles are held per campaign: a route under a campaign (or one of its studies) answers a \
person in the role they hold in that campaign, and 403 to anyone who holds none there; \
admins are server-wide. The reasons, levels, tasks and QA types a campaign takes are its \
protocol's: `GET /api/v1/campaigns/{campaign}/protocol`.";

/// The document as served.
pub fn to_json(doc: &OpenApi) -> String {
    let written = serde_json::to_value(doc).and_then(|mut v| {
        with_text_rule(&mut v);
        serde_json::to_string_pretty(&v)
    });
    written.unwrap_or_else(|e| format!("{{\"error\": \"internal\", \"detail\": \"{e}\"}}"))
}

/// The characters a text field of a request body cannot hold, as a pattern: control
/// characters other than tab, line feed and carriage return, and the bidirectional
/// embedding, override and isolate controls (`domain::text::forbidden_char`).
pub const TEXT_PATTERN: &str =
    r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*$";

/// Gives every free text of a request body (a string without a pattern, a format or
/// values of its own) the text rule the server applies to every body
/// (`domain::text::check_json`), so that the document refuses what the server refuses.
/// Replies, paths and queries keep their schemas: the rule is the bodies'.
fn with_text_rule(doc: &mut serde_json::Value) {
    use serde_json::Value;
    fn apply(s: &mut Value, refs: &mut Vec<String>) {
        let Some(o) = s.as_object_mut() else { return };
        if let Some(Value::String(r)) = o.get("$ref") {
            if let Some(name) = r.strip_prefix("#/components/schemas/") {
                refs.push(name.to_string());
            }
            return;
        }
        let is_string = match o.get("type") {
            Some(Value::String(t)) => t == "string",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
            _ => false,
        };
        let free = !["pattern", "format", "enum", "const"]
            .iter()
            .any(|k| o.contains_key(*k));
        if is_string && free {
            o.insert("pattern".into(), Value::String(TEXT_PATTERN.into()));
        }
        for key in ["items", "additionalProperties", "not"] {
            if let Some(inner) = o.get_mut(key) {
                apply(inner, refs);
            }
        }
        for key in ["properties"] {
            if let Some(Value::Object(props)) = o.get_mut(key) {
                for p in props.values_mut() {
                    apply(p, refs);
                }
            }
        }
        for key in ["oneOf", "anyOf", "allOf"] {
            if let Some(Value::Array(all)) = o.get_mut(key) {
                for p in all {
                    apply(p, refs);
                }
            }
        }
    }
    let mut refs = Vec::new();
    if let Some(Value::Object(paths)) = doc.get_mut("paths") {
        for item in paths.values_mut() {
            let Some(item) = item.as_object_mut() else {
                continue;
            };
            for op in item.values_mut() {
                let Some(Value::Object(content)) = op.pointer_mut("/requestBody/content") else {
                    continue;
                };
                for media in content.values_mut() {
                    if let Some(schema) = media.get_mut("schema") {
                        apply(schema, &mut refs);
                    }
                }
            }
        }
    }
    let mut done = std::collections::BTreeSet::new();
    while let Some(name) = refs.pop() {
        if !done.insert(name.clone()) {
            continue;
        }
        if let Some(schema) = doc.pointer_mut(&format!("/components/schemas/{name}")) {
            apply(schema, &mut refs);
        }
    }
}

/// What makes the served document (once, on its first request): `web` hands it to
/// this route alone.
#[derive(Clone, Copy)]
pub struct Served(pub fn() -> &'static str);

/// The OpenAPI document of this API, made from the handlers themselves (see
/// `web::doc`).
#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    tag = "documentation",
    operation_id = "openapi",
    responses((status = 200, description = "This document (OpenAPI 3.1)", content_type = "application/json", body = Object))
)]
pub async fn openapi(Extension(Served(json)): Extension<Served>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], json()).into_response()
}

/// Swagger UI, set to show this document.
fn swagger_config() -> Arc<utoipa_swagger_ui::Config<'static>> {
    static CONFIG: LazyLock<Arc<utoipa_swagger_ui::Config<'static>>> = LazyLock::new(|| {
        Arc::new(utoipa_swagger_ui::Config::new(["/api/v1/openapi.json"]).try_it_out_enabled(true))
    });
    CONFIG.clone()
}

/// `GET /api/v1/docs`: to the page (whose files are named relative to it).
pub async fn docs_root() -> Redirect {
    Redirect::to("/api/v1/docs/index.html")
}

/// `GET /api/v1/docs/{file}`: Swagger UI's files, from the binary.
pub async fn docs_file(Path(file): Path<String>) -> Response {
    match utoipa_swagger_ui::serve(&file, swagger_config()) {
        Ok(Some(f)) => (
            [
                (header::CONTENT_TYPE, f.content_type),
                (header::CACHE_CONTROL, "no-cache".to_string()),
            ],
            f.bytes.into_owned(),
        )
            .into_response(),
        Ok(None) => StatusCode::NOT_FOUND.into_response(),
        Err(e) => {
            tracing::error!(error = %e, "Swagger UI could not serve {file}");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// The document, and Swagger UI's page and files, for anyone.
/// The document's routes; `json` makes the document (see [`Served`]).
pub fn routes(json: fn() -> &'static str) -> Vec<Route> {
    use axum::routing::get;
    let mut document = api!(Access::Public, openapi);
    document.handler = document.handler.layer(Extension(Served(json)));
    vec![
        document,
        Route::new(
            "GET",
            "/api/v1/docs",
            Access::Public,
            Kind::Asset,
            get(docs_root),
        ),
        Route::new(
            "GET",
            "/api/v1/docs/{*file}",
            Access::Public,
            Kind::Asset,
            get(docs_file),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_api_route_is_documented_with_its_rule_and_errors() {
        let doc = serde_json::to_value(crate::web::document()).unwrap();
        for spec in crate::web::route_table() {
            if spec.kind != Kind::Api {
                continue;
            }
            let op = &doc["paths"][spec.path][spec.method.to_lowercase()];
            assert!(op.is_object(), "{} {}", spec.method, spec.path);
            assert!(
                op["operationId"].is_string(),
                "{} {}",
                spec.method,
                spec.path
            );
            let d = op["description"].as_str().unwrap_or_default();
            assert!(d.starts_with("Who may call this: "), "{d}");
            // Its tag is one the document declares (with its description).
            let declared: Vec<&str> = doc["tags"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|t| t["name"].as_str())
                .collect();
            for tag in op["tags"].as_array().unwrap() {
                let tag = tag.as_str().unwrap();
                assert!(
                    declared.contains(&tag),
                    "{}: tag `{tag}` undeclared",
                    spec.path
                );
            }
            for status in ["405", "500", "503"] {
                assert!(
                    op["responses"][status].is_object(),
                    "{} {status}",
                    spec.path
                );
            }
        }
    }
}
