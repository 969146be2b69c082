-- A memory replaced by a later one on the same subject links to it (SQLite migration 060):
-- set by the extraction worker, dampened by recall, left out of MEMORY.md. NULL: current.
ALTER TABLE memories ADD COLUMN IF NOT EXISTS superseded_by text;
