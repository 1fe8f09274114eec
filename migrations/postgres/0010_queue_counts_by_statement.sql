-- The queue counters are kept by statement, not by row: a row trigger that adds 1 to
-- the same counter row for each of 1,500 inserted items leaves PostgreSQL a chain of
-- 1,500 row versions to walk on each update (an import of 100,000 clips took minutes).
-- A statement's changes are summed per counter first, and each counter row is
-- updated once, in key order (so that two statements lock counters in one order).
DROP TRIGGER items_queue_insert ON items;
DROP TRIGGER items_queue_update ON items;
DROP FUNCTION tandem_items_queue();
DROP FUNCTION tandem_queue_count(BIGINT, BIGINT, BIGINT, BIGINT, BIGINT);

CREATE FUNCTION tandem_items_queue_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO queue_counts (campaign_id, stage, user_id, total, done)
    SELECT campaign_id, stage, u, SUM(dt), SUM(dd) FROM (
        SELECT campaign_id, stage, queue1 AS u, 1 AS dt, decided1 AS dd FROM new_rows WHERE queue1 IS NOT NULL
        UNION ALL
        SELECT campaign_id, stage, queue2, 1, decided2 FROM new_rows WHERE queue2 IS NOT NULL
    ) d
    GROUP BY campaign_id, stage, u
    ORDER BY campaign_id, stage, u
    ON CONFLICT (campaign_id, stage, user_id)
    DO UPDATE SET total = queue_counts.total + excluded.total, done = queue_counts.done + excluded.done;
    RETURN NULL;
END
$$;

CREATE FUNCTION tandem_items_queue_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO queue_counts (campaign_id, stage, user_id, total, done)
    SELECT campaign_id, stage, u, SUM(dt), SUM(dd) FROM (
        SELECT campaign_id, stage, queue1 AS u, 1 AS dt, decided1 AS dd FROM new_rows WHERE queue1 IS NOT NULL
        UNION ALL
        SELECT campaign_id, stage, queue2, 1, decided2 FROM new_rows WHERE queue2 IS NOT NULL
        UNION ALL
        SELECT campaign_id, stage, queue1, -1, -decided1 FROM old_rows WHERE queue1 IS NOT NULL
        UNION ALL
        SELECT campaign_id, stage, queue2, -1, -decided2 FROM old_rows WHERE queue2 IS NOT NULL
    ) d
    GROUP BY campaign_id, stage, u
    HAVING SUM(dt) <> 0 OR SUM(dd) <> 0
    ORDER BY campaign_id, stage, u
    ON CONFLICT (campaign_id, stage, user_id)
    DO UPDATE SET total = queue_counts.total + excluded.total, done = queue_counts.done + excluded.done;
    RETURN NULL;
END
$$;

CREATE TRIGGER items_queue_inserted AFTER INSERT ON items
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION tandem_items_queue_inserted();
CREATE TRIGGER items_queue_updated AFTER UPDATE ON items
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION tandem_items_queue_updated();
