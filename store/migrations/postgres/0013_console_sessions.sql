-- Console sessions: one row per signed-in browser, so that every engram
-- server on the database accepts the session and signing out ends it
-- everywhere. id is the SHA-256 of the cookie's token (the token is not
-- stored); tenant_id is the tenant shown, which an admin may switch.
CREATE TABLE console_sessions (
    id             TEXT PRIMARY KEY,
    key_id         TEXT      NOT NULL REFERENCES api_keys (id),
    home_tenant_id TEXT      NOT NULL REFERENCES tenants (id),
    tenant_id      TEXT      NOT NULL REFERENCES tenants (id),
    csrf           TEXT      NOT NULL,
    created_at     TIMESTAMPTZ NOT NULL,
    expires_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);
-- The feedback stream pages newest first.
CREATE INDEX feedback_tenant_seq ON feedback (tenant_id, seq);
CREATE INDEX feedback_credits_tenant_created ON feedback_credits (tenant_id, created_at);
