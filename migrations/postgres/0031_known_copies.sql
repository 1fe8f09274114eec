-- A known clip made from a clip the author resolved: the version it copies (its video,
-- fields and questions, under a new id), the author's resolutions its known verdicts.
-- Its items are served to a pair that reviewed none of the source clip, fixed when the
-- copy is made; the campaign's known_rate does not hold it in reserve.
ALTER TABLE clip_versions ADD COLUMN copy_of BIGINT REFERENCES clip_versions (id);
