-- 007_source_index: a full-text index over whole sources (store/sources.py).
--
-- Memories cut from one source (the windows of a chat session, the chunks of a document) share
-- a source_id. Ranked one by one, no single window holds enough of a query's words; BM25 over
-- the whole source does (the source as one document). memory_sources holds one row per
-- (agent, source) with its live member count; memory_sources_fts indexes the members' text
-- joined, contentless (the text already lives in memories). Triggers only mark a source dirty;
-- the writer re-indexes the dirty sources once, just before its transaction commits, so a
-- batch of a thousand windows of one session costs one re-index, not a thousand.
CREATE TABLE IF NOT EXISTS memory_sources (
    rowid     INTEGER PRIMARY KEY,
    agent_id  TEXT NOT NULL,
    source_id TEXT NOT NULL,
    members   INTEGER NOT NULL DEFAULT 0,
    dirty     INTEGER NOT NULL DEFAULT 1,
    UNIQUE (agent_id, source_id)
);

CREATE INDEX IF NOT EXISTS idx_memory_sources_dirty ON memory_sources(dirty) WHERE dirty = 1;

CREATE VIRTUAL TABLE IF NOT EXISTS memory_sources_fts USING fts5(
    content,
    content='', contentless_delete=1,
    tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER IF NOT EXISTS memory_sources_ai AFTER INSERT ON memories
WHEN new.source_id IS NOT NULL BEGIN
    INSERT INTO memory_sources(agent_id, source_id) VALUES (new.agent_id, new.source_id)
    ON CONFLICT(agent_id, source_id) DO UPDATE SET dirty = 1;
END;

CREATE TRIGGER IF NOT EXISTS memory_sources_ad AFTER DELETE ON memories
WHEN old.source_id IS NOT NULL BEGIN
    UPDATE memory_sources SET dirty = 1
    WHERE agent_id = old.agent_id AND source_id = old.source_id;
END;

CREATE TRIGGER IF NOT EXISTS memory_sources_au
AFTER UPDATE OF content, is_deleted, source_id, agent_id ON memories
WHEN old.source_id IS NOT NULL OR new.source_id IS NOT NULL BEGIN
    UPDATE memory_sources SET dirty = 1
    WHERE agent_id = old.agent_id AND source_id = old.source_id;
    INSERT INTO memory_sources(agent_id, source_id)
    SELECT new.agent_id, new.source_id WHERE new.source_id IS NOT NULL
    ON CONFLICT(agent_id, source_id) DO UPDATE SET dirty = 1;
END;

-- Sources written before this migration: marked dirty, indexed by the next write's flush
-- (running this again only re-marks them).
INSERT INTO memory_sources(agent_id, source_id)
SELECT DISTINCT agent_id, source_id FROM memories WHERE source_id IS NOT NULL
ON CONFLICT(agent_id, source_id) DO UPDATE SET dirty = 1;
