//! Invitation links: one per participant of a campaign's study or baseline, a random
//! token (only its digest is kept) exchanged for a session at each visit, so that the
//! link works without a password and one browser at a time holds it; the consent text
//! participants read first; a completion code shown at the end.

use crate::domain::Part;
use serde::Serialize;

/// What participants of a part read before they begin, and whether their links may
/// carry an external participant id.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct PartSettings {
    pub consent: String,
    /// Whether an external participant id (a recruitment platform's) given with the link
    /// is kept. It is personal data: off unless an admin turns it on; never exported.
    pub keep_external_id: bool,
}

/// A link made: the token appears here once, never again.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct NewLink {
    /// The participant's pseudonym (the name exports carry).
    pub participant: String,
    /// The link's path, `/join/{token}`: the server's address goes before it.
    pub path: String,
}

/// A link, for the admin (without its token).
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
pub struct LinkLine {
    pub participant: String,
    pub part: Part,
    pub created_at: i64,
    pub first_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
    /// Whether an external participant id is stored (the id itself is not shown here).
    pub external_id: bool,
    pub completion_code: String,
}

/// A link exchanged for a session.
#[derive(Debug, Clone)]
pub struct Joined {
    /// The new session's cookie id, or the new API token.
    pub session: String,
    pub part: Part,
    /// The study's or baseline's id, for the clean URL.
    pub target: Option<i64>,
}

/// What a link is exchanged for: a browser session (its id's digest and CSRF token)
/// or an API token (its digest).
#[derive(Debug, Clone)]
pub enum Credential {
    Session { hash: String, csrf: String },
    Token { digest: String },
}
