-- When a participant answered the set at each place of their order: set in the write
-- that stores the answer (or brings in responses), so that a participant's progress is
-- one read of their order rather than a search of every response they gave.
ALTER TABLE study_orders ADD COLUMN answered_at BIGINT;
UPDATE study_orders SET answered_at = (
    SELECT MIN(r.answered_at) FROM study_responses r JOIN study_clips c ON c.id = r.clip_id
    WHERE r.participant_id = study_orders.participant_id AND c.set_id = study_orders.set_id);
