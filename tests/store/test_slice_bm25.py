"""BM25 with a slice's own statistics (store/slice_bm25.py) is FTS5's formula: where the slice
is the whole table and every row holds a query word, the scores are FTS5's own bm25()."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from signet.app import SignetApp
from signet.config import Config
from signet.store import fts, slice_bm25
from signet.types import MemoryFilters

TEXTS = (
    "kite festival by the sea", "the kite broke in the wind, a kite of paper",
    "festival tickets for the kite show", "painting kites and flying kites all day long",
)


def test_the_slices_scores_are_fts5s_when_the_slice_is_everything(tmp_path: Path) -> None:
    with SignetApp.open(Config.default(tmp_path / "ws"), embedder=None) as app:
        app.remember_many([{"content": t, "tags": ["kites"]} for t in TEXTS])
        conn = app.store.reader()
        everything = MemoryFilters()
        expected = dict(fts.search(conn, "kite festival", everything, 10))
        got = dict(fts.search(conn, "kite festival", replace(everything, isolated=True), 10))
        assert expected.keys() == got.keys() and len(got) == len(TEXTS)
        for memory_id, score in expected.items():
            assert math.isclose(got[memory_id], score, rel_tol=1e-9), memory_id


def test_highlight_counts_each_occurrence_once() -> None:
    marked = "a \ufdd0kite\ufdd1 and \ufdd0kites\ufdd1, \ufdd0kite\ufdd1"
    assert slice_bm25._occurrences(marked) == 3
    assert slice_bm25._occurrences("no marks here") == 0
    assert slice_bm25._varints(bytes([0x08, 0x81, 0x00])) == (8, 128)
