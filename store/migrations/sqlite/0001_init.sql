-- engram schema v1 (SQLite). Append-only: never edit a released migration.

CREATE TABLE tenants (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at TIMESTAMP NOT NULL
);

-- Only the SHA-256 of a key is stored; prefix helps a human recognise it.
CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    name       TEXT NOT NULL,
    prefix     TEXT NOT NULL,
    hash       TEXT NOT NULL UNIQUE,
    created_at TIMESTAMP NOT NULL,
    revoked_at TIMESTAMP
);

-- Server-wide values shared by every engram process on this database,
-- such as the secret that signs list cursors.
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- L2 memories. seq is the internal row number (FTS rowid, paging order);
-- id is the public, unguessable identifier. search_body and search_meta
-- hold the analyzed terms (package analysis) of content+summary and of
-- key+tags+category, so that both engines index exactly the same terms.
CREATE TABLE memories (
    seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
    id                  TEXT    NOT NULL UNIQUE,
    tenant_id           TEXT    NOT NULL REFERENCES tenants (id),
    agent_id            TEXT    NOT NULL DEFAULT '',
    key                 TEXT,
    category            TEXT    NOT NULL,
    subcategory         TEXT    NOT NULL DEFAULT '',
    type                TEXT    NOT NULL DEFAULT '',
    tags                TEXT    NOT NULL DEFAULT '[]',
    content             TEXT    NOT NULL,
    data                TEXT,
    summary             TEXT    NOT NULL DEFAULT '',
    importance          REAL    NOT NULL,
    priority            TEXT    NOT NULL,
    confidence          REAL    NOT NULL,
    reward              REAL    NOT NULL DEFAULT 0,
    up_count            INTEGER NOT NULL DEFAULT 0,
    down_count          INTEGER NOT NULL DEFAULT 0,
    needs_revision      BOOLEAN NOT NULL DEFAULT FALSE,
    source              TEXT,
    security_level      TEXT    NOT NULL,
    stability           REAL    NOT NULL,
    token_count         INTEGER NOT NULL,
    summary_token_count INTEGER NOT NULL,
    content_hash        TEXT    NOT NULL,
    valid               BOOLEAN NOT NULL,
    archived            BOOLEAN NOT NULL DEFAULT FALSE,
    expires_at          TIMESTAMP,
    created_at          TIMESTAMP NOT NULL,
    updated_at          TIMESTAMP NOT NULL,
    last_accessed_at    TIMESTAMP,
    access_count        INTEGER NOT NULL DEFAULT 0,
    version             INTEGER NOT NULL,
    search_body         TEXT    NOT NULL DEFAULT '',
    search_meta         TEXT    NOT NULL DEFAULT ''
);

CREATE UNIQUE INDEX memories_tenant_key ON memories (tenant_id, key) WHERE key IS NOT NULL;
-- Write guard: one live copy of a content per tenant, agent and category.
CREATE UNIQUE INDEX memories_dedupe ON memories (tenant_id, agent_id, category, content_hash) WHERE key IS NULL AND valid AND NOT archived;
CREATE INDEX memories_tenant_seq ON memories (tenant_id, seq);
CREATE INDEX memories_tenant_category ON memories (tenant_id, category, seq);

-- Append-only history: every create/update/tombstone/rollback with the
-- full memory before and after (JSON of engram.Memory).
CREATE TABLE memory_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id  TEXT    NOT NULL REFERENCES tenants (id),
    memory_id  TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    action     TEXT    NOT NULL,
    before     TEXT,
    after      TEXT,
    actor      TEXT    NOT NULL DEFAULT '{}',
    created_at TIMESTAMP NOT NULL,
    UNIQUE (memory_id, version)
);
CREATE INDEX memory_events_tenant ON memory_events (tenant_id, id);

-- Lexical index. The terms are produced in Go (package analysis: stemmed
-- English, Chinese character bigrams) and separated by spaces, so the
-- unicode61 tokenizer only splits on those spaces; a two-character Chinese
-- word is a single indexed term. External content: the text lives once,
-- in memories, and the triggers below keep the index in step.
CREATE VIRTUAL TABLE memories_fts USING fts5 (
    search_meta,
    search_body,
    content = 'memories',
    content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 0'
);

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, search_meta, search_body) VALUES (new.seq, new.search_meta, new.search_body);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, search_meta, search_body) VALUES ('delete', old.seq, old.search_meta, old.search_body);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF search_meta, search_body ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, search_meta, search_body) VALUES ('delete', old.seq, old.search_meta, old.search_body);
    INSERT INTO memories_fts (rowid, search_meta, search_body) VALUES (new.seq, new.search_meta, new.search_body);
END;
