-- The store rebuilt (the same as migrations/sqlite/0008_store.sql): a validator's
-- queue and counts read from an index, not a scan; tasks, questions and items ready
-- for other benchmarks' protocols (free task attributes, levels that are labels,
-- questions without a clip review); a campaign revision for cached copies; the
-- calibration gate kept on the pool membership.

ALTER TABLE campaigns ADD COLUMN revision BIGINT NOT NULL DEFAULT 0;

-- The key that makes media URLs opaque (random, made at first start).
CREATE TABLE server_keys (
    name   TEXT  PRIMARY KEY,
    value  TEXT  NOT NULL
);

-- Tasks: the taxonomy's attributes as one JSON object.
ALTER TABLE tasks ADD COLUMN attributes TEXT NOT NULL DEFAULT '{}';
UPDATE tasks SET attributes = json_build_object('scale', scale, 'perspective', perspective, 'dynamics', dynamics)::text;
ALTER TABLE tasks DROP COLUMN scale, DROP COLUMN perspective, DROP COLUMN dynamics;

-- Questions: a level is a label of the lab's protocol.
DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT conname FROM pg_constraint
             WHERE conrelid = 'questions'::regclass AND contype = 'c'
               AND pg_get_constraintdef(oid) LIKE '%level%'
    LOOP
        EXECUTE format('ALTER TABLE questions DROP CONSTRAINT %I', r.conname);
    END LOOP;
END
$$;

-- Items: each carries what its queue needs (see the SQLite migration).
DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT conname FROM pg_constraint
             WHERE conrelid = 'items'::regclass AND contype = 'c'
               AND pg_get_constraintdef(oid) LIKE '%parent_item_id%'
    LOOP
        EXECUTE format('ALTER TABLE items DROP CONSTRAINT %I', r.conname);
    END LOOP;
END
$$;
ALTER TABLE items ADD CONSTRAINT items_stage_shape CHECK (
    (stage = 1 AND question_id IS NULL AND parent_item_id IS NULL)
    OR (stage = 2 AND question_id IS NOT NULL));
ALTER TABLE items ADD COLUMN item_key TEXT;
ALTER TABLE items ADD COLUMN is_current BIGINT NOT NULL DEFAULT 1 CHECK (is_current IN (0, 1));
ALTER TABLE items ADD COLUMN level TEXT;
ALTER TABLE items ADD COLUMN sort_key TEXT COLLATE "C";
ALTER TABLE items ADD COLUMN queue1 BIGINT REFERENCES users (id);
ALTER TABLE items ADD COLUMN queue2 BIGINT REFERENCES users (id);
ALTER TABLE items ADD COLUMN decided1 BIGINT NOT NULL DEFAULT 0;
ALTER TABLE items ADD COLUMN decided2 BIGINT NOT NULL DEFAULT 0;
ALTER TABLE items ADD CONSTRAINT items_queue_pair CHECK ((queue1 IS NULL) = (queue2 IS NULL));

UPDATE items SET
    item_key = c.clip_key,
    is_current = CASE WHEN c.current_version_id = items.clip_version_id THEN 1 ELSE 0 END,
    sort_key = lpad(t.position::text, 6, '0') || '|' || c.clip_key
FROM clip_versions v, clips c, tasks t
WHERE items.stage = 1 AND v.id = items.clip_version_id AND c.id = v.clip_id AND t.id = items.task_id;
UPDATE items SET
    item_key = q.question_key,
    level = q.level,
    is_current = CASE WHEN c.current_version_id = items.clip_version_id THEN 1 ELSE 0 END,
    sort_key = lpad(t.position::text, 6, '0') || '|' || c.clip_key || '|' || lpad(q.position::text, 6, '0')
FROM questions q, clip_versions v, clips c, tasks t
WHERE items.stage = 2 AND q.id = items.question_id AND v.id = items.clip_version_id
  AND c.id = v.clip_id AND t.id = items.task_id;
ALTER TABLE items ALTER COLUMN item_key SET NOT NULL;
ALTER TABLE items ALTER COLUMN sort_key SET NOT NULL;

UPDATE items SET queue1 = COALESCE(items.rater1_id, t.rater1_id), queue2 = COALESCE(items.rater2_id, t.rater2_id)
FROM tasks t
WHERE t.id = items.task_id AND items.stage = 1 AND items.is_current = 1 AND items.calibration = 0
  AND COALESCE(items.rater1_id, t.rater1_id) IS NOT NULL;
UPDATE items SET queue1 = COALESCE(items.rater1_id, p.rater1_id), queue2 = COALESCE(items.rater2_id, p.rater2_id)
FROM items p
WHERE p.id = items.parent_item_id AND items.stage = 2 AND items.is_current = 1 AND items.calibration = 0
  AND p.outcome IN ('both_pass', 'split_accepted')
  AND COALESCE(items.rater1_id, p.rater1_id) IS NOT NULL;
UPDATE items SET
    decided1 = CASE WHEN EXISTS (SELECT 1 FROM decisions d WHERE d.item_id = items.id AND d.validator_id = items.queue1) THEN 1 ELSE 0 END,
    decided2 = CASE WHEN EXISTS (SELECT 1 FROM decisions d WHERE d.item_id = items.id AND d.validator_id = items.queue2) THEN 1 ELSE 0 END
WHERE queue1 IS NOT NULL;

DROP INDEX items_scope;
CREATE UNIQUE INDEX items_key ON items (campaign_id, stage, item_key) WHERE is_current = 1;
CREATE INDEX items_version_key ON items (campaign_id, stage, item_key, clip_version);
CREATE INDEX items_scope ON items (campaign_id, stage, task_id, outcome);
CREATE INDEX items_outcome ON items (campaign_id, stage, outcome, sort_key);
CREATE INDEX items_version ON items (clip_version_id);
CREATE INDEX items_queue1 ON items (queue1, campaign_id, stage, decided1, sort_key) WHERE queue1 IS NOT NULL;
CREATE INDEX items_queue2 ON items (queue2, campaign_id, stage, decided2, sort_key) WHERE queue2 IS NOT NULL;

-- Each validator's done and total per campaign and stage, kept by the trigger below.
CREATE TABLE queue_counts (
    campaign_id  BIGINT  NOT NULL,
    stage        BIGINT  NOT NULL,
    user_id      BIGINT  NOT NULL,
    total        BIGINT  NOT NULL DEFAULT 0,
    done         BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (campaign_id, stage, user_id)
);
INSERT INTO queue_counts (campaign_id, stage, user_id, total, done)
SELECT campaign_id, stage, u, COUNT(*), SUM(d) FROM (
    SELECT campaign_id, stage, queue1 AS u, decided1 AS d FROM items WHERE queue1 IS NOT NULL
    UNION ALL
    SELECT campaign_id, stage, queue2 AS u, decided2 AS d FROM items WHERE queue2 IS NOT NULL
) q GROUP BY campaign_id, stage, u;

CREATE FUNCTION tandem_queue_count(c BIGINT, s BIGINT, u BIGINT, dt BIGINT, dd BIGINT)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF u IS NULL THEN
        RETURN;
    END IF;
    INSERT INTO queue_counts (campaign_id, stage, user_id, total, done) VALUES (c, s, u, dt, dd)
    ON CONFLICT (campaign_id, stage, user_id)
    DO UPDATE SET total = queue_counts.total + dt, done = queue_counts.done + dd;
END
$$;

CREATE FUNCTION tandem_items_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM tandem_queue_count(NEW.campaign_id, NEW.stage, NEW.queue1, 1, NEW.decided1);
        PERFORM tandem_queue_count(NEW.campaign_id, NEW.stage, NEW.queue2, 1, NEW.decided2);
    ELSIF OLD.queue1 IS NOT DISTINCT FROM NEW.queue1 AND OLD.queue2 IS NOT DISTINCT FROM NEW.queue2 THEN
        IF NEW.decided1 <> OLD.decided1 THEN
            PERFORM tandem_queue_count(NEW.campaign_id, NEW.stage, NEW.queue1, 0, NEW.decided1 - OLD.decided1);
        END IF;
        IF NEW.decided2 <> OLD.decided2 THEN
            PERFORM tandem_queue_count(NEW.campaign_id, NEW.stage, NEW.queue2, 0, NEW.decided2 - OLD.decided2);
        END IF;
    ELSE
        PERFORM tandem_queue_count(OLD.campaign_id, OLD.stage, OLD.queue1, -1, -OLD.decided1);
        PERFORM tandem_queue_count(OLD.campaign_id, OLD.stage, OLD.queue2, -1, -OLD.decided2);
        PERFORM tandem_queue_count(NEW.campaign_id, NEW.stage, NEW.queue1, 1, NEW.decided1);
        PERFORM tandem_queue_count(NEW.campaign_id, NEW.stage, NEW.queue2, 1, NEW.decided2);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER items_queue_insert AFTER INSERT ON items
FOR EACH ROW WHEN (NEW.queue1 IS NOT NULL) EXECUTE FUNCTION tandem_items_queue();
CREATE TRIGGER items_queue_update AFTER UPDATE OF queue1, queue2, decided1, decided2 ON items
FOR EACH ROW WHEN (OLD.queue1 IS DISTINCT FROM NEW.queue1 OR OLD.queue2 IS DISTINCT FROM NEW.queue2
                   OR OLD.decided1 <> NEW.decided1 OR OLD.decided2 <> NEW.decided2)
EXECUTE FUNCTION tandem_items_queue();

-- The calibration gate of each pool member, kept up to date by the store.
ALTER TABLE pool_members ADD COLUMN cleared BIGINT NOT NULL DEFAULT 0;
UPDATE pool_members SET cleared = CASE
    WHEN NOT EXISTS (SELECT 1 FROM items i JOIN calibration_keys k ON k.item_id = i.id
                     WHERE i.campaign_id = pool_members.campaign_id AND i.calibration = 1 AND i.is_current = 1)
      OR EXISTS (SELECT 1 FROM calibration_rounds r
                 WHERE r.campaign_id = pool_members.campaign_id AND r.user_id = pool_members.user_id
                   AND r.passed_at IS NOT NULL)
    THEN 1 ELSE 0 END;
