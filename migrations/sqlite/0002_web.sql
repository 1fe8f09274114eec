-- Browser sessions, sign-in throttling and opaque media URLs.

-- A signed-in browser. The cookie holds a random id; only its SHA-256 is stored.
CREATE TABLE sessions (
    id_hash       TEXT    PRIMARY KEY,
    user_id       BIGINT  NOT NULL REFERENCES users (id),
    csrf_token    TEXT    NOT NULL,
    created_at    BIGINT  NOT NULL,
    last_seen_at  BIGINT  NOT NULL,
    flash         TEXT                      -- a one-shot message for the next page
);
CREATE INDEX sessions_user ON sessions (user_id);

-- Failed sign-ins, per account name and per client address, for throttling.
CREATE TABLE login_failures (
    id          INTEGER PRIMARY KEY,
    key         TEXT    NOT NULL,          -- 'user:NAME' or 'addr:IP'
    failed_at   BIGINT  NOT NULL
);
CREATE INDEX login_failures_key ON login_failures (key, failed_at);

-- An opaque URL for one person to fetch one clip version: it carries no id, file
-- name or source, and is refused to anyone else.
CREATE TABLE media_grants (
    token            TEXT    PRIMARY KEY,
    user_id          BIGINT  NOT NULL REFERENCES users (id),
    clip_version_id  BIGINT  NOT NULL REFERENCES clip_versions (id),
    created_at       BIGINT  NOT NULL,
    UNIQUE (user_id, clip_version_id)
);
