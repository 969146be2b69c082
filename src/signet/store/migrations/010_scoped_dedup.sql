-- 010_scoped_dedup: dedup among the live memories of one scope (agent and project), not all.
--
-- With one content hash unique across every live row, a caller scoped to agent A who remembered
-- text agent B already held got B's memory back ("deduped"), with B's tags and project: guessing
-- content became an oracle. The unique key is now (content hash, agent, project), so the same
-- text in two scopes is two memories, each its scope's own. x'' (an empty blob) stands for "no
-- project": it never equals a text value, so no project name can collide with it. The hash
-- leads the index, so joins by content hash (embeddings) keep using it.
DROP INDEX IF EXISTS idx_memories_content_hash_unique;
CREATE UNIQUE INDEX IF NOT EXISTS idx_memories_scope_content_hash
    ON memories(content_hash, agent_id, IFNULL(project, x''))
    WHERE content_hash IS NOT NULL AND is_deleted = 0;
