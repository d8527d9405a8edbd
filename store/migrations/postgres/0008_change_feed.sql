-- The change feed. Every committed write of a tenant's memories is an event
-- with a per-tenant sequence number, feed_seq, given at the end of the
-- write's transaction under the lock of the tenant's row (tenants.feed_seq,
-- the last number given), so a tenant's events become visible in sequence
-- order with no gaps: a follower that has applied every event up to n
-- reads "feed_seq > n" and misses nothing. A transaction's events are
-- inserted, numbered, as its last step; feed_seq stays nullable only
-- because the column is added to an existing table.
ALTER TABLE tenants ADD COLUMN feed_seq BIGINT NOT NULL DEFAULT 0;
ALTER TABLE memory_events ADD COLUMN feed_seq BIGINT;
UPDATE memory_events SET feed_seq = r.n
    FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY tenant_id ORDER BY id) AS n FROM memory_events) AS r
    WHERE memory_events.id = r.id;
UPDATE tenants SET feed_seq = COALESCE((SELECT MAX(feed_seq) FROM memory_events WHERE memory_events.tenant_id = tenants.id), 0);
CREATE UNIQUE INDEX memory_events_feed ON memory_events (tenant_id, feed_seq);
