-- 050_drop_redundant_indexes: indexes whose every column is the leading part of a wider index
-- on the same table. Any lookup they served is served by the wider index with the same seek
-- (equal leading columns, the same order on them), so they only cost space and write time
-- (11 MB at 100k memories with the scale bench's graph; docs/benchmarks.md, "Issue 16, the
-- database size"). Checked with EXPLAIN QUERY PLAN on every statement recall, remember and a
-- maintenance run issue: the plans now name the wider index.
--   entity_dependencies(source_entity_id)  <- UNIQUE (source_entity_id, target_entity_id, type)
--                                              and idx_entity_dependencies_source_rank
--   entity_dependencies(target_entity_id)  <- idx_entity_dependencies_target_rank
--   entity_attributes(aspect_id)           <- idx_entity_attributes_aspect_rank
--   memories(agent_id)                     <- idx_memories_agent_session (agent_id, session_id)
--   entities(canonical_name)               <- UNIQUE (canonical_name, agent_id)
DROP INDEX IF EXISTS idx_entity_dependencies_source;
DROP INDEX IF EXISTS idx_entity_dependencies_target;
DROP INDEX IF EXISTS idx_entity_attributes_aspect_id;
DROP INDEX IF EXISTS idx_memories_agent_id;
DROP INDEX IF EXISTS idx_entities_canonical_name;
