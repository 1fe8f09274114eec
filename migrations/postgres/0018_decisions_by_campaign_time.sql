-- A campaign's decisions in time order: the exports (a campaign's decisions), the
-- median times (a campaign's decisions with their time spent) and the audit trail's
-- latest events (newest first) read them by campaign, which no index led by before.
CREATE INDEX decisions_campaign_time ON decisions (campaign_id, decided_at);
