-- 011_scoped_idempotency: idempotency keys namespaced by structured columns.
--
-- idempotency_keys (001) joined the caller's scope into the key as "agent/project/key", so agent
-- "acme" with project "web/prod" shared keys with agent "acme/web" and project "prod", and an
-- unscoped caller could spell a scoped namespace and replay its memory. Here the namespace is
-- the caller's scope in its own columns (NULL: not constrained), and the content hash of the
-- first request is kept, so a replay answers only a caller who sends the same content again
-- (store/idempotency.py). Keys written to the old table are not carried over: a key guards a
-- retry of seconds, not a history.
CREATE TABLE IF NOT EXISTS idempotency_scoped_keys (
    key          TEXT NOT NULL,
    scope_agent  TEXT,
    scope_project TEXT,
    content_hash TEXT NOT NULL,
    memory_id    TEXT,
    response     TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_idempotency_scoped_keys
    ON idempotency_scoped_keys(key, IFNULL(scope_agent, x''), IFNULL(scope_project, x''));
-- The retention sweep deletes keys oldest first (retention.idempotencyKeyRetentionMs).
CREATE INDEX IF NOT EXISTS idx_idempotency_scoped_keys_created_at
    ON idempotency_scoped_keys(created_at);
