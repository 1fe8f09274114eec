-- The same unique indexes as SQLite's migration 13 (one Stage 1 item per clip version,
-- one Stage 2 item per question), said without the stage, so that both schemas stay
-- alike; PostgreSQL plans do not depend on them either way.
DROP INDEX items_stage1;
DROP INDEX items_stage2;
CREATE UNIQUE INDEX items_stage1 ON items (clip_version_id) WHERE question_id IS NULL;
CREATE UNIQUE INDEX items_stage2 ON items (question_id);
