-- 051_mentions_without_rowid: memory_entity_mentions stored in its primary key's order
-- (WITHOUT ROWID). As a rowid table it was held twice, once as rows and once as the
-- (memory_id, entity_id) index of its primary key: 37 MB at 100k memories with the scale
-- bench's 198k mentions, 27 MB as one clustered tree (the entity_id index grows a little: its
-- entries now end in memory_id instead of a rowid). Nothing addressed a mention by rowid but
-- the orphan cleanup, which now names the key (store/health.py).
--
-- The rebuild runs in the migration's one transaction (store/migrate.py): a kill -9 before
-- COMMIT leaves the old table as it was. No trigger or view names this table.
CREATE TABLE IF NOT EXISTS memory_entity_mentions_051 (
    memory_id    TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    entity_id    TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    mention_text TEXT,
    confidence   REAL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (memory_id, entity_id)
) WITHOUT ROWID;
INSERT OR IGNORE INTO memory_entity_mentions_051
    (memory_id, entity_id, mention_text, confidence, created_at)
    SELECT memory_id, entity_id, mention_text, confidence, created_at FROM memory_entity_mentions;
DROP TABLE memory_entity_mentions;
ALTER TABLE memory_entity_mentions_051 RENAME TO memory_entity_mentions;
CREATE INDEX IF NOT EXISTS idx_memory_entity_mentions_entity_id
    ON memory_entity_mentions(entity_id);
