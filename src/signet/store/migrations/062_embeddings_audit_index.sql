-- 062_embeddings_audit_index: the embeddings audit (maintenance's observe run, /api/status)
-- counts the current vectors of a model whose memory is live. With (model, stale) alone each
-- counted row was read from the table for its content_hash, beside its 1.5 KB vector: at 100k
-- vectors that read was most of the maintenance run. With content_hash in the index the count
-- reads the index only. The new index serves every query the old one did (same prefix).
DROP INDEX IF EXISTS idx_embeddings_model_stale;
CREATE INDEX IF NOT EXISTS idx_embeddings_model_stale_hash ON embeddings(model, stale, content_hash);
