-- Each validator's queue counter in eight parts, chosen by the item's id. A verdict adds
-- to its validator's `done`, and PostgreSQL holds that counter row's lock until the
-- verdict commits (its WAL flushed): with one row per validator, that validator's
-- verdicts on different items waited for each other's commits. Readers sum the parts.
ALTER TABLE queue_counts ADD COLUMN part BIGINT NOT NULL DEFAULT 0;
ALTER TABLE queue_counts DROP CONSTRAINT queue_counts_pkey;
ALTER TABLE queue_counts ADD PRIMARY KEY (campaign_id, stage, user_id, part);
-- Counted again from the items, each in its part.
DELETE FROM queue_counts;
INSERT INTO queue_counts (campaign_id, stage, user_id, part, total, done)
SELECT campaign_id, stage, u, part, COUNT(*), SUM(d) FROM (
    SELECT campaign_id, stage, queue1 AS u, id % 8 AS part, decided1 AS d FROM items WHERE queue1 IS NOT NULL
    UNION ALL
    SELECT campaign_id, stage, queue2, id % 8, decided2 FROM items WHERE queue2 IS NOT NULL
) q GROUP BY campaign_id, stage, u, part;

CREATE OR REPLACE FUNCTION tandem_items_queue_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO queue_counts (campaign_id, stage, user_id, part, total, done)
    SELECT campaign_id, stage, u, part, SUM(dt), SUM(dd) FROM (
        SELECT campaign_id, stage, queue1 AS u, id % 8 AS part, 1 AS dt, decided1 AS dd FROM new_rows WHERE queue1 IS NOT NULL
        UNION ALL
        SELECT campaign_id, stage, queue2, id % 8, 1, decided2 FROM new_rows WHERE queue2 IS NOT NULL
    ) d
    GROUP BY campaign_id, stage, u, part
    ORDER BY campaign_id, stage, u, part
    ON CONFLICT (campaign_id, stage, user_id, part)
    DO UPDATE SET total = queue_counts.total + excluded.total, done = queue_counts.done + excluded.done;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION tandem_items_queue_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO queue_counts (campaign_id, stage, user_id, part, total, done)
    SELECT campaign_id, stage, u, part, SUM(dt), SUM(dd) FROM (
        SELECT campaign_id, stage, queue1 AS u, id % 8 AS part, 1 AS dt, decided1 AS dd FROM new_rows WHERE queue1 IS NOT NULL
        UNION ALL
        SELECT campaign_id, stage, queue2, id % 8, 1, decided2 FROM new_rows WHERE queue2 IS NOT NULL
        UNION ALL
        SELECT campaign_id, stage, queue1, id % 8, -1, -decided1 FROM old_rows WHERE queue1 IS NOT NULL
        UNION ALL
        SELECT campaign_id, stage, queue2, id % 8, -1, -decided2 FROM old_rows WHERE queue2 IS NOT NULL
    ) d
    GROUP BY campaign_id, stage, u, part
    HAVING SUM(dt) <> 0 OR SUM(dd) <> 0
    ORDER BY campaign_id, stage, u, part
    ON CONFLICT (campaign_id, stage, user_id, part)
    DO UPDATE SET total = queue_counts.total + excluded.total, done = queue_counts.done + excluded.done;
    RETURN NULL;
END
$$;
