-- An author's withdrawal of a retained question whose key the blind key check put in
-- doubt: the question leaves the retained benchmark (and the baseline's draw), with a
-- reason of the protocol's Stage 2 and a note. The review's outcome stays as the pair
-- and the author left it, so the agreement tables do not move. One per item, final.
CREATE TABLE withdrawals (
    id           INTEGER PRIMARY KEY,
    item_id      BIGINT  NOT NULL UNIQUE REFERENCES items (id),
    campaign_id  BIGINT  NOT NULL REFERENCES campaigns (id),
    author_id    BIGINT  NOT NULL REFERENCES users (id),
    reason       TEXT    NOT NULL CHECK (reason <> ''),
    note         TEXT    NOT NULL CHECK (note <> ''),
    decided_at   BIGINT  NOT NULL,
    origin       TEXT    NOT NULL CHECK (origin IN ('api', 'web'))
);
CREATE INDEX withdrawals_campaign ON withdrawals (campaign_id, item_id);

CREATE TRIGGER withdrawals_no_update BEFORE UPDATE ON withdrawals
BEGIN SELECT RAISE(ABORT, 'withdrawals are final'); END;
CREATE TRIGGER withdrawals_no_delete BEFORE DELETE ON withdrawals
BEGIN SELECT RAISE(ABORT, 'withdrawals are final'); END;
