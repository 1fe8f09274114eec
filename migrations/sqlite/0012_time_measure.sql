-- What each decision's time_spent_ms measures: `visible` (the item's page open and
-- visible in the browser), `client` (as an API client sent it); NULL for decisions
-- recorded before the measure was stored (browser rows then counted from the page's
-- render and restarted after a refused save) and imports that do not say.
ALTER TABLE decisions ADD COLUMN time_measure TEXT;
