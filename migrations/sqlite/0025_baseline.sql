-- The human baseline (VGenST-Bench Table 16): its participants are a role of their own,
-- so that the one role a person holds in a campaign keeps the groups apart (QC, study,
-- baseline). SQLite cannot change a CHECK in place: the table is rebuilt.
CREATE TABLE campaign_members_new (
    campaign_id  INTEGER NOT NULL REFERENCES campaigns (id),
    user_id      INTEGER NOT NULL REFERENCES users (id),
    role         TEXT    NOT NULL CHECK (role IN ('validator', 'author', 'participant', 'baseline')),
    PRIMARY KEY (campaign_id, user_id)
);
INSERT INTO campaign_members_new (campaign_id, user_id, role)
SELECT campaign_id, user_id, role FROM campaign_members;
DROP TABLE campaign_members;
ALTER TABLE campaign_members_new RENAME TO campaign_members;
CREATE INDEX campaign_members_user ON campaign_members (user_id);

-- One row per presentation a baseline participant answered: the rotation (0 = the
-- options in the manifest's order), the options' letters in the order shown (`CDAB`)
-- and the letter of the shown position chosen. Answers are final: never updated.
CREATE TABLE baseline_answers (
    campaign_id     INTEGER NOT NULL REFERENCES campaigns (id),
    participant_id  INTEGER NOT NULL REFERENCES users (id),
    question_key    TEXT    NOT NULL,  -- the manifest's question_id
    presentation    INTEGER NOT NULL CHECK (presentation >= 0),
    shown           TEXT    NOT NULL,
    chosen          TEXT    NOT NULL,
    origin          TEXT    NOT NULL CHECK (origin IN ('web', 'import')),
    answered_at     INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, participant_id, question_key, presentation)
);
