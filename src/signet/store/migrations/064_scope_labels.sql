-- 064_scope_labels: what earlier releases stored under labels that did not separate scopes.
-- Cached projections were keyed `agent/project` with `*` for "no constraint", which an agent or
-- project named `*` could spell, and a project's map showed communities of the agent's whole
-- graph: the cache is emptied (it is recomputed on demand). Hub thresholds are now one agent's,
-- counted over its own entities: an index makes that count a seek. The recall QA ledger's
-- optional table is relabelled by store/search_telemetry.py when it exists.
DELETE FROM umap_cache;
CREATE INDEX IF NOT EXISTS idx_entities_agent_id ON entities(agent_id);
