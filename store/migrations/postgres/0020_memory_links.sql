-- Links between memories (engram.Link). A link belongs to the memory it
-- starts from: making or removing it is a version of that memory in
-- memory_events ("link", "unlink"). Links whose either end is tombstoned
-- stay here but are not listed or followed (store/link.go joins on
-- memories.valid), so a rollback to life brings them back.
CREATE TABLE memory_links (
    tenant_id  TEXT        NOT NULL REFERENCES tenants (id),
    from_id    TEXT        NOT NULL,
    to_id      TEXT        NOT NULL,
    relation   TEXT        NOT NULL,
    version    BIGINT      NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, from_id, to_id, relation)
);

CREATE INDEX memory_links_to ON memory_links (tenant_id, to_id);

-- The links a "link" or "unlink" event made or removed, as a JSON array
-- of engram.Link; NULL for every other event.
ALTER TABLE memory_events ADD COLUMN links TEXT;
