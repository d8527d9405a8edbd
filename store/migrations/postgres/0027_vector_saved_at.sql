-- Each vector records when it was saved (unix milliseconds, the saving
-- server's clock), so that a server's vector cache reads only what was
-- saved since its last read instead of every vector of the tenant once
-- a second (store/vectorcache.go). Vectors saved before this carry 0;
-- the cache's full loads, once a minute, read them as before.
ALTER TABLE memory_vectors ADD COLUMN saved_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX memory_vectors_saved ON memory_vectors (tenant_id, model, saved_at);
