-- PostgreSQL drops memory_events' per-row check of its tenant here (see
-- its twin). SQLite checks a foreign key with one lookup in the tenants
-- primary key and cannot drop a constraint without copying the table:
-- nothing changes.
SELECT 1;
