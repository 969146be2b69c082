-- The core of the shared store on PostgreSQL: memories with their history, vectors, the job
-- queue, tokens and the token signing key. Columns and their meanings follow the SQLite schema
-- (store/migrations/001_initial.sql and later); timestamps stay ISO-8601 UTC text in one
-- spelling (types.format_ts), so both backends compare and copy them the same way.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE IF NOT EXISTS memories (
    seq                bigint GENERATED ALWAYS AS IDENTITY UNIQUE,  -- insertion order (SQLite's rowid)
    id                 text PRIMARY KEY,
    type               text NOT NULL DEFAULT 'fact',
    category           text,
    content            text NOT NULL,
    normalized_content text,
    content_hash       text,
    confidence         double precision DEFAULT 1.0,
    importance         double precision DEFAULT 0.5,
    source_id          text,
    source_type        text,
    tags               jsonb NOT NULL DEFAULT '[]',
    who                text,
    why                text,
    project            text,
    agent_id           text NOT NULL DEFAULT 'default',
    session_id         text,
    created_at         text NOT NULL,
    updated_at         text NOT NULL,
    event_at           text,
    is_deleted         boolean NOT NULL DEFAULT false,
    deleted_at         text,
    extraction_status  text NOT NULL DEFAULT 'none'
        CHECK (extraction_status IN ('none', 'pending', 'completed', 'failed')),
    embedding_model    text,
    extraction_model   text,
    update_count       integer NOT NULL DEFAULT 0,
    version            integer NOT NULL DEFAULT 1,
    last_accessed      text,
    access_count       integer NOT NULL DEFAULT 0,
    pinned             boolean NOT NULL DEFAULT false,
    hints              text NOT NULL DEFAULT '',
    -- Lexical search: content weighs A, tags C (store/postgres/lexical.py ranks with them).
    lexical            tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', content), 'A')
        || setweight(jsonb_to_tsvector('english', tags, '["string"]'), 'C')
    ) STORED
);
-- Dedup per scope among live rows (SQLite migration 010): NULL and '' projects stay apart.
CREATE UNIQUE INDEX IF NOT EXISTS memories_live_hash
    ON memories (content_hash, agent_id, (project IS NULL), coalesce(project, ''))
    WHERE content_hash IS NOT NULL AND NOT is_deleted;
CREATE INDEX IF NOT EXISTS memories_lexical ON memories USING gin (lexical);
CREATE INDEX IF NOT EXISTS memories_scope ON memories (agent_id, project);
CREATE INDEX IF NOT EXISTS memories_created ON memories (created_at);
CREATE INDEX IF NOT EXISTS memories_hash ON memories (content_hash);

CREATE TABLE IF NOT EXISTS memory_history (
    seq         bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id          text PRIMARY KEY,
    memory_id   text NOT NULL,
    event       text NOT NULL
        CHECK (event IN ('created', 'updated', 'deleted', 'recovered', 'none', 'merged', 'archived')),
    old_content text,
    new_content text,
    changed_by  text NOT NULL,
    reason      text,
    metadata    text,
    actor_type  text CHECK (actor_type IN ('operator', 'agent', 'daemon')),
    session_id  text,
    request_id  text,
    created_at  text NOT NULL,
    token_id    text
);
CREATE INDEX IF NOT EXISTS memory_history_memory ON memory_history (memory_id, created_at, seq);

-- Vectors keyed by content hash (equal text is embedded once), full precision. The HNSW
-- index is per dimension count (a column without one cannot be indexed), created on first use
-- by store/postgres/vectors.py over a halfvec cast of the column.
CREATE TABLE IF NOT EXISTS embeddings (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    content_hash text NOT NULL UNIQUE,
    vector       vector NOT NULL,
    dimensions   integer NOT NULL,
    model        text NOT NULL,
    source_type  text,
    source_id    text,
    created_at   text NOT NULL,
    stale        boolean NOT NULL DEFAULT false
);

CREATE TABLE IF NOT EXISTS memory_jobs (
    seq          bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id           text PRIMARY KEY,
    memory_id    text,
    job_type     text NOT NULL,
    status       text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'leased', 'completed', 'failed', 'dead')),
    payload      text,
    result       text,
    attempts     integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL DEFAULT 3,
    leased_at    text,
    completed_at text,
    failed_at    text,
    error        text,
    document_id  text,
    created_at   text NOT NULL,
    updated_at   text NOT NULL,
    run_after    text
);
-- At most one live job per (type, target): enqueue is INSERT ... ON CONFLICT DO NOTHING, which
-- holds across daemons where SQLite relied on its single writer.
CREATE UNIQUE INDEX IF NOT EXISTS memory_jobs_live_memory
    ON memory_jobs (job_type, memory_id) WHERE memory_id IS NOT NULL AND status IN ('pending', 'leased');
CREATE UNIQUE INDEX IF NOT EXISTS memory_jobs_live_document
    ON memory_jobs (job_type, document_id)
    WHERE memory_id IS NULL AND document_id IS NOT NULL AND status IN ('pending', 'leased');
CREATE INDEX IF NOT EXISTS memory_jobs_claim ON memory_jobs (created_at, seq) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS memory_jobs_leased ON memory_jobs (leased_at) WHERE status = 'leased';

CREATE TABLE IF NOT EXISTS tokens (
    id            text PRIMARY KEY,
    name          text NOT NULL,
    role          text NOT NULL,
    permissions   text NOT NULL DEFAULT '[]',
    scope_project text,
    scope_agent   text,
    key_hash      text NOT NULL UNIQUE,
    created_at    text NOT NULL,
    expires_at    text,
    revoked_at    text,
    last_used_at  text
);

-- The secret that signs API tokens, shared by every daemon on this database (on SQLite it is
-- the file <workspace>/.secrets/auth.key). The first daemon to start creates it.
CREATE TABLE IF NOT EXISTS signing_keys (
    name       text PRIMARY KEY,
    secret     bytea NOT NULL,
    created_at text NOT NULL
);
