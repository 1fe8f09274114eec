-- One Stage 1 item per clip version and one Stage 2 item per question, said without
-- `stage = 1` / `stage = 2` (an item is a Stage 1 item exactly when it has no question:
-- the CHECK of `items`). SQLite ties a statement's plan to every bound value that a
-- partial index's WHERE is compared with, and compiles the statement again whenever such
-- a value is bound: with `WHERE stage = 1`, every statement saying `stage = $n` (a
-- verdict's load, the queues) was compiled again on each run.
DROP INDEX items_stage1;
DROP INDEX items_stage2;
CREATE UNIQUE INDEX items_stage1 ON items (clip_version_id) WHERE question_id IS NULL;
CREATE UNIQUE INDEX items_stage2 ON items (question_id);
