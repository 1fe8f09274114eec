//! The admin's pages: where the campaign stands, who reviews what, accounts and
//! campaigns, imports, exports, the audit trail and sampled review, a file each.

mod accounts;
mod audit;
mod campaigns;
mod exports;
mod imports;
mod overview;
mod pairs;
mod sampling;

use crate::web::routes::{ADMIN, Kind::Page, Route};
use accounts::{
    create_token, create_user, place_in_pool, revoke_tokens, set_disabled, set_role, users,
};
use audit::audit;
use campaigns::{campaigns, create_campaign};
use exports::exports;
use imports::{import_folder, import_page, import_upload};
use overview::{items, overview};
use pairs::{pairs, set_pair};
use sampling::{sampling, sampling_run};

/// The route of every file of the exports page (`web::exports::ExportFile`).
pub const EXPORT_FILE: &str = "/c/{campaign}/admin/exports/{file}";

/// The admin's pages: the campaign's overview, sampled review, audit trail and items,
/// pairs, accounts, campaigns, imports and exports.
pub fn routes() -> Vec<Route> {
    use axum::routing::{get, post};
    vec![
        Route::new(
            "GET",
            "/c/{campaign}/admin/sampling",
            ADMIN,
            Page,
            get(sampling),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/sampling/run",
            ADMIN,
            Page,
            post(sampling_run),
        ),
        Route::new("GET", "/c/{campaign}/admin/audit", ADMIN, Page, get(audit)),
        Route::new("GET", "/c/{campaign}/admin/items", ADMIN, Page, get(items)),
        Route::new("GET", "/c/{campaign}/admin", ADMIN, Page, get(overview)),
        Route::new("GET", "/c/{campaign}/admin/pairs", ADMIN, Page, get(pairs)),
        Route::new(
            "POST",
            "/c/{campaign}/admin/pairs",
            ADMIN,
            Page,
            post(set_pair),
        ),
        Route::new("GET", "/admin/users", ADMIN, Page, get(users)),
        Route::new("GET", "/admin/campaigns", ADMIN, Page, get(campaigns)),
        Route::new(
            "POST",
            "/admin/campaigns",
            ADMIN,
            Page,
            post(create_campaign),
        ),
        Route::new("POST", "/admin/users", ADMIN, Page, post(create_user)),
        Route::new("POST", "/admin/roles", ADMIN, Page, post(set_role)),
        Route::new("POST", "/admin/pool", ADMIN, Page, post(place_in_pool)),
        Route::new(
            "POST",
            "/admin/users/{name}/token",
            ADMIN,
            Page,
            post(create_token),
        ),
        Route::new(
            "POST",
            "/admin/users/{name}/revoke-tokens",
            ADMIN,
            Page,
            post(revoke_tokens),
        ),
        Route::new(
            "POST",
            "/admin/users/{name}/{action}",
            ADMIN,
            Page,
            post(set_disabled),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/import",
            ADMIN,
            Page,
            get(import_page),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/import/upload",
            ADMIN,
            Page,
            // The upload's size limit (TANDEM_MAX_UPLOAD_BYTES) and the free space
            // are enforced by the handler while it streams the body to disk.
            post(import_upload).layer(axum::extract::DefaultBodyLimit::disable()),
        ),
        Route::new(
            "POST",
            "/c/{campaign}/admin/import/folder",
            ADMIN,
            Page,
            post(import_folder),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports",
            ADMIN,
            Page,
            get(exports),
        ),
        Route::new("GET", EXPORT_FILE, ADMIN, Page, get(exports::file)),
    ]
}
