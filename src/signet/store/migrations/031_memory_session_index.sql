-- 031_memory_session_index: the memories a session produced, found by index (the lineage walks
-- down from a session to them: store/sessions.py memories_of).
CREATE INDEX IF NOT EXISTS idx_memories_agent_session ON memories(agent_id, session_id);
