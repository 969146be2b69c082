-- The knowledge graph on PostgreSQL: entities (unique per agent by canonical name), aliases,
-- relations, memory-entity mentions, the knowledge architecture (aspects, attributes,
-- dependencies), pins and communities. Columns, uniqueness rules and meanings follow the SQLite
-- schema (store/migrations/001_initial.sql, 006 and 009); the statements on them are in
-- store/postgres/graph.py. `seq` stands for SQLite's rowid where the graph reads one (the
-- change marker of an agent's entities, the strided degree sample of hub dampening).

CREATE TABLE IF NOT EXISTS entities (
    seq            bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    id             text PRIMARY KEY,
    name           text NOT NULL,
    entity_type    text NOT NULL DEFAULT 'unknown',
    description    text,
    canonical_name text NOT NULL,       -- store/graph.py canonical(name), the lookup key
    mentions       integer NOT NULL DEFAULT 0,
    agent_id       text NOT NULL DEFAULT 'default',
    community_id   text,
    created_at     text NOT NULL,
    updated_at     text NOT NULL,
    UNIQUE (canonical_name, agent_id)
);
CREATE INDEX IF NOT EXISTS entities_agent_mentions ON entities (agent_id, mentions DESC, id);
CREATE INDEX IF NOT EXISTS entities_community ON entities (community_id);

CREATE TABLE IF NOT EXISTS entity_aliases (
    alias           text NOT NULL,
    canonical_alias text NOT NULL,
    entity_id       text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    agent_id        text NOT NULL DEFAULT 'default',
    created_at      text NOT NULL,
    UNIQUE (canonical_alias, agent_id, entity_id)
);
CREATE INDEX IF NOT EXISTS entity_aliases_entity ON entity_aliases (entity_id);

CREATE TABLE IF NOT EXISTS entity_communities (
    id         text PRIMARY KEY,
    agent_id   text NOT NULL DEFAULT 'default',
    label      text,
    size       integer NOT NULL DEFAULT 0,
    modularity double precision,
    quality    text,
    member_ids text NOT NULL DEFAULT '[]',  -- JSON array of entity ids, as on SQLite
    created_at text NOT NULL
);
CREATE INDEX IF NOT EXISTS entity_communities_agent ON entity_communities (agent_id);

CREATE TABLE IF NOT EXISTS relations (
    id               text PRIMARY KEY,
    source_entity_id text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    target_entity_id text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    relation_type    text NOT NULL,
    strength         double precision NOT NULL DEFAULT 1.0,
    mentions         integer NOT NULL DEFAULT 1,
    confidence       double precision NOT NULL DEFAULT 0.5,
    metadata         text,
    created_at       text NOT NULL,
    updated_at       text NOT NULL,
    UNIQUE (source_entity_id, target_entity_id, relation_type)
);
CREATE INDEX IF NOT EXISTS relations_target ON relations (target_entity_id);

CREATE TABLE IF NOT EXISTS memory_entity_mentions (
    memory_id    text NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    entity_id    text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    mention_text text,
    confidence   double precision,
    created_at   text NOT NULL,
    PRIMARY KEY (memory_id, entity_id)
);
CREATE INDEX IF NOT EXISTS memory_entity_mentions_entity ON memory_entity_mentions (entity_id);

CREATE TABLE IF NOT EXISTS entity_aspects (
    id          text PRIMARY KEY,
    entity_id   text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    aspect_name text NOT NULL,
    description text,
    confidence  double precision NOT NULL DEFAULT 0.5,
    weight      double precision NOT NULL DEFAULT 1.0,
    agent_id    text NOT NULL DEFAULT 'default',
    created_at  text NOT NULL,
    updated_at  text NOT NULL,
    UNIQUE (entity_id, aspect_name)
);
CREATE INDEX IF NOT EXISTS entity_aspects_agent ON entity_aspects (agent_id);

CREATE TABLE IF NOT EXISTS entity_attributes (
    id               text PRIMARY KEY,
    aspect_id        text NOT NULL REFERENCES entity_aspects (id) ON DELETE CASCADE,
    entity_id        text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    kind             text NOT NULL DEFAULT 'attribute' CHECK (kind IN ('attribute', 'constraint')),
    attribute_key    text NOT NULL,
    attribute_value  text NOT NULL,
    confidence       double precision NOT NULL DEFAULT 0.5,
    source_memory_id text REFERENCES memories (id) ON DELETE SET NULL,
    agent_id         text NOT NULL DEFAULT 'default',
    created_at       text NOT NULL,
    updated_at       text NOT NULL
);
-- Traversal reads an aspect's most confident attributes a few at a time (SQLite 009).
CREATE INDEX IF NOT EXISTS entity_attributes_aspect_rank
    ON entity_attributes (aspect_id, confidence DESC, source_memory_id);
CREATE INDEX IF NOT EXISTS entity_attributes_entity ON entity_attributes (entity_id);
CREATE INDEX IF NOT EXISTS entity_attributes_source ON entity_attributes (source_memory_id);
CREATE INDEX IF NOT EXISTS entity_attributes_agent ON entity_attributes (agent_id);

CREATE TABLE IF NOT EXISTS entity_dependencies (
    id               text PRIMARY KEY,
    source_entity_id text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    target_entity_id text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    dependency_type  text NOT NULL,
    strength         double precision NOT NULL DEFAULT 0.5,
    traversal_weight double precision NOT NULL DEFAULT 1.0,   -- desire paths
    metadata         text,
    agent_id         text NOT NULL DEFAULT 'default',
    created_at       text NOT NULL,
    updated_at       text NOT NULL,
    UNIQUE (source_entity_id, target_entity_id, dependency_type)
);
-- A traversal step reads an entity's strongest edges in either direction (SQLite 009).
CREATE INDEX IF NOT EXISTS entity_dependencies_source_rank
    ON entity_dependencies (source_entity_id, (strength * traversal_weight) DESC, id);
CREATE INDEX IF NOT EXISTS entity_dependencies_target_rank
    ON entity_dependencies (target_entity_id, (strength * traversal_weight) DESC, id);
CREATE INDEX IF NOT EXISTS entity_dependencies_agent ON entity_dependencies (agent_id);

CREATE TABLE IF NOT EXISTS entity_pinning (
    entity_id       text NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    agent_id        text NOT NULL DEFAULT 'default',
    pinned_by       text,
    reason          text,
    pinned_at       text NOT NULL,
    pin_type        text NOT NULL DEFAULT 'pin' CHECK (pin_type IN ('pin', 'suppress')),
    weight_override double precision,
    PRIMARY KEY (entity_id, agent_id)
);
CREATE INDEX IF NOT EXISTS entity_pinning_agent ON entity_pinning (agent_id);
