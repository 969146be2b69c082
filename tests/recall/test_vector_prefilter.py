"""Vector search from `embedding.prefilter_min_vectors` on, through the real store and app:
sign codes pick the rows the int8 codes estimate, the memory a question is about stays first,
the top 10 near the exact one, every score exact; a forgotten memory leaves it, and a scope
too small for the candidates still gets all its memories, ranked exactly."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config
from signet.providers.hash_embedder import HashEmbedder
from signet.recall.vectors import VectorSearch
from signet.types import MemoryFilters

_RNG = random.Random(5)
WORDS = sorted({"".join(_RNG.choices("aeioubdfgklmnprstvz", k=_RNG.randint(4, 8)))
                for _ in range(3000)})
N = 3000
THRESHOLD = 1000


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"note {seed}-{i}: " + " ".join(rng.choices(WORDS, k=rng.randint(6, 14)))
            for i in range(n)]


def _queries(n: int, seed: int) -> list[str]:
    """Five words of a stored memory each, as a question about it would share."""
    rng = random.Random(seed)
    return [" ".join(rng.sample(text.split()[2:], 5)) for text in rng.sample(_texts(N, 1), n)]


def _open(workspace: Path, threshold: int = THRESHOLD) -> SignetApp:
    config = Config.default(workspace)
    config = dataclasses.replace(config, embedding=dataclasses.replace(
        config.embedding, write_path="inline", prefilter_min_vectors=threshold))
    return SignetApp.open(config, embedder=HashEmbedder(384), llm=None)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """N memories: a twentieth in project "alpha", five in "gamma", the rest in "beta"."""
    folder = tmp_path_factory.mktemp("prefilter")
    with _open(folder) as app:
        app.remember_many([{"content": t, "project": _project(i)}
                           for i, t in enumerate(_texts(N, 1))])
    yield folder


def _project(i: int) -> str:
    return "gamma" if i % 600 == 0 else "alpha" if i % 20 == 1 else "beta"


def _overlap(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> float:
    return len({m for m, _ in got} & {m for m, _ in want}) / len(want)


def _nearest(app: SignetApp, vectors: VectorSearch, query: str,
             filters: MemoryFilters | None = None) -> list[tuple[str, float]]:
    assert app.embedder is not None
    vector = app.embedder.embed([query])[0]
    with app.backend.recall_reads(app.embedder.model, vectors).reader() as reader:
        return reader.nearest(vector, filters or MemoryFilters(), 10, -1.0)


def _exact(app: SignetApp) -> VectorSearch:
    assert app.embedder is not None
    return VectorSearch(app.embedder.model, app.embedder.dimensions)


def test_the_prefilter_keeps_the_first_hit_and_exact_scores(workspace: Path) -> None:
    with _open(workspace) as app:
        assert app.vectors is not None
        exact, shares = _exact(app), []
        for query in _queries(30, 2):
            got, want = _nearest(app, app.vectors, query), _nearest(app, exact, query)
            assert got[0] == want[0]
            shares.append(_overlap(got, want))
            scores = dict(want)
            for memory_id, score in got:  # the exact cosine, whichever rows were estimated
                assert score == pytest.approx(scores.get(memory_id, score), abs=1e-6)
        assert app.vectors.prefiltered
        # 3,000 memories of made-up words: past the first hit the top 10 is crowded with
        # near-ties, the prefilter's hardest case (0.995 at 1M: docs/decisions.md).
        assert sum(shares) / len(shares) >= 0.8


def test_below_the_threshold_or_at_0_every_row_is_estimated(workspace: Path) -> None:
    for threshold in (N + 1, 0):
        with _open(workspace, threshold) as app:
            assert app.vectors is not None
            _nearest(app, app.vectors, "anything at all")
            assert not app.vectors.prefiltered


def test_a_scope_gets_all_its_answers_and_a_forgotten_memory_leaves(workspace: Path) -> None:
    with _open(workspace) as app:
        assert app.vectors is not None
        exact = _exact(app)
        alpha, gamma = MemoryFilters(project="alpha"), MemoryFilters(project="gamma")
        for query in _queries(5, 3):
            got = _nearest(app, app.vectors, query, alpha)
            assert len(got) == 10 and _overlap(got, _nearest(app, exact, query, alpha)) >= 0.7
            # Five memories: fewer than the candidates hold, so searched within the scope.
            assert _nearest(app, app.vectors, query, gamma) == _nearest(app, exact, query, gamma)
            assert len(_nearest(app, app.vectors, query, gamma)) == 5
        query = _queries(1, 4)[0]
        first = _nearest(app, app.vectors, query)[0][0]
        app.forget(first)
        assert first not in {m for m, _ in _nearest(app, app.vectors, query)}
