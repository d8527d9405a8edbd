-- Jobs (engram.Job): long work of a tenant (reflect, sleep) that runs off
-- the request path. Any server claims a queued job, or a running one whose
-- lease ran out (its server died), by setting holder and leased_until; the
-- holder renews the lease as it writes progress. request and result are
-- JSON. Jobs belong to the tenant's account, like feed_cursors: they are
-- not exported and a reset keeps them.
CREATE TABLE jobs (
    seq            BIGSERIAL PRIMARY KEY,
    id             TEXT      NOT NULL UNIQUE,
    tenant_id      TEXT      NOT NULL REFERENCES tenants (id),
    kind           TEXT      NOT NULL,
    request        TEXT      NOT NULL DEFAULT '{}',
    status         TEXT      NOT NULL,
    attempts       INTEGER   NOT NULL DEFAULT 0,
    holder         TEXT      NOT NULL DEFAULT '',
    leased_until   TIMESTAMPTZ,
    progress_done  INTEGER   NOT NULL DEFAULT 0,
    progress_total INTEGER   NOT NULL DEFAULT 0,
    result         TEXT,
    error          TEXT      NOT NULL DEFAULT '',
    created_at     TIMESTAMPTZ NOT NULL,
    started_at     TIMESTAMPTZ,
    finished_at    TIMESTAMPTZ
);

CREATE INDEX jobs_tenant ON jobs (tenant_id, seq);
CREATE INDEX jobs_open ON jobs (status, seq) WHERE status IN ('queued', 'running');
