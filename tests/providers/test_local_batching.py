"""How the local embedder cuts a length-sorted window into encoder runs (a token budget)."""

from __future__ import annotations

import numpy as np

from signet.providers import local_embedder
from signet.providers.local_embedder import TOKEN_BUDGET, _batches


def _cut(lengths: list[int], batch_size: int = 32) -> list[list[int]]:
    values = np.array(lengths)
    order = np.argsort(values, kind="stable")
    return [[int(values[i]) for i in rows] for rows in _batches(order, values, batch_size)]


def test_long_texts_run_in_small_batches() -> None:
    batches = _cut([256] * 8)
    assert all(len(b) * max(b) <= TOKEN_BUDGET for b in batches)
    assert sum(len(b) for b in batches) == 8 and len(batches) > 1


def test_short_texts_fill_batches_up_to_batch_size() -> None:
    assert [len(b) for b in _cut([6] * 70, batch_size=32)] == [32, 32, 6]


def test_one_text_over_the_budget_still_runs_alone() -> None:
    assert _cut([TOKEN_BUDGET + 100, 5]) == [[5], [TOKEN_BUDGET + 100]]


def test_every_text_is_in_exactly_one_batch_in_length_order() -> None:
    rng = np.random.default_rng(7)
    lengths = [int(x) for x in rng.integers(3, 257, size=300)]
    batches = _cut(lengths, batch_size=local_embedder.LocalEmbedder().batch_size)
    assert [x for b in batches for x in b] == sorted(lengths)
