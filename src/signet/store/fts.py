"""Full-text search over memories with FTS5 BM25, and the FTS consistency tools. User text never
reaches MATCH as-is (FTS5 syntax would be parsed or fail): it is cut into word tokens, stop words
dropped unless nothing else is left, each quoted as a literal and OR-ed, so BM25 ranks by how
many rare query words a memory holds. Column weights: content 1.0, hints 0.6, tags 0.5.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence
from dataclasses import replace

from signet.store import slice_bm25
from signet.store.connection import Connection
from signet.store.lexical_index import LexicalIndex
from signet.store.memories import filter_sql
from signet.types import MemoryFilters

_TOKEN = re.compile(r"\w+", re.UNICODE)
MAX_QUERY_TOKENS = 32

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t don doesn didn isn wasn weren won wouldn shouldn couldn ll re ve d m o y ain also get got
    let us like really could would might must shall may""".split()
)


def query_tokens(text: str, limit: int | None = MAX_QUERY_TOKENS) -> list[str]:
    """Lowercase word tokens of `text` with stop words removed (kept if nothing else is left),
    the first `limit` distinct ones (all with None)."""
    tokens = [t.lower() for t in _TOKEN.findall(text)]
    content = [t for t in tokens if t not in STOP_WORDS]
    chosen = content or tokens
    seen: dict[str, None] = {}
    for token in chosen:
        seen.setdefault(token, None)
    return list(seen)[:limit]


def search_tokens(conn: Connection, text: str) -> list[str]:
    """The words BM25 searches for: the query's tokens without stop words and common terms,
    and of a long query (a pasted prompt, a conversation so far) the MAX_QUERY_TOKENS rarest,
    not the first ones: a long query's common words would match everything and its first
    words are rarely the ones that matter."""
    return selective_tokens(conn, query_tokens(text, None))


def match_expression(text: str) -> str | None:
    """An FTS5 MATCH expression OR-ing the quoted tokens, or None when there are none."""
    tokens = query_tokens(text)
    if not tokens:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)


LEXICAL_COLUMNS = ("content", "tags")
OVERFETCH = 50  # rows ranked beyond the limit, so it holds after the deleted ones are dropped
HINT_COLUMNS = ("hints",)
# Two indexes over the same columns: exact words, and Porter stems (migration 005). Recall
# searches the stemmed one; the exact one keeps the term statistics (memories_fts_vocab).
EXACT_TABLE = "memories_fts"
STEMMED_TABLE = "memories_stem_fts"
TABLES = (EXACT_TABLE, STEMMED_TABLE)


def search(
    conn: Connection,
    text: str,
    filters: MemoryFilters,
    limit: int,
    columns: tuple[str, ...] = LEXICAL_COLUMNS,
    table: str = STEMMED_TABLE,
    index: LexicalIndex | None = None,
) -> list[tuple[str, float]]:
    """(memory id, score) by BM25 over `columns`, best first; score is -bm25 (higher is better).

    Recall runs this twice as separate evidence channels: over content and tags (lexical) and
    over the prospective hints (hint). `table` is one of TABLES; FTS5 runs each quoted query
    token through the table's own tokenizer, so the stemmed table needs no stemming here.
    `index` (the store's, store/lexical_index.py) ranks the lexical channel of an unfiltered
    search in memory with the same scores; FTS5 ranks whatever it cannot."""
    if table not in TABLES:
        raise ValueError(f"unknown FTS table {table!r}")
    if filters.isolated:
        # A scoped caller: the slice's own statistics (store/slice_bm25.py).
        words = query_tokens(text)
        if not words or limit <= 0:
            return []
        postings = slice_bm25.gather(conn, words, filters, table)
        return slice_bm25.rank_memories(postings, words, columns, limit)
    tokens = search_tokens(conn, text)
    if not tokens or limit <= 0:
        return []
    expression = "{" + " ".join(columns) + "} : (" + _or_of(tokens) + ")"
    weights = f"bm25({table}, 1.0, 0.6, 0.5)"
    where, params = filter_sql(filters)
    if index is not None and where == "m.is_deleted = 0" and (columns, table) == (
        LEXICAL_COLUMNS, STEMMED_TABLE
    ):
        found = index.search(conn, tokens, limit, OVERFETCH)
        if found is not None:
            return found
    if where == "m.is_deleted = 0":
        # The common case: rank inside FTS5 first (no join per matching row), then drop the
        # few deleted rows; over-fetch so the limit still holds after that.
        rows = conn.execute(
            f"SELECT m.id, f.score FROM (SELECT rowid, -{weights} AS score FROM {table} "
            f"WHERE {table} MATCH ? ORDER BY {weights} LIMIT ?) f "
            "JOIN memories m ON m.rowid = f.rowid WHERE m.is_deleted = 0 ORDER BY f.score DESC "
            "LIMIT ?",
            [expression, limit + OVERFETCH, limit],
        ).fetchall()
    else:
        rows = conn.execute(
            f"SELECT m.id, -{weights} AS score FROM {table} "
            f"JOIN memories m ON m.rowid = {table}.rowid "
            f"WHERE {table} MATCH ? AND {where} ORDER BY {weights} LIMIT ?",
            [expression, *params, limit],
        ).fetchall()
    return [(r[0], float(r[1])) for r in rows]


def has_hints(conn: Connection, filters: MemoryFilters | None = None) -> bool:
    """Whether any memory carries prospective hints (a probe of a partial index, migration 008);
    for an isolated slice, any memory of the slice (what lies outside must not show)."""
    if filters is None or not filters.isolated:
        return conn.execute("SELECT 1 FROM memories WHERE hints <> '' LIMIT 1").fetchone() is not None
    where, params = filter_sql(filters)
    row = conn.execute(f"SELECT 1 FROM memories m WHERE m.hints <> '' AND {where} LIMIT 1", params)
    return row.fetchone() is not None


def _or_of(tokens: list[str]) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)


# A term in more than this fraction of all memories says almost nothing about relevance (its
# IDF is near zero) but costs a walk over most of the index; such terms are dropped from the
# query while at least one more selective term remains ("dynamic stop words").
COMMON_TERM_FRACTION = 0.25
MIN_DOCS_FOR_PRUNING = 200


def selective_tokens(conn: Connection, tokens: list[str]) -> list[str]:
    """`tokens` without the common ones (in a large store), at most MAX_QUERY_TOKENS: the
    rarest when there are more, in query order."""
    if len(tokens) < 2:
        return tokens
    # max(rowid) is O(1) and close to the row count (it counts deleted rows too).
    total = conn.execute("SELECT max(rowid) FROM memories").fetchone()
    docs = int(total[0] or 0) if total else 0
    if docs < MIN_DOCS_FOR_PRUNING and len(tokens) <= MAX_QUERY_TOKENS:
        return tokens
    frequency = frequencies(conn, tokens)
    kept = tokens
    if docs >= MIN_DOCS_FOR_PRUNING:
        kept = [t for t in tokens if frequency.get(t, 0) <= COMMON_TERM_FRACTION * docs] or tokens
    if len(kept) > MAX_QUERY_TOKENS:
        # Rarest first among the words the store holds; a word it never saw matches nothing
        # (but perhaps a stem), so it comes last.
        def rarity(t: str) -> tuple[bool, int]:
            return (frequency.get(t, 0) == 0, frequency.get(t, 0))

        rarest = set(sorted(kept, key=rarity)[:MAX_QUERY_TOKENS])
        kept = [t for t in kept if t in rarest]
    return kept


_memo = threading.local()


def frequencies(conn: Connection, tokens: Sequence[str]) -> dict[str, int]:
    """Rows of the exact index holding each token (0 for none). fts5vocab walks each term's postings
    and recall asks twice, so the counts are kept per thread until its connection sees a commit;
    never inside a transaction, which may yet roll back."""
    known: dict[str, int] = {}
    if not conn.in_transaction:
        marker = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)
        memo = getattr(_memo, "last", None)
        # The connection itself is held (not its id), so a new one cannot pass for it.
        if memo is None or memo[0] is not conn or memo[1] != marker or len(memo[2]) > 20_000:
            memo = (conn, marker, {})
            _memo.last = memo
        known = memo[2]
    missing = list(dict.fromkeys(t for t in tokens if t not in known))
    for start in range(0, len(missing), 500):
        chunk = missing[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found = dict(
            conn.execute(
                f"SELECT term, doc FROM memories_fts_vocab WHERE term IN ({marks})", chunk
            ).fetchall()
        )
        known.update((t, int(found.get(t, 0))) for t in chunk)
    return {t: known[t] for t in tokens}


def integrity_check(conn: Connection) -> bool:
    """True when both FTS indexes match the memories table (FTS5 'integrity-check')."""
    try:
        for table in TABLES:
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('integrity-check', 1)")
    except Exception:  # FTS5 reports corruption as a generic database error
        return False
    return True


def rebuild(conn: Connection) -> None:
    for table in TABLES:
        conn.execute(f"INSERT INTO {table}({table}) VALUES('rebuild')")


def indexed_ids(conn: Connection, text: str) -> Sequence[str]:
    expression = match_expression(text)
    if expression is None:
        return []
    rows = conn.execute(
        "SELECT m.id FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid "
        "WHERE memories_fts MATCH ?",
        (expression,),
    ).fetchall()
    return [r[0] for r in rows]


def match_all(conn: Connection, text: str, filters: MemoryFilters, limit: int) -> list[str]:
    """Ids of memories holding *every* word of `text` (stop words aside), oldest first: the
    strict, unranked match that batch forget uses, where a loose OR would sweep in too much."""
    tokens = query_tokens(text)
    if not tokens or limit <= 0:
        return []
    expression = "{content tags} : (" + " AND ".join(
        '"' + t.replace('"', '""') + '"' for t in tokens
    ) + ")"
    where, params = filter_sql(filters)
    rows = conn.execute(
        f"SELECT m.id FROM {EXACT_TABLE} JOIN memories m ON m.rowid = {EXACT_TABLE}.rowid "
        f"WHERE {EXACT_TABLE} MATCH ? AND {where} ORDER BY m.created_at, m.rowid LIMIT ?",
        [expression, *params, limit],
    ).fetchall()
    return [r[0] for r in rows]


def term_idf(
    conn: Connection, tokens: Sequence[str], filters: MemoryFilters | None = None
) -> dict[str, float]:
    """BM25's IDF of each token over the memory index, ln(1 + (N - df + 0.5) / (df + 0.5)),
    from the exact index's term statistics; a token the store never saw has df 0 (the most
    informative), so a query about nothing stored keeps its weight on words nothing holds.
    For an isolated slice (a scoped caller) N and df count the slice's rows only."""
    if not tokens:
        return {}
    if filters is not None and filters.isolated:
        docs, frequency = _slice_frequencies(conn, tokens, filters)
    else:
        total = conn.execute("SELECT max(rowid) FROM memories").fetchone()
        docs = int(total[0] or 0) if total else 0
        frequency = frequencies(conn, tokens)
    return {
        t: math.log(1.0 + (docs - frequency.get(t, 0) + 0.5) / (frequency.get(t, 0) + 0.5))
        for t in tokens
    }


def _slice_frequencies(
    conn: Connection, tokens: Sequence[str], filters: MemoryFilters
) -> tuple[int, dict[str, int]]:
    """(rows, token -> rows holding it) within the filters' slice, deleted rows included as
    the index's own statistics include them."""
    where, params = filter_sql(replace(filters, include_deleted=True))
    docs = int(conn.execute(f"SELECT count(*) FROM memories m WHERE {where}", params).fetchone()[0])
    frequency = {}
    for token in tokens:
        row = conn.execute(
            f"SELECT count(*) FROM {EXACT_TABLE} f JOIN memories m ON m.rowid = f.rowid "
            f"WHERE {EXACT_TABLE} MATCH ? AND {where}",
            ['"' + token.replace('"', '""') + '"', *params],
        ).fetchone()
        frequency[token] = int(row[0])
    return docs, frequency
