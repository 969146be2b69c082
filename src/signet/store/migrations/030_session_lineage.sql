-- 030_session_lineage: lossless transcripts, session summaries and the lineage DAG
-- (seed 003 "Three Tiers of Knowing"; store/sessions.py, store/artifacts.py).
--
-- session_transcripts gains what an import needs to be idempotent and appendable (the harness's
-- session id, hashes of the raw and cleaned text, the message count, the cleaned and raw file
-- paths) and the session's life (started, last event, ended, summary status). Its cleaned text is
-- searched by a full-text index kept by triggers. A session's identity is (agent, project,
-- harness session id): session_key is built from the three, so two scopes never share a row.
ALTER TABLE session_transcripts ADD COLUMN session_id TEXT;
ALTER TABLE session_transcripts ADD COLUMN raw_hash TEXT;
ALTER TABLE session_transcripts ADD COLUMN content_hash TEXT;
ALTER TABLE session_transcripts ADD COLUMN message_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE session_transcripts ADD COLUMN started_at TEXT;
ALTER TABLE session_transcripts ADD COLUMN last_event_at TEXT;
ALTER TABLE session_transcripts ADD COLUMN ended_at TEXT;
ALTER TABLE session_transcripts ADD COLUMN path TEXT;
ALTER TABLE session_transcripts ADD COLUMN raw_path TEXT;
ALTER TABLE session_transcripts ADD COLUMN summary_status TEXT;
ALTER TABLE session_transcripts ADD COLUMN updated_at TEXT;
CREATE INDEX IF NOT EXISTS idx_session_transcripts_agent_session
    ON session_transcripts(agent_id, session_id);
-- The inactivity sweep looks only at sessions still open.
CREATE INDEX IF NOT EXISTS idx_session_transcripts_open
    ON session_transcripts(last_event_at) WHERE ended_at IS NULL;

CREATE VIRTUAL TABLE IF NOT EXISTS session_transcripts_fts USING fts5(
    content,
    content='session_transcripts', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS session_transcripts_ai AFTER INSERT ON session_transcripts BEGIN
    INSERT INTO session_transcripts_fts(rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER IF NOT EXISTS session_transcripts_ad AFTER DELETE ON session_transcripts BEGIN
    INSERT INTO session_transcripts_fts(session_transcripts_fts, rowid, content)
    VALUES ('delete', old.rowid, old.content);
END;
CREATE TRIGGER IF NOT EXISTS session_transcripts_au AFTER UPDATE OF content ON session_transcripts
BEGIN
    INSERT INTO session_transcripts_fts(session_transcripts_fts, rowid, content)
    VALUES ('delete', old.rowid, old.content);
    INSERT INTO session_transcripts_fts(rowid, content) VALUES (new.rowid, new.content);
END;

-- The lineage DAG over the markdown artifacts: a summary, arc or epoch (source_kind) belongs to a
-- thread (a topic: a project, or "general"), condenses the artifacts below it (JSON array of
-- source paths) and, once condensed, points up to the artifact that holds it (parent_path).
-- artifact_id is a short stable id derived from the path, for the API.
ALTER TABLE memory_artifacts ADD COLUMN artifact_id TEXT;
ALTER TABLE memory_artifacts ADD COLUMN thread_key TEXT;
ALTER TABLE memory_artifacts ADD COLUMN condenses TEXT NOT NULL DEFAULT '[]';
ALTER TABLE memory_artifacts ADD COLUMN parent_path TEXT;
CREATE INDEX IF NOT EXISTS idx_memory_artifacts_artifact_id ON memory_artifacts(artifact_id);
CREATE INDEX IF NOT EXISTS idx_memory_artifacts_thread
    ON memory_artifacts(agent_id, thread_key, source_kind, parent_path);
