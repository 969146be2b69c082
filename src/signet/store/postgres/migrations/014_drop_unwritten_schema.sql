-- 014_drop_unwritten_schema: the PostgreSQL side of SQLite's 061. This schema never created
-- `conversations`, `task_meta`, `predictor_comparisons`, `predictor_training_pairs` or
-- `entities.embedding` (nothing wrote them); stated here so both backends say the same, and so
-- a database made by hand from the SQLite schema ends up the same.
DROP TABLE IF EXISTS conversations;
DROP TABLE IF EXISTS task_meta;
DROP TABLE IF EXISTS predictor_comparisons;
DROP TABLE IF EXISTS predictor_training_pairs;
ALTER TABLE entities DROP COLUMN IF EXISTS embedding;
