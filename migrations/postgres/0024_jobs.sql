-- (See the SQLite migration.)
-- Long operations started through the API (an import, the retained benchmark's zip, the
-- paper bundle): their state lives here, so that whichever server a client polls can
-- answer; a finished export's file is in the media store (MEDIA/jobs/ID.zip). A job that
-- is queued or running keeps `heartbeat_at` fresh; one whose server stopped is found by
-- its old heartbeat and marked failed.
CREATE TABLE jobs (
    id            TEXT    PRIMARY KEY,
    campaign_id   BIGINT  NOT NULL REFERENCES campaigns (id),
    kind          TEXT    NOT NULL CHECK (kind IN ('import', 'retained', 'paper')),
    state         TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    requested_by  TEXT    NOT NULL,
    created_at    BIGINT  NOT NULL,
    started_at    BIGINT,
    heartbeat_at  BIGINT  NOT NULL,
    finished_at   BIGINT,
    -- JSON: what a finished import stored.
    summary       TEXT,
    -- JSON: why it failed, as the API's error body.
    error         TEXT,
    file_name     TEXT,
    file_bytes    BIGINT,
    file_sha256   TEXT
);
CREATE INDEX jobs_campaign ON jobs (campaign_id, created_at);
CREATE INDEX jobs_unfinished ON jobs (state, heartbeat_at);
