-- Admin API and clearance. A key carries a clearance, the highest memory
-- security_level it may read (public < internal < confidential < secret),
-- and whether the masker redacts secrets and personal data from what it
-- reads. A tenant may override the configured quotas (NULL: the
-- configuration's value; 0: unlimited) and says whether memories above a
-- key's clearance are left out or masked.
ALTER TABLE api_keys ADD COLUMN clearance TEXT NOT NULL DEFAULT 'internal';
ALTER TABLE api_keys ADD COLUMN mask_pii BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE tenants ADD COLUMN max_memories BIGINT;
ALTER TABLE tenants ADD COLUMN max_bytes BIGINT;
ALTER TABLE tenants ADD COLUMN max_sessions BIGINT;
ALTER TABLE tenants ADD COLUMN withhold TEXT NOT NULL DEFAULT 'omit';
