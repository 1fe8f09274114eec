-- Tandem schema (SQLite). Never edit an applied migration: add a new one.
-- Timestamps are microseconds since the Unix epoch, UTC.

CREATE TABLE campaigns (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE,
    taxonomy    TEXT    NOT NULL,            -- JSON: the taxonomy in force
    created_at  BIGINT  NOT NULL
);

CREATE TABLE users (
    id             INTEGER PRIMARY KEY,
    name           TEXT    NOT NULL UNIQUE,
    role           TEXT    NOT NULL CHECK (role IN ('admin', 'validator', 'author', 'participant')),
    password_hash  TEXT    NOT NULL,
    created_at     BIGINT  NOT NULL
);

-- The validator pool of a campaign; pool_index is the index i of the pairing rule.
CREATE TABLE pool_members (
    campaign_id  BIGINT NOT NULL REFERENCES campaigns (id),
    user_id      BIGINT NOT NULL REFERENCES users (id),
    pool_index   BIGINT NOT NULL CHECK (pool_index >= 0),
    PRIMARY KEY (campaign_id, user_id),
    UNIQUE (campaign_id, pool_index)
);

CREATE TABLE api_tokens (
    id          INTEGER PRIMARY KEY,
    user_id     BIGINT  NOT NULL REFERENCES users (id),
    token_hash  TEXT    NOT NULL UNIQUE,      -- SHA-256 of the token; the token itself is never stored
    label       TEXT    NOT NULL,
    created_at  BIGINT  NOT NULL,
    revoked_at  BIGINT
);

CREATE TABLE tasks (
    id           INTEGER PRIMARY KEY,
    campaign_id  BIGINT  NOT NULL REFERENCES campaigns (id),
    position     BIGINT  NOT NULL,            -- t in the pairing rule
    code         TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    scale        TEXT    NOT NULL,
    perspective  TEXT    NOT NULL,
    dynamics     TEXT    NOT NULL,
    pair_rater1  BIGINT  REFERENCES users (id),   -- admin override of the default pair
    pair_rater2  BIGINT  REFERENCES users (id),
    rater1_id    BIGINT  REFERENCES users (id),   -- the pair in force (override, else the default
    rater2_id    BIGINT  REFERENCES users (id),   -- pair from the pool); kept up to date by the store
    pair_problem TEXT,                            -- why there is no pair in force, when there is none
    UNIQUE (campaign_id, code),
    UNIQUE (campaign_id, position),
    CHECK ((pair_rater1 IS NULL) = (pair_rater2 IS NULL)),
    CHECK (pair_rater1 IS NULL OR pair_rater1 <> pair_rater2),
    CHECK ((rater1_id IS NULL) = (rater2_id IS NULL)),
    CHECK (rater1_id IS NULL OR rater1_id <> rater2_id)
);

CREATE TABLE imports (
    id               INTEGER PRIMARY KEY,
    campaign_id      BIGINT  NOT NULL REFERENCES campaigns (id),
    manifest         TEXT    NOT NULL,        -- path as given
    manifest_sha256  TEXT    NOT NULL,
    clips_new        BIGINT  NOT NULL,
    versions_new     BIGINT  NOT NULL,
    imported_at      BIGINT  NOT NULL
);

CREATE TABLE clips (
    id                  INTEGER PRIMARY KEY,
    campaign_id         BIGINT  NOT NULL REFERENCES campaigns (id),
    task_id             BIGINT  NOT NULL REFERENCES tasks (id),
    clip_key            TEXT    NOT NULL,     -- the manifest's clip_id
    current_version_id  BIGINT,               -- the newest version (set right after it is inserted)
    UNIQUE (campaign_id, clip_key)
);

CREATE TABLE clip_versions (
    id            INTEGER PRIMARY KEY,
    clip_id       BIGINT  NOT NULL REFERENCES clips (id),
    version       BIGINT  NOT NULL CHECK (version >= 1),
    media_sha256  TEXT    NOT NULL,
    media_type    TEXT    NOT NULL,
    media_size    BIGINT  NOT NULL,
    source_file   TEXT    NOT NULL,           -- the manifest's `file`, as written
    fields        TEXT    NOT NULL,           -- JSON: the manifest line without `file` and `questions`
    import_id     BIGINT  NOT NULL REFERENCES imports (id),
    created_at    BIGINT  NOT NULL,
    UNIQUE (clip_id, version)
);

CREATE TABLE questions (
    id               INTEGER PRIMARY KEY,
    clip_version_id  BIGINT  NOT NULL REFERENCES clip_versions (id),
    position         BIGINT  NOT NULL,
    question_key     TEXT    NOT NULL,        -- the manifest's question_id
    qa_type          TEXT    NOT NULL,
    level            TEXT    NOT NULL CHECK (level IN ('L1', 'L2', 'L3')),
    body             TEXT    NOT NULL,
    options          TEXT    NOT NULL,        -- JSON array of strings
    answer           BIGINT  NOT NULL,        -- 0-based index into options
    UNIQUE (clip_version_id, question_key)
);
CREATE INDEX questions_key ON questions (question_key);

-- One row per item and stage: a clip version (Stage 1) or a question (Stage 2).
CREATE TABLE items (
    id               INTEGER PRIMARY KEY,
    campaign_id      BIGINT  NOT NULL REFERENCES campaigns (id),
    task_id          BIGINT  NOT NULL REFERENCES tasks (id),
    stage            BIGINT  NOT NULL CHECK (stage IN (1, 2)),
    clip_version_id  BIGINT  NOT NULL REFERENCES clip_versions (id),
    question_id      BIGINT  REFERENCES questions (id),
    parent_item_id   BIGINT  REFERENCES items (id),      -- Stage 2: the clip's Stage 1 item
    outcome          TEXT    NOT NULL DEFAULT 'pending' CHECK (outcome IN
                       ('pending', 'both_pass', 'both_reject', 'split', 'split_accepted', 'split_rejected')),
    rater1_id        BIGINT  REFERENCES users (id),      -- the pair, fixed at the first verdict
    rater2_id        BIGINT  REFERENCES users (id),
    verdict1         TEXT,                               -- rater 1's counted verdict, once both decided
    verdict2         TEXT,
    final1_id        BIGINT,                             -- the decisions that counted
    final2_id        BIGINT,
    completed_at     BIGINT,
    revision         BIGINT  NOT NULL DEFAULT 0,         -- bumped by every write; the row lock
    CHECK ((stage = 1 AND question_id IS NULL AND parent_item_id IS NULL)
        OR (stage = 2 AND question_id IS NOT NULL AND parent_item_id IS NOT NULL)),
    CHECK ((outcome = 'pending') = (completed_at IS NULL))
);
CREATE UNIQUE INDEX items_stage1 ON items (clip_version_id) WHERE stage = 1;
CREATE UNIQUE INDEX items_stage2 ON items (question_id) WHERE stage = 2;
CREATE INDEX items_scope ON items (campaign_id, stage, task_id, outcome);
CREATE INDEX items_parent ON items (parent_item_id);

-- Append-only: a change of verdict is a new row with the next seq.
CREATE TABLE decisions (
    id             INTEGER PRIMARY KEY,
    item_id        BIGINT  NOT NULL REFERENCES items (id),
    validator_id   BIGINT  NOT NULL REFERENCES users (id),
    seq            BIGINT  NOT NULL CHECK (seq >= 1),
    verdict        TEXT    NOT NULL CHECK (verdict IN ('valid', 'reject')),
    reasons        TEXT    NOT NULL,          -- ';'-separated, canonical order
    note           TEXT    NOT NULL,
    time_spent_ms  BIGINT,
    decided_at     BIGINT  NOT NULL,
    recorded_at    BIGINT  NOT NULL,
    origin         TEXT    NOT NULL CHECK (origin IN ('api', 'web', 'import')),
    UNIQUE (item_id, validator_id, seq)
);
CREATE INDEX decisions_validator ON decisions (validator_id, item_id);

-- An author's resolution of a split: one per item, final.
CREATE TABLE resolutions (
    id           INTEGER PRIMARY KEY,
    item_id      BIGINT  NOT NULL UNIQUE REFERENCES items (id),
    author_id    BIGINT  NOT NULL REFERENCES users (id),
    verdict      TEXT    NOT NULL CHECK (verdict IN ('accept', 'reject')),
    note         TEXT    NOT NULL CHECK (note <> ''),
    decided_at   BIGINT  NOT NULL,
    recorded_at  BIGINT  NOT NULL,
    origin       TEXT    NOT NULL CHECK (origin IN ('api', 'web', 'import'))
);

-- Append-only guard: a decision or resolution, once stored, is never changed or removed.
CREATE TRIGGER decisions_no_update BEFORE UPDATE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions are append-only'); END;
CREATE TRIGGER decisions_no_delete BEFORE DELETE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions are append-only'); END;
CREATE TRIGGER resolutions_no_update BEFORE UPDATE ON resolutions
BEGIN SELECT RAISE(ABORT, 'resolutions are final'); END;
CREATE TRIGGER resolutions_no_delete BEFORE DELETE ON resolutions
BEGIN SELECT RAISE(ABORT, 'resolutions are final'); END;
