-- The revocation stamp (0023) without a read per request (`store::stamp`). The
-- transaction that raises the stamp notifies `tandem_revocation` with the new figure,
-- delivered to every listening server when it commits. Each listening server keeps a row
-- here: the stamp it has taken in and until when it trusts that figure without reading
-- the stamp (its lease, renewed each second). A write that raised the stamp returns only
-- once every listener whose lease runs has taken the new figure in, so a revocation holds
-- on every server at the next request, as when each request read the stamp. SQLite needs
-- none of this: a server reads the stamp in place.
CREATE FUNCTION revocation_stamp_notify() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('tandem_revocation', NEW.stamp::text);
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER revocation_stamp_raised
    AFTER UPDATE ON revocation_stamp
    FOR EACH ROW EXECUTE FUNCTION revocation_stamp_notify();

-- Each listening connection's row: the stamp it has taken in, and the end of its lease
-- (microseconds since the epoch, by the database's clock). The state of running servers,
-- not records: left out of `Store::dump`; rows an hour past their lease are deleted.
CREATE TABLE stamp_listeners (
    id           TEXT PRIMARY KEY,
    seen         BIGINT NOT NULL,
    lease_until  BIGINT NOT NULL
);
