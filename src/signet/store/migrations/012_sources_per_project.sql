-- 012_sources_per_project: a whole source is ranked within one agent *and project*.
--
-- memory_sources (007) was keyed by (agent, source): two projects of one agent writing under
-- the same source id (a session id reused, a document imported twice) shared one source text,
-- so project P's recall for a word only project Q wrote found P's window through the shared
-- source (evidence.source > 0). The key is now (agent, project, source); x'' (an empty blob)
-- stands for "no project" in the unique index, as in 010. The index is derived data: the table
-- and its full-text index are rebuilt empty, every source is marked dirty, and the writer's next
-- flush re-indexes them (store/sources.py), as 007 did for the rows before it.
DROP TRIGGER IF EXISTS memory_sources_ai;
DROP TRIGGER IF EXISTS memory_sources_ad;
DROP TRIGGER IF EXISTS memory_sources_au;
DROP TABLE IF EXISTS memory_sources_fts;
DROP TABLE IF EXISTS memory_sources;

CREATE TABLE IF NOT EXISTS memory_sources (
    rowid     INTEGER PRIMARY KEY,
    agent_id  TEXT NOT NULL,
    project   TEXT,
    source_id TEXT NOT NULL,
    members   INTEGER NOT NULL DEFAULT 0,
    dirty     INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_memory_sources_key
    ON memory_sources(agent_id, IFNULL(project, x''), source_id);
CREATE INDEX IF NOT EXISTS idx_memory_sources_dirty ON memory_sources(dirty) WHERE dirty = 1;
CREATE INDEX IF NOT EXISTS idx_memory_sources_ranked ON memory_sources(agent_id) WHERE members >= 2;

CREATE VIRTUAL TABLE IF NOT EXISTS memory_sources_fts USING fts5(
    content,
    content='', contentless_delete=1,
    tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER IF NOT EXISTS memory_sources_ai AFTER INSERT ON memories
WHEN new.source_id IS NOT NULL BEGIN
    INSERT INTO memory_sources(agent_id, project, source_id)
    VALUES (new.agent_id, new.project, new.source_id)
    ON CONFLICT(agent_id, IFNULL(project, x''), source_id) DO UPDATE SET dirty = 1;
END;

CREATE TRIGGER IF NOT EXISTS memory_sources_ad AFTER DELETE ON memories
WHEN old.source_id IS NOT NULL BEGIN
    UPDATE memory_sources SET dirty = 1
    WHERE agent_id = old.agent_id AND IFNULL(project, x'') = IFNULL(old.project, x'') AND source_id = old.source_id;
END;

CREATE TRIGGER IF NOT EXISTS memory_sources_au
AFTER UPDATE OF content, is_deleted, source_id, agent_id, project ON memories
WHEN old.source_id IS NOT NULL OR new.source_id IS NOT NULL BEGIN
    UPDATE memory_sources SET dirty = 1
    WHERE agent_id = old.agent_id AND IFNULL(project, x'') = IFNULL(old.project, x'') AND source_id = old.source_id;
    INSERT INTO memory_sources(agent_id, project, source_id)
    SELECT new.agent_id, new.project, new.source_id WHERE new.source_id IS NOT NULL
    ON CONFLICT(agent_id, IFNULL(project, x''), source_id) DO UPDATE SET dirty = 1;
END;

INSERT INTO memory_sources(agent_id, project, source_id)
SELECT DISTINCT agent_id, project, source_id FROM memories WHERE source_id IS NOT NULL
ON CONFLICT(agent_id, IFNULL(project, x''), source_id) DO UPDATE SET dirty = 1;
