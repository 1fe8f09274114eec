-- Facts that never change once set, kept where the QC tables read them so that the
-- tables are one scan of the items table and the median times one index walk:
-- on an item, the version number of its clip, the QA type of its question (Stage 2)
-- and the reasons of the two counted verdicts (set with them); on a decision, the
-- campaign and stage of its item.
ALTER TABLE items ADD COLUMN clip_version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE items ADD COLUMN qa_type TEXT;
ALTER TABLE items ADD COLUMN reasons1 TEXT;
ALTER TABLE items ADD COLUMN reasons2 TEXT;
UPDATE items SET clip_version = (SELECT v.version FROM clip_versions v WHERE v.id = items.clip_version_id);
UPDATE items SET qa_type = (SELECT q.qa_type FROM questions q WHERE q.id = items.question_id) WHERE stage = 2;
UPDATE items SET reasons1 = (SELECT d.reasons FROM decisions d WHERE d.id = items.final1_id),
                 reasons2 = (SELECT d.reasons FROM decisions d WHERE d.id = items.final2_id)
WHERE final1_id IS NOT NULL;

ALTER TABLE decisions ADD COLUMN campaign_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE decisions ADD COLUMN stage BIGINT NOT NULL DEFAULT 0;
-- The append-only guard steps aside for this one backfill of new columns.
DROP TRIGGER decisions_no_update ON decisions;
UPDATE decisions SET campaign_id = (SELECT i.campaign_id FROM items i WHERE i.id = decisions.item_id),
                     stage = (SELECT i.stage FROM items i WHERE i.id = decisions.item_id);
CREATE TRIGGER decisions_no_update BEFORE UPDATE ON decisions
FOR EACH ROW EXECUTE FUNCTION tandem_refuse_change('decisions are append-only');
CREATE INDEX decisions_time ON decisions (validator_id, campaign_id, stage, time_spent_ms);
