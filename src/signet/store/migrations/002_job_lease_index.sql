-- 002: indexes for the job queue's hot queries.
-- The lease query takes the oldest claimable pending job of any type; (status, created_at)
-- serves it in index order, with no temporary sort (the 001 claim index leads with job_type,
-- so it only avoids the sort when exactly one type is asked for).
CREATE INDEX IF NOT EXISTS idx_memory_jobs_lease ON memory_jobs(status, created_at);
-- enqueue drops a duplicate for the same document; document_ingest jobs look it up by document.
CREATE INDEX IF NOT EXISTS idx_memory_jobs_document_id
    ON memory_jobs(document_id) WHERE document_id IS NOT NULL;
