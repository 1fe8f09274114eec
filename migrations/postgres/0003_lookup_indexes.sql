-- Finding the newest version of a clip from one of its questions, without scanning
-- the campaign's clips.
CREATE INDEX clips_current ON clips (current_version_id);
