-- Where each background consumer of the change feed (embeddings, later
-- the file mirror and re-reflection) stands in each tenant's feed: kept in
-- the store, so that any engram server can take the work over. A lease
-- (holder, leased_until) gives one server a tenant at a time; a server
-- that dies lets its lease run out and another resumes from seq.
CREATE TABLE feed_cursors (
    consumer     TEXT      NOT NULL,
    tenant_id    TEXT      NOT NULL REFERENCES tenants (id),
    seq          INTEGER    NOT NULL DEFAULT 0,
    holder       TEXT      NOT NULL DEFAULT '',
    leased_until TIMESTAMP,
    PRIMARY KEY (consumer, tenant_id)
);
