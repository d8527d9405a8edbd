-- Dense vectors for optional hybrid recall: one per live memory and
-- embedding model, little-endian float32, L2-normalised at write.
CREATE TABLE memory_vectors (
    memory_seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    tenant_id  TEXT    NOT NULL,
    model      TEXT    NOT NULL,
    dims       INTEGER NOT NULL,
    vector     BLOB    NOT NULL
);
CREATE INDEX memory_vectors_tenant ON memory_vectors (tenant_id, model);
