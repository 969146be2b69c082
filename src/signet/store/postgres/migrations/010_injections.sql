-- The hooks' per-session injection ledger (SQLite migration 025): which memories a session
-- has been given, so no memory is injected twice in one session, whichever daemon serves the
-- hook. Keyed by (session, memory): recording twice is one row.
CREATE TABLE IF NOT EXISTS hook_injections (
    session_id  text NOT NULL,
    memory_id   text NOT NULL,
    event       text NOT NULL,
    injected_at text NOT NULL,
    PRIMARY KEY (session_id, memory_id)
);
CREATE INDEX IF NOT EXISTS hook_injections_injected_at ON hook_injections (injected_at);
