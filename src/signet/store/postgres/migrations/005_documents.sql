-- Documents and connectors and the recall QA ledger on the shared store (the review queue is
-- 003_pipeline.sql's). Columns and meanings follow the SQLite schema (store/migrations/
-- 001_initial.sql, 037 and optional_search_telemetry.sql); timestamps are ISO-8601 UTC text,
-- JSON kept as text as on SQLite, `seq` stands for SQLite's rowid (insertion order).

CREATE TABLE IF NOT EXISTS connectors (
    seq          bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id           text PRIMARY KEY,
    provider     text NOT NULL,
    display_name text,
    config_json  text NOT NULL DEFAULT '{}',
    cursor_json  text,
    status       text NOT NULL DEFAULT 'idle' CHECK (status IN ('idle', 'syncing', 'error')),
    last_sync_at text,
    last_error   text,
    created_at   text NOT NULL,
    updated_at   text NOT NULL,
    agent_id     text NOT NULL DEFAULT 'default',
    project      text
);

CREATE TABLE IF NOT EXISTS documents (
    seq           bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id            text PRIMARY KEY,
    source_url    text,
    source_type   text,
    content_type  text,
    content_hash  text,
    title         text,
    raw_content   text,
    status        text NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'extracting', 'chunking', 'embedding', 'indexing', 'done', 'failed')),
    error         text,
    connector_id  text REFERENCES connectors(id) ON DELETE SET NULL,
    chunk_count   integer NOT NULL DEFAULT 0,
    memory_count  integer NOT NULL DEFAULT 0,
    metadata_json text,
    created_at    text NOT NULL,
    updated_at    text NOT NULL,
    completed_at  text,
    agent_id      text NOT NULL DEFAULT 'default',
    project       text,
    source_key    text
);
CREATE INDEX IF NOT EXISTS documents_status ON documents (status);
CREATE INDEX IF NOT EXISTS documents_connector ON documents (connector_id);
CREATE INDEX IF NOT EXISTS documents_scope_created ON documents (agent_id, project, created_at);
CREATE INDEX IF NOT EXISTS documents_source_key ON documents (source_key);

CREATE TABLE IF NOT EXISTS document_memories (
    document_id text NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    memory_id   text NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    chunk_index integer NOT NULL DEFAULT 0,
    PRIMARY KEY (document_id, memory_id)
);
CREATE INDEX IF NOT EXISTS document_memories_memory ON document_memories (memory_id);
-- The chunks a document wrote (documents/worker.py): found by source on delete and replace.
CREATE INDEX IF NOT EXISTS memories_source_id ON memories (source_id) WHERE source_id IS NOT NULL;

-- The recall QA ledger: on SQLite created only when the ledger is switched on; here always
-- (a migration runs once for every daemon), written only when it is on (services/search_ledger.py).
CREATE TABLE IF NOT EXISTS memory_search_telemetry (
    seq           bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id            text PRIMARY KEY,
    created_at    text NOT NULL,
    route         text NOT NULL,
    agent_id      text NOT NULL DEFAULT 'default',
    session_key   text,
    project       text,
    query         text NOT NULL,
    keyword_query text,
    filters_json  text,
    method        text,
    result_count  integer NOT NULL DEFAULT 0,
    top_score     double precision,
    no_hits       boolean NOT NULL DEFAULT false,
    duration_ms   double precision,
    timings_json  text,
    results_json  text,
    sources_json  text
);
CREATE INDEX IF NOT EXISTS memory_search_telemetry_created ON memory_search_telemetry (created_at);
CREATE INDEX IF NOT EXISTS memory_search_telemetry_scope ON memory_search_telemetry (agent_id, project);
