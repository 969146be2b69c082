-- 005_stemmed_fts: a second full-text index over the same columns, with the Porter stemmer.
--
-- memories_fts (unicode61, no stemmer) matches words exactly; this one maps inflections to one
-- stem ("painted", "painting", "paints" -> "paint"), which the lexical recall channel needs for
-- conversational text where a question and its answer rarely use the same word form. Both stay
-- external-content tables over memories, kept in step by triggers like memories_fts's.
CREATE VIRTUAL TABLE IF NOT EXISTS memories_stem_fts USING fts5(
    content, hints, tags,
    content='memories', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER IF NOT EXISTS memories_stem_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_stem_fts(rowid, content, hints, tags)
    VALUES (new.rowid, new.content, new.hints, new.tags);
END;

CREATE TRIGGER IF NOT EXISTS memories_stem_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_stem_fts(memories_stem_fts, rowid, content, hints, tags)
    VALUES ('delete', old.rowid, old.content, old.hints, old.tags);
END;

CREATE TRIGGER IF NOT EXISTS memories_stem_au AFTER UPDATE OF content, hints, tags ON memories BEGIN
    INSERT INTO memories_stem_fts(memories_stem_fts, rowid, content, hints, tags)
    VALUES ('delete', old.rowid, old.content, old.hints, old.tags);
    INSERT INTO memories_stem_fts(rowid, content, hints, tags)
    VALUES (new.rowid, new.content, new.hints, new.tags);
END;

-- Index the rows written before this migration (rebuild re-reads the content table, so running
-- it again is harmless).
INSERT INTO memories_stem_fts(memories_stem_fts) VALUES ('rebuild');

-- Conversation neighbours (recall/context.py) are found by session within an agent.
CREATE INDEX IF NOT EXISTS idx_memories_agent_session ON memories(agent_id, session_id);
