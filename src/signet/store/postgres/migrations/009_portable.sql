-- The embedding projection's cache (SQLite's umap_cache, store/projection.py): one finished
-- projection per (dimensions, caller's slice, model), valid while the slice's number of
-- current vectors is embedding_count. In the shared database every daemon answers from it.
-- Not exported (store/portable.py NOT_EXPORTED: derived, computed again on demand).

CREATE TABLE IF NOT EXISTS umap_cache (
    dimensions      integer NOT NULL,
    scope_key       text NOT NULL,
    model           text NOT NULL,
    embedding_count integer NOT NULL,
    method          text NOT NULL,
    result_json     text NOT NULL,
    cached_at       text NOT NULL,
    PRIMARY KEY (dimensions, scope_key, model)
);
