"""Lexical search on PostgreSQL: a generated tsvector with a GIN index, ranked BM25-like.

Tokenisation follows the SQLite side (store/fts.py): the query is cut into `\\w+` tokens,
lowercased, stop words dropped unless nothing else is left, at most 32 distinct ones, each
taken as a literal word (no query syntax reaches the parser) and the words OR-ed. The column
side is `to_tsvector('english', ...)`: the Snowball English stemmer, where SQLite uses Porter;
both fold "running"/"runs" to "run".

Ranking, "BM25-like": PostgreSQL's ts_rank has no inverse document frequency, so the score of a
memory is the sum over query words w of idf(w) * ts_rank(lexical, w, 1), with
- idf(w) = ln(1 + (N - df + 0.5) / (df + 0.5)), BM25's, from the GIN index (df: memories
  holding w; N: all memories, the table's row estimate once it is large). A scoped caller
  (`filters.isolated`) gets N and df of its own slice, so nothing outside it moves a score;
- ts_rank's term frequency, which saturates (each further occurrence adds 1/k^2 of the
  first), like BM25's k1;
- normalisation 1 (divide by 1 + ln(document length)), standing in for BM25's b;
- field weights content 1.0 (A) and tags 0.5 (C), as the SQLite side weighs its columns.
Scores are not comparable with SQLite's numbers, only their order is meant to agree.

The same ranking serves the hint channel (`column="hint_lexical"`, migration 003): the
prospective hints the pipeline wrote, searched apart from content and tags, with df and N of
that column, as SQLite ranks its FTS5 hint column on its own.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import psycopg

from signet.store.fts import query_tokens
from signet.store.postgres.filters import filter_sql
from signet.types import MemoryFilters

# ts_rank weights {D, C, B, A}: tags are C, content A.
WEIGHTS = "{0.1, 0.5, 0.6, 1.0}"
# Above this many rows N comes from the planner's estimate (a count would scan the table).
ESTIMATE_ABOVE = 10_000
# The tsvector columns a search may rank: content + tags, or the prospective hints.
COLUMNS = ("lexical", "hint_lexical")


def search(
    conn: psycopg.Connection, text: str, filters: MemoryFilters, limit: int,
    column: str = "lexical",
) -> list[tuple[str, float]]:
    if column not in COLUMNS:
        raise ValueError(f"unknown lexical column {column!r}")
    words = query_tokens(text)
    if not words or limit <= 0:
        return []
    where, params = filter_sql(filters)
    terms = _terms(conn, words, filters, column)
    if not terms:
        return []
    queries = [q for q, _ in terms]
    weights = [w for _, w in terms]
    rows = conn.execute(
        f"SELECT m.id, (SELECT sum(t.w * ts_rank(%s::float4[], m.{column}, t.q, 1))"
        " FROM unnest(%s::tsquery[], %s::float8[]) AS t(q, w)) AS score"
        f" FROM memories m WHERE m.{column} @@ %s::tsquery AND {where}"
        " ORDER BY score DESC, m.seq LIMIT %s",
        [WEIGHTS, queries, weights, " | ".join(f"({q})" for q in queries), *params, limit],
    ).fetchall()
    return [(str(r[0]), float(r[1])) for r in rows]


def _terms(
    conn: psycopg.Connection, words: list[str], filters: MemoryFilters, column: str
) -> list[tuple[str, float]]:
    """(normalised tsquery text, idf) per query word the English configuration keeps."""
    slice_where, slice_params = _slice(filters)
    rows = conn.execute(
        f"SELECT q::text, (SELECT count(*) FROM memories m WHERE m.{column} @@ q"
        f" AND {slice_where}) FROM unnest(%s::text[]) AS w,"
        " LATERAL to_tsquery('english', quote_literal(w)) AS q WHERE numnode(q) > 0",
        [*slice_params, words],
    ).fetchall()
    docs = _documents(conn, filters)
    out: list[tuple[str, float]] = []
    seen: set[str] = set()
    for query, df in rows:
        if query in seen:  # two words with one stem count once
            continue
        seen.add(query)
        df = int(df)
        out.append((str(query), math.log(1.0 + (docs - df + 0.5) / (df + 0.5))))
    return out


def _slice(filters: MemoryFilters) -> tuple[str, list[Any]]:
    """Where df and N are counted: the caller's slice when isolated, else every memory (deleted
    ones included, as the SQLite index's statistics include them)."""
    if not filters.isolated:
        return "TRUE", []
    return filter_sql(replace(filters, include_deleted=True))


def _documents(conn: psycopg.Connection, filters: MemoryFilters) -> int:
    where, params = _slice(filters)
    if not filters.isolated:
        row = conn.execute(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = 'memories'::regclass"
        ).fetchone()
        if row is not None and int(row[0]) >= ESTIMATE_ABOVE:
            return int(row[0])
    row = conn.execute(f"SELECT count(*) FROM memories m WHERE {where}", params).fetchone()
    return int(row[0]) if row else 0


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
