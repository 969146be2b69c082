-- 008_presence_indexes: "is there any?" in one index probe, for two optional recall channels.
--
-- Recall's hint channel searches the hints column of the full-text index; FTS5 reads a term's
-- whole posting list whatever the column filter, so at 100k memories that search cost ~10 ms
-- even when no memory has a hint (no LLM: the default). The whole-source channel likewise has
-- nothing to do when no source has two members. Each partial index holds only the rows that
-- matter, so recall skips a channel with nothing in it (store/fts.py has_hints,
-- store/sources.py any_ranked).
CREATE INDEX IF NOT EXISTS idx_memories_with_hints ON memories(agent_id) WHERE hints <> '';
CREATE INDEX IF NOT EXISTS idx_memory_sources_ranked ON memory_sources(agent_id) WHERE members >= 2;
