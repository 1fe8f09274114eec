-- Each clip version's frame rate and frame count, read with ffprobe (after an import,
-- at server start, or by `tandem probe`), so that the player steps to the middle of
-- the next frame. NULL until probed; a file ffprobe cannot read keeps NULL timing with
-- its probe time set, so that it is not asked again.
ALTER TABLE clip_versions ADD COLUMN fps DOUBLE PRECISION;
ALTER TABLE clip_versions ADD COLUMN frame_count BIGINT;
ALTER TABLE clip_versions ADD COLUMN constant_rate BIGINT;
ALTER TABLE clip_versions ADD COLUMN timing_probed_at BIGINT;
CREATE INDEX clip_versions_unprobed ON clip_versions (media_sha256) WHERE timing_probed_at IS NULL;

-- The views again, with each version's frame timing.
DROP VIEW split_details;
DROP VIEW item_details;

-- An item as reviewers see it: its task, version (with its frame timing), clip and
-- question, joined once here instead of in every statement that shows one.
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

-- A split as authors see it: the item, both counted verdicts with their validators'
-- names, and its resolution if there is one.
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
