-- What feedback across recalls says about each memory (helpfulness) and
-- about each rater (reputation). Both are sums that a feedback adds to in
-- its own transaction, so several servers share them and none overwrites
-- another's evidence.

-- memory_id '' holds the tenant's totals (the base rate of good answers).
-- good and bad are the weighted evidence of recalls the memory was
-- injected into (weighted by its share, its position and the rater's
-- reputation); with_* and without_* count the signals of recalls that
-- injected it and of recalls that held it back to explore (impact).
CREATE TABLE memory_help (
    tenant_id   TEXT    NOT NULL REFERENCES tenants (id),
    memory_id   TEXT    NOT NULL,
    good        REAL    NOT NULL DEFAULT 0,
    bad         REAL    NOT NULL DEFAULT 0,
    with_n      INTEGER NOT NULL DEFAULT 0,
    with_sum    REAL    NOT NULL DEFAULT 0,
    with_sq     REAL    NOT NULL DEFAULT 0,
    without_n   INTEGER NOT NULL DEFAULT 0,
    without_sum REAL    NOT NULL DEFAULT 0,
    without_sq  REAL    NOT NULL DEFAULT 0,
    updated_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (tenant_id, memory_id)
);

-- A rater's agreement with the evidence other raters left on the same
-- memories, and with corrections; votes counts every vote, capped or not.
CREATE TABLE rater_reputation (
    tenant_id  TEXT    NOT NULL REFERENCES tenants (id),
    rater      TEXT    NOT NULL,
    agree      REAL    NOT NULL DEFAULT 0,
    disagree   REAL    NOT NULL DEFAULT 0,
    votes      INTEGER NOT NULL DEFAULT 0,
    updated_at TIMESTAMP NOT NULL,
    PRIMARY KEY (tenant_id, rater)
);

-- A memory a user's correction superseded names the memory the correction
-- became ('' for none); it is also marked needs_revision.
ALTER TABLE memories ADD COLUMN superseded_by TEXT NOT NULL DEFAULT '';
