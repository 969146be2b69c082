"""The in-memory lexical index (store/lexical_index.py) ranks as FTS5 does, bit for bit: the
same memories in the same order with the same scores, on a real store, and still after inserts,
edits of content, tags and hints, soft and hard deletes, a compaction, a trimmed log and a
rebuild of FTS5 behind its back. Every comparison is against FTS5's own query (the index
passed as None), on the same connection and snapshot."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config
from signet.store import fts
from signet.store import memories as mem_sql
from signet.store.lexical_index import LexicalIndex
from signet.types import MemoryFilters, utc_now

# A few words in most rows (held in memory), many in a handful (asked of FTS5 per query).
COMMON = (
    "kite festival wind paper river garden painting flying tickets market boat lamp song "
    "bread stone cloud train letter mirror candle"
).split()
# Real words among the rare ones: FTS5 stems a query token itself, and a stem stemmed again
# may be another term ("excursion" -> "excurs" -> "excur").
RARE = [f"word{i}" for i in range(400)] + ["excursion", "angling", "generously", "relational"] * 5
QUERIES = (
    "kite festival", "kites flying over the river", "painting the garden with word7",
    "word3 word11 word250", "tickets market paper wind river garden", "kite_festival café",
    "nothing matches zzzz", "word399 kite", "Painted gardens and flown kites",
    "the last angling excursion", "relational generously word5",
)
EVERYTHING = MemoryFilters()


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(COMMON) for _ in range(rng.randint(2, 7))]
    words += [rng.choice(RARE) for _ in range(rng.randint(1, 4))]
    rng.shuffle(words)
    return " ".join(words)


def _same_as_fts5(app: SignetApp, index: LexicalIndex, limit: int = 40) -> None:
    conn = app.store.reader()
    for query in QUERIES:
        expected = fts.search(conn, query, EVERYTHING, limit)
        assert fts.search(conn, query, EVERYTHING, limit, index=index) == expected, query
        if "_" not in query:  # a token FTS5 splits into a phrase is left to FTS5
            tokens = fts.search_tokens(conn, query)
            assert index.search(conn, tokens, limit, fts.OVERFETCH) == expected, query


@pytest.fixture
def app(tmp_path: Path) -> Iterator[SignetApp]:
    rng = random.Random(7)
    with SignetApp.open(Config.default(tmp_path / "ws"), embedder=None) as signet:
        signet.remember_many(
            [{"content": _sentence(rng), "tags": [rng.choice(COMMON)]} for _ in range(400)]
        )
        yield signet


def test_the_index_ranks_exactly_as_fts5(app: SignetApp) -> None:
    index = LexicalIndex(min_rows=0, common_rows=20)
    _same_as_fts5(app, index)
    conn = app.store.reader()
    found = index.search(conn, ["kites", "festival", "word7"], 40, 50)
    assert found is not None and len(found) == 40  # answered here, not handed to FTS5
    # The common words are held in memory, the rare ones read from FTS5 when asked.
    state = index._state
    assert state is not None and "kite" in state.held and "word7" not in state.held
    assert index.builds == 1
    # The per-row sums are read back and reset by every search: none is left for the next.
    assert len(state.acc) >= len(state.lengths) and not state.acc.any()


def test_a_token_fts5_splits_is_left_to_fts5(app: SignetApp) -> None:
    conn = app.store.reader()
    index = LexicalIndex(min_rows=0, common_rows=20)
    assert index.search(conn, ["kite_festival"], 10, 50) is None
    assert index.search(conn, ["kite"], 10, 50) is not None


def test_writes_are_caught_up_from_the_log_without_a_rebuild(app: SignetApp) -> None:
    index = LexicalIndex(min_rows=0, common_rows=20)
    _same_as_fts5(app, index)
    rng = random.Random(8)
    app.remember_many([{"content": _sentence(rng) + " kite"} for _ in range(30)])
    _same_as_fts5(app, index)
    ids = [m for m, _ in fts.search(app.store.reader(), "kite", EVERYTHING, 60)]
    with app.store.write_tx() as conn:
        now = utc_now()
        mem_sql.update(conn, ids[0], {"content": "a new text about word3 and gardens"}, now)
        mem_sql.update(conn, ids[1], {"tags": json.dumps(["kite", "kite", "festival"])}, now)
        mem_sql.update(conn, ids[2], {"hints": "when is the kite festival? kite kite kite"}, now)
        mem_sql.hard_delete(conn, ids[3])
        conn.execute("UPDATE memories SET is_deleted = 1 WHERE id = ?", (ids[4],))
    _same_as_fts5(app, index)
    assert ids[3] not in dict(fts.search(app.store.reader(), "kite", EVERYTHING, 500, index=index))
    assert index.builds == 1
    state = index._state
    assert state is not None and state.overlay  # the changed rows wait in the overlay


def test_the_overlay_is_merged_into_the_held_postings(app: SignetApp) -> None:
    index = LexicalIndex(min_rows=0, common_rows=20, compact_after=5)
    _same_as_fts5(app, index)
    rng = random.Random(9)
    app.remember_many([{"content": _sentence(rng)} for _ in range(12)])
    _same_as_fts5(app, index)
    state = index._state
    assert state is not None and not state.overlay and index.builds == 1


def test_a_log_trimmed_past_the_index_rebuilds_it(app: SignetApp) -> None:
    index = LexicalIndex(min_rows=0, common_rows=20)
    _same_as_fts5(app, index)
    rng = random.Random(10)
    app.remember_many([{"content": _sentence(rng)} for _ in range(5)])
    with app.store.write_tx() as conn:
        # What the triggers do past 50,000 changes: the oldest entries go.
        conn.execute("DELETE FROM lexical_log WHERE seq < (SELECT max(seq) FROM lexical_log)")
    _same_as_fts5(app, index)
    assert index.builds == 2


def test_fts5_changed_without_the_log_is_read_again(app: SignetApp) -> None:
    index = LexicalIndex(min_rows=0, common_rows=20)
    _same_as_fts5(app, index)
    with app.store.write_tx() as conn:
        # A row indexed behind the log's back (as a repair or a restore might): the held
        # counts no longer add up to FTS5's averages record.
        conn.execute(
            "INSERT INTO memories_stem_fts(rowid, content, hints, tags) "
            "VALUES (100000, 'kite kite festival', '', '')"
        )
    conn = app.store.reader()
    found = index.search(conn, ["kite"], 500, 0)
    assert index.builds == 2
    assert found is not None
    expected = conn.execute(
        "SELECT rowid, -bm25(memories_stem_fts, 1.0, 0.6, 0.5) FROM memories_stem_fts "
        "WHERE memories_stem_fts MATCH '{content tags} : \"kite\"' ORDER BY rowid"
    ).fetchall()
    assert dict(index._ranked(conn, ["kite"], 1000) or []) == {r: s for r, s in expected}


def test_a_rolled_back_write_leaves_no_log_entry(app: SignetApp) -> None:
    conn = app.store.reader()
    before = conn.execute("SELECT max(seq) FROM lexical_log").fetchone()[0]
    with pytest.raises(RuntimeError), app.store.write_tx() as writer:
        writer.execute("DELETE FROM memories WHERE rowid = 1")
        raise RuntimeError("the writer dies before COMMIT")
    assert conn.execute("SELECT max(seq) FROM lexical_log").fetchone()[0] == before


def test_inside_a_write_transaction_fts5_answers(app: SignetApp) -> None:
    index = LexicalIndex(min_rows=0, common_rows=20)
    with app.store.write_tx() as conn:
        assert index.search(conn, ["kite"], 10, 50) is None


def test_recall_uses_the_stores_index(app: SignetApp) -> None:
    from signet.types import RecallQuery

    app.store.lexical = LexicalIndex(min_rows=0, common_rows=20)
    hits = app.recall(RecallQuery("kites over the river", mode="keyword")).hits
    assert hits and app.store.lexical.builds == 1


def test_deleted_memories_at_the_top_give_way_to_the_next(app: SignetApp) -> None:
    index = LexicalIndex(min_rows=0, common_rows=20)
    conn = app.store.reader()
    top = [m for m, _ in fts.search(conn, "kite river", EVERYTHING, 5)]
    with app.store.write_tx() as writer:
        for memory_id in top[:3]:
            writer.execute("UPDATE memories SET is_deleted = 1 WHERE id = ?", (memory_id,))
    expected = fts.search(conn, "kite river", EVERYTHING, 5)
    found = index.search(conn, fts.search_tokens(conn, "kite river"), 5, fts.OVERFETCH)
    assert found == expected and len(found) == 5 and not set(top[:3]) & dict(found).keys()


def test_each_search_finds_the_log_position_with_two_seeks_not_a_scan(app: SignetApp) -> None:
    # The log keeps 50,000 entries: an aggregate of max and min together scanned them all on
    # every keyword recall. The index reads its span by two seeks on the key.
    from signet.store.lexical_index import LOG_SPAN

    conn = app.store.reader()
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    index = LexicalIndex(min_rows=1)
    index.search(conn, fts.search_tokens(conn, "kite festival"), 10, fts.OVERFETCH)
    conn.set_trace_callback(None)
    assert any("lexical_log" in s for s in statements)
    assert all("max(seq), min(seq)" not in s for s in statements)
    plan = " ".join(str(row[-1]) for row in conn.execute(f"EXPLAIN QUERY PLAN {LOG_SPAN}"))
    assert "SCAN lexical_log" not in plan and "SEARCH lexical_log" in plan


def test_a_soft_delete_and_a_recovery_reach_the_index_through_the_log(app: SignetApp) -> None:
    # The index names ranked rows and drops deleted ones from arrays it holds: a soft delete
    # (only `is_deleted` changes) and a recovery must reach them without a rebuild.
    index = LexicalIndex(min_rows=0, common_rows=20)
    conn = app.store.reader()
    tokens = fts.search_tokens(conn, "kite river")
    top = [m for m, _ in index.search(conn, tokens, 5, fts.OVERFETCH) or []]
    with app.store.write_tx() as writer:
        mem_sql.soft_delete(writer, top[0], utc_now())
    found = index.search(conn, tokens, 5, fts.OVERFETCH)
    assert found == fts.search(conn, "kite river", EVERYTHING, 5)
    assert found is not None and top[0] not in dict(found)
    with app.store.write_tx() as writer:
        mem_sql.recover(writer, top[0], utc_now())
    found = index.search(conn, tokens, 5, fts.OVERFETCH)
    assert found is not None and [m for m, _ in found] == top
    assert index.builds == 1


def _same_top_at_every_depth(app: SignetApp, index: LexicalIndex) -> int:
    """Each query's top 1..30 as the whole ranking's head (itself FTS5's, as above); how many
    of the searches scored fewer postings than all their phrases hold."""
    conn = app.store.reader()
    pruned = 0
    for query in [*QUERIES, "kite word3", "festival river word11 word12", "garden lamp song"]:
        if "_" in query:  # left to FTS5
            continue
        tokens = fts.search_tokens(conn, query)
        whole = index._ranked(conn, tokens, 10_000)
        assert whole is not None
        everything = index.scored
        for depth in range(1, 31):
            assert index._ranked(conn, tokens, depth) == whole[:depth], (query, depth)
            pruned += index.scored < everything
    return pruned


def test_a_shallow_top_skips_rows_that_cannot_reach_it_and_ranks_the_same(
    app: SignetApp,
) -> None:
    index = LexicalIndex(min_rows=0, common_rows=20)
    _same_as_fts5(app, index)
    assert _same_top_at_every_depth(app, index) > 0
    # Changed rows (stale held postings, new ones in the overlay) are bounded as well.
    rng = random.Random(11)
    app.remember_many([{"content": _sentence(rng) + " kite kite kite"} for _ in range(20)])
    with app.store.write_tx() as conn:
        conn.execute("UPDATE memories SET content = 'kite' WHERE rowid = 5")
    _same_as_fts5(app, index)
    assert _same_top_at_every_depth(app, index) > 0
    state = index._state
    assert state is not None and state.overlay and not state.marked.any()
