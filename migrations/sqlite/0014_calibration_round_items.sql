-- The calibration items a round drew, fixed when the round starts (its first verdict, or
-- the admin's reset), as item ids joined by commas: a round drawn anew on every read
-- would change under the validator when calibration items are added or the round size
-- is changed. Empty for rounds from before: they are drawn as they were.
ALTER TABLE calibration_rounds ADD COLUMN items TEXT;
