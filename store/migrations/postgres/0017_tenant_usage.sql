-- Per-tenant quotas. tenant_usage holds, for every tenant, its live
-- (not deleted) memories, the bytes of their content, and its sessions
-- (expired ones until the cleaner deletes them). Triggers keep it in the
-- transaction of every write, whatever wrote it, so that a write past a
-- quota is refused inside its own transaction (store/quota.go). The
-- trigger's UPDATE locks the tenant's usage row until commit, so servers
-- sharing the database count one write after another and never
-- overshoot a quota. Only a write that adds or removes a live memory,
-- changes its content, or adds or removes a session takes that lock;
-- feedback credits and access counts do not.
CREATE TABLE tenant_usage (
    tenant_id TEXT   NOT NULL PRIMARY KEY REFERENCES tenants (id),
    memories  BIGINT NOT NULL DEFAULT 0,
    bytes     BIGINT NOT NULL DEFAULT 0,
    sessions  BIGINT NOT NULL DEFAULT 0
);

INSERT INTO tenant_usage (tenant_id, memories, bytes, sessions)
SELECT t.id,
       (SELECT count(*) FROM memories m WHERE m.tenant_id = t.id AND m.valid),
       (SELECT coalesce(sum(octet_length(m.content)), 0) FROM memories m WHERE m.tenant_id = t.id AND m.valid),
       (SELECT count(*) FROM sessions s WHERE s.tenant_id = t.id)
FROM tenants t;

CREATE FUNCTION tenant_usage_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tenant_usage (tenant_id) VALUES (NEW.id);
    RETURN NULL;
END $$;

CREATE TRIGGER tenant_usage_tenant AFTER INSERT ON tenants
    FOR EACH ROW EXECUTE FUNCTION tenant_usage_tenant();

CREATE FUNCTION tenant_usage_memory() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    d_memories BIGINT := 0;
    d_bytes    BIGINT := 0;
    tenant     TEXT;
BEGIN
    IF TG_OP <> 'INSERT' THEN
        tenant := OLD.tenant_id;
        IF OLD.valid THEN
            d_memories := d_memories - 1;
            d_bytes := d_bytes - octet_length(OLD.content);
        END IF;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        tenant := NEW.tenant_id;
        IF NEW.valid THEN
            d_memories := d_memories + 1;
            d_bytes := d_bytes + octet_length(NEW.content);
        END IF;
    END IF;
    IF d_memories <> 0 OR d_bytes <> 0 THEN
        UPDATE tenant_usage SET memories = memories + d_memories, bytes = bytes + d_bytes WHERE tenant_id = tenant;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER tenant_usage_memory AFTER INSERT OR DELETE OR UPDATE OF valid, content ON memories
    FOR EACH ROW EXECUTE FUNCTION tenant_usage_memory();

CREATE FUNCTION tenant_usage_session() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE tenant_usage SET sessions = sessions + 1 WHERE tenant_id = NEW.tenant_id;
    ELSE
        UPDATE tenant_usage SET sessions = sessions - 1 WHERE tenant_id = OLD.tenant_id;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER tenant_usage_session AFTER INSERT OR DELETE ON sessions
    FOR EACH ROW EXECUTE FUNCTION tenant_usage_session();
