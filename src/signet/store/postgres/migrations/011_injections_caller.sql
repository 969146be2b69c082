-- The hooks' injection ledger is kept per caller and session (SQLite migration 058): keyed by
-- session id alone, any token sending a session's id could mark memories as given to it or
-- clear its ledger. `caller` is the token the hook came with (the daemon sets it; a payload
-- cannot), '' for a hook run in-process; rows from before carry ''.
ALTER TABLE hook_injections ADD COLUMN IF NOT EXISTS caller text NOT NULL DEFAULT '';
ALTER TABLE hook_injections DROP CONSTRAINT IF EXISTS hook_injections_pkey;
ALTER TABLE hook_injections ADD PRIMARY KEY (caller, session_id, memory_id);
