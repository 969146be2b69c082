-- 060_superseded_by: a memory replaced by a later one on the same subject ("we now use
-- MongoDB" after "we decided to use PostgreSQL") links to the memory that replaced it. The
-- extraction worker sets it (workers/extract_worker.py); recall dampens such a memory and the
-- MEMORY.md synthesis leaves it out. NULL: current.
ALTER TABLE memories ADD COLUMN superseded_by TEXT;
