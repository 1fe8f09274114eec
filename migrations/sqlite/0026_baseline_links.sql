-- The human baseline taken in the browser, and invitation links for participants.

-- A campaign's baseline: k clips of each task per participant, drawn from `seed`.
CREATE TABLE baselines (
    id           INTEGER PRIMARY KEY,
    campaign_id  BIGINT  NOT NULL UNIQUE REFERENCES campaigns (id),
    per_task     BIGINT  NOT NULL CHECK (per_task >= 1),
    seed         BIGINT  NOT NULL,
    created_at   BIGINT  NOT NULL
);

-- The questions it asks, fixed when it was set up (the retained benchmark then): what a
-- participant is shown, and the served copy of the question's clip (no metadata). The
-- keyed answer is not here: it stays with the question, for the tables.
CREATE TABLE baseline_questions (
    baseline_id   BIGINT  NOT NULL REFERENCES baselines (id),
    question_key  TEXT    NOT NULL,
    clip_key      TEXT    NOT NULL,
    task          TEXT    NOT NULL,
    position      BIGINT  NOT NULL,   -- the export's order
    text          TEXT    NOT NULL,
    options       TEXT    NOT NULL,   -- JSON array of the options, in the manifest's order
    media_sha256  TEXT    NOT NULL,
    media_type    TEXT    NOT NULL,
    PRIMARY KEY (baseline_id, question_key)
);

-- A participant's place (the order in which they began: it picks their share of the
-- draw) and their presentations in the order shown, each with a random clip token.
CREATE TABLE baseline_places (
    baseline_id     BIGINT  NOT NULL REFERENCES baselines (id),
    participant_id  BIGINT  NOT NULL REFERENCES users (id),
    place           BIGINT  NOT NULL CHECK (place >= 0),
    started_at      BIGINT  NOT NULL,
    PRIMARY KEY (baseline_id, participant_id),
    UNIQUE (baseline_id, place)
);
CREATE TABLE baseline_slots (
    baseline_id     BIGINT  NOT NULL REFERENCES baselines (id),
    participant_id  BIGINT  NOT NULL REFERENCES users (id),
    seq             BIGINT  NOT NULL CHECK (seq >= 1),
    question_key    TEXT    NOT NULL,
    presentation    BIGINT  NOT NULL CHECK (presentation >= 0),
    shown           TEXT    NOT NULL,
    token           TEXT    NOT NULL UNIQUE,
    PRIMARY KEY (baseline_id, participant_id, seq),
    UNIQUE (baseline_id, participant_id, question_key, presentation)
);

-- What participants of a campaign's study or baseline read before they begin, and
-- whether their links may carry an external participant id (personal data: off unless
-- the admin turns it on).
CREATE TABLE part_settings (
    campaign_id       BIGINT  NOT NULL REFERENCES campaigns (id),
    part              TEXT    NOT NULL CHECK (part IN ('study', 'baseline')),
    consent           TEXT    NOT NULL DEFAULT '',
    keep_external_id  BIGINT  NOT NULL DEFAULT 0 CHECK (keep_external_id IN (0, 1)),
    PRIMARY KEY (campaign_id, part)
);

-- One link per participant: only its token's digest is kept; the completion code is
-- shown at the end; the external id only when the setting was on at the first visit.
CREATE TABLE invitations (
    id               INTEGER PRIMARY KEY,
    campaign_id      BIGINT  NOT NULL REFERENCES campaigns (id),
    part             TEXT    NOT NULL CHECK (part IN ('study', 'baseline')),
    participant_id   BIGINT  NOT NULL UNIQUE REFERENCES users (id),
    token_hash       TEXT    NOT NULL UNIQUE,
    completion_code  TEXT    NOT NULL,
    external_id      TEXT,
    created_at       BIGINT  NOT NULL,
    first_used_at    BIGINT,
    revoked_at       BIGINT
);
CREATE INDEX invitations_campaign ON invitations (campaign_id, part);
