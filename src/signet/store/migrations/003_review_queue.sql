-- 003: the review queue for pipeline proposals that must not apply on their own.
-- An update whose new fact contradicts the memory it would replace is blocked (seed 003,
-- "Conflicting Facts Block by Default") and waits here until an operator approves or rejects it.
-- The proposal is kept whole (JSON) so approval can apply exactly what was proposed.
CREATE TABLE IF NOT EXISTS memory_review_queue (
    id               TEXT PRIMARY KEY,
    memory_id        TEXT NOT NULL,        -- the memory the proposal would change
    source_memory_id TEXT,                 -- the memory the fact was extracted from
    action           TEXT NOT NULL CHECK (action IN ('update', 'delete')),
    old_content      TEXT NOT NULL,
    new_content      TEXT,
    proposal         TEXT NOT NULL,        -- JSON of the pipeline's proposal
    verdict          TEXT,                 -- JSON of the contradiction verdict that blocked it
    reason           TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'approved', 'rejected')),
    created_at       TEXT NOT NULL,
    resolved_at      TEXT,
    resolved_by      TEXT
);
CREATE INDEX IF NOT EXISTS idx_memory_review_queue_status
    ON memory_review_queue(status, created_at);
CREATE INDEX IF NOT EXISTS idx_memory_review_queue_memory_id
    ON memory_review_queue(memory_id);
