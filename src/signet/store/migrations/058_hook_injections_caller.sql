-- 058_hook_injections_caller: the hooks' injection ledger is kept per caller and session.
--
-- Keyed by session id alone, the ledger let any token that sent a session's id mark memories
-- as given to that session (so it never got them) or clear its ledger (so they came again).
-- `caller` is the token the hook came with (the daemon sets it; a payload cannot), '' for a
-- hook run in-process; the key is (caller, session_id, memory_id). Rows from before carry ''.
--
-- The rebuild runs in the migration's one transaction (store/migrate.py): a kill -9 before
-- COMMIT leaves the old table as it was. No trigger or view names this table.
CREATE TABLE IF NOT EXISTS hook_injections_058 (
    session_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    event TEXT NOT NULL,
    injected_at TEXT NOT NULL,
    caller TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (caller, session_id, memory_id)
) WITHOUT ROWID;
INSERT OR IGNORE INTO hook_injections_058 (session_id, memory_id, event, injected_at, caller)
    SELECT session_id, memory_id, event, injected_at, '' FROM hook_injections;
DROP TABLE hook_injections;
ALTER TABLE hook_injections_058 RENAME TO hook_injections;
CREATE INDEX IF NOT EXISTS idx_hook_injections_injected_at ON hook_injections(injected_at);
