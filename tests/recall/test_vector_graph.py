"""Vector search above `embedding.ann_min_vectors`: an HNSW graph proposes, the stored vectors
decide. Through the real store and the app: the graph's top 10 is the exact top 10, deleted and
replaced vectors leave it, a scoped caller still gets the exact top k within its scope, and a
restart reads the saved graph back instead of building it again. The graph is made on another
thread: until it is ready the exact index answers, and no search waits for it. Below the
threshold the exact index answers, as before."""

from __future__ import annotations

import dataclasses
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config
from signet.providers.hash_embedder import HashEmbedder
from signet.recall.vectors import StartBuild, VectorSearch
from signet.store import embeddings as emb_sql
from signet.types import Actor, MemoryFilters

# Made-up words from a vocabulary large enough that no two memories hold the same bag of words
# (equal vectors would make "the" top 10 a matter of tie-breaking).
_RNG = random.Random(0)
WORDS = sorted({"".join(_RNG.choices("aeioubdfgklmnprstvz", k=_RNG.randint(4, 8)))
                for _ in range(3000)})
N = 2500
THRESHOLD = 1000


def _texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"note {seed}-{i}: " + " ".join(rng.choices(WORDS, k=rng.randint(6, 14)))
            for i in range(n)]


def _config(workspace: Path, threshold: int) -> Config:
    config = Config.default(workspace)
    return dataclasses.replace(config, embedding=dataclasses.replace(
        config.embedding, write_path="inline", ann_min_vectors=threshold))


def _open(workspace: Path, threshold: int = THRESHOLD) -> SignetApp:
    return SignetApp.open(_config(workspace, threshold), embedder=HashEmbedder(64), llm=None)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A store of N memories (a tenth of them in project "alpha") and its saved graph."""
    folder = tmp_path_factory.mktemp("graph")
    with _open(folder) as app:
        _fill(app, [{"content": t, "project": _project(i)} for i, t in enumerate(_texts(N, 1))])
    yield folder


def _fill(app: SignetApp, items: list[dict[str, object]]) -> None:
    """The write path a memory at a time, the batch in one transaction (as an import does)."""
    prepared = app.memory.prepare_memories(items, actor=Actor())
    with app.store.write_tx():
        for memory in prepared:
            app.memory.write_prepared(memory)


def _project(i: int) -> str:
    """A tenth of the memories in alpha, five in gamma (too few for the graph's candidates to
    hold 10 of them), the rest in beta."""
    return "gamma" if i % 500 == 0 else "alpha" if i % 10 == 1 else "beta"


def _nearest(app: SignetApp, query: str, k: int = 10,
             filters: MemoryFilters | None = None) -> list[tuple[str, float]]:
    assert app.vectors is not None and app.embedder is not None
    vector = app.embedder.embed([query])[0]
    with app.backend.recall_reads(app.embedder.model, app.vectors).reader() as reader:
        return reader.nearest(vector, filters or MemoryFilters(), k, -1.0)


def _graph_ready(app: SignetApp) -> bool:
    """Wait for the graph the first search asked for (searches themselves never wait)."""
    assert app.vectors is not None
    return app.vectors.wait_for_graph(app.store.reader(), timeout=120)


def _exact(app: SignetApp) -> VectorSearch:
    assert app.embedder is not None
    return VectorSearch(app.embedder.model, app.embedder.dimensions)


def _exact_nearest(app: SignetApp, exact: VectorSearch, query: str, k: int = 10,
                   filters: MemoryFilters | None = None) -> list[tuple[str, float]]:
    assert app.embedder is not None
    vector = app.embedder.embed([query])[0]
    with app.backend.recall_reads(app.embedder.model, exact).reader() as reader:
        return reader.nearest(vector, filters or MemoryFilters(), k, -1.0)


def test_the_graph_answers_the_exact_top_10_with_exact_scores(workspace: Path) -> None:
    queries = _texts(40, 2)
    with _open(workspace) as app:
        assert _graph_ready(app)
        exact = _exact(app)
        overlap = []
        for query in queries:
            got = _nearest(app, query)
            want = _exact_nearest(app, exact, query)
            overlap.append(len({m for m, _ in got} & {m for m, _ in want}) / 10)
            scores = dict(want)
            # Every score is the exact cosine, whichever index proposed the memory.
            for memory_id, score in got:
                if memory_id in scores:
                    assert score == pytest.approx(scores[memory_id], abs=1e-6)
        assert app.vectors is not None and app.vectors.approximate
        assert sum(overlap) / len(overlap) >= 0.99
        # The benchmark's measure of the same thing, at the level of vectors.
        assert app.embedder is not None
        vectors = app.embedder.embed(queries)
        assert app.vectors.overlap_with_exact(app.store.reader(), vectors, 10) >= 0.99
        assert exact.overlap_with_exact(app.store.reader(), vectors, 10) == 1.0


def test_a_small_store_keeps_the_exact_index(tmp_path: Path) -> None:
    with _open(tmp_path, threshold=N + 1) as app:
        app.remember_many([{"content": t} for t in _texts(300, 3)])
        _nearest(app, "deploy server cache")
        assert app.vectors is not None and not app.vectors.approximate
    assert not list(tmp_path.rglob("*.usearch"))


def test_deleted_memories_and_vectors_leave_the_graph(workspace: Path) -> None:
    with _open(workspace) as app:
        assert _graph_ready(app)
        query = "rotate token login budget invoice"
        top = _nearest(app, query, 5)
        forgotten = top[0][0]
        app.forget(forgotten)
        assert forgotten not in {m for m, _ in _nearest(app, query, 5)}
        # The retention purge deletes a tombstone's vector: its row leaves the graph too.
        purged = app.get(top[1][0])
        before = _vector_ids(app)
        with app.store.write_tx() as conn:
            emb_sql.delete_for_hashes(conn, [purged.content_hash])
        assert purged.id not in {m for m, _ in _nearest(app, query, 5)}
        removed = before - _vector_ids(app)
        assert len(removed) == 1 and not any(i in app.vectors._index for i in removed)


def _vector_ids(app: SignetApp) -> set[int]:
    assert app.embedder is not None
    conn = app.store.reader()
    return set(emb_sql.current_ids(conn, app.embedder.model, 64).tolist())


def test_a_scoped_caller_gets_the_exact_top_k_within_its_scope(workspace: Path) -> None:
    queries = _texts(10, 4)
    with _open(workspace) as app:
        assert _graph_ready(app)
        exact = _exact(app)
        for project, held in (("alpha", N // 10), ("beta", N - N // 10 - 5), ("gamma", 5)):
            filters = MemoryFilters(project=project)
            for query in queries:
                got = _nearest(app, query, 10, filters)
                want = _exact_nearest(app, exact, query, 10, filters)
                assert len(got) == len(want) == min(10, held)
                assert {m for m, _ in got} == {m for m, _ in want}, (project, got, want)


def test_a_restart_reads_the_graph_back_and_adds_only_what_is_new(workspace: Path) -> None:
    saved = list(workspace.rglob("*.usearch"))
    assert len(saved) == 1  # written beside the database
    with _open(workspace) as app:
        app.remember_many([{"content": t} for t in _texts(7, 5)])
        _nearest(app, "deploy server")
        # Read back by the first search itself (cheaper than loading the exact index).
        assert app.vectors is not None and app.vectors.approximate
        assert app.vectors.last_catch_up == {"read_back": True, "added": 7, "removed": 0}


def test_the_graph_library_and_the_local_model_load_in_either_order() -> None:
    # usearch 2.26 crashed the interpreter when onnxruntime was imported after it (the
    # daemon's graph made before the model's first load): pyproject.toml pins below it.
    code = ("from signet.store.ann_index import HnswIndex; HnswIndex(8, lambda ids: (ids, ids));"
            " import onnxruntime; print('both')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "both", done.stderr[-2000:]


def test_a_graph_saved_for_another_database_is_built_again(tmp_path: Path) -> None:
    # Two stores whose vectors share ids: the first one's saved graph put beside the second
    # (a restored backup reusing ids looks the same) is not trusted.
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, seed in ((first, 6), (second, 7)):
        with _open(folder) as app:
            _fill(app, [{"content": t} for t in _texts(THRESHOLD + 100, seed)])
            assert _graph_ready(app)
    mine, theirs = (next(f.rglob("*.usearch")) for f in (second, first))
    mine.write_bytes(theirs.read_bytes())
    with _open(second) as app:
        assert _graph_ready(app)
        assert app.vectors is not None
        assert app.vectors.last_catch_up == {
            "read_back": False, "added": THRESHOLD + 100, "removed": 0}


def test_searches_before_the_graph_is_ready_are_exact_and_do_not_wait(
    workspace: Path, tmp_path: Path
) -> None:
    # The build is handed to a runner the test holds: the searches below return while it has
    # not even started, so they cannot have waited for it.
    builds: list[Callable[[], None]] = []
    held: StartBuild = builds.append
    queries = _texts(10, 8)
    with _open(workspace, threshold=N * 10) as app:  # the app's own index: always exact
        assert app.embedder is not None and app.backend.file() is not None
        exact = _exact(app)
        graph = VectorSearch(app.embedder.model, app.embedder.dimensions,
                             ann_min_vectors=THRESHOLD, ann_file=tmp_path / "graph.usearch",
                             database=app.backend.file(), start_build=held)
        want = [_exact_nearest(app, exact, q) for q in queries]
        assert [_exact_nearest(app, graph, q) for q in queries] == want
        assert len(builds) == 1 and not graph.approximate  # asked for once, not yet made
        builds.pop()()  # the build, on this thread, while nothing else runs
        assert graph.approximate and graph.last_catch_up["read_back"] is False
        assert (tmp_path / "graph.usearch").exists()
        got = [_exact_nearest(app, graph, q) for q in queries]
        overlap = [len({m for m, _ in g} & {m for m, _ in w}) / 10
                   for g, w in zip(got, want, strict=True)]
        assert sum(overlap) / len(overlap) >= 0.99 and not builds
        graph.close()
        # Closed before its build ran: close does not wait for it, and the build, run late,
        # neither builds nor saves anything.
        late = VectorSearch(app.embedder.model, app.embedder.dimensions,
                            ann_min_vectors=THRESHOLD, ann_file=tmp_path / "late.usearch",
                            database=app.backend.file(), start_build=held)
        assert _exact_nearest(app, late, queries[0]) == want[0]
        late.close()
        builds.pop()()
        assert not late.approximate and not (tmp_path / "late.usearch").exists()
