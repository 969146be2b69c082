"""BM25 with a slice's own statistics, for a scoped caller's lexical, hint and source ranking.
FTS5's `bm25()` weighs words by their rarity in the whole table, so another scope's writes would
move a scoped caller's scores and reveal what it holds. For an isolated slice the same formula
runs on the slice's own counts, frequencies (`highlight()`) and lengths (`_docsize`).
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from json import dumps

from signet.store.connection import Connection
from signet.store.memories import filter_sql
from signet.types import MemoryFilters

__all__ = ["SliceIndex", "gather", "rank_memories", "rank_sources"]

K1, B = 1.2, 0.75
COLUMNS = ("content", "hints", "tags")
WEIGHTS = {"content": 1.0, "hints": 0.6, "tags": 0.5}
IDF_FLOOR = 1e-6
COMMON_TERM_FRACTION = 0.25  # as store/fts.py
MIN_DOCS_FOR_PRUNING = 200
_OPEN, _CLOSE = "\ufdd0", "\ufdd1"  # Unicode noncharacters: never meant to appear in text
OPEN, CLOSE = _OPEN, _CLOSE  # highlight()'s marks, for other slices (store/sessions.py)
_SPAN = re.compile(f"{_OPEN}(.*?){_CLOSE}", re.S)
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class Row:
    memory_id: str
    agent_id: str
    project: str | None
    source_id: str | None


@dataclass
class SliceIndex:
    """The slice's postings for the query words: word -> rowid -> occurrences per column."""

    docs: int
    postings: dict[str, dict[int, tuple[int, int, int]]]
    rows: dict[int, Row]
    sizes: dict[int, tuple[int, ...]]


_memo = threading.local()


def gather(
    conn: Connection, tokens: Sequence[str], filters: MemoryFilters, table: str
) -> SliceIndex:
    """The slice's statistics for `tokens` (remembered for the next call on the same data)."""
    marker = (id(conn), conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)
    key = (marker, tuple(tokens), filters, table)
    cached = getattr(_memo, "last", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    index = _gather(conn, tokens, filters, table)
    _memo.last = (key, index)
    return index


def _gather(
    conn: Connection, tokens: Sequence[str], filters: MemoryFilters, table: str
) -> SliceIndex:
    where, params = filter_sql(filters)
    docs = int(conn.execute(f"SELECT count(*) FROM memories m WHERE {where}", params).fetchone()[0])
    marks = ", ".join(f"highlight({table}, {i}, '{_OPEN}', '{_CLOSE}')" for i in range(3))
    sql = (
        f"SELECT f.rowid, m.id, m.agent_id, m.project, m.source_id, {marks} FROM {table} f "
        f"JOIN memories m ON m.rowid = f.rowid WHERE {table} MATCH ? AND {where}"
    )
    postings: dict[str, dict[int, tuple[int, int, int]]] = {}
    rows: dict[int, Row] = {}
    for token in tokens:
        found: dict[int, tuple[int, int, int]] = {}
        for rowid, memory_id, agent, project, source, *marked in conn.execute(
            sql, ['"' + token.replace('"', '""') + '"', *params]
        ):
            counts = tuple(_occurrences(text) for text in marked)
            found[rowid] = counts  # type: ignore[assignment]
            rows[rowid] = Row(memory_id, agent, project, source)
        postings[token] = found
    return SliceIndex(docs, postings, rows, _sizes(conn, f"{table}_docsize", list(rows)))


def _occurrences(marked: str | None) -> int:
    if not marked or _OPEN not in marked:
        return 0
    return sum(len(_WORD.findall(span)) or 1 for span in _SPAN.findall(marked))


def _sizes(conn: Connection, table: str, ids: list[int]) -> dict[int, tuple[int, ...]]:
    """Row id -> tokens per column, decoded from FTS5's docsize blobs (one varint a column)."""
    sizes: dict[int, tuple[int, ...]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for rowid, blob in conn.execute(
            f"SELECT d.id, d.sz FROM json_each(?) j JOIN {table} d ON d.id = j.value",
            [dumps(chunk)],
        ):
            sizes[int(rowid)] = _varints(bytes(blob or b""))
    return sizes


def _varints(blob: bytes) -> tuple[int, ...]:
    out, value = [], 0
    for byte in blob:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            out.append(value)
            value = 0
    return tuple(out)


def selected(index: SliceIndex, tokens: Sequence[str], columns: Sequence[str]) -> list[str]:
    """`tokens` without the words most of the slice holds (kept when all are common)."""
    if len(tokens) < 2 or index.docs < MIN_DOCS_FOR_PRUNING:
        return list(tokens)
    cols = [COLUMNS.index(c) for c in columns]
    kept = [
        t for t in tokens
        if sum(1 for tf in index.postings.get(t, {}).values() if any(tf[c] for c in cols))
        <= COMMON_TERM_FRACTION * index.docs
    ]
    return kept or list(tokens)


def rank_memories(
    index: SliceIndex, tokens: Sequence[str], columns: Sequence[str], limit: int
) -> list[tuple[str, float]]:
    """(memory id, score) by BM25 over `columns` with the slice's statistics, best first."""
    cols = [(COLUMNS.index(c), WEIGHTS[c]) for c in columns]
    freqs: dict[str, dict[int, float]] = {}
    for token in selected(index, tokens, columns):
        weighted = {
            rowid: sum(w * tf[c] for c, w in cols) for rowid, tf in index.postings.get(token, {}).items()
        }
        freqs[token] = {rowid: f for rowid, f in weighted.items() if f > 0}
    lengths = {rowid: float(sum(index.sizes.get(rowid, ()))) for f in freqs.values() for rowid in f}
    scores = _bm25(freqs, lengths, index.docs)
    ranked = sorted(((index.rows[r].memory_id, s) for r, s in scores.items()), key=lambda x: (-x[1], x[0]))
    return ranked[:limit]


@dataclass(frozen=True, slots=True)
class SourceRank:
    key: tuple[str, str | None, str]
    score: float


def rank_sources(
    conn: Connection, index: SliceIndex, tokens: Sequence[str], filters: MemoryFilters,
    limit: int, min_members: int,
) -> list[SourceRank]:
    """Whole sources of the slice by BM25 over their text, with the slice's statistics: a
    source's occurrences are its members' (content column), its length the source index's."""
    members: dict[tuple[str, str | None, str], dict[str, float]] = {}
    for token in selected(index, tokens, ("content",)):
        for rowid, tf in index.postings.get(token, {}).items():
            row = index.rows[rowid]
            if tf[0] and row.source_id is not None:
                key = (row.agent_id, row.project, row.source_id)
                counts = members.setdefault(key, {})
                counts[token] = counts.get(token, 0.0) + tf[0]
    if not members:
        return []
    ranked_keys, lengths = _ranked_sources(conn, list(members), min_members)
    freqs: dict[str, dict[int, float]] = {}
    ids = {key: n for n, key in enumerate(ranked_keys)}
    for key, counts in members.items():
        if key in ids:
            for token, f in counts.items():
                freqs.setdefault(token, {})[ids[key]] = f
    docs = _source_count(conn, filters, min_members)
    scores = _bm25(freqs, {ids[k]: lengths[k] for k in ranked_keys}, docs)
    out = sorted((SourceRank(ranked_keys[n], s) for n, s in scores.items()),
                 key=lambda r: (-r.score, r.key[2], r.key[0]))
    return out[:limit]


def _ranked_sources(
    conn: Connection, keys: list[tuple[str, str | None, str]], min_members: int
) -> tuple[list[tuple[str, str | None, str]], dict[tuple[str, str | None, str], float]]:
    found: list[tuple[str, str | None, str]] = []
    lengths: dict[tuple[str, str | None, str], float] = {}
    for key in keys:
        row = conn.execute(
            "SELECT d.sz FROM memory_sources s JOIN memory_sources_fts_docsize d ON d.id = s.rowid"
            " WHERE s.agent_id = ? AND IFNULL(s.project, x'') = IFNULL(?, x'')"
            " AND s.source_id = ? AND s.members >= ?",
            [key[0], key[1], key[2], min_members],
        ).fetchone()
        if row is not None:
            found.append(key)
            lengths[key] = float(sum(_varints(bytes(row[0] or b""))))
    return found, lengths


def _source_count(conn: Connection, filters: MemoryFilters, min_members: int) -> int:
    row = conn.execute(
        "SELECT count(*) FROM memory_sources WHERE members >= ? AND (? IS NULL OR agent_id = ?)"
        " AND (? IS NULL OR project = ?)",
        [min_members, filters.agent_id, filters.agent_id, filters.project, filters.project],
    ).fetchone()
    return int(row[0])


def _bm25(freqs: dict[str, dict[int, float]], lengths: dict[int, float], docs: int) -> dict[int, float]:
    """FTS5's bm25 (as a positive score) over `freqs` (word -> doc -> weighted occurrences)."""
    if not lengths:
        return {}
    average = sum(lengths.values()) / len(lengths) or 1.0
    scores: dict[int, float] = {}
    for found in freqs.values():
        hits = len(found)
        idf = math.log((docs - hits + 0.5) / (hits + 0.5))
        idf = idf if idf > 0 else IDF_FLOOR
        for doc, f in found.items():
            norm = K1 * (1 - B + B * lengths[doc] / average)
            scores[doc] = scores.get(doc, 0.0) + idf * f * (K1 + 1) / (f + norm)
    return scores


# The formula's parts, for other FTS5 tables ranked per slice (store/sessions.py).
occurrences = _occurrences
sizes = _sizes
bm25 = _bm25
