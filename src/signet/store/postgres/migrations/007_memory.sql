-- The memory service's own tables on PostgreSQL (services/memory.py runs on both backends):
-- agent feedback, idempotency keys, skills' metadata, and the index short ids are looked up
-- by. Columns follow the SQLite schema (store/migrations/001_initial.sql, 011); timestamps stay
-- ISO-8601 text.

CREATE TABLE IF NOT EXISTS agent_feedback (
    seq             bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id              text PRIMARY KEY,
    memory_id       text NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    session_id      text,
    feedback_type   text NOT NULL CHECK (feedback_type IN ('positive', 'negative', 'correction')),
    correction_text text,
    actor           text,
    agent_id        text NOT NULL DEFAULT 'default',
    created_at      text NOT NULL
);
CREATE INDEX IF NOT EXISTS agent_feedback_memory ON agent_feedback (memory_id);
CREATE INDEX IF NOT EXISTS agent_feedback_created ON agent_feedback (created_at);

-- A key lives in the namespace of the caller's scope (NULL: not constrained); NULL and ''
-- stay apart, as on SQLite (IFNULL(x, x'')).
CREATE TABLE IF NOT EXISTS idempotency_scoped_keys (
    key           text NOT NULL,
    scope_agent   text,
    scope_project text,
    content_hash  text NOT NULL,
    memory_id     text,
    response      text NOT NULL,
    created_at    text NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS idempotency_scoped_keys_key
    ON idempotency_scoped_keys (key, (scope_agent IS NULL), coalesce(scope_agent, ''),
                                (scope_project IS NULL), coalesce(scope_project, ''));
CREATE INDEX IF NOT EXISTS idempotency_scoped_keys_created ON idempotency_scoped_keys (created_at);

CREATE TABLE IF NOT EXISTS skill_meta (
    id                  text PRIMARY KEY,
    skill_name          text NOT NULL,
    agent_id            text NOT NULL DEFAULT 'default',
    decay_rate          double precision NOT NULL DEFAULT 0.99,
    use_count           integer NOT NULL DEFAULT 0,
    last_used_at        text,
    role_classification text,
    filesystem_path     text,
    created_at          text NOT NULL,
    updated_at          text NOT NULL,
    UNIQUE (skill_name, agent_id)
);
CREATE INDEX IF NOT EXISTS memories_skill ON memories (source_type, source_id, agent_id)
    WHERE source_type = 'skill';

-- Short ids (store/prefixes.py): `id LIKE 'abcd%'` answered by the index in byte order,
-- whatever the database's collation.
CREATE INDEX IF NOT EXISTS memories_id_prefix ON memories (id text_pattern_ops);
CREATE INDEX IF NOT EXISTS memory_jobs_id_prefix ON memory_jobs (id text_pattern_ops);
