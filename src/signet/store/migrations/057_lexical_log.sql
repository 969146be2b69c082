-- 057_lexical_log: what the in-memory lexical index (store/lexical_index.py) must catch up on.
--
-- The index holds BM25 postings beside FTS5 and is rebuilt from it, never persisted. So that a
-- reader can keep it fresh without writing, every change to a memory's indexed text is logged
-- here by trigger, inside the writing transaction (so a kill -9 loses no entry a committed row
-- needs): the rowid of each inserted, deleted, or updated (content, hints, tags) memory. Only
-- the last 50,000 entries are kept; a reader further behind rebuilds the index instead.
CREATE TABLE IF NOT EXISTS lexical_log (
    seq INTEGER PRIMARY KEY,
    row INTEGER NOT NULL
);

CREATE TRIGGER IF NOT EXISTS lexical_log_ai AFTER INSERT ON memories BEGIN
    INSERT INTO lexical_log(row) VALUES (new.rowid);
    DELETE FROM lexical_log WHERE seq <= last_insert_rowid() - 50000;
END;

CREATE TRIGGER IF NOT EXISTS lexical_log_ad AFTER DELETE ON memories BEGIN
    INSERT INTO lexical_log(row) VALUES (old.rowid);
    DELETE FROM lexical_log WHERE seq <= last_insert_rowid() - 50000;
END;

CREATE TRIGGER IF NOT EXISTS lexical_log_au AFTER UPDATE OF content, hints, tags ON memories BEGIN
    INSERT INTO lexical_log(row) VALUES (new.rowid);
    INSERT INTO lexical_log(row) SELECT old.rowid WHERE old.rowid <> new.rowid;
    DELETE FROM lexical_log WHERE seq <= last_insert_rowid() - 50000;
END;

-- The stemmed index's term statistics: which terms are common (row: rows per term) and where
-- each occurs (instance: row, column, offset), read when the index is built.
CREATE VIRTUAL TABLE IF NOT EXISTS memories_stem_fts_vocab USING fts5vocab(memories_stem_fts, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS memories_stem_fts_instance
    USING fts5vocab(memories_stem_fts, 'instance');
