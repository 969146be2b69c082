-- Sessions and their lineage on PostgreSQL (store/postgres/sessions.py): the lossless
-- transcripts with a full-text index over their cleaned text, the summary queue, the index of
-- the markdown artifacts (summaries, arcs, epochs) and the tombstones of sessions removed for
-- privacy. Columns and meanings follow the SQLite schema (001_initial.sql, 030_session_lineage);
-- timestamps are ISO-8601 UTC text, JSON lists are text as there.

-- One tsvector holds at most 1 MB: a transcript with more words than that (sessions may hold
-- 50 MB) keeps its words without their positions, 100,000 characters at a time, and stops
-- adding once even that is full, rather than refusing the import.
CREATE OR REPLACE FUNCTION signet_transcript_lexical(body text) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    words tsvector := ''::tsvector;
    at integer := 1;
BEGIN
    RETURN to_tsvector('english', body);
EXCEPTION WHEN program_limit_exceeded THEN
    BEGIN
        WHILE at <= length(body) LOOP
            words := words || strip(to_tsvector('english', substr(body, at, 100000)));
            at := at + 100000;
        END LOOP;
    EXCEPTION WHEN program_limit_exceeded THEN
        NULL;
    END;
    RETURN words;
END
$$;

CREATE TABLE IF NOT EXISTS session_transcripts (
    seq            bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    session_key    text PRIMARY KEY,
    content        text NOT NULL,
    harness        text,
    project        text,
    agent_id       text NOT NULL DEFAULT 'default',
    created_at     text NOT NULL,
    session_id     text,
    raw_hash       text,
    content_hash   text,
    message_count  integer NOT NULL DEFAULT 0,
    started_at     text,
    last_event_at  text,
    ended_at       text,
    path           text,
    raw_path       text,
    summary_status text,
    updated_at     text,
    lexical        tsvector GENERATED ALWAYS AS (signet_transcript_lexical(content)) STORED
);
CREATE INDEX IF NOT EXISTS session_transcripts_lexical
    ON session_transcripts USING gin (lexical);
CREATE INDEX IF NOT EXISTS session_transcripts_agent_session
    ON session_transcripts (agent_id, session_id);
CREATE INDEX IF NOT EXISTS session_transcripts_project ON session_transcripts (project);
-- The inactivity sweep looks only at sessions still open.
CREATE INDEX IF NOT EXISTS session_transcripts_open
    ON session_transcripts (last_event_at) WHERE ended_at IS NULL;

CREATE TABLE IF NOT EXISTS summary_jobs (
    seq          bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id           text PRIMARY KEY,
    session_key  text,
    session_id   text,
    trigger      text NOT NULL DEFAULT 'session_end',
    harness      text,
    project      text,
    agent_id     text NOT NULL DEFAULT 'default',
    transcript   text,
    status       text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'leased', 'completed', 'failed', 'dead')),
    attempts     integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL DEFAULT 3,
    result       text,
    error        text,
    captured_at  text,
    started_at   text,
    ended_at     text,
    leased_at    text,
    completed_at text,
    created_at   text NOT NULL,
    updated_at   text
);
-- One live (pending or leased) job per session, held across daemons: enqueue is
-- INSERT ... ON CONFLICT DO NOTHING.
CREATE UNIQUE INDEX IF NOT EXISTS summary_jobs_live
    ON summary_jobs (session_key) WHERE status IN ('pending', 'leased');
CREATE INDEX IF NOT EXISTS summary_jobs_claim ON summary_jobs (created_at, id) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS summary_jobs_session_key ON summary_jobs (session_key);

CREATE TABLE IF NOT EXISTS memory_artifacts (
    agent_id                text NOT NULL DEFAULT 'default',
    source_path             text NOT NULL,
    source_sha256           text NOT NULL,
    source_kind             text NOT NULL,
    session_id              text,
    session_key             text,
    session_token           text,
    project                 text,
    harness                 text,
    captured_at             text,
    started_at              text,
    ended_at                text,
    manifest_path           text,
    memory_sentence         text,
    memory_sentence_quality text,
    content                 text NOT NULL DEFAULT '',
    updated_at              text NOT NULL,
    artifact_id             text,
    thread_key              text,
    condenses               text NOT NULL DEFAULT '[]',  -- JSON array of source paths
    parent_path             text,
    PRIMARY KEY (agent_id, source_path)
);
CREATE INDEX IF NOT EXISTS memory_artifacts_artifact_id ON memory_artifacts (artifact_id);
CREATE INDEX IF NOT EXISTS memory_artifacts_session_key ON memory_artifacts (session_key);
CREATE INDEX IF NOT EXISTS memory_artifacts_thread
    ON memory_artifacts (agent_id, thread_key, source_kind, parent_path);

-- Privacy guardrail: re-indexing must not resurrect removed sessions.
CREATE TABLE IF NOT EXISTS memory_artifact_tombstones (
    agent_id      text NOT NULL DEFAULT 'default',
    session_token text NOT NULL,
    removed_at    text NOT NULL,
    reason        text,
    removed_paths text NOT NULL DEFAULT '[]',  -- JSON array
    PRIMARY KEY (agent_id, session_token)
);

-- Memories by the session they came from (lineage down, transcript excerpts).
CREATE INDEX IF NOT EXISTS memories_session ON memories (agent_id, session_id);
CREATE INDEX IF NOT EXISTS memories_source ON memories (agent_id, source_id);
