-- engram schema v1 (PostgreSQL). Append-only: never edit a released migration.

CREATE TABLE tenants (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL
);

-- Only the SHA-256 of a key is stored; prefix helps a human recognise it.
CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    name       TEXT NOT NULL,
    prefix     TEXT NOT NULL,
    hash       TEXT NOT NULL UNIQUE,
    created_at TIMESTAMPTZ NOT NULL,
    revoked_at TIMESTAMPTZ
);

-- Server-wide values shared by every engram process on this database,
-- such as the secret that signs list cursors.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- L2 memories; see the SQLite migration for the meaning of the columns.
-- search_vector weights key/tags/category (A) above content/summary (B).
CREATE TABLE memories (
    seq                 BIGSERIAL PRIMARY KEY,
    id                  TEXT    NOT NULL UNIQUE,
    tenant_id           TEXT    NOT NULL REFERENCES tenants (id),
    agent_id            TEXT    NOT NULL DEFAULT '',
    key                 TEXT,
    category            TEXT    NOT NULL,
    subcategory         TEXT    NOT NULL DEFAULT '',
    type                TEXT    NOT NULL DEFAULT '',
    tags                JSONB   NOT NULL DEFAULT '[]',
    content             TEXT    NOT NULL,
    data                JSON, -- JSON, not JSONB: kept byte for byte as written
    summary             TEXT    NOT NULL DEFAULT '',
    importance          DOUBLE PRECISION NOT NULL,
    priority            TEXT    NOT NULL,
    confidence          DOUBLE PRECISION NOT NULL,
    reward              DOUBLE PRECISION NOT NULL DEFAULT 0,
    up_count            BIGINT  NOT NULL DEFAULT 0,
    down_count          BIGINT  NOT NULL DEFAULT 0,
    needs_revision      BOOLEAN NOT NULL DEFAULT FALSE,
    source              JSON,
    security_level      TEXT    NOT NULL,
    stability           DOUBLE PRECISION NOT NULL,
    token_count         INTEGER NOT NULL,
    summary_token_count INTEGER NOT NULL,
    content_hash        TEXT    NOT NULL,
    valid               BOOLEAN NOT NULL,
    archived            BOOLEAN NOT NULL DEFAULT FALSE,
    expires_at          TIMESTAMPTZ,
    created_at          TIMESTAMPTZ NOT NULL,
    updated_at          TIMESTAMPTZ NOT NULL,
    last_accessed_at    TIMESTAMPTZ,
    access_count        BIGINT  NOT NULL DEFAULT 0,
    version             BIGINT  NOT NULL,
    search_body         TEXT    NOT NULL DEFAULT '',
    search_meta         TEXT    NOT NULL DEFAULT '',
    search_vector       TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', search_meta), 'A') ||
        setweight(to_tsvector('simple', search_body), 'B')
    ) STORED
);

CREATE UNIQUE INDEX memories_tenant_key ON memories (tenant_id, key) WHERE key IS NOT NULL;
-- Write guard: one live copy of a content per tenant, agent and category.
CREATE UNIQUE INDEX memories_dedupe ON memories (tenant_id, agent_id, category, content_hash) WHERE key IS NULL AND valid AND NOT archived;
CREATE INDEX memories_tenant_seq ON memories (tenant_id, seq);
CREATE INDEX memories_tenant_category ON memories (tenant_id, category, seq);
-- Lexical index: the terms come from Go (package analysis) separated by
-- spaces; the 'simple' configuration neither stems nor drops them again.
CREATE INDEX memories_search ON memories USING GIN (search_vector);

-- Append-only history: every create/update/tombstone/rollback with the
-- full memory before and after (JSON of engram.Memory).
CREATE TABLE memory_events (
    id         BIGSERIAL PRIMARY KEY,
    tenant_id  TEXT   NOT NULL REFERENCES tenants (id),
    memory_id  TEXT   NOT NULL,
    version    BIGINT NOT NULL,
    action     TEXT   NOT NULL,
    before     JSON,
    after      JSON,
    actor      JSON   NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (memory_id, version)
);
CREATE INDEX memory_events_tenant ON memory_events (tenant_id, id);
