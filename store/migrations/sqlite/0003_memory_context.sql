-- Where a memory came from (e.g. the message a reply answers): searched
-- by recall at half weight, never injected.
ALTER TABLE memories ADD COLUMN context TEXT NOT NULL DEFAULT '';
