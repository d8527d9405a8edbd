-- Queries a memory answered well, learned from positive feedback:
-- searched by recall at low weight, never injected.
ALTER TABLE memories ADD COLUMN learned TEXT NOT NULL DEFAULT '';
