-- The blind video-quality study of a campaign (SPEC section 4).

CREATE TABLE studies (
    id            INTEGER PRIMARY KEY,
    campaign_id   BIGINT  NOT NULL UNIQUE REFERENCES campaigns (id),
    sources       TEXT    NOT NULL,            -- JSON array: the declared sources, in table order
    display_mode  TEXT    NOT NULL DEFAULT 'video' CHECK (display_mode IN ('video', 'strip')),
    strip_frames  BIGINT  NOT NULL DEFAULT 8 CHECK (strip_frames BETWEEN 2 AND 32),
    seed          BIGINT  NOT NULL,            -- draws every participant's order, reproducibly
    created_at    BIGINT  NOT NULL
);

CREATE TABLE study_sets (
    id        INTEGER PRIMARY KEY,
    study_id  BIGINT  NOT NULL REFERENCES studies (id),
    set_key   TEXT    NOT NULL,                -- the file's set_id
    position  BIGINT  NOT NULL,                -- order of the import (never shown)
    UNIQUE (study_id, set_key),
    UNIQUE (study_id, position)
);

CREATE TABLE study_clips (
    id            INTEGER PRIMARY KEY,
    study_id      BIGINT  NOT NULL REFERENCES studies (id),
    set_id        BIGINT  NOT NULL REFERENCES study_sets (id),
    clip_key      TEXT    NOT NULL,            -- the file's clip_id
    source        TEXT    NOT NULL,
    truth         TEXT    NOT NULL CHECK (truth IN ('real', 'fake')),
    source_file   TEXT    NOT NULL,            -- the file's `file`, as written
    source_sha256 TEXT    NOT NULL,            -- of the file as imported
    media_sha256  TEXT    NOT NULL,            -- of the copy served (metadata removed when ffmpeg is there)
    media_type    TEXT    NOT NULL,
    media_size    BIGINT  NOT NULL,
    UNIQUE (study_id, clip_key),
    UNIQUE (set_id, source)
);

-- Each participant's order of the sets (drawn once from the study's seed, then kept).
CREATE TABLE study_orders (
    id              INTEGER PRIMARY KEY,
    study_id        BIGINT  NOT NULL REFERENCES studies (id),
    participant_id  BIGINT  NOT NULL REFERENCES users (id),
    set_id          BIGINT  NOT NULL REFERENCES study_sets (id),
    position        BIGINT  NOT NULL CHECK (position >= 1),
    UNIQUE (participant_id, set_id),
    UNIQUE (study_id, participant_id, position)
);

-- Within a set, the participant's order of its clips (labelled A, B, ...) and the
-- opaque token of each clip's URL, random and this participant's own.
CREATE TABLE study_views (
    order_id  BIGINT  NOT NULL REFERENCES study_orders (id),
    clip_id   BIGINT  NOT NULL REFERENCES study_clips (id),
    slot      BIGINT  NOT NULL CHECK (slot >= 0),   -- 0 is A
    token     TEXT    NOT NULL UNIQUE,
    PRIMARY KEY (order_id, clip_id),
    UNIQUE (order_id, slot)
);

CREATE TABLE study_responses (
    id              INTEGER PRIMARY KEY,
    study_id        BIGINT  NOT NULL REFERENCES studies (id),
    participant_id  BIGINT  NOT NULL REFERENCES users (id),
    clip_id         BIGINT  NOT NULL REFERENCES study_clips (id),
    axis            TEXT    NOT NULL CHECK (axis IN
                      ('photorealism', 'temporal_coherence', 'comprehensibility', 'real_fake')),
    value           TEXT    NOT NULL,          -- a rank 1..n, or real | fake
    origin          TEXT    NOT NULL CHECK (origin IN ('web', 'import')),
    answered_at     BIGINT  NOT NULL,
    UNIQUE (participant_id, clip_id, axis)
);
CREATE INDEX study_responses_study ON study_responses (study_id);
