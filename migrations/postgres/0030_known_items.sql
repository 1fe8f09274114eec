-- Known items of the live queue: clips or questions with a known verdict, imported with
-- `"known": {...}` and stored as items with calibration = 2 (0: real, 1: calibration),
-- served to their pair among the real items and left out of the benchmark; their keys
-- are in calibration_keys beside the calibration items'.
--
-- When a validator's recent catch rate on known defects is surely below the calibration
-- threshold, their main queue pauses: a calibration round opens, marked with why
-- (`reopened`); the passes of earlier rounds no longer open the queue until this round
-- is passed or an admin lifts the pause (`lifted_by`, `lifted_at`).
ALTER TABLE calibration_rounds ADD COLUMN reopened TEXT;
ALTER TABLE calibration_rounds ADD COLUMN lifted_by TEXT;
ALTER TABLE calibration_rounds ADD COLUMN lifted_at BIGINT;

-- The share of known clips served beside the real clips of each task (0: every known clip
-- imported); the others wait in reserve (held, in no queue) until the real clips grow.
ALTER TABLE campaigns ADD COLUMN known_rate DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (known_rate >= 0 AND known_rate <= 1);

-- How many of a validator's latest known defects the recent catch rate looks at.
ALTER TABLE campaigns ADD COLUMN known_window BIGINT NOT NULL DEFAULT 20 CHECK (known_window >= 1);
