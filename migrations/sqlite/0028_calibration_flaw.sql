-- Where a calibration item's known flaw is in its clip (from the manifest's
-- `calibration.flaw`): `frames` (first and last, as the player numbers them, from 1)
-- or `ms` (a time span in milliseconds); none when the manifest did not say.
ALTER TABLE calibration_keys ADD COLUMN flaw_unit TEXT;
ALTER TABLE calibration_keys ADD COLUMN flaw_from BIGINT;
ALTER TABLE calibration_keys ADD COLUMN flaw_to BIGINT;
