-- Emotional weight and the write gate's quarantine.
-- emotion is a memory's emotional intensity in [0, 1] (given on the write
-- or estimated from its text, engram.EstimateEmotion); memories stored
-- before it count as neutral (0). quarantined marks a memory the write
-- gate held back (memory.gate_mode: quarantine): it is stored archived, so
-- no recall finds it, until it is released. A tenant's own gate ("on",
-- "off") and gate_mode ("refuse", "quarantine") override the server's
-- memory.gate and memory.gate_mode; '' means the server's.
ALTER TABLE memories ADD COLUMN emotion DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN quarantined BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE tenants ADD COLUMN gate TEXT NOT NULL DEFAULT '';
ALTER TABLE tenants ADD COLUMN gate_mode TEXT NOT NULL DEFAULT '';
