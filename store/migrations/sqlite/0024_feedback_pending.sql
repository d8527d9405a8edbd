-- Feedback acknowledged asynchronously (Prefer: respond-async) and not
-- yet applied. A row is committed before its 202 answer and deleted in
-- the transaction that applies it (which writes its feedback row with
-- the same id), so a row is applied exactly once, by whichever server
-- claims it first, and a restart applies what is left. input is the
-- engram.FeedbackInput as validated (rater scoped by its API key),
-- credits the JSON list of memory ids it will credit.
CREATE TABLE feedback_pending (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT NOT NULL UNIQUE,
    tenant_id       TEXT NOT NULL REFERENCES tenants (id),
    recall_id       TEXT NOT NULL DEFAULT '',
    idempotency_key TEXT NOT NULL DEFAULT '',
    input           TEXT NOT NULL,
    credits         TEXT NOT NULL DEFAULT '[]',
    created_at      TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX feedback_pending_idempotency ON feedback_pending (tenant_id, idempotency_key) WHERE idempotency_key <> '';
CREATE INDEX feedback_pending_tenant_seq ON feedback_pending (tenant_id, seq);
