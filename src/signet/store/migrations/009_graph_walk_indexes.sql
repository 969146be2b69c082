-- 009_graph_walk_indexes: a traversal step reads the best few edges of an entity, not all.
--
-- Traversal takes an entity's strongest dependencies (by strength x traversal weight) and an
-- aspect's most confident attributes, a few at a time (store/graph_read.py). Without an index in
-- that order SQLite read every edge of the entity and sorted them: at 100k memories and 10k
-- entities a hub's 2,283 dependencies took 17 ms and an aspect's 6,119 attributes 21 ms, per
-- step. These indexes hold each list in the order traversal reads it, so a step stops after
-- the first few rows.
CREATE INDEX IF NOT EXISTS idx_entity_dependencies_source_rank
    ON entity_dependencies(source_entity_id, (strength * traversal_weight) DESC, id);
CREATE INDEX IF NOT EXISTS idx_entity_dependencies_target_rank
    ON entity_dependencies(target_entity_id, (strength * traversal_weight) DESC, id);
CREATE INDEX IF NOT EXISTS idx_entity_attributes_aspect_rank
    ON entity_attributes(aspect_id, confidence DESC, source_memory_id);
