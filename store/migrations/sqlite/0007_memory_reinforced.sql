-- The decay clock: when a memory was last reinforced (created, its content
-- edited, or approved by positive feedback). Being read or voted down never
-- moves it. Existing memories start from their last update, the closest
-- record there is.
ALTER TABLE memories ADD COLUMN reinforced_at TIMESTAMP;
UPDATE memories SET reinforced_at = updated_at;
