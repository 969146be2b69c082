-- 025_hook_injections: the per-session injection ledger of the harness hooks.
--
-- A memory the hooks put into an agent's context is written here with the session that got
-- it, so no memory is injected twice in one session (session-start, then every prompt). The
-- ledger is keyed by (session_id, memory_id): recording twice is a no-op, and the lookup of a
-- session's ids is one index range scan. Rows older than the completed-job retention window
-- carry no information once their session is over; retention may purge by injected_at.
CREATE TABLE IF NOT EXISTS hook_injections (
    session_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    event TEXT NOT NULL,
    injected_at TEXT NOT NULL,
    PRIMARY KEY (session_id, memory_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idx_hook_injections_injected_at ON hook_injections(injected_at);
