//! Static files (CSS, JavaScript), embedded in the binary and served under
//! content-hashed URLs with long caching. Nothing is fetched from elsewhere.

use super::routes::{Access, Kind, Route};
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;
use std::collections::HashMap;
use std::sync::OnceLock;

#[derive(RustEmbed)]
#[folder = "static/"]
struct Files;

fn hashes() -> &'static HashMap<String, String> {
    static H: OnceLock<HashMap<String, String>> = OnceLock::new();
    H.get_or_init(|| {
        Files::iter()
            .filter_map(|name| {
                let f = Files::get(&name)?;
                let h = crate::auth::hex(&f.metadata.sha256_hash());
                Some((name.to_string(), h[..12].to_string()))
            })
            .collect()
    })
}

/// The URL of an embedded file, e.g. `/static/3f2a9c0b1d4e/app.js`.
pub fn url(name: &str) -> String {
    match hashes().get(name) {
        Some(h) => format!("/static/{h}/{name}"),
        None => format!("/static/missing/{name}"),
    }
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next() {
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

pub async fn serve(Path((hash, name)): Path<(String, String)>) -> Response {
    let Some(file) = Files::get(&name) else {
        return (StatusCode::NOT_FOUND, "no such file").into_response();
    };
    let current = hashes().get(&name).is_some_and(|h| *h == hash);
    let cache = if current {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    (
        [
            (header::CONTENT_TYPE, content_type(&name)),
            (header::CACHE_CONTROL, cache),
        ],
        file.data.into_owned(),
    )
        .into_response()
}

/// The embedded files, for anyone.
pub fn routes() -> Vec<Route> {
    vec![Route::new(
        "GET",
        "/static/{hash}/{file}",
        Access::Public,
        Kind::Asset,
        axum::routing::get(serve),
    )]
}
