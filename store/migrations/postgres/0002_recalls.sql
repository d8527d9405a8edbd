-- Recalls: what was injected for a query, so that feedback can be
-- credited to exactly those memories (ids, versions and scores in items).
CREATE TABLE recalls (
    id           TEXT PRIMARY KEY,
    tenant_id    TEXT    NOT NULL REFERENCES tenants (id),
    query        TEXT    NOT NULL,
    route        JSON    NOT NULL,
    items        JSON    NOT NULL,
    token_budget INTEGER NOT NULL,
    tokens_used  INTEGER NOT NULL,
    agent_id     TEXT    NOT NULL DEFAULT '',
    session_id   TEXT    NOT NULL DEFAULT '',
    created_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX recalls_tenant_created ON recalls (tenant_id, created_at);

-- Ranking index for recall: exact per-tenant BM25 (see the SQLite
-- migration for why ts_rank and FTS5's bm25 are not used for ranking).
CREATE TABLE memory_terms (
    tenant_id  TEXT   NOT NULL,
    term       TEXT   NOT NULL,
    memory_seq BIGINT NOT NULL,
    tf         DOUBLE PRECISION NOT NULL,
    dl         DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (tenant_id, term, memory_seq)
);
CREATE INDEX memory_terms_seq ON memory_terms (memory_seq, tenant_id);

-- P0 memories qualify for every recall; find them without scanning.
CREATE INDEX memories_tenant_priority ON memories (tenant_id, priority, seq);

CREATE TABLE term_stats (
    tenant_id TEXT   NOT NULL,
    term      TEXT   NOT NULL,
    df        BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, term)
);

CREATE TABLE tenant_stats (
    tenant_id TEXT PRIMARY KEY REFERENCES tenants (id),
    docs      BIGINT NOT NULL,
    total_len DOUBLE PRECISION NOT NULL
);
