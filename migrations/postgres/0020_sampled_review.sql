-- Sampled review (see the SQLite migration): the lots a draw makes, each item's place in
-- them, and a third outcome, `by_sample`: retained unreviewed, its lot's sample passed.
CREATE TABLE sample_lots (
    id                BIGSERIAL PRIMARY KEY,
    campaign_id       BIGINT  NOT NULL REFERENCES campaigns (id),
    stage             BIGINT  NOT NULL CHECK (stage IN (1, 2)),
    task_id           BIGINT  NOT NULL REFERENCES tasks (id),
    qa_type           TEXT,
    rule              TEXT    NOT NULL,
    protocol_version  BIGINT  NOT NULL,
    seed              BIGINT  NOT NULL,
    lot_size          BIGINT  NOT NULL CHECK (lot_size >= 1),
    n                 BIGINT  NOT NULL CHECK (n >= 1 AND n <= lot_size),
    c                 BIGINT  NOT NULL CHECK (c >= 0),
    drawn_at          BIGINT  NOT NULL,
    decision          TEXT    CHECK (decision IN ('accepted', 'rejected')),
    defects           BIGINT,
    settled_at        BIGINT,
    CHECK ((decision IS NULL) = (settled_at IS NULL) AND (decision IS NULL) = (defects IS NULL))
);
CREATE INDEX sample_lots_campaign ON sample_lots (campaign_id, stage, task_id);

DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT conname FROM pg_constraint
             WHERE conrelid = 'items'::regclass AND contype = 'c'
               AND pg_get_constraintdef(oid) LIKE '%split_rejected%'
               AND pg_get_constraintdef(oid) NOT LIKE '%completed_at%'
    LOOP
        EXECUTE format('ALTER TABLE items DROP CONSTRAINT %I', r.conname);
    END LOOP;
END
$$;
ALTER TABLE items ADD CONSTRAINT items_outcome CHECK (outcome IN
    ('pending', 'both_pass', 'both_reject', 'split', 'split_accepted', 'split_rejected', 'by_sample'));
ALTER TABLE items ADD COLUMN held BIGINT NOT NULL DEFAULT 0 CHECK (held IN (0, 1));
ALTER TABLE items ADD COLUMN lot_id BIGINT REFERENCES sample_lots (id);
ALTER TABLE items ADD COLUMN drawn BIGINT NOT NULL DEFAULT 0 CHECK (drawn IN (0, 1));
ALTER TABLE items ADD CONSTRAINT items_drawn_in_lot CHECK (drawn = 0 OR lot_id IS NOT NULL);
ALTER TABLE items ADD CONSTRAINT items_held_queue CHECK (held = 0 OR (queue1 IS NULL AND drawn = 0));
ALTER TABLE items ADD CONSTRAINT items_by_sample CHECK (outcome <> 'by_sample' OR (lot_id IS NOT NULL AND drawn = 0));
CREATE INDEX items_lot ON items (lot_id, drawn) WHERE lot_id IS NOT NULL;
CREATE INDEX items_held ON items (campaign_id, stage, task_id) WHERE held = 1 AND lot_id IS NULL;
