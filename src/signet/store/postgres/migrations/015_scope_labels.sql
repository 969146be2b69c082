-- 015_scope_labels: the PostgreSQL side of SQLite's 064. Cached projections keyed by scope
-- names an agent or project named `*` could spell, and project maps carrying communities of the
-- agent's whole graph, are dropped (recomputed on demand). Recall QA ledger rows written before
-- rows carried the asking token's scope were labelled with the asker's agent (`default` for the
-- install token, project-scoped tokens and MCP calls), so a token scoped to agent `default` read
-- other scopes' queries: they are relabelled as unscoped ("" and no project), which only an
-- unscoped reader sees.
DELETE FROM umap_cache;
UPDATE memory_search_telemetry SET agent_id = '', project = NULL;
