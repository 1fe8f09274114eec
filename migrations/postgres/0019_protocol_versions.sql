-- A campaign's protocol has versions: 1 when the campaign is created, one more at each
-- change. Every version's taxonomy is kept, and each decision and calibration verdict
-- records the version it was checked under, so that a record's reasons read with the
-- rules and labels they were given under.
ALTER TABLE campaigns ADD COLUMN protocol_version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE decisions ADD COLUMN protocol_version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE calibration_decisions ADD COLUMN protocol_version BIGINT NOT NULL DEFAULT 1;

CREATE TABLE campaign_protocols (
    campaign_id  BIGINT  NOT NULL REFERENCES campaigns (id),
    version      BIGINT  NOT NULL CHECK (version >= 1),
    taxonomy     TEXT    NOT NULL,
    set_at       BIGINT  NOT NULL,
    PRIMARY KEY (campaign_id, version)
);

INSERT INTO campaign_protocols (campaign_id, version, taxonomy, set_at)
SELECT id, 1, taxonomy, created_at FROM campaigns;
