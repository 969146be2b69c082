-- Entity pinning (seed 002 entity_pinning, KA-6): a row either pins an entity (always focal in
-- graph traversal) or suppresses it (never focal, never walked), with an optional weight
-- override for the paths through it.
ALTER TABLE entity_pinning ADD COLUMN pin_type TEXT NOT NULL DEFAULT 'pin'
    CHECK (pin_type IN ('pin', 'suppress'));
ALTER TABLE entity_pinning ADD COLUMN weight_override REAL;
-- Traversal reads an entity's aspects best first and a memory's anchoring aspects on feedback.
CREATE INDEX IF NOT EXISTS idx_entity_aspects_entity_weight ON entity_aspects(entity_id, weight);
CREATE INDEX IF NOT EXISTS idx_entity_dependencies_agent ON entity_dependencies(agent_id);
