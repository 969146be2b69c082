-- Term statistics over the memory index (document frequency per term), read by recall to
-- drop query terms that occur in most memories before ranking (see store/fts.py).
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts_vocab USING fts5vocab(memories_fts, 'row');
