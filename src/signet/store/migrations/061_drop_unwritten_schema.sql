-- 061_drop_unwritten_schema: tables and a column from the first schema that no code ever wrote
-- or read: `conversations` (sessions live in session_transcripts, their summaries in
-- memory_artifacts), `task_meta` (no scheduled-task feature), `predictor_comparisons` and
-- `predictor_training_pairs` (no learned predictor), and `entities.embedding` (name resolution
-- goes by canonical name and aliases). docs/decisions.md says why they are dropped rather than
-- filled. Their indexes go with them.
DROP TABLE IF EXISTS conversations;
DROP TABLE IF EXISTS task_meta;
DROP TABLE IF EXISTS predictor_comparisons;
DROP TABLE IF EXISTS predictor_training_pairs;
ALTER TABLE entities DROP COLUMN embedding;
