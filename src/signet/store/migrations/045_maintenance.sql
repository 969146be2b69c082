-- 045_maintenance: what the maintenance worker did (signet/maintenance.py, store/health.py).
--
-- maintenance_runs: one row per run (scheduled or by hand, observe or execute) with its whole
-- report as JSON; the newest 200 are kept. maintenance_actions: one row per repair with what it
-- changed. maintenance_requeues: dead jobs maintenance has already requeued once (never twice).
CREATE TABLE IF NOT EXISTS maintenance_runs (
    id          TEXT PRIMARY KEY,
    started_at  TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    mode        TEXT NOT NULL CHECK (mode IN ('observe', 'execute')),
    trigger     TEXT NOT NULL,
    report_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_maintenance_runs_started_at ON maintenance_runs(started_at);

CREATE TABLE IF NOT EXISTS maintenance_actions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id       TEXT NOT NULL,
    at           TEXT NOT NULL,
    action       TEXT NOT NULL,
    changed_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_maintenance_actions_run_id ON maintenance_actions(run_id);

CREATE TABLE IF NOT EXISTS maintenance_requeues (
    job_id      TEXT PRIMARY KEY,
    requeued_at TEXT NOT NULL
);
