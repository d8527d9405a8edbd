-- The duplicate guard is per security level (docs/admin.md, "Writes"): a
-- create is a duplicate only of a live memory of the same user, agent,
-- category and level, so a key writing at its own level the text of a
-- memory above its clearance stores its own copy instead of learning
-- that the other exists.
DROP INDEX memories_dedupe;
CREATE UNIQUE INDEX memories_dedupe ON memories (tenant_id, user_id, agent_id, category, security_level, content_hash) WHERE key IS NULL AND valid AND NOT archived;
