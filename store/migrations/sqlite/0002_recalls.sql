-- Recalls: what was injected for a query, so that feedback can be
-- credited to exactly those memories (ids, versions and scores in items).
CREATE TABLE recalls (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT    NOT NULL REFERENCES tenants (id),
    query        TEXT    NOT NULL,
    route        TEXT    NOT NULL,
    items        TEXT    NOT NULL,
    token_budget INTEGER NOT NULL,
    tokens_used  INTEGER NOT NULL,
    agent_id     TEXT    NOT NULL DEFAULT '',
    session_id   TEXT    NOT NULL DEFAULT '',
    created_at   TIMESTAMP NOT NULL
);
CREATE INDEX recalls_tenant_created ON recalls (tenant_id, created_at);

-- Ranking index for recall: exact per-tenant BM25. FTS5's bm25() counts
-- document frequencies over every tenant in the table, which would let
-- one tenant's scores move with another's data; these tables keep every
-- statistic inside the tenant. Only live memories (valid, not archived)
-- are indexed. tf is the weighted term frequency (key, tags, type and
-- subcategory terms weigh double) and dl the weighted document length.
CREATE TABLE memory_terms (
    tenant_id  TEXT    NOT NULL,
    term       TEXT    NOT NULL,
    memory_seq INTEGER NOT NULL,
    tf         REAL    NOT NULL,
    dl         REAL    NOT NULL,
    PRIMARY KEY (tenant_id, term, memory_seq)
) WITHOUT ROWID;
CREATE INDEX memory_terms_seq ON memory_terms (memory_seq, tenant_id);

-- P0 memories qualify for every recall; find them without scanning.
CREATE INDEX memories_tenant_priority ON memories (tenant_id, priority, seq);

-- Document frequency of each term within a tenant.
CREATE TABLE term_stats (
    tenant_id TEXT    NOT NULL,
    term      TEXT    NOT NULL,
    df        INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, term)
) WITHOUT ROWID;

-- Live indexed documents and their total weighted length per tenant.
CREATE TABLE tenant_stats (
    tenant_id TEXT PRIMARY KEY REFERENCES tenants (id),
    docs      INTEGER NOT NULL,
    total_len REAL    NOT NULL
);
