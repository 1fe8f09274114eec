-- no-transaction
-- The store rebuilt: a validator's queue and counts read from an index, not a scan;
-- tasks, questions and items ready for other benchmarks' protocols (free task
-- attributes, levels that are labels, questions without a clip review); a campaign
-- revision for cached copies; the calibration gate kept on the pool membership.
--
-- Tables that others refer to are rebuilt as SQLite documents it (lang_altertable.html,
-- section 7): with foreign keys off, in one transaction, create the new table, copy,
-- drop the old one, rename the new one to the old name (references by name then point
-- at it), and check every foreign key before committing. A transaction of its own,
-- because foreign keys cannot be turned off inside one; if the process stops between
-- this commit and the migration's bookkeeping, the store records it at the next start
-- (`Store::open`).
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;

ALTER TABLE campaigns ADD COLUMN revision BIGINT NOT NULL DEFAULT 0;

-- The key that makes media URLs opaque (random, made at first start).
CREATE TABLE server_keys (
    name   TEXT  PRIMARY KEY,
    value  TEXT  NOT NULL
);

-- Tasks: the taxonomy's attributes (VGenST's scale, perspective and dynamics) as one
-- JSON object, whatever attributes a lab's taxonomy has.
CREATE TABLE tasks_new (
    id           INTEGER PRIMARY KEY,
    campaign_id  BIGINT  NOT NULL REFERENCES campaigns (id),
    position     BIGINT  NOT NULL,            -- t in the pairing rule
    code         TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    attributes   TEXT    NOT NULL DEFAULT '{}', -- JSON object: the taxonomy's attributes of the task
    pair_rater1  BIGINT  REFERENCES users (id),   -- admin override of the default pair
    pair_rater2  BIGINT  REFERENCES users (id),
    rater1_id    BIGINT  REFERENCES users (id),   -- the pair in force (override, else the default
    rater2_id    BIGINT  REFERENCES users (id),   -- pair from the pool); kept up to date by the store
    pair_problem TEXT,                            -- why there is no pair in force, when there is none
    UNIQUE (campaign_id, code),
    UNIQUE (campaign_id, position),
    CHECK ((pair_rater1 IS NULL) = (pair_rater2 IS NULL)),
    CHECK (pair_rater1 IS NULL OR pair_rater1 <> pair_rater2),
    CHECK ((rater1_id IS NULL) = (rater2_id IS NULL)),
    CHECK (rater1_id IS NULL OR rater1_id <> rater2_id)
);
INSERT INTO tasks_new (id, campaign_id, position, code, name, attributes, pair_rater1, pair_rater2,
                       rater1_id, rater2_id, pair_problem)
SELECT id, campaign_id, position, code, name,
       json_object('scale', scale, 'perspective', perspective, 'dynamics', dynamics),
       pair_rater1, pair_rater2, rater1_id, rater2_id, pair_problem
FROM tasks ORDER BY id;
DROP TABLE tasks;
ALTER TABLE tasks_new RENAME TO tasks;

-- Questions: a level is a label of the lab's protocol (VGenST's L1-L3, or another's).
CREATE TABLE questions_new (
    id               INTEGER PRIMARY KEY,
    clip_version_id  BIGINT  NOT NULL REFERENCES clip_versions (id),
    position         BIGINT  NOT NULL,
    question_key     TEXT    NOT NULL,        -- the manifest's question_id
    qa_type          TEXT    NOT NULL,
    level            TEXT    NOT NULL,
    body             TEXT    NOT NULL,
    options          TEXT    NOT NULL,        -- JSON array of strings
    answer           BIGINT  NOT NULL,        -- 0-based index into options
    UNIQUE (clip_version_id, question_key)
);
INSERT INTO questions_new SELECT id, clip_version_id, position, question_key, qa_type, level, body, options, answer
FROM questions ORDER BY id;
DROP TABLE questions;
ALTER TABLE questions_new RENAME TO questions;
CREATE INDEX questions_key ON questions (question_key);

-- Items: each carries what its queue needs, so that a validator's next item is one
-- index seek: its key, whether it is of the clip's newest version, its place in review
-- order, and the pair whose queues hold it now (`queue1`, `queue2`: set while the item
-- is open for review, with whether each has decided).
CREATE TABLE items_new (
    id               INTEGER PRIMARY KEY,
    campaign_id      BIGINT  NOT NULL REFERENCES campaigns (id),
    task_id          BIGINT  NOT NULL REFERENCES tasks (id),
    stage            BIGINT  NOT NULL CHECK (stage IN (1, 2)),
    clip_version_id  BIGINT  NOT NULL REFERENCES clip_versions (id),
    question_id      BIGINT  REFERENCES questions (id),
    parent_item_id   BIGINT  REFERENCES items (id),      -- Stage 2: the clip's Stage 1 item, if the protocol reviews clips
    item_key         TEXT    NOT NULL,                   -- the clip's id (Stage 1) or the question's (Stage 2)
    clip_version     BIGINT  NOT NULL,
    is_current       BIGINT  NOT NULL DEFAULT 1 CHECK (is_current IN (0, 1)),  -- of the clip's newest version
    calibration      BIGINT  NOT NULL DEFAULT 0,
    qa_type          TEXT,
    level            TEXT,
    sort_key         TEXT    NOT NULL,                   -- review order within a stage
    outcome          TEXT    NOT NULL DEFAULT 'pending' CHECK (outcome IN
                       ('pending', 'both_pass', 'both_reject', 'split', 'split_accepted', 'split_rejected')),
    rater1_id        BIGINT  REFERENCES users (id),      -- the pair, fixed at the first verdict
    rater2_id        BIGINT  REFERENCES users (id),
    queue1           BIGINT  REFERENCES users (id),      -- the pair whose queues hold the item now
    queue2           BIGINT  REFERENCES users (id),
    decided1         BIGINT  NOT NULL DEFAULT 0,         -- whether queue1 (queue2) has decided it
    decided2         BIGINT  NOT NULL DEFAULT 0,
    verdict1         TEXT,                               -- rater 1's counted verdict, once both decided
    verdict2         TEXT,
    final1_id        BIGINT,                             -- the decisions that counted
    final2_id        BIGINT,
    reasons1         TEXT,
    reasons2         TEXT,
    completed_at     BIGINT,
    revision         BIGINT  NOT NULL DEFAULT 0,
    CHECK ((stage = 1 AND question_id IS NULL AND parent_item_id IS NULL)
        OR (stage = 2 AND question_id IS NOT NULL)),
    CHECK ((outcome = 'pending') = (completed_at IS NULL)),
    CHECK ((queue1 IS NULL) = (queue2 IS NULL))
);
INSERT INTO items_new (id, campaign_id, task_id, stage, clip_version_id, question_id, parent_item_id,
                   item_key, clip_version, is_current, calibration, qa_type, level, sort_key,
                   outcome, rater1_id, rater2_id, verdict1, verdict2, final1_id, final2_id,
                   reasons1, reasons2, completed_at, revision)
SELECT i.id, i.campaign_id, i.task_id, i.stage, i.clip_version_id, i.question_id, i.parent_item_id,
       CASE WHEN i.stage = 1 THEN c.clip_key ELSE q.question_key END,
       i.clip_version,
       CASE WHEN c.current_version_id = i.clip_version_id THEN 1 ELSE 0 END,
       i.calibration, i.qa_type, q.level,
       CASE WHEN i.stage = 1 THEN printf('%06d|%s', t.position, c.clip_key)
            ELSE printf('%06d|%s|%06d', t.position, c.clip_key, q.position) END,
       i.outcome, i.rater1_id, i.rater2_id, i.verdict1, i.verdict2, i.final1_id, i.final2_id,
       i.reasons1, i.reasons2, i.completed_at, i.revision
FROM items i
JOIN tasks t ON t.id = i.task_id
JOIN clip_versions v ON v.id = i.clip_version_id
JOIN clips c ON c.id = v.clip_id
LEFT JOIN questions q ON q.id = i.question_id
ORDER BY i.id;
DROP TABLE items;
ALTER TABLE items_new RENAME TO items;

-- Who holds each open item now: the pair fixed at its first verdict; before that, for
-- a question the pair that reviewed its clip, else the task's pair in force.
UPDATE items SET
    queue1 = COALESCE(rater1_id, (SELECT t.rater1_id FROM tasks t WHERE t.id = items.task_id)),
    queue2 = COALESCE(rater2_id, (SELECT t.rater2_id FROM tasks t WHERE t.id = items.task_id))
WHERE stage = 1 AND is_current = 1 AND calibration = 0
  AND COALESCE(rater1_id, (SELECT t.rater1_id FROM tasks t WHERE t.id = items.task_id)) IS NOT NULL;
UPDATE items SET
    queue1 = COALESCE(rater1_id, (SELECT p.rater1_id FROM items p WHERE p.id = items.parent_item_id)),
    queue2 = COALESCE(rater2_id, (SELECT p.rater2_id FROM items p WHERE p.id = items.parent_item_id))
WHERE stage = 2 AND is_current = 1 AND calibration = 0
  AND (SELECT p.outcome FROM items p WHERE p.id = items.parent_item_id) IN ('both_pass', 'split_accepted')
  AND COALESCE(rater1_id, (SELECT p.rater1_id FROM items p WHERE p.id = items.parent_item_id)) IS NOT NULL;
UPDATE items SET
    decided1 = CASE WHEN EXISTS (SELECT 1 FROM decisions d WHERE d.item_id = items.id AND d.validator_id = items.queue1) THEN 1 ELSE 0 END,
    decided2 = CASE WHEN EXISTS (SELECT 1 FROM decisions d WHERE d.item_id = items.id AND d.validator_id = items.queue2) THEN 1 ELSE 0 END
WHERE queue1 IS NOT NULL;

CREATE UNIQUE INDEX items_stage1 ON items (clip_version_id) WHERE stage = 1;
CREATE UNIQUE INDEX items_stage2 ON items (question_id) WHERE stage = 2;
CREATE UNIQUE INDEX items_key ON items (campaign_id, stage, item_key) WHERE is_current = 1;
CREATE INDEX items_version_key ON items (campaign_id, stage, item_key, clip_version);
CREATE INDEX items_scope ON items (campaign_id, stage, task_id, outcome);
CREATE INDEX items_outcome ON items (campaign_id, stage, outcome, sort_key);
CREATE INDEX items_parent ON items (parent_item_id);
CREATE INDEX items_version ON items (clip_version_id);
CREATE INDEX items_queue1 ON items (queue1, campaign_id, stage, decided1, sort_key) WHERE queue1 IS NOT NULL;
CREATE INDEX items_queue2 ON items (queue2, campaign_id, stage, decided2, sort_key) WHERE queue2 IS NOT NULL;

-- Each validator's done and total per campaign and stage, kept by the triggers below
-- whatever writes the items (a verdict, an import, a change of pair): the queue's
-- counts are one row, not a count of the campaign.
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
) GROUP BY campaign_id, stage, u;

CREATE TRIGGER items_queue_insert AFTER INSERT ON items WHEN NEW.queue1 IS NOT NULL
BEGIN
    INSERT INTO queue_counts (campaign_id, stage, user_id, total, done)
    VALUES (NEW.campaign_id, NEW.stage, NEW.queue1, 1, NEW.decided1)
    ON CONFLICT (campaign_id, stage, user_id) DO UPDATE SET total = total + 1, done = done + excluded.done;
    INSERT INTO queue_counts (campaign_id, stage, user_id, total, done)
    VALUES (NEW.campaign_id, NEW.stage, NEW.queue2, 1, NEW.decided2)
    ON CONFLICT (campaign_id, stage, user_id) DO UPDATE SET total = total + 1, done = done + excluded.done;
END;

CREATE TRIGGER items_queue_decided AFTER UPDATE OF decided1, decided2 ON items
WHEN OLD.queue1 IS NOT NULL AND OLD.queue1 = NEW.queue1 AND OLD.queue2 = NEW.queue2
 AND (OLD.decided1 <> NEW.decided1 OR OLD.decided2 <> NEW.decided2)
BEGIN
    UPDATE queue_counts SET done = done + NEW.decided1 - OLD.decided1
    WHERE campaign_id = NEW.campaign_id AND stage = NEW.stage AND user_id = NEW.queue1 AND NEW.decided1 <> OLD.decided1;
    UPDATE queue_counts SET done = done + NEW.decided2 - OLD.decided2
    WHERE campaign_id = NEW.campaign_id AND stage = NEW.stage AND user_id = NEW.queue2 AND NEW.decided2 <> OLD.decided2;
END;

CREATE TRIGGER items_queue_moved AFTER UPDATE OF queue1, queue2 ON items
WHEN OLD.queue1 IS NOT NEW.queue1 OR OLD.queue2 IS NOT NEW.queue2
BEGIN
    UPDATE queue_counts SET total = total - 1, done = done - OLD.decided1
    WHERE OLD.queue1 IS NOT NULL AND campaign_id = OLD.campaign_id AND stage = OLD.stage AND user_id = OLD.queue1;
    UPDATE queue_counts SET total = total - 1, done = done - OLD.decided2
    WHERE OLD.queue2 IS NOT NULL AND campaign_id = OLD.campaign_id AND stage = OLD.stage AND user_id = OLD.queue2;
    INSERT INTO queue_counts (campaign_id, stage, user_id, total, done)
    SELECT NEW.campaign_id, NEW.stage, NEW.queue1, 1, NEW.decided1 WHERE NEW.queue1 IS NOT NULL
    ON CONFLICT (campaign_id, stage, user_id) DO UPDATE SET total = total + 1, done = done + excluded.done;
    INSERT INTO queue_counts (campaign_id, stage, user_id, total, done)
    SELECT NEW.campaign_id, NEW.stage, NEW.queue2, 1, NEW.decided2 WHERE NEW.queue2 IS NOT NULL
    ON CONFLICT (campaign_id, stage, user_id) DO UPDATE SET total = total + 1, done = done + excluded.done;
END;

-- The calibration gate of each pool member, kept up to date by the store: open when
-- the campaign has no calibration items or when the member passed a round.
ALTER TABLE pool_members ADD COLUMN cleared BIGINT NOT NULL DEFAULT 0;
UPDATE pool_members SET cleared = CASE
    WHEN NOT EXISTS (SELECT 1 FROM items i JOIN calibration_keys k ON k.item_id = i.id
                     WHERE i.campaign_id = pool_members.campaign_id AND i.calibration = 1 AND i.is_current = 1)
      OR EXISTS (SELECT 1 FROM calibration_rounds r
                 WHERE r.campaign_id = pool_members.campaign_id AND r.user_id = pool_members.user_id
                   AND r.passed_at IS NOT NULL)
    THEN 1 ELSE 0 END;

-- Every reference still holds: a violation fails this insert and nothing is committed.
CREATE TEMP TABLE foreign_key_violations (none_allowed BIGINT CHECK (none_allowed IS NULL));
INSERT INTO foreign_key_violations SELECT 1 FROM pragma_foreign_key_check;
DROP TABLE foreign_key_violations;
COMMIT;
PRAGMA foreign_keys = ON;
