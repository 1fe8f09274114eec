-- (See the SQLite migration.)
ALTER TABLE campaign_members DROP CONSTRAINT campaign_members_role_check;
ALTER TABLE campaign_members ADD CONSTRAINT campaign_members_role_check
    CHECK (role IN ('validator', 'author', 'participant', 'baseline'));

CREATE TABLE baseline_answers (
    campaign_id     BIGINT  NOT NULL REFERENCES campaigns (id),
    participant_id  BIGINT  NOT NULL REFERENCES users (id),
    question_key    TEXT    NOT NULL,
    presentation    BIGINT  NOT NULL CHECK (presentation >= 0),
    shown           TEXT    NOT NULL,
    chosen          TEXT    NOT NULL,
    origin          TEXT    NOT NULL CHECK (origin IN ('web', 'import')),
    answered_at     BIGINT  NOT NULL,
    PRIMARY KEY (campaign_id, participant_id, question_key, presentation)
);
