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
use accounts::{create_token, create_user, revoke_tokens, set_disabled, set_role, users};
use audit::audit;
use campaigns::{campaigns, create_campaign};
use exports::{
    export_audit, export_baseline_answers, export_blind_answers, export_decisions,
    export_defect_probabilities, export_known_verdicts, export_paper, export_regeneration,
    export_resolutions, export_retained, export_study_responses, exports,
};
use imports::{import_folder, import_page, import_upload};
use overview::{items, overview};
use pairs::{pairs, set_pair};
use sampling::{sampling, sampling_run};

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
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/audit.csv",
            ADMIN,
            Page,
            get(export_audit),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/regeneration.jsonl",
            ADMIN,
            Page,
            get(export_regeneration),
        ),
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
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/decisions.csv",
            ADMIN,
            Page,
            get(export_decisions),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/resolutions.csv",
            ADMIN,
            Page,
            get(export_resolutions),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/retained.zip",
            ADMIN,
            Page,
            get(export_retained),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/paper.zip",
            ADMIN,
            Page,
            get(export_paper),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/study-responses.csv",
            ADMIN,
            Page,
            get(export_study_responses),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/blind-answers.csv",
            ADMIN,
            Page,
            get(export_blind_answers),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/known-verdicts.csv",
            ADMIN,
            Page,
            get(export_known_verdicts),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/defect-probabilities.csv",
            ADMIN,
            Page,
            get(export_defect_probabilities),
        ),
        Route::new(
            "GET",
            "/c/{campaign}/admin/exports/baseline-answers.csv",
            ADMIN,
            Page,
            get(export_baseline_answers),
        ),
    ]
}
