-- The time a validator spent on a question before giving the blind answer (the page
-- open and visible, as for a verdict), in milliseconds; none for answers recorded
-- before it was kept, or sent without it. The verdict's own time then counts from the
-- question first shown, the blind answer included.
ALTER TABLE blind_answers ADD COLUMN time_spent_ms BIGINT CHECK (time_spent_ms IS NULL OR time_spent_ms >= 0);
