-- (See the SQLite migration.)
-- Browsers a person has signed in from (OWASP's device cookies): a sign-in that presents
-- such a cookie for its own account is not held by that account's lockout, so an
-- attacker's failures cannot lock the person out. The cookie is random; only its hash
-- is kept.
CREATE TABLE trusted_devices (
    id_hash     TEXT    PRIMARY KEY,
    user_id     BIGINT  NOT NULL REFERENCES users (id),
    created_at  BIGINT  NOT NULL
);
CREATE INDEX trusted_devices_user ON trusted_devices (user_id, created_at);
