-- `decisions_time` (validator_id, campaign_id, stage, time_spent_ms) already serves every
-- lookup by validator (the reports' filters, the foreign key to users); the older
-- `decisions_validator` (validator_id, item_id) was a second index written by every
-- verdict and read by no query.
DROP INDEX decisions_validator;
