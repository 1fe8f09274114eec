-- (See the SQLite migration.)
-- One counter that every write taking access away raises in its own transaction (a
-- disable or enable, a token revocation, a sign-out, a role given or taken): a server
-- trusts its in-memory copies of sessions and token owners only while the counter it
-- last read is still the stored one, and it reads the counter again for each request, so
-- such a change holds on every server and for every process at once.
CREATE TABLE revocation_stamp (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    stamp  BIGINT  NOT NULL
);
INSERT INTO revocation_stamp (id, stamp) VALUES (1, 0);
