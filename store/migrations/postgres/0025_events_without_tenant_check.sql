-- memory_events no longer checks its tenant_id against tenants row by
-- row. An event is written only in the transaction that writes (and
-- locks) its memory, whose own reference to tenants was checked; the
-- per-row check of the event ran a trigger and a key-share lock for each
-- of the tens of events a feedback group appends, a quarter of the time
-- of its costliest statement.
ALTER TABLE memory_events DROP CONSTRAINT IF EXISTS memory_events_tenant_id_fkey;
