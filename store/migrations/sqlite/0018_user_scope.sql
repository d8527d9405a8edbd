-- User scope (docs/users.md). user_id names the end user of a tenant a
-- row belongs to; '' is the tenant's shared data. A recall for a user
-- reads the shared rows and that user's, so every per-user read is on an
-- index that starts (tenant_id, user_id). Keys and the duplicate guard
-- are per user: two users may hold the same key or the same sentence.
ALTER TABLE memories ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
DROP INDEX memories_tenant_key;
CREATE UNIQUE INDEX memories_tenant_key ON memories (tenant_id, user_id, key) WHERE key IS NOT NULL;
DROP INDEX memories_dedupe;
CREATE UNIQUE INDEX memories_dedupe ON memories (tenant_id, user_id, agent_id, category, content_hash) WHERE key IS NULL AND valid AND NOT archived;
CREATE INDEX memories_tenant_user ON memories (tenant_id, user_id, seq);

ALTER TABLE recalls ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
CREATE INDEX recalls_tenant_user ON recalls (tenant_id, user_id) WHERE user_id <> '';
ALTER TABLE interactions ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
CREATE INDEX interactions_tenant_user ON interactions (tenant_id, user_id) WHERE user_id <> '';
ALTER TABLE feedback ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
CREATE INDEX feedback_tenant_user ON feedback (tenant_id, user_id) WHERE user_id <> '';
ALTER TABLE pairs ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
CREATE INDEX pairs_tenant_user ON pairs (tenant_id, user_id) WHERE user_id <> '';
ALTER TABLE sessions ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
CREATE INDEX sessions_tenant_user ON sessions (tenant_id, user_id) WHERE user_id <> '';
ALTER TABLE reflections ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
CREATE INDEX reflections_tenant_user ON reflections (tenant_id, user_id) WHERE user_id <> '';
