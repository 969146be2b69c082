-- 036: indexes for the retention sweep's oldest-first scans: expired tombstones by deletion
-- time (partial: only soft-deleted rows) and idempotency keys by age.
CREATE INDEX IF NOT EXISTS idx_memories_tombstones_deleted_at
    ON memories(deleted_at) WHERE is_deleted = 1;
CREATE INDEX IF NOT EXISTS idx_idempotency_keys_created_at ON idempotency_keys(created_at);
