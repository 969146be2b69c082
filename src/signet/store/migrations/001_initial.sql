-- 001_initial: the whole starting schema of a Signet database.
--
-- Conventions: ids are TEXT (uuid4 hex) unless a table is an append-only log
-- keyed by INTEGER; timestamps are TEXT ISO-8601 UTC with milliseconds
-- (2026-11-29T12:00:00.000Z) and are always supplied by the caller, so tests
-- can pass time in; JSON lives in TEXT columns; scores are REAL.
-- Every statement is idempotent so re-running this file is harmless.
-- Foreign keys only bite when the connection sets PRAGMA foreign_keys = ON.
-- schema_migrations is owned by the migration runner, not by this file.

-- memories: the central table ------------------------------------------------

CREATE TABLE IF NOT EXISTS memories (
    id                 TEXT PRIMARY KEY,
    type               TEXT NOT NULL DEFAULT 'fact',
    category           TEXT,
    content            TEXT NOT NULL,
    normalized_content TEXT,
    content_hash       TEXT,            -- SHA-256 of normalized_content
    confidence         REAL DEFAULT 1.0,
    importance         REAL DEFAULT 0.5,
    source_id          TEXT,
    source_type        TEXT,
    tags               TEXT NOT NULL DEFAULT '[]',   -- JSON array
    who                TEXT,
    why                TEXT,
    project            TEXT,
    agent_id           TEXT NOT NULL DEFAULT 'default',
    session_id         TEXT,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    event_at           TEXT,            -- when it happened; NULL means created_at
    is_deleted         INTEGER NOT NULL DEFAULT 0,
    deleted_at         TEXT,
    extraction_status  TEXT NOT NULL DEFAULT 'none'
        CHECK (extraction_status IN ('none', 'pending', 'completed', 'failed')),
    embedding_model    TEXT,
    extraction_model   TEXT,
    update_count       INTEGER NOT NULL DEFAULT 0,
    version            INTEGER NOT NULL DEFAULT 1,
    last_accessed      TEXT,
    access_count       INTEGER NOT NULL DEFAULT 0,
    pinned             INTEGER NOT NULL DEFAULT 0,
    hints              TEXT NOT NULL DEFAULT ''      -- prospective queries, FTS-indexed
);

-- Dedup among live rows only: a soft-deleted memory must not block re-adding it.
CREATE UNIQUE INDEX IF NOT EXISTS idx_memories_content_hash_unique
    ON memories(content_hash)
    WHERE content_hash IS NOT NULL AND is_deleted = 0;
CREATE INDEX IF NOT EXISTS idx_memories_deleted_created ON memories(is_deleted, created_at);
CREATE INDEX IF NOT EXISTS idx_memories_type ON memories(type);
CREATE INDEX IF NOT EXISTS idx_memories_project ON memories(project);
CREATE INDEX IF NOT EXISTS idx_memories_agent_id ON memories(agent_id);
CREATE INDEX IF NOT EXISTS idx_memories_source_id ON memories(source_id);
CREATE INDEX IF NOT EXISTS idx_memories_pinned ON memories(pinned);

-- External-content FTS5 over memories' implicit rowid. unicode61 (no stemmer)
-- keeps recall from matching overly aggressive stems.
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    content, hints, tags,
    content='memories', content_rowid='rowid',
    tokenize='unicode61 remove_diacritics 2'
);

CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content, hints, tags)
    VALUES (new.rowid, new.content, new.hints, new.tags);
END;

CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content, hints, tags)
    VALUES ('delete', old.rowid, old.content, old.hints, old.tags);
END;

-- Only text changes touch the index; access-count bumps on recall stay cheap.
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE OF content, hints, tags ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content, hints, tags)
    VALUES ('delete', old.rowid, old.content, old.hints, old.tags);
    INSERT INTO memories_fts(rowid, content, hints, tags)
    VALUES (new.rowid, new.content, new.hints, new.tags);
END;

-- Cold tier: archived snapshots of memories removed from the hot table.
CREATE TABLE IF NOT EXISTS memories_cold (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id    TEXT NOT NULL,
    content      TEXT NOT NULL,
    content_hash TEXT,
    type         TEXT,
    tags         TEXT,
    importance   REAL,
    snapshot     TEXT NOT NULL,   -- JSON of the whole memories row
    reason       TEXT,
    archived_by  TEXT,
    archived_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_memories_cold_memory_id ON memories_cold(memory_id);
CREATE INDEX IF NOT EXISTS idx_memories_cold_archived_at ON memories_cold(archived_at);

-- embeddings: float32 little-endian BLOBs are the source of truth for vectors.
CREATE TABLE IF NOT EXISTS embeddings (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    content_hash TEXT NOT NULL UNIQUE,
    vector       BLOB NOT NULL,
    dimensions   INTEGER NOT NULL,
    model        TEXT NOT NULL,
    source_type  TEXT,
    source_id    TEXT,
    chunk_text   TEXT,
    stale        INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_embeddings_model_stale ON embeddings(model, stale);

-- memory_jobs: durable queue; a job is a row with a status and a lease.
CREATE TABLE IF NOT EXISTS memory_jobs (
    id           TEXT PRIMARY KEY,
    memory_id    TEXT,
    job_type     TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'leased', 'completed', 'failed', 'dead')),
    payload      TEXT,
    result       TEXT,
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 3,
    leased_at    TEXT,
    completed_at TEXT,
    failed_at    TEXT,
    error        TEXT,
    document_id  TEXT,            -- set for document_ingest jobs
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    run_after    TEXT             -- retry back-off: not claimable before this time
);
CREATE INDEX IF NOT EXISTS idx_memory_jobs_status ON memory_jobs(status);
CREATE INDEX IF NOT EXISTS idx_memory_jobs_memory_id ON memory_jobs(memory_id);
CREATE INDEX IF NOT EXISTS idx_memory_jobs_claim ON memory_jobs(status, job_type, created_at);
CREATE INDEX IF NOT EXISTS idx_memory_jobs_completed_at
    ON memory_jobs(completed_at) WHERE status = 'completed';
CREATE INDEX IF NOT EXISTS idx_memory_jobs_dead_failed_at
    ON memory_jobs(failed_at) WHERE status = 'dead';

-- memory_history: immutable audit trail; no FK so it outlives a hard purge.
CREATE TABLE IF NOT EXISTS memory_history (
    id          TEXT PRIMARY KEY,
    memory_id   TEXT NOT NULL,
    event       TEXT NOT NULL
        CHECK (event IN ('created', 'updated', 'deleted', 'recovered', 'none', 'merged', 'archived')),
    old_content TEXT,
    new_content TEXT,
    changed_by  TEXT NOT NULL,
    reason      TEXT,
    metadata    TEXT,             -- JSON; shadow proposals live here with event = 'none'
    actor_type  TEXT CHECK (actor_type IN ('operator', 'agent', 'daemon')),
    session_id  TEXT,
    request_id  TEXT,
    created_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_memory_history_memory_created ON memory_history(memory_id, created_at);
CREATE INDEX IF NOT EXISTS idx_memory_history_created_at ON memory_history(created_at);

-- knowledge graph -------------------------------------------------------------

CREATE TABLE IF NOT EXISTS entities (
    id             TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    entity_type    TEXT NOT NULL DEFAULT 'unknown',
    description    TEXT,
    canonical_name TEXT NOT NULL,       -- lowercased name, the lookup key
    mentions       INTEGER NOT NULL DEFAULT 0,
    embedding      BLOB,
    agent_id       TEXT NOT NULL DEFAULT 'default',
    community_id   TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    UNIQUE (canonical_name, agent_id)
);
CREATE INDEX IF NOT EXISTS idx_entities_canonical_name ON entities(canonical_name);
CREATE INDEX IF NOT EXISTS idx_entities_community_id ON entities(community_id);

CREATE TABLE IF NOT EXISTS entity_aliases (
    alias           TEXT NOT NULL,
    canonical_alias TEXT NOT NULL,      -- lowercased alias
    entity_id       TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    agent_id        TEXT NOT NULL DEFAULT 'default',
    created_at      TEXT NOT NULL,
    UNIQUE (canonical_alias, agent_id, entity_id)
);
CREATE INDEX IF NOT EXISTS idx_entity_aliases_canonical_alias ON entity_aliases(canonical_alias);

CREATE TABLE IF NOT EXISTS entity_communities (
    id         TEXT PRIMARY KEY,
    agent_id   TEXT NOT NULL DEFAULT 'default',
    label      TEXT,
    size       INTEGER NOT NULL DEFAULT 0,
    modularity REAL,
    quality    TEXT,
    member_ids TEXT NOT NULL DEFAULT '[]',  -- JSON array of entity ids
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_entity_communities_agent_id ON entity_communities(agent_id);

CREATE TABLE IF NOT EXISTS relations (
    id               TEXT PRIMARY KEY,
    source_entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    target_entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    relation_type    TEXT NOT NULL,
    strength         REAL NOT NULL DEFAULT 1.0,
    mentions         INTEGER NOT NULL DEFAULT 1,
    confidence       REAL NOT NULL DEFAULT 0.5,
    metadata         TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    UNIQUE (source_entity_id, target_entity_id, relation_type)
);
CREATE INDEX IF NOT EXISTS idx_relations_source ON relations(source_entity_id);
CREATE INDEX IF NOT EXISTS idx_relations_target ON relations(target_entity_id);
CREATE INDEX IF NOT EXISTS idx_relations_source_type ON relations(source_entity_id, relation_type);

CREATE TABLE IF NOT EXISTS memory_entity_mentions (
    memory_id    TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    entity_id    TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    mention_text TEXT,
    confidence   REAL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (memory_id, entity_id)
);
-- Inbound traversal (entity -> memories) during graph boost.
CREATE INDEX IF NOT EXISTS idx_memory_entity_mentions_entity_id ON memory_entity_mentions(entity_id);

-- Knowledge architecture: aspects, attributes, dependencies, tasks, pins.
CREATE TABLE IF NOT EXISTS entity_aspects (
    id          TEXT PRIMARY KEY,
    entity_id   TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    aspect_name TEXT NOT NULL,
    description TEXT,
    confidence  REAL NOT NULL DEFAULT 0.5,
    weight      REAL NOT NULL DEFAULT 1.0,
    agent_id    TEXT NOT NULL DEFAULT 'default',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (entity_id, aspect_name)
);

CREATE TABLE IF NOT EXISTS entity_attributes (
    id               TEXT PRIMARY KEY,
    aspect_id        TEXT NOT NULL REFERENCES entity_aspects(id) ON DELETE CASCADE,
    entity_id        TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    kind             TEXT NOT NULL DEFAULT 'attribute' CHECK (kind IN ('attribute', 'constraint')),
    attribute_key    TEXT NOT NULL,
    attribute_value  TEXT NOT NULL,
    confidence       REAL NOT NULL DEFAULT 0.5,
    source_memory_id TEXT REFERENCES memories(id) ON DELETE SET NULL,
    agent_id         TEXT NOT NULL DEFAULT 'default',
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_entity_attributes_aspect_id ON entity_attributes(aspect_id);
CREATE INDEX IF NOT EXISTS idx_entity_attributes_entity_id ON entity_attributes(entity_id);
CREATE INDEX IF NOT EXISTS idx_entity_attributes_source_memory_id ON entity_attributes(source_memory_id);

CREATE TABLE IF NOT EXISTS entity_dependencies (
    id               TEXT PRIMARY KEY,
    source_entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    target_entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    dependency_type  TEXT NOT NULL,
    strength         REAL NOT NULL DEFAULT 0.5,
    traversal_weight REAL NOT NULL DEFAULT 1.0,   -- desire paths: reinforced when walked
    metadata         TEXT,
    agent_id         TEXT NOT NULL DEFAULT 'default',
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    UNIQUE (source_entity_id, target_entity_id, dependency_type)
);
CREATE INDEX IF NOT EXISTS idx_entity_dependencies_source ON entity_dependencies(source_entity_id);
CREATE INDEX IF NOT EXISTS idx_entity_dependencies_target ON entity_dependencies(target_entity_id);

CREATE TABLE IF NOT EXISTS task_meta (
    entity_id    TEXT PRIMARY KEY REFERENCES entities(id) ON DELETE CASCADE,
    task_type    TEXT,
    priority     INTEGER NOT NULL DEFAULT 0,
    status       TEXT NOT NULL DEFAULT 'open',
    due_at       TEXT,
    context_json TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_task_meta_status ON task_meta(status);
CREATE INDEX IF NOT EXISTS idx_task_meta_due_at ON task_meta(due_at);

CREATE TABLE IF NOT EXISTS entity_pinning (
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    agent_id  TEXT NOT NULL DEFAULT 'default',
    pinned_by TEXT,
    reason    TEXT,
    pinned_at TEXT NOT NULL,
    PRIMARY KEY (entity_id, agent_id)
);
CREATE INDEX IF NOT EXISTS idx_entity_pinning_agent_id ON entity_pinning(agent_id);

-- documents and connectors ----------------------------------------------------

CREATE TABLE IF NOT EXISTS connectors (
    id           TEXT PRIMARY KEY,
    provider     TEXT NOT NULL,
    display_name TEXT,
    config_json  TEXT NOT NULL DEFAULT '{}',
    cursor_json  TEXT,             -- incremental sync state
    status       TEXT NOT NULL DEFAULT 'idle' CHECK (status IN ('idle', 'syncing', 'error')),
    last_sync_at TEXT,
    last_error   TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_connectors_provider ON connectors(provider);

CREATE TABLE IF NOT EXISTS documents (
    id            TEXT PRIMARY KEY,
    source_url    TEXT,
    source_type   TEXT,
    content_type  TEXT,
    content_hash  TEXT,
    title         TEXT,
    raw_content   TEXT,
    status        TEXT NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'extracting', 'chunking', 'embedding', 'indexing', 'done', 'failed')),
    error         TEXT,
    connector_id  TEXT REFERENCES connectors(id) ON DELETE SET NULL,
    chunk_count   INTEGER NOT NULL DEFAULT 0,
    memory_count  INTEGER NOT NULL DEFAULT 0,
    metadata_json TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    completed_at  TEXT
);
CREATE INDEX IF NOT EXISTS idx_documents_status ON documents(status);
CREATE INDEX IF NOT EXISTS idx_documents_source_url ON documents(source_url);
CREATE INDEX IF NOT EXISTS idx_documents_connector_id ON documents(connector_id);
CREATE INDEX IF NOT EXISTS idx_documents_content_hash ON documents(content_hash);

CREATE TABLE IF NOT EXISTS document_memories (
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    memory_id   TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    chunk_index INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (document_id, memory_id)
);
CREATE INDEX IF NOT EXISTS idx_document_memories_memory_id ON document_memories(memory_id);

-- sessions, summaries and artifacts ------------------------------------------

CREATE TABLE IF NOT EXISTS conversations (
    id              TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL,
    harness         TEXT NOT NULL,
    started_at      TEXT,
    ended_at        TEXT,
    summary         TEXT,
    topics          TEXT,          -- JSON array
    decisions       TEXT,          -- JSON array
    vector_clock    TEXT NOT NULL DEFAULT '{}',
    version         INTEGER NOT NULL DEFAULT 1,
    manual_override INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_conversations_session_id ON conversations(session_id);
CREATE INDEX IF NOT EXISTS idx_conversations_harness ON conversations(harness);

CREATE TABLE IF NOT EXISTS summary_jobs (
    id           TEXT PRIMARY KEY,
    session_key  TEXT,
    session_id   TEXT,
    trigger      TEXT NOT NULL DEFAULT 'session_end',
    harness      TEXT,
    project      TEXT,
    agent_id     TEXT NOT NULL DEFAULT 'default',
    transcript   TEXT,
    status       TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'leased', 'completed', 'failed', 'dead')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 3,
    result       TEXT,
    error        TEXT,
    captured_at  TEXT,
    started_at   TEXT,
    ended_at     TEXT,
    leased_at    TEXT,
    completed_at TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT
);
CREATE INDEX IF NOT EXISTS idx_summary_jobs_status ON summary_jobs(status, created_at);
CREATE INDEX IF NOT EXISTS idx_summary_jobs_session_key ON summary_jobs(session_key);

-- Rebuildable index over canonical markdown history.
CREATE TABLE IF NOT EXISTS memory_artifacts (
    agent_id                TEXT NOT NULL DEFAULT 'default',
    source_path             TEXT NOT NULL,
    source_sha256           TEXT NOT NULL,
    source_kind             TEXT NOT NULL,
    session_id              TEXT,
    session_key             TEXT,
    session_token           TEXT,
    project                 TEXT,
    harness                 TEXT,
    captured_at             TEXT,
    started_at              TEXT,
    ended_at                TEXT,
    manifest_path           TEXT,
    memory_sentence         TEXT,
    memory_sentence_quality TEXT,
    content                 TEXT NOT NULL DEFAULT '',
    updated_at              TEXT NOT NULL,
    PRIMARY KEY (agent_id, source_path)
);
CREATE INDEX IF NOT EXISTS idx_memory_artifacts_session_token ON memory_artifacts(agent_id, session_token);
CREATE INDEX IF NOT EXISTS idx_memory_artifacts_captured_at ON memory_artifacts(agent_id, captured_at);
CREATE INDEX IF NOT EXISTS idx_memory_artifacts_session_key ON memory_artifacts(session_key);
CREATE INDEX IF NOT EXISTS idx_memory_artifacts_project ON memory_artifacts(project);

-- Privacy guardrail: re-indexing must not resurrect removed sessions.
CREATE TABLE IF NOT EXISTS memory_artifact_tombstones (
    agent_id      TEXT NOT NULL DEFAULT 'default',
    session_token TEXT NOT NULL,
    removed_at    TEXT NOT NULL,
    reason        TEXT,
    removed_paths TEXT NOT NULL DEFAULT '[]',   -- JSON array
    PRIMARY KEY (agent_id, session_token)
);

CREATE TABLE IF NOT EXISTS session_transcripts (
    session_key TEXT PRIMARY KEY,
    content     TEXT NOT NULL,
    harness     TEXT,
    project     TEXT,
    agent_id    TEXT NOT NULL DEFAULT 'default',
    created_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_session_transcripts_project ON session_transcripts(project);
CREATE INDEX IF NOT EXISTS idx_session_transcripts_created_at ON session_transcripts(created_at);

-- caches, skills and the predictive scorer ------------------------------------

-- One row per projection dimension; replaced when the embedding count changes.
CREATE TABLE IF NOT EXISTS umap_cache (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    dimensions      INTEGER NOT NULL UNIQUE,
    embedding_count INTEGER NOT NULL,
    result_json     TEXT NOT NULL,
    cached_at       TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS skill_meta (
    id                  TEXT PRIMARY KEY,
    skill_name          TEXT NOT NULL,
    agent_id            TEXT NOT NULL DEFAULT 'default',
    decay_rate          REAL NOT NULL DEFAULT 0.99,
    use_count           INTEGER NOT NULL DEFAULT 0,
    last_used_at        TEXT,
    role_classification TEXT,
    filesystem_path     TEXT,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    UNIQUE (skill_name, agent_id)
);

CREATE TABLE IF NOT EXISTS predictor_comparisons (
    id          TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL,
    memory_a_id TEXT NOT NULL,
    memory_b_id TEXT NOT NULL,
    preferred   TEXT,             -- id of the preferred memory, NULL for a tie
    confidence  REAL,
    agent_id    TEXT NOT NULL DEFAULT 'default',
    created_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_predictor_comparisons_session_id ON predictor_comparisons(session_id);
CREATE INDEX IF NOT EXISTS idx_predictor_comparisons_created_at ON predictor_comparisons(created_at);

CREATE TABLE IF NOT EXISTS predictor_training_pairs (
    id             TEXT PRIMARY KEY,
    session_id     TEXT NOT NULL,
    memory_id      TEXT NOT NULL,
    feature_vector BLOB NOT NULL,   -- float32 little-endian
    label          REAL NOT NULL,
    agent_id       TEXT NOT NULL DEFAULT 'default',
    created_at     TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_predictor_training_pairs_session_id ON predictor_training_pairs(session_id);
CREATE INDEX IF NOT EXISTS idx_predictor_training_pairs_created_at ON predictor_training_pairs(created_at);

CREATE TABLE IF NOT EXISTS agent_feedback (
    id              TEXT PRIMARY KEY,
    memory_id       TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    session_id      TEXT,
    feedback_type   TEXT NOT NULL CHECK (feedback_type IN ('positive', 'negative', 'correction')),
    correction_text TEXT,
    actor           TEXT,
    agent_id        TEXT NOT NULL DEFAULT 'default',
    created_at      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_agent_feedback_memory_id ON agent_feedback(memory_id);
CREATE INDEX IF NOT EXISTS idx_agent_feedback_created_at ON agent_feedback(created_at);

-- auth and request idempotency -------------------------------------------------

CREATE TABLE IF NOT EXISTS tokens (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    role          TEXT NOT NULL,
    permissions   TEXT NOT NULL DEFAULT '[]',   -- JSON array
    scope_project TEXT,
    scope_agent   TEXT,
    key_hash      TEXT NOT NULL UNIQUE,         -- never the raw token
    created_at    TEXT NOT NULL,
    expires_at    TEXT,
    revoked_at    TEXT,
    last_used_at  TEXT
);

CREATE TABLE IF NOT EXISTS idempotency_keys (
    key        TEXT PRIMARY KEY,
    memory_id  TEXT,
    response   TEXT,
    created_at TEXT NOT NULL
);
