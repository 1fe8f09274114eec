-- A campaign's whole life: its targets and calibration settings, the held-out
-- calibration items with their known verdicts, and each validator's calibration rounds.

ALTER TABLE campaigns ADD COLUMN target_per_task BIGINT NOT NULL DEFAULT 100;
ALTER TABLE campaigns ADD COLUMN calibration_threshold DOUBLE PRECISION NOT NULL DEFAULT 0.8;
ALTER TABLE campaigns ADD COLUMN calibration_min_items BIGINT NOT NULL DEFAULT 10;

-- A calibration clip and its items stay out of the queues, the statistics and the exports.
ALTER TABLE clips ADD COLUMN calibration BIGINT NOT NULL DEFAULT 0;
ALTER TABLE items ADD COLUMN calibration BIGINT NOT NULL DEFAULT 0;

-- The known verdict of a calibration item (items without one are not shown at all).
CREATE TABLE calibration_keys (
    item_id  BIGINT  PRIMARY KEY REFERENCES items (id),
    verdict  TEXT    NOT NULL CHECK (verdict IN ('valid', 'reject')),
    reasons  TEXT    NOT NULL,
    note     TEXT    NOT NULL
);

-- A validator's calibration rounds in a campaign; an admin's reset starts the next one.
CREATE TABLE calibration_rounds (
    campaign_id  BIGINT  NOT NULL REFERENCES campaigns (id),
    user_id      BIGINT  NOT NULL REFERENCES users (id),
    round        BIGINT  NOT NULL CHECK (round >= 1),
    started_at   BIGINT  NOT NULL,
    passed_at    BIGINT,
    reset_by     TEXT,
    PRIMARY KEY (campaign_id, user_id, round)
);

-- Calibration verdicts: one per item and round, never counted in the QC statistics.
CREATE TABLE calibration_decisions (
    id             INTEGER PRIMARY KEY,
    campaign_id    BIGINT  NOT NULL REFERENCES campaigns (id),
    item_id        BIGINT  NOT NULL REFERENCES items (id),
    validator_id   BIGINT  NOT NULL REFERENCES users (id),
    round          BIGINT  NOT NULL,
    verdict        TEXT    NOT NULL CHECK (verdict IN ('valid', 'reject')),
    reasons        TEXT    NOT NULL,
    note           TEXT    NOT NULL,
    time_spent_ms  BIGINT,
    decided_at     BIGINT  NOT NULL,
    agrees         BIGINT  NOT NULL CHECK (agrees IN (0, 1)),
    UNIQUE (item_id, validator_id, round)
);
CREATE INDEX calibration_decisions_validator ON calibration_decisions (campaign_id, validator_id, round);
