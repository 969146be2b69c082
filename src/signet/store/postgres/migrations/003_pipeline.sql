-- The pipeline on the shared store: what the extraction and hints workers write beside the
-- memories (store/postgres/pipeline.py). Columns and meanings follow the SQLite schema
-- (store/migrations/001_initial.sql memories_cold, 003_review_queue.sql + 020 target_version).

-- The cold tier: a snapshot of a memory taken in the transaction that updates or deletes it
-- for the pipeline (or an approved review), so a superseded fact is never lost.
CREATE TABLE IF NOT EXISTS memories_cold (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    memory_id    text NOT NULL,
    content      text NOT NULL,
    content_hash text,
    type         text,
    tags         text,
    importance   double precision,
    snapshot     text NOT NULL,   -- JSON of the whole memories row
    reason       text,
    archived_by  text,
    archived_at  text NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_cold_memory ON memories_cold (memory_id);
CREATE INDEX IF NOT EXISTS memories_cold_archived ON memories_cold (archived_at);

-- Proposals that must not apply on their own (an update contradicting its target), parked.
CREATE TABLE IF NOT EXISTS memory_review_queue (
    id               text PRIMARY KEY,
    memory_id        text NOT NULL,
    source_memory_id text,
    action           text NOT NULL CHECK (action IN ('update', 'delete')),
    old_content      text NOT NULL,
    new_content      text,
    proposal         text NOT NULL,
    verdict          text,
    reason           text NOT NULL,
    status           text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'approved', 'rejected')),
    created_at       text NOT NULL,
    resolved_at      text,
    resolved_by      text,
    target_version   integer
);
CREATE INDEX IF NOT EXISTS memory_review_queue_status ON memory_review_queue (status, created_at);
CREATE INDEX IF NOT EXISTS memory_review_queue_memory ON memory_review_queue (memory_id);

-- Prospective hints (memories.hints, written by the hints worker) as their own lexical channel:
-- searched apart from content and tags, as SQLite's FTS5 hint column is (store/fts.py).
ALTER TABLE memories ADD COLUMN IF NOT EXISTS hint_lexical tsvector
    GENERATED ALWAYS AS (setweight(to_tsvector('english', hints), 'A')) STORED;
CREATE INDEX IF NOT EXISTS memories_hint_lexical ON memories USING gin (hint_lexical);
-- "Does any memory carry hints?" without a scan (recall skips the channel when none does).
CREATE INDEX IF NOT EXISTS memories_with_hints ON memories (agent_id, project) WHERE hints <> '';
