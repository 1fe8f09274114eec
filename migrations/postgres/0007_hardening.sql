-- Accounts an admin has disabled: they cannot sign in, and their sessions and tokens
-- end when they are disabled.
ALTER TABLE users ADD COLUMN disabled_at BIGINT;

-- Sign-in throttling, counted atomically: one row per account name or client address.
-- Every attempt is counted before its password is checked (a success takes it back);
-- after the allowed failures in the window, each further one doubles the wait during
-- which every attempt is refused.
CREATE TABLE login_throttle (
    key            TEXT    PRIMARY KEY,     -- 'user:NAME' or 'addr:IP'
    failures       BIGINT  NOT NULL,
    window_start   BIGINT  NOT NULL,
    blocked_until  BIGINT  NOT NULL
);
CREATE INDEX login_throttle_window ON login_throttle (window_start);
DROP TABLE login_failures;

-- One row that the health check rewrites: a write that proves the database can write.
CREATE TABLE health (
    id          BIGINT  PRIMARY KEY,
    checked_at  BIGINT  NOT NULL
);
