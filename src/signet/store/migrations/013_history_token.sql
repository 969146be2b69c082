-- 013_history_token: which token made a change, on every history row written over HTTP or MCP.
--
-- changed_by holds the actor's name, which a caller may state (X-Signet-Actor) and so cannot be
-- the audit's only word; token_id is the verified token's id (NULL for in-process callers:
-- the CLI without a daemon, the workers).
ALTER TABLE memory_history ADD COLUMN token_id TEXT;
