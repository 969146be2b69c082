-- Recall QA ledger, created only when memory.pipelineV2.telemetry.memorySearchQaEnabled
-- is on. It stores query text and recalled snapshots, so it is sensitive memory
-- content: it stays local and is never sent to any telemetry sink.
-- Idempotent; not numbered, so the migration runner never applies it on its own.

CREATE TABLE IF NOT EXISTS memory_search_telemetry (
    id            TEXT PRIMARY KEY,
    created_at    TEXT NOT NULL,
    route         TEXT NOT NULL,
    agent_id      TEXT NOT NULL DEFAULT 'default',
    session_key   TEXT,
    project       TEXT,
    query         TEXT NOT NULL,
    keyword_query TEXT,
    filters_json  TEXT,
    method        TEXT,
    result_count  INTEGER NOT NULL DEFAULT 0,
    top_score     REAL,
    no_hits       INTEGER NOT NULL DEFAULT 0,
    duration_ms   REAL,
    timings_json  TEXT,
    results_json  TEXT,
    sources_json  TEXT
);
CREATE INDEX IF NOT EXISTS idx_memory_search_telemetry_created_at ON memory_search_telemetry(created_at);
CREATE INDEX IF NOT EXISTS idx_memory_search_telemetry_agent_id ON memory_search_telemetry(agent_id);
CREATE INDEX IF NOT EXISTS idx_memory_search_telemetry_project ON memory_search_telemetry(project);
