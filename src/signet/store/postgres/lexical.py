"""Lexical search on PostgreSQL: BM25 over a generated tsvector with a GIN index.

The query is cut as on SQLite (store/fts.py) and stemmed by `to_tsvector('english', ...)`; the
score is FTS5's BM25 (`signet_bm25`, the same constants and column weights), so both backends rank
alike. N and the average length come from `lexical_totals` (kept by a trigger), df from the GIN
index; a scoped caller gets its slice's own statistics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import psycopg

from signet.store.fts import (
    COMMON_TERM_FRACTION,
    MAX_QUERY_TOKENS,
    MIN_DOCS_FOR_PRUNING,
    query_tokens,
)
from signet.store.postgres.filters import filter_sql
from signet.store.sources import MIN_MEMBERS, SourceHit
from signet.types import MemoryFilters

IDF_FLOOR = 1e-6
# The tsvector columns a search may rank: content + tags, or the prospective hints.
COLUMNS = ("lexical", "hint_lexical")


@dataclass(frozen=True, slots=True)
class Terms:
    """The query's stems with their BM25 IDF, and the mean length they are ranked against."""

    lexemes: list[str]
    idf: list[float]
    avglen: float


def search(
    conn: psycopg.Connection, text: str, filters: MemoryFilters, limit: int,
    column: str = "lexical",
) -> list[tuple[str, float]]:
    """(memory id, BM25) over content and tags (or the hints: `column`), best first."""
    if column not in COLUMNS:
        raise ValueError(f"unknown lexical column {column!r}")
    words = query_tokens(text, None)
    if not words or limit <= 0:
        return []
    where, params = filter_sql(filters)
    terms = _terms(conn, words, *_memory_slice(filters), selective=True, column=column)
    if terms is None:
        return []
    rows = conn.execute(
        f"SELECT m.id, signet_bm25(m.{column}, %s::text[], %s::float8[], %s) AS score"
        f" FROM memories m WHERE m.{column} @@ {_MATCH} AND {where}"
        " ORDER BY score DESC, m.seq LIMIT %s",
        [terms.lexemes, terms.idf, terms.avglen, terms.lexemes, *params, limit],
    ).fetchall()
    return [(str(r[0]), float(r[1])) for r in rows]


def search_sources(
    conn: psycopg.Connection, text: str, filters: MemoryFilters, limit: int
) -> list[SourceHit]:
    """Whole sources (>= MIN_MEMBERS live members) of the filters' agent and project (any when
    unset) by BM25 over their joined text, best first."""
    words = query_tokens(text, None)
    if not words or limit <= 0:
        return []
    terms = _terms(conn, words, *_source_slice(filters), selective=True)
    if terms is None:
        return []
    rows = conn.execute(
        "SELECT s.agent_id, s.project, s.source_id,"
        " signet_bm25(s.lexical, %s::text[], %s::float8[], %s) AS score"
        f" FROM memory_sources s WHERE s.members >= {MIN_MEMBERS} AND s.lexical @@ {_MATCH}"
        " AND (%s::text IS NULL OR s.agent_id = %s) AND (%s::text IS NULL OR s.project = %s)"
        " ORDER BY score DESC, s.agent_id, s.source_id LIMIT %s",
        [terms.lexemes, terms.idf, terms.avglen, terms.lexemes, filters.agent_id,
         filters.agent_id, filters.project, filters.project, limit],
    ).fetchall()
    return [SourceHit(str(r[0]), r[1], str(r[2]), float(r[3])) for r in rows]


def term_idf(
    conn: psycopg.Connection, tokens: Sequence[str], filters: MemoryFilters
) -> dict[str, float]:
    """ln(1 + (N - df + 0.5) / (df + 0.5)) per query token (store/fts.term_idf's measure, the
    confidence's term weights), df counted for the token's stem; a token with no stem (a stop
    word of the English configuration) counts as held by nothing."""
    if not tokens:
        return {}
    table, slice_where, slice_params = _memory_slice(filters)
    docs, _ = _totals(conn, table, slice_where, slice_params)
    rows = conn.execute(
        f"SELECT w, (SELECT count(*) FROM {table} WHERE lexical @@ {_MATCH_ONE}"
        f" AND {slice_where}) FROM unnest(%s::text[]) AS w,"
        " unnest(tsvector_to_array(to_tsvector('english', w))) AS x",
        [*slice_params, list(dict.fromkeys(tokens))],
    ).fetchall()
    frequency: dict[str, int] = {}
    for token, df in rows:
        frequency[str(token)] = max(frequency.get(str(token), 0), int(df))
    return {
        t: math.log(1.0 + (docs - frequency.get(t, 0) + 0.5) / (frequency.get(t, 0) + 0.5))
        for t in tokens
    }


# The query's stems OR-ed as a tsquery, each taken literally (already normalised).
_MATCH = "array_to_string(ARRAY(SELECT quote_literal(x) FROM unnest(%s::text[]) AS x), ' | ')::tsquery"
_MATCH_ONE = "quote_literal(x)::tsquery"


def _terms(
    conn: psycopg.Connection, words: list[str], table: str, where: str, params: list[Any],
    *, selective: bool, column: str = "lexical",
) -> Terms | None:
    """The words' distinct stems with their IDF over `table`'s slice `where` (df counted in
    `column`); None if none."""
    rows = conn.execute(
        f"SELECT x, (SELECT count(*) FROM {table} WHERE {column} @@ {_MATCH_ONE} AND {where})"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS w(word, i),"
        " unnest(tsvector_to_array(to_tsvector('english', w.word))) AS x"
        " GROUP BY x ORDER BY min(w.i)",
        [*params, words],
    ).fetchall()
    if not rows:
        return None
    docs, avglen = _totals(conn, table, where, params)
    frequency = {str(r[0]): int(r[1]) for r in rows}
    lexemes = list(frequency)
    if selective:
        lexemes = _selective(lexemes, frequency, docs)
    idf = [
        max(math.log((docs - frequency[t] + 0.5) / (frequency[t] + 0.5)), IDF_FLOOR)
        for t in lexemes
    ]
    return Terms(lexemes, idf, avglen)


def _selective(lexemes: list[str], frequency: dict[str, int], docs: int) -> list[str]:
    """store/fts.selective_tokens's choice: common stems dropped while rarer ones are left; the
    MAX_QUERY_TOKENS rarest kept (a stem no row holds last), in query order."""
    kept = lexemes
    if docs >= MIN_DOCS_FOR_PRUNING:
        kept = [t for t in lexemes if frequency[t] <= COMMON_TERM_FRACTION * docs] or lexemes
    if len(kept) > MAX_QUERY_TOKENS:
        rarest = set(sorted(kept, key=lambda t: (frequency[t] == 0, frequency[t]))[
            :MAX_QUERY_TOKENS])
        kept = [t for t in kept if t in rarest]
    return kept


def _totals(
    conn: psycopg.Connection, table: str, where: str, params: list[Any]
) -> tuple[int, float]:
    """(rows, mean length) of the slice: the trigger-kept totals for all memories, else a
    count over the slice."""
    if table == "memories" and where == "TRUE":
        row = conn.execute(
            "SELECT coalesce(sum(docs), 0), coalesce(sum(tokens), 0) FROM lexical_totals"
        ).fetchone()
    else:
        row = conn.execute(
            f"SELECT count(*), coalesce(sum(signet_doc_length(lexical)), 0) FROM {table}"
            f" WHERE {where}",
            params,
        ).fetchone()
    docs, tokens = (int(row[0]), float(row[1])) if row else (0, 0.0)
    return docs, (tokens / docs if docs else 1.0)


def _memory_slice(filters: MemoryFilters) -> tuple[str, str, list[Any]]:
    """Where N, df and the mean length are counted: the caller's slice when isolated, else
    every memory (deleted ones included, as the SQLite index's statistics include them)."""
    if not filters.isolated:
        return "memories", "TRUE", []
    where, params = filter_sql(replace(filters, include_deleted=True), alias="memories")
    return "memories", where, params


def _source_slice(filters: MemoryFilters) -> tuple[str, str, list[Any]]:
    """Sources ranked as wholes; a scoped caller's: of its agent and project only."""
    where = f"members >= {MIN_MEMBERS}"
    if not filters.isolated:
        return "memory_sources", where, []
    return (
        "memory_sources",
        where + " AND (%s::text IS NULL OR agent_id = %s) AND (%s::text IS NULL OR project = %s)",
        [filters.agent_id, filters.agent_id, filters.project, filters.project],
    )


def match_all(
    conn: psycopg.Connection, text: str, filters: MemoryFilters, limit: int
) -> list[str]:
    """Ids of memories holding *every* word of `text` (the words tokenised as `search` does,
    stop words aside), oldest first: batch forget's strict match (store/fts.py match_all).
    Words match by their English stem here, where SQLite's exact index matches whole words."""
    words = query_tokens(text)
    if not words or limit <= 0:
        return []
    where, params = filter_sql(filters)
    rows = conn.execute(
        "WITH q AS (SELECT string_agg('(' || t::text || ')', ' & ')::tsquery AS all_words"
        " FROM unnest(%s::text[]) AS w, LATERAL to_tsquery('english', quote_literal(w)) AS t"
        " WHERE numnode(t) > 0)"
        f" SELECT m.id FROM memories m, q WHERE q.all_words IS NOT NULL"
        f" AND m.lexical @@ q.all_words AND {where} ORDER BY m.created_at, m.seq LIMIT %s",
        [words, *params, limit],
    ).fetchall()
    return [str(r[0]) for r in rows]
