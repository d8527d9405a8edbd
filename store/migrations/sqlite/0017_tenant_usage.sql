-- Per-tenant quotas. tenant_usage holds, for every tenant, its live
-- (not deleted) memories, the bytes of their content, and its sessions
-- (expired ones until the cleaner deletes them). Triggers keep it in the
-- transaction of every write, whatever wrote it, so that a write past a
-- quota is refused inside its own transaction (store/quota.go); SQLite's
-- one writer makes the check exact.
CREATE TABLE tenant_usage (
    tenant_id TEXT    NOT NULL PRIMARY KEY REFERENCES tenants (id),
    memories  INTEGER NOT NULL DEFAULT 0,
    bytes     INTEGER NOT NULL DEFAULT 0,
    sessions  INTEGER NOT NULL DEFAULT 0
);

INSERT INTO tenant_usage (tenant_id, memories, bytes, sessions)
SELECT t.id,
       (SELECT count(*) FROM memories m WHERE m.tenant_id = t.id AND m.valid),
       (SELECT coalesce(sum(length(CAST(m.content AS BLOB))), 0) FROM memories m WHERE m.tenant_id = t.id AND m.valid),
       (SELECT count(*) FROM sessions s WHERE s.tenant_id = t.id)
FROM tenants t;

CREATE TRIGGER tenant_usage_tenant AFTER INSERT ON tenants
BEGIN
    INSERT INTO tenant_usage (tenant_id) VALUES (NEW.id);
END;

CREATE TRIGGER tenant_usage_memory_insert AFTER INSERT ON memories WHEN NEW.valid
BEGIN
    UPDATE tenant_usage SET memories = memories + 1, bytes = bytes + length(CAST(NEW.content AS BLOB))
    WHERE tenant_id = NEW.tenant_id;
END;

CREATE TRIGGER tenant_usage_memory_update AFTER UPDATE OF valid, content ON memories
WHEN OLD.valid OR NEW.valid
BEGIN
    UPDATE tenant_usage SET
        memories = memories + (CASE WHEN NEW.valid THEN 1 ELSE 0 END) - (CASE WHEN OLD.valid THEN 1 ELSE 0 END),
        bytes = bytes + (CASE WHEN NEW.valid THEN length(CAST(NEW.content AS BLOB)) ELSE 0 END)
                      - (CASE WHEN OLD.valid THEN length(CAST(OLD.content AS BLOB)) ELSE 0 END)
    WHERE tenant_id = NEW.tenant_id;
END;

CREATE TRIGGER tenant_usage_memory_delete AFTER DELETE ON memories WHEN OLD.valid
BEGIN
    UPDATE tenant_usage SET memories = memories - 1, bytes = bytes - length(CAST(OLD.content AS BLOB))
    WHERE tenant_id = OLD.tenant_id;
END;

CREATE TRIGGER tenant_usage_session_insert AFTER INSERT ON sessions
BEGIN
    UPDATE tenant_usage SET sessions = sessions + 1 WHERE tenant_id = NEW.tenant_id;
END;

CREATE TRIGGER tenant_usage_session_delete AFTER DELETE ON sessions
BEGIN
    UPDATE tenant_usage SET sessions = sessions - 1 WHERE tenant_id = OLD.tenant_id;
END;
