-- L3 reflections: one current row per group of a tenant's memories, and
-- every version in reflection_versions. cited and members are JSON lists
-- of {id, version}; fingerprint identifies the members, their versions
-- and the writer, so an unchanged group is not written again.
CREATE TABLE reflections (
    seq         BIGSERIAL PRIMARY KEY,
    id          TEXT    NOT NULL UNIQUE,
    tenant_id   TEXT    NOT NULL REFERENCES tenants (id),
    group_key   TEXT    NOT NULL,
    category    TEXT    NOT NULL,
    title       TEXT    NOT NULL,
    version     BIGINT NOT NULL,
    markdown    TEXT    NOT NULL,
    cited       TEXT    NOT NULL,
    members     TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    writer      TEXT    NOT NULL,
    fallback    TEXT    NOT NULL DEFAULT '',
    token_count INTEGER NOT NULL,
    up_count    BIGINT  NOT NULL DEFAULT 0,
    down_count  BIGINT  NOT NULL DEFAULT 0,
    created_at  TIMESTAMPTZ NOT NULL,
    UNIQUE (tenant_id, group_key)
);
CREATE INDEX reflections_tenant_category ON reflections (tenant_id, category, seq);

CREATE TABLE reflection_versions (
    reflection_id TEXT    NOT NULL REFERENCES reflections (id),
    tenant_id     TEXT    NOT NULL,
    version       BIGINT NOT NULL,
    title         TEXT    NOT NULL,
    markdown      TEXT    NOT NULL,
    cited         TEXT    NOT NULL,
    members       TEXT    NOT NULL,
    fingerprint   TEXT    NOT NULL,
    writer        TEXT    NOT NULL,
    fallback      TEXT    NOT NULL DEFAULT '',
    token_count   INTEGER NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (reflection_id, version)
);
