-- The blind key check (a campaign setting, Stage 2): a validator answers a question
-- from the video before its keyed answer is shown, then gives the verdict. One answer
-- per validator and question, never changed: once the key is seen, an answer is no
-- longer blind.
ALTER TABLE campaigns ADD COLUMN blind_key_check BIGINT NOT NULL DEFAULT 0 CHECK (blind_key_check IN (0, 1));

CREATE TABLE blind_answers (
    id            INTEGER PRIMARY KEY,
    item_id       BIGINT  NOT NULL REFERENCES items (id),
    validator_id  BIGINT  NOT NULL REFERENCES users (id),
    campaign_id   BIGINT  NOT NULL REFERENCES campaigns (id),
    -- 0-based index into the question's options.
    answer        BIGINT  NOT NULL CHECK (answer >= 0),
    -- Whether it is the keyed answer as the question stood when it was given.
    agrees        BIGINT  NOT NULL CHECK (agrees IN (0, 1)),
    answered_at   BIGINT  NOT NULL,
    UNIQUE (item_id, validator_id)
);
CREATE INDEX blind_answers_campaign ON blind_answers (campaign_id, item_id);

-- Answers are records: once stored, never changed or removed.
CREATE TRIGGER blind_answers_no_update BEFORE UPDATE ON blind_answers
BEGIN SELECT RAISE(ABORT, 'blind answers are final'); END;
CREATE TRIGGER blind_answers_no_delete BEFORE DELETE ON blind_answers
BEGIN SELECT RAISE(ABORT, 'blind answers are final'); END;
