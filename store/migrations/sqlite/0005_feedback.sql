-- Interactions, feedback and preference pairs (DESIGN §4).

-- One answer a chat product gave. group_key gathers regenerations of one
-- turn; last_signal is the latest feedback's signal in [-1, 1] and
-- last_kind whether it was a thumb or a rating.
CREATE TABLE interactions (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT    NOT NULL UNIQUE,
    tenant_id        TEXT    NOT NULL REFERENCES tenants (id),
    prompt           TEXT    NOT NULL,
    messages         TEXT,
    response         TEXT    NOT NULL,
    recall_id        TEXT    NOT NULL DEFAULT '',
    session_id       TEXT    NOT NULL DEFAULT '',
    turn_id          TEXT    NOT NULL DEFAULT '',
    model            TEXT    NOT NULL DEFAULT '',
    group_key        TEXT    NOT NULL,
    category         TEXT    NOT NULL DEFAULT '',
    last_signal      REAL,
    last_kind        TEXT    NOT NULL DEFAULT '',
    last_feedback_id TEXT    NOT NULL DEFAULT '',
    created_at       TIMESTAMP NOT NULL
);
CREATE INDEX interactions_group ON interactions (tenant_id, group_key);
CREATE INDEX interactions_tenant_seq ON interactions (tenant_id, seq);

-- Every feedback as received. result is the response it produced, so
-- that a repeated idempotency key gets the same answer.
CREATE TABLE feedback (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    id              TEXT    NOT NULL UNIQUE,
    tenant_id       TEXT    NOT NULL REFERENCES tenants (id),
    interaction_id  TEXT    NOT NULL DEFAULT '',
    recall_id       TEXT    NOT NULL DEFAULT '',
    memory_id       TEXT    NOT NULL DEFAULT '',
    thumb           TEXT    NOT NULL DEFAULT '',
    rating          INTEGER NOT NULL DEFAULT 0,
    signal          REAL    NOT NULL,
    reason          TEXT    NOT NULL DEFAULT '',
    correction      TEXT    NOT NULL DEFAULT '',
    rater           TEXT    NOT NULL,
    idempotency_key TEXT    NOT NULL DEFAULT '',
    result          TEXT    NOT NULL DEFAULT '{}',
    created_at      TIMESTAMP NOT NULL
);
CREATE UNIQUE INDEX feedback_idempotency ON feedback (tenant_id, idempotency_key) WHERE idempotency_key <> '';

-- Each crediting of a memory by a feedback; applied is false when the
-- rater's cap for that memory and window was reached.
CREATE TABLE feedback_credits (
    feedback_id TEXT    NOT NULL,
    tenant_id   TEXT    NOT NULL,
    memory_id   TEXT    NOT NULL,
    rater       TEXT    NOT NULL,
    signal      REAL    NOT NULL,
    applied     BOOLEAN NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (feedback_id, memory_id)
);
CREATE INDEX feedback_credits_rater ON feedback_credits (tenant_id, memory_id, rater, created_at);

-- Preference pairs with provenance. dedupe_key names the two answers (or
-- the correction) so that a pair is made, and exported, once.
CREATE TABLE pairs (
    seq                     INTEGER PRIMARY KEY AUTOINCREMENT,
    id                      TEXT    NOT NULL UNIQUE,
    tenant_id               TEXT    NOT NULL REFERENCES tenants (id),
    kind                    TEXT    NOT NULL,
    dedupe_key              TEXT    NOT NULL,
    prompt                  TEXT    NOT NULL,
    messages                TEXT,
    chosen                  TEXT    NOT NULL,
    rejected                TEXT    NOT NULL,
    margin                  REAL    NOT NULL,
    category                TEXT    NOT NULL DEFAULT '',
    chosen_interaction_id   TEXT    NOT NULL DEFAULT '',
    rejected_interaction_id TEXT    NOT NULL,
    feedback_ids            TEXT    NOT NULL,
    chosen_memories         TEXT    NOT NULL,
    rejected_memories       TEXT    NOT NULL,
    created_at              TIMESTAMP NOT NULL,
    UNIQUE (tenant_id, dedupe_key)
);
CREATE INDEX pairs_tenant_seq ON pairs (tenant_id, seq);
