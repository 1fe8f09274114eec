-- Where the installation's media live: `local` (the data folder of each server) or
-- `s3://BUCKET/PREFIX` (one bucket that every server reads). One row, so that every
-- server agrees; the bucket's endpoint and credentials are each server's own (AWS_*
-- variables), never stored here. `tandem media migrate` changes it once every file is
-- in the new place.
CREATE TABLE media_store (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    location    TEXT    NOT NULL,
    changed_at  INTEGER NOT NULL
);
INSERT INTO media_store (id, location, changed_at) VALUES (1, 'local', 0);
