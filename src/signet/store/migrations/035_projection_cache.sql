-- 035: umap_cache keyed by what a projection depends on. 001 made `dimensions` alone unique,
-- so one cached 2-D projection had to serve every caller; a token scoped to one agent or
-- project must get a projection of its own slice, and a model change must not serve stale
-- coordinates. The table is a cache (recomputed on demand), so it is rebuilt rather than
-- altered: SQLite cannot drop the old UNIQUE constraint in place. Re-running it only empties
-- the cache.
DROP TABLE IF EXISTS umap_cache;
CREATE TABLE IF NOT EXISTS umap_cache (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    dimensions      INTEGER NOT NULL,
    scope_key       TEXT NOT NULL DEFAULT '*/*',   -- agent/project of the caller's slice
    model           TEXT NOT NULL DEFAULT '',      -- embedding model of the projected vectors
    embedding_count INTEGER NOT NULL,              -- the cache is stale once this changes
    method          TEXT NOT NULL DEFAULT 'umap',  -- umap or pca (the fallback)
    result_json     TEXT NOT NULL,
    cached_at       TEXT NOT NULL,
    UNIQUE (dimensions, scope_key, model)
);
