-- A feedback credit is recorded as a delta: the memory's new learned
-- fields (reward, confidence, votes, stability, needs_revision, the decay
-- clock, and its learned queries before and after when they changed) as
-- JSON of engram.MemoryDelta, with before and after NULL. A full copy of
-- the memory before and after made the event log grow by kilobytes per
-- credited memory; the history rebuilds the full states from the nearest
-- full event before a delta.
ALTER TABLE memory_events ADD COLUMN delta TEXT;
