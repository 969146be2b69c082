-- Operations on the shared store: the record of maintenance runs, and the indexes the
-- retention sweep walks (store/postgres/operations.py, store/postgres/retention.py). Columns
-- follow the SQLite schema (045_maintenance.sql). The cold tier it purges is 003_pipeline.sql's.

-- One row per maintenance run with its whole report (the newest 200 are kept), one per repair
-- it made, and the dead jobs maintenance requeued once (never twice).
CREATE TABLE IF NOT EXISTS maintenance_runs (
    seq         bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id          text PRIMARY KEY,
    started_at  text NOT NULL,
    finished_at text NOT NULL,
    mode        text NOT NULL CHECK (mode IN ('observe', 'execute')),
    trigger     text NOT NULL,
    report_json text NOT NULL
);
CREATE INDEX IF NOT EXISTS maintenance_runs_started ON maintenance_runs (started_at, seq);

CREATE TABLE IF NOT EXISTS maintenance_actions (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id       text NOT NULL,
    at           text NOT NULL,
    action       text NOT NULL,
    changed_json text NOT NULL
);
CREATE INDEX IF NOT EXISTS maintenance_actions_run ON maintenance_actions (run_id);

CREATE TABLE IF NOT EXISTS maintenance_requeues (
    job_id      text PRIMARY KEY,
    requeued_at text NOT NULL
);

-- Retention walks these oldest first, a batch at a time.
CREATE INDEX IF NOT EXISTS memories_tombstones ON memories (deleted_at) WHERE is_deleted;
CREATE INDEX IF NOT EXISTS memory_history_created ON memory_history (created_at);
CREATE INDEX IF NOT EXISTS memory_jobs_completed ON memory_jobs (completed_at) WHERE status = 'completed';
CREATE INDEX IF NOT EXISTS memory_jobs_dead ON memory_jobs (failed_at) WHERE status = 'dead';
