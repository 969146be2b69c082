-- Recall on PostgreSQL (store/postgres/recall_reads.py, lexical.py): the term statistics
-- BM25 ranks with, the whole-source index, and the indexes the conversation neighbours and
-- the source upkeep read through. Everything is kept by triggers in the writing transaction,
-- so every daemon on the database reads the same statistics, never behind a commit.

-- A document's length in words, as FTS5 counts tokens: to_tsvector numbers every word, stop
-- words included, and `||` continues the numbering, so the last position is the word count
-- (to the last word that is not a stop word; positions stop at 16383).
CREATE OR REPLACE FUNCTION signet_doc_length(doc tsvector) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT coalesce(max(u.positions[cardinality(u.positions)]), 0)::integer FROM unnest(doc) AS u
$$;

-- BM25's collection statistics: rows and their total length in words. Sharded by the
-- writing backend so concurrent writers do not queue on one row; a reader sums the shards.
-- Deleted memories stay counted, as SQLite's FTS index counts them.
CREATE TABLE IF NOT EXISTS lexical_totals (
    shard  integer PRIMARY KEY,
    docs   bigint NOT NULL DEFAULT 0,
    tokens bigint NOT NULL DEFAULT 0
);

CREATE OR REPLACE FUNCTION signet_lexical_totals() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    d_docs bigint := 0;
    d_tokens bigint := 0;
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        d_docs := d_docs + 1;
        d_tokens := d_tokens + signet_doc_length(NEW.lexical);
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        d_docs := d_docs - 1;
        d_tokens := d_tokens - signet_doc_length(OLD.lexical);
    END IF;
    IF d_docs <> 0 OR d_tokens <> 0 THEN
        INSERT INTO lexical_totals AS t (shard, docs, tokens)
        VALUES (pg_backend_pid() % 16, d_docs, d_tokens)
        ON CONFLICT (shard) DO UPDATE
            SET docs = t.docs + EXCLUDED.docs, tokens = t.tokens + EXCLUDED.tokens;
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS memories_lexical_totals ON memories;
CREATE TRIGGER memories_lexical_totals AFTER INSERT OR DELETE OR UPDATE OF content, tags
    ON memories FOR EACH ROW EXECUTE FUNCTION signet_lexical_totals();

-- Rows written before this migration are counted once, here.
INSERT INTO lexical_totals (shard, docs, tokens)
SELECT -1, count(*), coalesce(sum(signet_doc_length(lexical)), 0) FROM memories
ON CONFLICT (shard) DO NOTHING;

-- BM25 of one row for the query's lexemes (store/postgres/lexical.py documents the formula):
-- FTS5's, with the term frequency weighted by field (content 1.0, tags 0.5: labels A and C)
-- and the length in words (signet_doc_length).
CREATE OR REPLACE FUNCTION signet_bm25(
    doc tsvector, terms text[], idf double precision[], avgdl double precision
) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(sum(q.idf * f.tf * 2.2
                        / (f.tf + 1.2 * (0.25 + 0.75 * signet_doc_length(doc)
                                         / greatest(avgdl, 1e-9)))), 0)
    FROM (SELECT u.lexeme,
                 (SELECT sum(CASE w WHEN 'A' THEN 1.0 ELSE 0.5 END) FROM unnest(u.weights) AS w)
                     AS tf
          FROM unnest(doc) AS u WHERE u.lexeme = ANY(terms)) AS f
    JOIN unnest(terms, idf) AS q(lexeme, idf) ON q.lexeme = f.lexeme
$$;

-- Whole sources (SQLite migration 007, store/sources.py): the memories sharing a source_id
-- within one agent and project, their live members' text joined in write order. Ranked as
-- whole documents only with at least two live members.
CREATE TABLE IF NOT EXISTS memory_sources (
    agent_id    text NOT NULL,
    project     text,
    project_key text NOT NULL,          -- coalesce(project, ''), with project_null apart
    project_null boolean NOT NULL,
    source_id   text NOT NULL,
    members     integer NOT NULL DEFAULT 0,
    lexical     tsvector NOT NULL DEFAULT ''::tsvector,
    PRIMARY KEY (agent_id, source_id, project_null, project_key)
);
CREATE INDEX IF NOT EXISTS memory_sources_lexical ON memory_sources USING gin (lexical)
    WHERE members >= 2;
CREATE INDEX IF NOT EXISTS memory_sources_ranked ON memory_sources (agent_id, project)
    WHERE members >= 2;
CREATE INDEX IF NOT EXISTS memories_source_seq ON memories (source_id, agent_id, seq)
    WHERE source_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_session_seq ON memories (session_id, agent_id, seq)
    WHERE session_id IS NOT NULL;

CREATE OR REPLACE FUNCTION signet_source_refresh(a text, p text, s text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    n integer;
    joined text;
BEGIN
    INSERT INTO memory_sources (agent_id, project, project_key, project_null, source_id)
    VALUES (a, p, coalesce(p, ''), p IS NULL, s) ON CONFLICT DO NOTHING;
    -- The row lock orders concurrent writers of one source; the count below is a new
    -- statement, so it sees what the writer before this one committed.
    PERFORM 1 FROM memory_sources WHERE agent_id = a AND source_id = s
        AND project_null = (p IS NULL) AND project_key = coalesce(p, '') FOR UPDATE;
    SELECT count(*), string_agg(content, E'\n' ORDER BY seq) INTO n, joined
    FROM memories WHERE source_id = s AND agent_id = a AND project IS NOT DISTINCT FROM p
        AND NOT is_deleted;
    IF n = 0 THEN
        DELETE FROM memory_sources WHERE agent_id = a AND source_id = s
            AND project_null = (p IS NULL) AND project_key = coalesce(p, '');
    ELSE
        UPDATE memory_sources
        SET members = n,
            lexical = CASE WHEN n >= 2 THEN setweight(to_tsvector('english', joined), 'A')
                      ELSE ''::tsvector END
        WHERE agent_id = a AND source_id = s
            AND project_null = (p IS NULL) AND project_key = coalesce(p, '');
    END IF;
END $$;

CREATE OR REPLACE FUNCTION signet_memory_sources() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.content IS NOT DISTINCT FROM NEW.content
        AND OLD.is_deleted = NEW.is_deleted AND OLD.agent_id = NEW.agent_id
        AND OLD.project IS NOT DISTINCT FROM NEW.project
        AND OLD.source_id IS NOT DISTINCT FROM NEW.source_id THEN
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.source_id IS NOT NULL THEN
        PERFORM signet_source_refresh(OLD.agent_id, OLD.project, OLD.source_id);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.source_id IS NOT NULL
        AND (TG_OP = 'INSERT' OR OLD.source_id IS DISTINCT FROM NEW.source_id
             OR OLD.agent_id <> NEW.agent_id OR OLD.project IS DISTINCT FROM NEW.project
             OR OLD.source_id IS NULL) THEN
        PERFORM signet_source_refresh(NEW.agent_id, NEW.project, NEW.source_id);
    END IF;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS memories_sources ON memories;
CREATE TRIGGER memories_sources AFTER INSERT OR DELETE
    OR UPDATE OF content, is_deleted, agent_id, project, source_id
    ON memories FOR EACH ROW EXECUTE FUNCTION signet_memory_sources();

-- Sources of rows written before this migration.
SELECT signet_source_refresh(k.agent_id, k.project, k.source_id)
FROM (SELECT DISTINCT agent_id, project, source_id FROM memories WHERE source_id IS NOT NULL) AS k;
