-- 037: documents and connectors belong to an agent and a project, like memories, so a scoped
-- token lists, reads and deletes only its own (and its chunks land in its slice). source_key
-- names what was ingested (a file path, a URL, or the hash of pasted text) within that slice:
-- re-ingesting the same source updates one document instead of adding another.
ALTER TABLE documents ADD COLUMN agent_id TEXT NOT NULL DEFAULT 'default';
ALTER TABLE documents ADD COLUMN project TEXT;
ALTER TABLE documents ADD COLUMN source_key TEXT;
ALTER TABLE connectors ADD COLUMN agent_id TEXT NOT NULL DEFAULT 'default';
ALTER TABLE connectors ADD COLUMN project TEXT;
CREATE INDEX IF NOT EXISTS idx_documents_scope_created ON documents(agent_id, project, created_at);
CREATE INDEX IF NOT EXISTS idx_documents_source_key ON documents(source_key);
