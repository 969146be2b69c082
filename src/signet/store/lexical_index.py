"""The lexical channel's BM25 top k at scale: FTS5's own formula over postings held in memory.

FTS5's `bm25()` scores every matching row, half of a default recall at 100k memories. Here common
terms' postings are held and scored in numpy, rare terms' read from FTS5 when asked and scored
alike, and rows that cannot reach the top k are not scored; the sum equals FTS5's to the bit.
Triggers log changed rowids in `lexical_log`, replayed before a search, so reads write nothing.
Each row's memory id and deletion flag are held too (soft deletes are logged as well), so ranked
rows are named and deleted ones dropped without a lookup per row. `search` returns None when it
cannot answer exactly; the caller then runs FTS5.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from json import dumps

import numpy as np
import sqlean

from signet.store.connection import Connection

__all__ = ["LexicalIndex"]

K1, B = 1.2, 0.75  # FTS5's bm25 constants
IDF_FLOOR = 1e-6
TABLE = "memories_stem_fts"
# bm25() weights of the stemmed table's columns (content, hints, tags); the lexical channel
# searches content and tags, so a hint occurrence neither matches nor counts.
WEIGHTS = "1.0, 0.6, 0.5"
COMMON_SHARE = 1 / 1000  # a term in at least this share of the rows is held in memory
MIN_COMMON_ROWS = 64
# Nor held: a term in more than this share, which recall drops from a query while any rarer
# term is left (store/fts.py, COMMON_TERM_FRACTION); FTS5 scores it in the rare case it stays.
CEILING_SHARE = 0.3
MIN_ROWS = 1000  # below this FTS5 ranks a query in well under a millisecond
COMPACT_AFTER = 2048  # changed rows kept in the overlay before it is merged
REPLAY_MAX = 4096  # changes replayed at most (or a tenth of the rows); beyond, a rebuild
# The log's last and first position, each a seek on its key: `SELECT max(seq), min(seq)` in one
# aggregate is not optimised and scanned the 50,000 entries kept (2.3 ms of a keyword recall's
# CPU at 100k memories).
LOG_SPAN = "SELECT (SELECT max(seq) FROM lexical_log), (SELECT min(seq) FROM lexical_log)"
_TOKENIZE = re.compile(r"tokenize\s*=\s*(?:'((?:[^']|'')*)'|\"((?:[^\"]|\"\")*)\")", re.I)


@dataclass(slots=True)
class _Postings:
    """One term's held rows (gaps from `start`) and weighted frequencies (2 when not listed),
    with the largest frequency and the shortest row (in tokens) among them, which bound what
    the term adds to any row's score."""

    start: int
    gaps: np.ndarray  # uint16, or int32 when a gap does not fit
    odd_at: np.ndarray | None  # positions whose frequency is not 2
    odd_f2: np.ndarray | None
    most_f2: int = 0
    shortest: int = 0

    @classmethod
    def of(cls, rows: np.ndarray, f2: np.ndarray, lengths: np.ndarray) -> _Postings:
        """From sorted `rows`, their `f2`, and every row's length (`lengths`, by rowid)."""
        if len(rows) == 0:
            return cls(0, np.zeros(0, np.uint16), None, None)
        gaps = np.diff(rows, prepend=rows[0])
        kind = np.uint16 if gaps.max(initial=0) <= np.iinfo(np.uint16).max else np.int32
        most, shortest = int(f2.max()), max(int(lengths[rows].min()), 0)
        odd = np.flatnonzero(f2 != 2)
        if len(odd) == 0:
            return cls(int(rows[0]), gaps.astype(kind), None, None, most, shortest)
        small = np.uint8 if f2[odd].max() <= np.iinfo(np.uint8).max else np.int32
        return cls(int(rows[0]), gaps.astype(kind), odd.astype(np.int32), f2[odd].astype(small),
                   most, shortest)

    def decode(self) -> tuple[np.ndarray, np.ndarray]:
        rows = np.cumsum(self.gaps, dtype=np.int64) + self.start
        f2 = np.full(len(rows), 2, np.int64)
        if self.odd_at is not None and self.odd_f2 is not None:
            f2[self.odd_at] = self.odd_f2
        return rows, f2


@dataclass(slots=True)
class _State:
    """What the index holds, as of log position `pos`."""

    pos: int
    held: dict[str, _Postings]
    lengths: np.ndarray  # int32 per rowid: tokens in all columns, -1 for no row
    rows: int
    tokens: int
    stale: np.ndarray  # bool per rowid: its held postings are out of date (see `overlay`)
    ids: np.ndarray  # bytes per rowid: the memory's id (UTF-8), b"" for no row
    live: np.ndarray  # bool per rowid: a memory that is not deleted
    # Terms in more than CEILING_SHARE of the rows when it was built: left to FTS5.
    crowded: frozenset[str] = frozenset()
    overlay: dict[int, dict[str, int]] = field(default_factory=dict)  # row -> term -> f2
    by_term: dict[str, dict[int, int]] = field(default_factory=dict)  # term -> row -> f2
    norms: np.ndarray | None = None  # see _norms
    norms_key: tuple[float, int, int] = (0.0, -1, -1)
    # float64 per rowid, all zeros between searches: where `_scores` sums a query's phrases.
    acc: np.ndarray = field(default_factory=lambda: np.zeros(0))
    # bool per rowid, all False between searches: the rows `_scores` is scoring.
    marked: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))


class LexicalIndex:
    """Exact BM25 top k of the lexical channel over the whole store (no filter but deletion),
    shared by the store's reader threads."""

    def __init__(
        self, *, min_rows: int = MIN_ROWS, compact_after: int = COMPACT_AFTER,
        common_rows: int = MIN_COMMON_ROWS,
    ) -> None:
        self.min_rows = min_rows
        self.common_rows = common_rows
        self.compact_after = compact_after
        self._lock = threading.Lock()
        self._state: _State | None = None
        self._tokenizer: _Tokenizer | None = None
        self._terms: dict[str, str | None] = {}
        self._failed = -1  # log position at which FTS5's statistics did not add up
        self.builds = 0  # how many times the index was built (tests, diagnostics)
        self.scored = 0  # postings the last search scored (tests, diagnostics)

    def search(
        self, conn: Connection, tokens: Sequence[str], limit: int, spare: int
    ) -> list[tuple[str, float]] | None:
        """(memory id, score) best first, as FTS5's `ORDER BY bm25() LIMIT limit + spare` over
        `tokens` with deleted memories dropped after; None when this cannot answer exactly."""
        if not tokens or conn.in_transaction:
            return None
        conn.execute("BEGIN")  # one snapshot for the log, the statistics and the rows
        try:
            with self._lock:
                ranked = self._ranked(conn, tokens, limit + spare)
                return None if ranked is None else _live(self._state, ranked, limit)
        finally:
            conn.execute("COMMIT")

    def _ranked(
        self, conn: Connection, tokens: Sequence[str], depth: int
    ) -> list[tuple[int, float]] | None:
        averages = _averages(conn)
        if averages is None or averages[0] < self.min_rows:
            return None
        state = self._current(conn, averages)
        if state is None:
            return None
        phrases = [(t, self._term(conn, t)) for t in tokens]
        if any(term is None for _, term in phrases):
            return None
        nrow, total = averages
        avgdl = total / nrow
        norms = _norms(state, avgdl)
        found = [_phrase(conn, state, token, term, nrow, avgdl) for token, term in phrases]
        scoring = _Scoring(state, norms, [p for p in found if len(p.rows)])
        ranked = _top(*scoring.top_candidates(depth), depth)
        self.scored = scoring.scored
        return ranked

    # -- keeping up with the store ----------------------------------------------------------

    def _current(self, conn: Connection, averages: tuple[int, int]) -> _State | None:
        pos, first = conn.execute(LOG_SPAN).fetchone()
        pos, first = int(pos or 0), int(first or 0)
        if self._failed == pos:
            return None  # FTS5 disagreed with itself at this position: nothing to gain
        state = self._state
        if state is not None and state.pos > pos:
            return None  # this reader's snapshot is older than the index
        behind = pos - state.pos if state is not None else 0
        if state is None or state.pos < first - 1 or behind > max(REPLAY_MAX, state.rows // 10):
            # Never built, the log trimmed past it, or so far behind that reading FTS5 again
            # costs less than tokenizing every changed row.
            state = self._build(conn, pos)
        elif state.pos < pos:
            _replay(conn, state, pos, self._tokenize(conn))
            if len(state.overlay) > self.compact_after:
                _compact(state)
        if (state.rows, state.tokens) != averages:
            # FTS5 changed without the log (a rebuild, a repair): read it again, once.
            state = self._build(conn, pos)
            if (state.rows, state.tokens) != averages:
                self._state, self._failed = None, pos
                return None
        return state

    def _build(self, conn: Connection, pos: int) -> _State:
        self.builds += 1
        self._state = None
        lengths = _lengths(conn)
        present = lengths >= 0
        nrow = int(present.sum())
        floor = max(self.common_rows, int(nrow * COMMON_SHARE))
        held, crowded = {}, set()
        for term, doc in conn.execute(
            "SELECT term, doc FROM memories_stem_fts_vocab WHERE doc >= ?", [floor]
        ).fetchall():
            if doc > int(nrow * CEILING_SHARE):
                crowded.add(term)
            else:
                held[term] = _read_postings(conn, term, lengths)
        ids, live = _memories(conn, len(lengths))
        state = _State(
            pos, held, lengths, nrow, int(lengths[present].sum()), np.zeros(len(ids), bool),
            ids, live, frozenset(crowded),
        )
        if len(ids) > len(lengths):
            more = np.full(len(ids) - len(lengths), -1, np.int32)
            state.lengths = np.concatenate([lengths, more])
        self._state = state
        return state

    def _tokenize(self, conn: Connection) -> _Tokenizer:
        if self._tokenizer is None:
            self._tokenizer = _Tokenizer(_tokenizer_of(conn))
        return self._tokenizer

    def _term(self, conn: Connection, token: str) -> str | None:
        """The one index term FTS5 searches for `token`, or None when it is not one term."""
        if token not in self._terms:
            if len(self._terms) > 50_000:
                self._terms.clear()
            found = self._tokenize(conn).terms(token)
            self._terms[token] = found[0] if len(found) == 1 else None
        return self._terms[token]


# -- scoring ----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Phrase:
    """One query phrase's matching rows and what it adds to each: a held term's weighted
    frequencies x 2 and IDF (scored here), or a rare term's scores from FTS5; and `bound`, no
    less than any of those."""

    rows: np.ndarray
    f2: np.ndarray | None
    idf: float
    scores: np.ndarray | None
    bound: float

    def values(self, norms: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray:
        """What the phrase adds to each of its rows (those at `keep`, else all), as FTS5 sums."""
        if self.scores is not None:
            return self.scores if keep is None else self.scores[keep]
        assert self.f2 is not None
        rows, f2 = (self.rows, self.f2) if keep is None else (self.rows[keep], self.f2[keep])
        f = f2 * 0.5
        return self.idf * ((f * (K1 + 1.0)) / (f + norms[rows]))


# A phrase's bound is raised by this share, so rounding can never put a row above it.
BOUND_MARGIN = 1e-9


def _phrase(
    conn: Connection, state: _State, token: str, term: str | None, nrow: int, avgdl: float
) -> _Phrase:
    if term is not None and term in state.held:
        rows, f2 = _term_postings(state, term)
        held = state.held[term]
        most, shortest = held.most_f2, held.shortest
        extra = state.by_term.get(term)
        if extra:
            most = max(most, *extra.values())
            shortest = min(shortest, int(state.lengths[list(extra)].min()))
        return _counted(rows, f2, most, shortest, nrow, avgdl)
    if term is not None and term not in state.crowded:
        # A rare term: its few rows read from FTS5 now and scored here, at a third of the
        # CPU of FTS5's bm25(), which looks up each row's size on its own.
        rows, f2 = _read_rows(conn, term)
        if len(rows) == 0:
            return _Phrase(rows, f2, 0.0, None, 0.0)
        if rows[-1] < len(state.lengths):
            most, shortest = int(f2.max()), int(state.lengths[rows].min())
            return _counted(rows, f2, most, shortest, nrow, avgdl)
    # FTS5 stems the token itself (a stem stemmed again may be another term).
    rows, scores = _fts_term(conn, token)
    bound = float(scores.max()) * (1 + BOUND_MARGIN) if len(scores) else 0.0
    return _Phrase(rows, None, 0.0, scores, bound)


def _counted(
    rows: np.ndarray, f2: np.ndarray, most: int, shortest: int, nrow: int, avgdl: float
) -> _Phrase:
    """A term's phrase from its rows and weighted frequencies x 2, bounded by the largest of
    those (`most`) and the shortest of its rows."""
    idf = math.log((nrow - len(rows) + 0.5) / (len(rows) + 0.5)) if len(rows) else 0.0
    idf = idf if idf > 0.0 else IDF_FLOOR
    # The most a row can get: bm25 grows with the frequency and shrinks with the row's length.
    f = most * 0.5
    norm = K1 * ((1 - B) + (B * max(shortest, 0)) / avgdl)
    bound = idf * ((f * (K1 + 1.0)) / (f + norm)) * (1 + BOUND_MARGIN)
    return _Phrase(rows, f2, idf, None, bound)


class _Scoring:
    """The BM25 sums of a query's phrases over the rows that can reach its top `depth`
    (MaxScore): the rows of the phrases with the highest bounds are scored first, and the
    `depth`-th best of them is a floor no row matching only phrases whose bounds sum below it
    can reach; those phrases are then looked up for the other phrases' rows only, never
    scored over all of theirs. Each row is summed phrase by phrase in query order as FTS5
    does, so its score is the same to the bit."""

    def __init__(self, state: _State, norms: np.ndarray, phrases: list[_Phrase]) -> None:
        self.state, self.norms, self.phrases = state, norms, phrases
        self.scored = 0
        # Held rows lie within `lengths`; FTS5's are in rowid order, the last the largest.
        top = max([len(state.lengths) - 1] + [int(p.rows[-1]) for p in phrases])
        if top >= len(state.acc):
            state.acc = np.concatenate([state.acc, np.zeros(top + 1 - len(state.acc))])
        if top >= len(state.marked):
            more = np.zeros(top + 1 - len(state.marked), bool)
            state.marked = np.concatenate([state.marked, more])

    def top_candidates(self, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, scores) of a set of matching rows holding every row of the top `depth`."""
        phrases = self.phrases
        everything = [True] * len(phrases)
        highest = sorted(range(len(phrases)), key=lambda i: -phrases[i].bound)
        seed, count = set(), 0
        for i in highest:
            seed.add(i)
            count += len(phrases[i].rows)
            if count >= depth:
                break
        if len(seed) == len(phrases):
            return self._sums(everything)
        rows, sums = self._sums([i in seed for i in range(len(phrases))])
        if len(sums) < depth:
            return self._sums(everything)
        floor = float(np.partition(sums, len(sums) - depth)[len(sums) - depth])
        essential, below = list(everything), 0.0
        for i in reversed(highest):  # the lowest bounds first
            below += phrases[i].bound
            if below >= floor:
                break
            essential[i] = False
        if all(i in seed for i in range(len(phrases)) if essential[i]):
            return rows, sums  # the seed's rows hold every row of the essential phrases
        return self._sums(essential)

    def _sums(self, essential: list[bool]) -> tuple[np.ndarray, np.ndarray]:
        """(rows, BM25 sums) of every row an `essential` phrase matches, every phrase counted.
        The sums go into the state's all-zero accumulator and touch only those rows (each
        other phrase is looked up for them through `marked`), never a store-sized array."""
        state, norms = self.state, self.norms
        chosen = [p for p, e in zip(self.phrases, essential, strict=True) if e]
        acc, marked = state.acc, state.marked
        partial = not all(essential)
        try:
            if partial:
                for p in chosen:
                    marked[p.rows] = True
            for p, e in zip(self.phrases, essential, strict=True):
                if e:  # each row at most once per phrase
                    acc[p.rows] += p.values(norms)
                    self.scored += len(p.rows)
                else:
                    keep = np.flatnonzero(marked[p.rows])
                    acc[p.rows[keep]] += p.values(norms, keep)
                    self.scored += len(keep)
            hits, sums = [], []
            for p in chosen:
                # Every match scores above 0 (each contribution is at least the IDF floor's):
                # reset as read, a row a later phrase also matched reads 0 there and is not
                # listed twice.
                got = acc[p.rows]
                found = got > 0.0
                hits.append(p.rows[found])
                sums.append(got[found])
                acc[p.rows] = 0.0
        except BaseException:
            acc[:] = 0.0
            raise
        finally:
            if partial:
                for p in chosen:
                    marked[p.rows] = False
        if not hits:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        return np.concatenate(hits), np.concatenate(sums)


def _norms(state: _State, avgdl: float) -> np.ndarray:
    """bm25's length normalisation of every row, k1 * (1 - b + b * D / avgdl), evaluated as
    FTS5 evaluates it; kept until a change moves the lengths or the average."""
    key = (avgdl, state.pos, len(state.lengths))
    if state.norms is None or state.norms_key != key:
        state.norms = K1 * ((1 - B) + (B * state.lengths.astype(np.float64)) / avgdl)
        state.norms_key = key
    return state.norms


def _term_postings(state: _State, term: str) -> tuple[np.ndarray, np.ndarray]:
    rows, f2 = state.held[term].decode()
    if state.overlay:
        keep = ~state.stale[rows]
        rows, f2 = rows[keep], f2[keep]
        extra = state.by_term.get(term)
        if extra:
            rows = np.concatenate([rows, np.fromiter(extra.keys(), np.int64, len(extra))])
            f2 = np.concatenate([f2, np.fromiter(extra.values(), np.int64, len(extra))])
    return rows, f2


def _fts_term(conn: Connection, token: str) -> tuple[np.ndarray, np.ndarray]:
    """A rare term's contribution to each row holding it: its single-phrase bm25 score."""
    found = conn.execute(
        f"SELECT rowid, -bm25({TABLE}, {WEIGHTS}) FROM {TABLE} WHERE {TABLE} MATCH ? "
        "ORDER BY rowid",
        ["{content tags} : " + '"' + token.replace('"', '""') + '"'],
    ).fetchall()
    rows = np.fromiter((r[0] for r in found), np.int64, len(found))
    return rows, np.fromiter((r[1] for r in found), np.float64, len(found))


def _top(hits: np.ndarray, values: np.ndarray, depth: int) -> list[tuple[int, float]]:
    """The `depth` best (rowid, score) of the matched rows, best first, ties by smaller rowid."""
    if len(hits) > depth:
        cut = np.partition(values, len(values) - depth)[len(values) - depth]
        keep = values >= cut
        hits, values = hits[keep], values[keep]
    order = np.lexsort((hits, -values))[:depth]
    return [(int(hits[i]), float(values[i])) for i in order]


def _live(
    state: _State | None, ranked: list[tuple[int, float]], limit: int
) -> list[tuple[str, float]]:
    """The first `limit` of `ranked` that are live memories, as (memory id, score); a row the
    index does not know (FTS5 holding a row no memory has) is not one."""
    if state is None or not ranked:
        return []
    rows = np.fromiter((r for r, _ in ranked), np.int64, len(ranked))
    known = rows < len(state.live)
    kept = np.flatnonzero(known)
    kept = kept[state.live[rows[kept]]][:limit]
    ids = state.ids[rows[kept]].tolist()
    return [(ids[n].decode(), ranked[i][1]) for n, i in enumerate(kept.tolist())]


# -- reading FTS5 ---------------------------------------------------------------------------


def _averages(conn: Connection) -> tuple[int, int] | None:
    """FTS5's averages record: (rows, tokens in all columns)."""
    row = conn.execute(f"SELECT block FROM {TABLE}_data WHERE id = 1").fetchone()
    if row is None or row[0] is None:
        return None
    values = _varints(bytes(row[0]))
    return (values[0], sum(values[1:])) if values else None


def _memories(conn: Connection, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Each memory's id and whether it is live, by rowid, in arrays of at least `size`."""
    found = conn.execute("SELECT rowid, id, is_deleted FROM memories").fetchall()
    top = max(size - 1, max((r[0] for r in found), default=0))
    ids = np.zeros(top + 1, _width([r[1] for r in found]))
    live = np.zeros(top + 1, bool)
    if found:
        rows = np.fromiter((r[0] for r in found), np.int64, len(found))
        ids[rows] = [r[1].encode() for r in found]
        live[rows] = np.fromiter((not r[2] for r in found), bool, len(found))
    return ids, live


def _width(ids: Sequence[str], at_least: int = 1) -> np.dtype:
    """A bytes dtype wide enough for each of `ids` in UTF-8."""
    return np.dtype(f"S{max([at_least, *(len(i.encode()) for i in ids)])}")


def _lengths(conn: Connection) -> np.ndarray:
    top = conn.execute(f"SELECT max(id) FROM {TABLE}_docsize").fetchone()[0]
    lengths = np.full(int(top or 0) + 1, -1, np.int32)
    for rowid, blob in conn.execute(f"SELECT id, sz FROM {TABLE}_docsize"):
        lengths[rowid] = _size(bytes(blob or b""))
    return lengths


def _size(blob: bytes) -> int:
    # Nearly every column holds fewer than 128 tokens: then each varint is one byte.
    return sum(blob) if max(blob, default=0) < 0x80 else sum(_varints(blob))


def _varints(blob: bytes) -> list[int]:
    """SQLite varints (big-endian 7-bit groups; a ninth byte contributes all 8 bits)."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def _read_postings(conn: Connection, term: str, lengths: np.ndarray) -> _Postings:
    return _Postings.of(*_read_rows(conn, term), lengths)


def _read_rows(conn: Connection, term: str) -> tuple[np.ndarray, np.ndarray]:
    """The rows holding `term` in content or tags, sorted, and each one's weighted frequency
    x 2: each content occurrence is listed twice, each tag once, hints not at all. Parsed by
    numpy from the one string (no list of strings)."""
    text = conn.execute(
        "SELECT group_concat(CASE col WHEN 'content' THEN doc || ',' || doc "
        "WHEN 'tags' THEN doc END) FROM memories_stem_fts_instance WHERE term = ?",
        [term],
    ).fetchone()[0]
    if not text:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rows, f2 = np.unique(np.fromstring(text, dtype=np.int64, sep=","), return_counts=True)
    return rows, f2


def _tokenizer_of(conn: Connection) -> str:
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", [TABLE]).fetchone()
    match = _TOKENIZE.search(sql[0] if sql else "")
    if match is None:
        return "unicode61"
    return match.group(1).replace("''", "'") if match.group(1) is not None else match.group(2)


# -- catching up ----------------------------------------------------------------------------


def _replay(conn: Connection, state: _State, pos: int, tokenizer: _Tokenizer) -> None:
    """Fold the rows changed after `state.pos` (up to `pos`) into the state."""
    changed = sorted(
        {r for (r,) in conn.execute(
            "SELECT row FROM lexical_log WHERE seq > ? AND seq <= ?", [state.pos, pos]
        )}
    )
    texts = conn.execute(
        "SELECT rowid, content, hints, tags, id, is_deleted FROM memories "
        "WHERE rowid IN (SELECT value FROM json_each(?))",
        [dumps(changed)],
    ).fetchall()
    sizes, postings = tokenizer.rows([(r[0], r[1], r[2], r[3]) for r in texts], state.held)
    _grow(state, max(changed, default=0))
    width = _width([r[4] for r in texts], state.ids.dtype.itemsize)
    if width != state.ids.dtype:
        state.ids = state.ids.astype(width)
    state.live[changed] = False
    state.ids[changed] = b""
    for r in texts:
        state.ids[r[0]] = r[4].encode()
        state.live[r[0]] = not r[5]
    for row in changed:
        if state.lengths[row] >= 0:
            state.rows -= 1
            state.tokens -= int(state.lengths[row])
        state.lengths[row] = sizes.get(row, -1)
        if row in sizes:
            state.rows += 1
            state.tokens += sizes[row]
        state.stale[row] = True
        for term in state.overlay.pop(row, {}):
            state.by_term[term].pop(row, None)
        if postings.get(row):
            state.overlay[row] = postings[row]
            for term, f2 in postings[row].items():
                state.by_term.setdefault(term, {})[row] = f2
    state.pos = pos


def _grow(state: _State, top: int) -> None:
    """Room in the per-row arrays for rowid `top` (an eighth more at least)."""
    if top < len(state.lengths):
        return
    grow = max(top + 1, len(state.lengths) + len(state.lengths) // 8)
    more = grow - len(state.lengths)
    state.lengths = np.concatenate([state.lengths, np.full(more, -1, np.int32)])
    state.stale = np.concatenate([state.stale, np.zeros(more, bool)])
    state.ids = np.concatenate([state.ids, np.zeros(more, state.ids.dtype)])
    state.live = np.concatenate([state.live, np.zeros(more, bool)])


def _compact(state: _State) -> None:
    """Merge the overlay into the held postings."""
    for term in list(state.held):
        rows, f2 = _term_postings(state, term)
        order = np.argsort(rows, kind="stable")
        state.held[term] = _Postings.of(rows[order], f2[order], state.lengths)
    state.overlay.clear()
    state.by_term.clear()
    state.stale[:] = False


class _Tokenizer:
    """FTS5's tokenizer, run on text by a private in-memory FTS5 table (never the store)."""

    def __init__(self, tokenize: str) -> None:
        self._db = sqlean.connect(":memory:", isolation_level=None, check_same_thread=False)
        quoted = tokenize.replace("'", "''")
        self._db.execute(
            f"CREATE VIRTUAL TABLE t USING fts5(content, hints, tags, tokenize='{quoted}')"
        )
        self._db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")

    def terms(self, text: str) -> list[str]:
        """The index terms of `text`, in order."""
        self._load([(1, text, "", "")])
        return [t for (t,) in self._db.execute("SELECT term FROM v ORDER BY offset")]

    def rows(
        self, rows: list[tuple[int, str, str, str]], held: dict[str, _Postings]
    ) -> tuple[dict[int, int], dict[int, dict[str, int]]]:
        """Each row's length in tokens, and its weighted frequency x 2 of each held term."""
        self._load(rows)
        sizes = {int(r): _size(bytes(b or b"")) for r, b in self._db.execute("SELECT id, sz FROM t_docsize")}
        found: dict[int, dict[str, int]] = {}
        for term, doc, col in self._db.execute("SELECT term, doc, col FROM v"):
            if term in held and col != "hints":
                counts = found.setdefault(int(doc), {})
                counts[term] = counts.get(term, 0) + (2 if col == "content" else 1)
        return sizes, found

    def _load(self, rows: list[tuple[int, str, str, str]]) -> None:
        self._db.execute("DELETE FROM t")
        self._db.executemany("INSERT INTO t(rowid, content, hints, tags) VALUES (?, ?, ?, ?)", rows)
