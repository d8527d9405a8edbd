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
    good        DOUBLE PRECISION NOT NULL DEFAULT 0,
    bad         DOUBLE PRECISION NOT NULL DEFAULT 0,
    with_n      BIGINT  NOT NULL DEFAULT 0,
    with_sum    DOUBLE PRECISION NOT NULL DEFAULT 0,
    with_sq     DOUBLE PRECISION NOT NULL DEFAULT 0,
    without_n   BIGINT  NOT NULL DEFAULT 0,
    without_sum DOUBLE PRECISION NOT NULL DEFAULT 0,
    without_sq  DOUBLE PRECISION NOT NULL DEFAULT 0,
    updated_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, memory_id)
);

-- A rater's agreement with the evidence other raters left on the same
-- memories, and with corrections; votes counts every vote, capped or not.
CREATE TABLE rater_reputation (
    tenant_id  TEXT    NOT NULL REFERENCES tenants (id),
    rater      TEXT    NOT NULL,
    agree      DOUBLE PRECISION NOT NULL DEFAULT 0,
    disagree   DOUBLE PRECISION NOT NULL DEFAULT 0,
    votes      BIGINT  NOT NULL DEFAULT 0,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, rater)
);

-- A memory a user's correction superseded names the memory the correction
-- became ('' for none); it is also marked needs_revision.
ALTER TABLE memories ADD COLUMN superseded_by TEXT NOT NULL DEFAULT '';
