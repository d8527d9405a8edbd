-- Key aliases (engram.Alias): another key path of a user's memory that
-- has a key. An alias belongs to its target memory: making or removing
-- it is a version of that memory in memory_events ("alias", "unalias").
-- It points at the memory's id, so a tombstoned target keeps its aliases
-- (they answer 404) and a target written again answers through them.
CREATE TABLE memory_aliases (
    tenant_id  TEXT        NOT NULL REFERENCES tenants (id),
    user_id    TEXT        NOT NULL DEFAULT '',
    alias      TEXT        NOT NULL,
    memory_id  TEXT        NOT NULL,
    version    BIGINT     NOT NULL,
    created_at TIMESTAMPTZ   NOT NULL,
    PRIMARY KEY (tenant_id, user_id, alias)
);

CREATE INDEX memory_aliases_memory ON memory_aliases (tenant_id, memory_id);

-- The aliases an "alias" or "unalias" event made or removed, as a JSON
-- array of engram.Alias; NULL for every other event.
ALTER TABLE memory_events ADD COLUMN aliases TEXT;
