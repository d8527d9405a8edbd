-- L1 working memory. occurred_at is when what a memory records happened
-- (a conversation message's time), shown in recalled text; NULL for
-- memories that do not record an event.
ALTER TABLE memories ADD COLUMN occurred_at TIMESTAMPTZ;

-- One row per session (thread) of a tenant: open until ended, gone after
-- expires_at (reads treat it as absent; the cleaner deletes it).
CREATE TABLE sessions (
    tenant_id   TEXT    NOT NULL REFERENCES tenants (id),
    id          TEXT    NOT NULL,
    resource_id TEXT    NOT NULL DEFAULT '',
    status      TEXT    NOT NULL,
    outcome     TEXT    NOT NULL DEFAULT '',
    note        TEXT    NOT NULL DEFAULT '',
    next_seq    BIGINT  NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    closed_at   TIMESTAMPTZ,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX sessions_expires ON sessions (expires_at);

-- The events of a session in arrival order; body is the event as JSON,
-- memory_id the L2 episode a message became.
CREATE TABLE session_events (
    tenant_id  TEXT    NOT NULL,
    session_id TEXT    NOT NULL,
    seq        BIGINT  NOT NULL,
    type       TEXT    NOT NULL,
    body       TEXT    NOT NULL,
    memory_id  TEXT    NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, session_id, seq)
);

-- The JSON working-memory documents: scope 'session' (scope_id the
-- session id) or 'resource' (scope_id the resource id, shared by the
-- sessions that name it), with an optional JSON Schema.
CREATE TABLE working_states (
    tenant_id  TEXT    NOT NULL REFERENCES tenants (id),
    scope      TEXT    NOT NULL,
    scope_id   TEXT    NOT NULL,
    document   TEXT    NOT NULL,
    schema     TEXT    NOT NULL DEFAULT '',
    version    BIGINT  NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, scope, scope_id)
);
