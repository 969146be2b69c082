"""Both vector index backends pass one contract, and return the same top k as each other."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

import numpy as np
import pytest
import sqlean

from signet.errors import InvalidInput, StoreError
from signet.store.vector_index import (
    VEC0_MAX_K,
    NumpyIndex,
    PrefilteredIndex,
    QuantizedIndex,
    Vec0Index,
    VectorIndex,
    best_positions,
    load_vec_extension,
    quantize,
)

DIM = 16
MakeIndex = Callable[[int], VectorIndex]


def unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


def random_unit(n: int, dim: int, seed: int) -> np.ndarray:
    return unit(np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32))


def axis(i: int, dim: int = DIM) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


@pytest.fixture
def vec_conn(tmp_path) -> Iterator[sqlean.Connection]:
    conn = sqlean.connect(str(tmp_path / "vec.db"))
    assert load_vec_extension(conn)
    yield conn
    conn.close()


class IndexContract:
    """Behaviour every VectorIndex must show; subclasses provide the `make` fixture."""

    def test_nearest_vector_comes_first(self, make: MakeIndex) -> None:
        index = make(DIM)
        index.add([10, 20, 30], np.stack([axis(0), axis(1), unit(axis(0) + axis(1))]))
        hits = index.search(axis(1), k=2)
        assert [i for i, _ in hits] == [20, 30]

    def test_scores_are_cosine_similarities(self, make: MakeIndex) -> None:
        vectors = random_unit(50, DIM, seed=1)
        index = make(DIM)
        index.add(list(range(50)), vectors)
        query = random_unit(1, DIM, seed=2)[0]
        hits = index.search(query, k=5)
        for id_, score in hits:
            assert score == pytest.approx(float(vectors[id_] @ query), abs=1e-5)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)

    def test_adding_an_existing_id_replaces_its_vector(self, make: MakeIndex) -> None:
        index = make(DIM)
        index.add([1, 2], np.stack([axis(0), axis(1)]))
        index.add([1], axis(2).reshape(1, -1))
        assert len(index) == 2
        assert index.search(axis(2), k=1)[0] == (1, pytest.approx(1.0, abs=1e-6))
        assert index.search(axis(0), k=1)[0][1] < 0.5

    def test_repeated_id_in_one_add_keeps_the_last_vector(self, make: MakeIndex) -> None:
        index = make(DIM)
        index.add([7, 7], np.stack([axis(0), axis(3)]))
        assert len(index) == 1
        assert index.search(axis(3), k=1)[0][0] == 7

    def test_remove_forgets_ids_and_ignores_unknown_ones(self, make: MakeIndex) -> None:
        index = make(DIM)
        index.add([1, 2, 3], np.stack([axis(0), axis(1), axis(2)]))
        index.remove([2, 99])
        assert len(index) == 2
        assert 1 in index and 3 in index and 2 not in index and 99 not in index
        assert 2 not in [i for i, _ in index.search(axis(1), k=10)]

    def test_allowed_restricts_the_candidates(self, make: MakeIndex) -> None:
        index = make(DIM)
        index.add([1, 2, 3], np.stack([axis(0), axis(1), axis(2)]))
        hits = index.search(axis(0), k=2, allowed={2, 3, 404})
        assert sorted(i for i, _ in hits) == [2, 3]
        assert index.search(axis(0), k=2, allowed=set()) == []

    def test_ties_are_broken_by_the_smaller_id(self, make: MakeIndex) -> None:
        index = make(DIM)
        index.add([9, 3, 5, 4], np.stack([axis(0), axis(0), axis(0), axis(1)]))
        assert [i for i, _ in index.search(axis(0), k=2)] == [3, 5]
        assert [i for i, _ in index.search(axis(0), k=3)] == [3, 5, 9]

    def test_k_larger_than_the_index_returns_everything(self, make: MakeIndex) -> None:
        index = make(DIM)
        index.add([1, 2], np.stack([axis(0), axis(1)]))
        assert len(index.search(axis(0), k=50)) == 2
        assert index.search(axis(0), k=0) == []

    def test_empty_index_finds_nothing(self, make: MakeIndex) -> None:
        assert make(DIM).search(axis(0), k=5) == []

    def test_vectors_are_normalised_on_the_way_in(self, make: MakeIndex) -> None:
        index = make(DIM)
        index.add([1], (axis(0) * 7.0).reshape(1, -1))
        assert index.search(axis(0) * 3.0, k=1)[0][1] == pytest.approx(1.0, abs=1e-6)

    def test_wrong_shapes_and_bad_values_are_rejected(self, make: MakeIndex) -> None:
        index = make(DIM)
        with pytest.raises(InvalidInput):
            index.add([1, 2], random_unit(1, DIM, seed=3))
        with pytest.raises(InvalidInput):
            index.add([1], random_unit(1, DIM + 1, seed=3))
        with pytest.raises(InvalidInput):
            index.add([1], np.zeros((1, DIM), dtype=np.float32))
        with pytest.raises(InvalidInput):
            index.add([1], np.full((1, DIM), np.nan, dtype=np.float32))
        with pytest.raises(InvalidInput):
            index.search(np.ones(DIM + 1, dtype=np.float32), k=1)


class TestNumpyIndex(IndexContract):
    @pytest.fixture
    def make(self) -> MakeIndex:
        return lambda dim: NumpyIndex(dim, capacity=2)

    def test_grows_past_its_capacity_and_keeps_every_vector(self) -> None:
        vectors = random_unit(300, DIM, seed=4)
        index = NumpyIndex(DIM, capacity=1)
        index.add(list(range(300)), vectors)
        assert len(index) == 300
        for i in (0, 150, 299):
            assert index.search(vectors[i], k=1)[0][0] == i

    def test_removal_moves_the_last_row_without_losing_it(self) -> None:
        vectors = random_unit(5, DIM, seed=5)
        index = NumpyIndex(DIM)
        index.add([0, 1, 2, 3, 4], vectors)
        index.remove([1])  # row 1 is refilled by id 4, the last row
        assert index.search(vectors[4], k=1)[0][0] == 4
        index.add([1], vectors[1].reshape(1, -1))
        assert {i for i, _ in index.search(vectors[0], k=5)} == {0, 1, 2, 3, 4}


class TestVec0Index(IndexContract):
    @pytest.fixture
    def make(self, vec_conn) -> MakeIndex:
        return lambda dim: Vec0Index(vec_conn, dim)

    def test_vectors_persist_in_the_database_file(self, tmp_path) -> None:
        path = str(tmp_path / "persist.db")
        conn = sqlean.connect(path)
        assert load_vec_extension(conn)
        Vec0Index(conn, DIM).add([42], axis(5).reshape(1, -1))
        conn.commit()
        conn.close()
        conn = sqlean.connect(path)
        assert load_vec_extension(conn)
        assert Vec0Index(conn, DIM).search(axis(5), k=1)[0][0] == 42
        conn.close()

    def test_an_existing_table_of_another_width_is_refused(self, vec_conn) -> None:
        Vec0Index(vec_conn, DIM)
        with pytest.raises(StoreError):
            Vec0Index(vec_conn, DIM * 2)

    def test_a_connection_without_the_extension_gets_a_clear_store_error(self, tmp_path) -> None:
        conn = sqlean.connect(str(tmp_path / "plain.db"))
        with pytest.raises(StoreError, match="load_vec_extension"):
            Vec0Index(conn, DIM)
        conn.close()

    def test_a_table_name_is_never_interpolated_unchecked(self, vec_conn) -> None:
        with pytest.raises(InvalidInput):
            Vec0Index(vec_conn, DIM, table="x; DROP TABLE memories")

    def test_load_reports_false_when_the_binding_cannot_load_extensions(self) -> None:
        conn = sqlite3.connect(":memory:")
        if hasattr(conn, "enable_load_extension"):
            conn.enable_load_extension(False)
            conn.enable_load_extension = None  # type: ignore[method-assign]
        assert load_vec_extension(conn) is False


class StoredVectors:
    """The source of truth a quantized index rescores from (the embeddings table in the app):
    every vector added, by id, and how many rows each rescoring read."""

    def __init__(self) -> None:
        self.rows: dict[int, np.ndarray] = {}
        self.read: list[int] = []
        self.asked: list[int] = []

    def exact_rows(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        kept = [int(i) for i in ids if int(i) in self.rows]
        self.read.append(len(kept))
        self.asked.extend(int(i) for i in ids)
        matrix = np.array([self.rows[i] for i in kept], dtype=np.float32).reshape(len(kept), -1)
        return np.asarray(kept, dtype=np.int64), matrix


class StoredQuantized(QuantizedIndex):
    """A quantized index whose adds also reach its stored vectors (as a write reaches the
    embeddings table before the index), so it can be held to the contract on its own."""

    def __init__(self, dimensions: int, capacity: int = 1024) -> None:
        self.stored = StoredVectors()
        super().__init__(dimensions, self.stored.exact_rows, capacity)

    def add(self, ids, vectors) -> None:  # type: ignore[no-untyped-def]
        super().add(ids, vectors)
        rows = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1)
        for id_, row in zip(ids, rows, strict=True):
            self.stored.rows[int(id_)] = row


class TestQuantizedIndex(IndexContract):
    @pytest.fixture
    def make(self) -> MakeIndex:
        return lambda dim: StoredQuantized(dim, capacity=2)

    def test_int8_codes_reconstruct_each_row_within_its_recorded_error(self) -> None:
        rows = random_unit(200, 384, seed=4)
        codes, scale, error = quantize(rows)
        assert codes.dtype == np.int8 and np.abs(codes).max() == 127
        rebuilt = scale[:, None] * codes.astype(np.float32)
        assert np.allclose(np.linalg.norm(rows - rebuilt, axis=1), error, atol=1e-6)
        assert error.max() < 0.02  # a 384-wide unit row loses about 1% of its length

    def test_top_k_equals_the_float32_matrix_and_reads_only_a_shortlist(self) -> None:
        n, dim = 20_000, 384
        # Clustered vectors, as sentence embeddings are: many near-ties around the k-th score.
        centres = random_unit(40, dim, seed=8)
        noise = np.random.default_rng(9).standard_normal((n, dim)).astype(np.float32)
        vectors = unit(centres[np.arange(n) % 40] + 0.6 * unit(noise))
        ids = list(range(1, n + 1))
        exact, quantized = NumpyIndex(dim), StoredQuantized(dim)
        for index in (exact, quantized):
            index.add(ids, vectors)
            index.remove(ids[::11])
        queries = unit(centres[:8] + 0.5 * random_unit(8, dim, seed=10))
        for k in (1, 10, 100):
            for q in queries:
                quantized.stored.read.clear()
                assert_same_hits(quantized.search(q, k), exact.search(q, k))
                assert sum(quantized.stored.read) < n // 10

    def test_every_row_the_bound_cannot_rule_out_is_read_once(self) -> None:
        # Identical estimates everywhere (every row quantizes alike): only the exact scores
        # tell the rows apart, so past the first shortlist every row must be read, none twice.
        dim = 16
        base = axis(0) * 0.9 + axis(1) * 0.1
        rng = np.random.default_rng(12)
        vectors = unit(base + 1e-4 * rng.standard_normal((500, dim)).astype(np.float32))
        index, exact = StoredQuantized(dim), NumpyIndex(dim)
        for each in (index, exact):
            each.add(list(range(500)), vectors)
        query = unit(vectors[123] + 1e-5)
        assert_same_hits(index.search(query, 5), exact.search(query, 5))
        assert len(index.stored.read) == 2 and index.stored.read[-1] > index.stored.read[0]
        assert sorted(index.stored.asked) == list(range(500))

    @pytest.mark.parametrize("order", ["shuffled", "ascending", "descending", "flat", "spiked"])
    def test_the_first_shortlist_holds_the_best_estimates(self, order: str) -> None:
        # The sampled threshold finds the `size` largest whatever the order of the values; when
        # fewer reach it (the sample held the very best, "spiked") it looks at all of them.
        values = np.random.default_rng(14).standard_normal(20_000).astype(np.float32)
        spiked = values.copy()
        spiked[::64] += np.linspace(10, 20, len(spiked[::64]), dtype=np.float32)
        values = {"shuffled": values, "ascending": np.sort(values),
                  "descending": np.sort(values)[::-1].copy(),
                  "flat": np.full(20_000, 0.5, dtype=np.float32), "spiked": spiked}[order]
        for size in (1, 50, 132, 700):
            chosen = best_positions(values, size)
            assert len(chosen) == size == len(set(chosen.tolist()))
            assert values[chosen].min() >= np.sort(values)[-size]

    def test_a_vector_gone_from_the_store_is_never_returned(self) -> None:
        index = StoredQuantized(DIM)
        index.add([1, 2, 3], np.stack([axis(0), unit(axis(0) + axis(1)), axis(2)]))
        del index.stored.rows[1]  # deleted in the table, not yet synced into the index
        assert [i for i, _ in index.search(axis(0), k=2)] == [2, 3]


class StoredPrefiltered(StoredQuantized, PrefilteredIndex):
    """A prefiltered index held to the contract the way StoredQuantized is."""

    def __init__(self, dimensions: int, min_rows: int, capacity: int = 1024) -> None:
        super().__init__(dimensions, capacity)
        self.min_rows = min_rows


def clustered(n: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`n` unit vectors around 40 centres, as sentence embeddings are, and 8 queries near them."""
    centres = random_unit(40, dim, seed=seed)
    noise = np.random.default_rng(seed + 1).standard_normal((n, dim)).astype(np.float32)
    queries = unit(centres[:8] + 0.5 * random_unit(8, dim, seed=seed + 2))
    return unit(centres[np.arange(n) % 40] + 0.6 * unit(noise)), queries


def overlap(got: list[tuple[int, float]], want: list[tuple[int, float]]) -> float:
    return len({i for i, _ in got} & {i for i, _ in want}) / len(want)


@pytest.fixture(scope="module")
def prefiltered_pair() -> tuple[StoredPrefiltered, NumpyIndex, np.ndarray]:
    """20,000 rows, every 11th removed (rows move as the gaps fill), in a prefiltered index
    narrowing from 5,000 rows and in the exact float32 matrix."""
    n, dim = 20_000, 384
    vectors, queries = clustered(n, dim, seed=20)
    ids = list(range(1, n + 1))
    prefiltered, exact = StoredPrefiltered(dim, min_rows=5_000), NumpyIndex(dim)
    for index in (prefiltered, exact):
        index.add(ids, vectors)
        index.remove(ids[::11])
    return prefiltered, exact, queries


class TestPrefilteredIndex(IndexContract):
    @pytest.fixture
    def make(self) -> MakeIndex:
        return lambda dim: StoredPrefiltered(dim, min_rows=1, capacity=2)

    def test_estimates_only_the_sign_codes_nearest_and_keeps_the_top_10(self, prefiltered_pair) -> None:
        prefiltered, exact, queries = prefiltered_pair
        assert prefiltered.narrows
        shares = []
        for q in queries:
            got = prefiltered.search(q, 10)
            # A tenth of the threshold: 500 of the 18,181 rows left.
            assert prefiltered.estimated == 500
            want = exact.search(q, 10)
            shares.append(overlap(got, want))
            scores = dict(exact.search(q, len(exact)))
            assert all(score == pytest.approx(scores[i], abs=1e-6) for i, score in got)
            assert not {i for i, _ in got} & set(range(1, 20_001, 11))
        assert np.mean(shares) >= 0.95

    def test_a_filter_narrows_within_its_rows_and_below_the_threshold_is_exact(
        self, prefiltered_pair
    ) -> None:
        prefiltered, exact, queries = prefiltered_pair
        # Half of every cluster (9,091 rows left): above the threshold.
        wide = {i for i in range(1, 20_001) if i // 40 % 2 == 0}
        narrow = set(range(3, 20_001, 50))  # below it
        for q in queries[:3]:
            got = prefiltered.search(q, 10, wide)
            assert {i for i, _ in got} <= wide and prefiltered.estimated == 500
            assert overlap(got, exact.search(q, 10, wide)) >= 0.8
            assert_same_hits(prefiltered.search(q, 10, narrow), exact.search(q, 10, narrow))
            assert prefiltered.estimated == len(narrow - set(range(1, 20_001, 11)))

    def test_below_the_threshold_the_search_is_exact(self) -> None:
        vectors, queries = clustered(3_000, 64, seed=30)
        prefiltered, exact = StoredPrefiltered(64, min_rows=3_001), NumpyIndex(64)
        for index in (prefiltered, exact):
            index.add(list(range(3_000)), vectors)
        assert not prefiltered.narrows
        for q in queries:
            assert_same_hits(prefiltered.search(q, 10), exact.search(q, 10))
            assert prefiltered.estimated == 3_000


class TestBackendsAgree:
    """The same vectors, removals and filters give the same top-k ids in both backends."""

    N = 3000

    @pytest.fixture
    def pair(self, vec_conn) -> tuple[NumpyIndex, Vec0Index, np.ndarray]:
        vectors = random_unit(self.N, DIM, seed=6)
        ids = list(range(1, self.N + 1))
        numpy_index, vec0_index = NumpyIndex(DIM), Vec0Index(vec_conn, DIM)
        for index in (numpy_index, vec0_index):
            index.add(ids, vectors)
            index.remove(ids[::7])
        return numpy_index, vec0_index, random_unit(20, DIM, seed=7)

    @pytest.mark.parametrize("k", [1, 5, 10, 50, 200, VEC0_MAX_K + 1])
    def test_same_top_k(self, pair, k: int) -> None:
        numpy_index, vec0_index, queries = pair
        assert len(numpy_index) == len(vec0_index)
        for q in queries:
            assert_same_hits(numpy_index.search(q, k), vec0_index.search(q, k))

    @pytest.mark.parametrize("size", [50, 2500])
    def test_same_top_k_within_allowed(self, pair, size: int) -> None:
        numpy_index, vec0_index, queries = pair
        allowed = set(np.random.default_rng(size).choice(self.N, size, replace=False).tolist())
        for q in queries:
            for k in (1, 10, 60, VEC0_MAX_K + 1):
                assert_same_hits(
                    numpy_index.search(q, k, allowed), vec0_index.search(q, k, allowed)
                )

    def test_allowed_ids_missing_from_the_index_are_ignored(self, pair) -> None:
        numpy_index, vec0_index, queries = pair
        live = [2, 3, 4, 5, 6]  # id 1 was removed by the fixture
        allowed = set(live) | {1} | set(range(10**6, 10**6 + 5000))
        expected = numpy_index.search(queries[0], 10, allowed)
        assert sorted(i for i, _ in expected) == live
        assert_same_hits(expected, vec0_index.search(queries[0], 10, allowed))


def assert_same_hits(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> None:
    assert [i for i, _ in a] == [i for i, _ in b]
    assert np.allclose([s for _, s in a], [s for _, s in b], atol=1e-5)
