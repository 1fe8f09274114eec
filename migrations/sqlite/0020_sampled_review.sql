-- no-transaction
-- Sampled review: a protocol may review a stratum (a task's clips; a task's questions,
-- of one QA type or all) by sample. Its items are held when they arrive (`held`,
-- in no queue); a draw makes every held item of a stratum one lot (`sample_lots`, with
-- the seed it was drawn from and the plan's n and c) and queues the drawn ones
-- (`drawn`); settling the lot once its sample is reviewed accepts it (its undrawn items
-- retained "by sample", a third outcome: no reviewer) or rejects it (its undrawn items go
-- to full review).
--
-- The outcome's CHECK gains `by_sample`, so `items` is rebuilt as 0008 rebuilt it
-- (SQLite's lang_altertable.html, section 7): foreign keys off, one transaction of its
-- own, the views that name it dropped first and made again after; its indexes and
-- triggers made again as they were. If the process stops between this commit and the
-- migration's bookkeeping, the store records it at the next start (`Store::open`).
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;

CREATE TABLE sample_lots (
    id                INTEGER PRIMARY KEY,
    campaign_id       BIGINT  NOT NULL REFERENCES campaigns (id),
    stage             BIGINT  NOT NULL CHECK (stage IN (1, 2)),
    task_id           BIGINT  NOT NULL REFERENCES tasks (id),
    qa_type           TEXT,                      -- the rule's QA type; NULL: every one of the task
    rule              TEXT    NOT NULL,          -- the protocol's rule when drawn, as JSON
    protocol_version  BIGINT  NOT NULL,
    seed              BIGINT  NOT NULL,          -- the draw's seed (a u64's bits)
    lot_size          BIGINT  NOT NULL CHECK (lot_size >= 1),
    n                 BIGINT  NOT NULL CHECK (n >= 1 AND n <= lot_size),  -- drawn
    c                 BIGINT  NOT NULL CHECK (c >= 0),
    drawn_at          BIGINT  NOT NULL,
    decision          TEXT    CHECK (decision IN ('accepted', 'rejected')),
    defects           BIGINT,
    settled_at        BIGINT,
    CHECK ((decision IS NULL) = (settled_at IS NULL) AND (decision IS NULL) = (defects IS NULL))
);
CREATE INDEX sample_lots_campaign ON sample_lots (campaign_id, stage, task_id);

DROP VIEW split_details;
DROP VIEW item_details;

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
                       ('pending', 'both_pass', 'both_reject', 'split', 'split_accepted', 'split_rejected',
                        'by_sample')),                      -- by_sample: retained unreviewed, its lot's sample passed
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
    held             BIGINT  NOT NULL DEFAULT 0 CHECK (held IN (0, 1)),  -- in no queue until its lot is drawn (then settled, if undrawn)
    lot_id           BIGINT  REFERENCES sample_lots (id),  -- its lot, once a draw took it
    drawn            BIGINT  NOT NULL DEFAULT 0 CHECK (drawn IN (0, 1)),    -- in its lot's sample
    CHECK ((stage = 1 AND question_id IS NULL AND parent_item_id IS NULL)
        OR (stage = 2 AND question_id IS NOT NULL)),
    CHECK ((outcome = 'pending') = (completed_at IS NULL)),
    CHECK ((queue1 IS NULL) = (queue2 IS NULL)),
    CHECK (drawn = 0 OR lot_id IS NOT NULL),
    CHECK (held = 0 OR (queue1 IS NULL AND drawn = 0)),
    CHECK (outcome <> 'by_sample' OR (lot_id IS NOT NULL AND drawn = 0))
);
INSERT INTO items_new (id, campaign_id, task_id, stage, clip_version_id, question_id, parent_item_id, item_key, clip_version, is_current, calibration, qa_type, level, sort_key, outcome, rater1_id, rater2_id, queue1, queue2, decided1, decided2, verdict1, verdict2, final1_id, final2_id, reasons1, reasons2, completed_at, revision)
SELECT id, campaign_id, task_id, stage, clip_version_id, question_id, parent_item_id, item_key, clip_version, is_current, calibration, qa_type, level, sort_key, outcome, rater1_id, rater2_id, queue1, queue2, decided1, decided2, verdict1, verdict2, final1_id, final2_id, reasons1, reasons2, completed_at, revision FROM items ORDER BY id;
DROP TABLE items;
ALTER TABLE items_new RENAME TO items;

CREATE UNIQUE INDEX items_key ON items (campaign_id, stage, item_key) WHERE is_current = 1;
CREATE INDEX items_outcome ON items (campaign_id, stage, outcome, sort_key);
CREATE INDEX items_parent ON items (parent_item_id);
CREATE INDEX items_queue1 ON items (queue1, campaign_id, stage, decided1, sort_key) WHERE queue1 IS NOT NULL;
CREATE INDEX items_queue2 ON items (queue2, campaign_id, stage, decided2, sort_key) WHERE queue2 IS NOT NULL;
CREATE INDEX items_scope ON items (campaign_id, stage, task_id, outcome);
CREATE UNIQUE INDEX items_stage1 ON items (clip_version_id) WHERE question_id IS NULL;
CREATE UNIQUE INDEX items_stage2 ON items (question_id);
CREATE INDEX items_version ON items (clip_version_id);
CREATE INDEX items_version_key ON items (campaign_id, stage, item_key, clip_version);
CREATE INDEX items_lot ON items (lot_id, drawn) WHERE lot_id IS NOT NULL;
CREATE INDEX items_held ON items (campaign_id, stage, task_id) WHERE held = 1 AND lot_id IS NULL;

CREATE TRIGGER items_queue_decided AFTER UPDATE OF decided1, decided2 ON items
WHEN OLD.queue1 IS NOT NULL AND OLD.queue1 = NEW.queue1 AND OLD.queue2 = NEW.queue2
 AND (OLD.decided1 <> NEW.decided1 OR OLD.decided2 <> NEW.decided2)
BEGIN
    UPDATE queue_counts SET done = done + NEW.decided1 - OLD.decided1
    WHERE campaign_id = NEW.campaign_id AND stage = NEW.stage AND user_id = NEW.queue1 AND NEW.decided1 <> OLD.decided1;
    UPDATE queue_counts SET done = done + NEW.decided2 - OLD.decided2
    WHERE campaign_id = NEW.campaign_id AND stage = NEW.stage AND user_id = NEW.queue2 AND NEW.decided2 <> OLD.decided2;
END;

CREATE TRIGGER items_queue_insert AFTER INSERT ON items WHEN NEW.queue1 IS NOT NULL
BEGIN
    INSERT INTO queue_counts (campaign_id, stage, user_id, total, done)
    VALUES (NEW.campaign_id, NEW.stage, NEW.queue1, 1, NEW.decided1)
    ON CONFLICT (campaign_id, stage, user_id) DO UPDATE SET total = total + 1, done = done + excluded.done;
    INSERT INTO queue_counts (campaign_id, stage, user_id, total, done)
    VALUES (NEW.campaign_id, NEW.stage, NEW.queue2, 1, NEW.decided2)
    ON CONFLICT (campaign_id, stage, user_id) DO UPDATE SET total = total + 1, done = done + excluded.done;
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

CREATE VIEW item_details AS
SELECT i.id, i.campaign_id, i.stage, i.outcome, i.item_key, i.is_current, i.calibration,
       i.sort_key, i.final1_id, i.final2_id, i.queue1, i.queue2, i.level,
       v.id AS version_id, v.version, v.fields, v.media_type, v.media_sha256,
       v.fps, v.frame_count, v.constant_rate,
       t.code AS task, c.clip_key, q.qa_type, q.body, q.options, q.answer
FROM items i
JOIN tasks t ON t.id = i.task_id
JOIN clip_versions v ON v.id = i.clip_version_id
JOIN clips c ON c.id = v.clip_id
LEFT JOIN questions q ON q.id = i.question_id;

CREATE VIEW split_details AS
SELECT i.*,
       d1.verdict AS r1_verdict, d1.reasons AS r1_reasons, d1.note AS r1_note,
       d1.decided_at AS r1_decided_at, d1.time_spent_ms AS r1_time, u1.name AS r1_name,
       d2.verdict AS r2_verdict, d2.reasons AS r2_reasons, d2.note AS r2_note,
       d2.decided_at AS r2_decided_at, d2.time_spent_ms AS r2_time, u2.name AS r2_name,
       r.verdict AS res_verdict, r.note AS res_note, r.decided_at AS res_decided_at,
       ua.name AS res_author
FROM item_details i
JOIN decisions d1 ON d1.id = i.final1_id JOIN users u1 ON u1.id = d1.validator_id
JOIN decisions d2 ON d2.id = i.final2_id JOIN users u2 ON u2.id = d2.validator_id
LEFT JOIN resolutions r ON r.item_id = i.id LEFT JOIN users ua ON ua.id = r.author_id;

-- Every reference still holds: a violation fails this insert and nothing is committed.
CREATE TEMP TABLE foreign_key_violations (none_allowed BIGINT CHECK (none_allowed IS NULL));
INSERT INTO foreign_key_violations SELECT 1 FROM pragma_foreign_key_check;
DROP TABLE foreign_key_violations;
COMMIT;
PRAGMA foreign_keys = ON;
