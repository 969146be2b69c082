"""The semantic channel's index: the embeddings table's vectors, searched in RAM.

The float32 BLOBs are the source of truth; the index (int8 rows rescored exactly, or the float32
matrix) returns the exact top k. Each search compares the table's change marker with the one
loaded, so every process stays correct without notifications. From `embedding.
prefilter_min_vectors` vectors on, sign codes pick the rows the int8 codes estimate; from
`embedding.ann_min_vectors` on, an HNSW graph (store/ann_index.py) proposes the shortlist.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from signet.config import EmbeddingConfig
from signet.providers.embedder import Embedder
from signet.store import embeddings as emb_sql
from signet.store import memories as mem_sql
from signet.store.ann_index import MAX_GRAPH_FETCH, HnswIndex
from signet.store.connection import Connection, connect
from signet.store.recall_reads import narrows
from signet.store.vector_index import (
    NumpyIndex,
    PrefilteredIndex,
    QuantizedIndex,
    VectorIndex,
)
from signet.types import MemoryFilters

IndexKind = Literal["quantized", "exact"]
# Vectors read from the table per step while (re)loading: bounds the transient copies (a 50k
# step held 77 MB of blobs and as much again as a matrix at 384 dimensions; at 8,192 the
# quantized index's float64 residuals still put 44 MB above the loaded index at 100k, the
# process's peak RSS; at 2,048 about 11).
LOAD_STEP = 2048
# Reading connections whose last seen state is remembered (a daemon has one per thread).
MAX_SEEN_CONNECTIONS = 64
# The graph is saved again once this share of its rows changed since the last save, so that a
# process killed without `close` leaves a file that needs little catching up.
RESAVE_SHARE = 0.1
# A filtered search that kept fewer than k asks for this many times more candidates next round.
WIDEN = 4

log = logging.getLogger(__name__)

# Runs a job somewhere other than the calling thread (the graph's build).
StartBuild = Callable[[Callable[[], None]], None]


def in_thread(job: Callable[[], None]) -> None:
    """The default `StartBuild`: a daemon thread (the graph's insertions release the GIL)."""
    threading.Thread(target=job, name="signet-vector-graph", daemon=True).start()


def _widening(
    k: int, attempt: Callable[[int], tuple[list[tuple[str, float]], bool]],
    most: int | None = None,
) -> list[tuple[str, float]]:
    """The best `k` of a filtered search: `attempt` asks for k candidates, then WIDEN times as
    many each round, until it keeps k, says it has no more, or the next round would ask for
    more than `most`."""
    wanted = k
    while True:
        kept, exhausted = attempt(wanted)
        if len(kept) >= k or exhausted or (most is not None and wanted * WIDEN > most):
            return kept[:k]
        wanted *= WIDEN


def graph_file(database: Path, model: str, dimensions: int) -> Path:
    """Where the HNSW graph of `model`'s vectors in `database` is saved: beside it."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model)
    return database.with_name(f"{database.stem}.vectors-{slug}-{dimensions}.usearch")


class _Closed(Exception):
    """The index was closed while its graph was being made."""


class VectorSearch:
    def __init__(
        self, model: str, dimensions: int, index: IndexKind = "quantized", *,
        ann_min_vectors: int = 0, ann_file: Path | None = None, database: Path | None = None,
        start_build: StartBuild = in_thread, prefilter_min_vectors: int = 0,
    ) -> None:
        self.model = model
        self.dimensions = dimensions
        self.kind = index
        self.ann_min_vectors = ann_min_vectors
        self.prefilter_min_vectors = prefilter_min_vectors
        self.ann_file = ann_file
        # The graph is made on another thread, with its own connection to `database`; without
        # a database file, by the search that crosses the threshold.
        self._database = database
        self._start_build = start_build
        self._build: Literal["idle", "scheduled", "running", "failed"] = "idle"
        self._built = threading.Event()  # set while no build is scheduled or running
        self._built.set()
        self._closed = False
        self._tried_file = False  # whether `ann_file` was read back on a search's thread
        self._unsaved = 0  # graph rows added or removed since it was last saved
        # How the graph was made when the store crossed the threshold (or the process
        # started above it): read back from `ann_file` or built, and the rows it then took.
        self.last_catch_up: dict[str, object] = {}
        # The reading thread's connection, for the quantized index's exact rescoring.
        self._local = threading.local()
        self._index: VectorIndex = self._new_index()
        self._loaded_max = 0
        self._marker: tuple[int, int] = (0, 0)
        # Per reading connection: (the connection, its (data_version, total_changes), the
        # marker it last saw); see `sync`.
        self._seen: dict[int, tuple[Connection, tuple[int, int], tuple[int, int]]] = {}
        self._lock = threading.Lock()

    def _new_index(self, capacity: int = 1024) -> VectorIndex:
        if self.kind == "exact":
            return NumpyIndex(self.dimensions, capacity)
        if self.prefilter_min_vectors > 0:
            return PrefilteredIndex(
                self.dimensions, self._exact_rows, capacity, self.prefilter_min_vectors)
        return QuantizedIndex(self.dimensions, self._exact_rows, capacity)

    def _exact_rows(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # During a search (`_search`), the rows' content hashes are kept for finding owners.
        hashes = getattr(self._local, "hashes", None)
        return emb_sql.vectors_by_id(self._local.conn, ids.tolist(), self.dimensions, hashes)

    def __len__(self) -> int:
        return len(self._index)

    def sync(self, conn: Connection) -> None:
        # The marker query counts the table (4-5 ms of CPU at 100k rows); it is skipped when
        # this connection has seen no commit since it last found the index in step: SQLite's
        # data_version moves with every other connection's commit, total_changes with its own.
        seen = emb_sql.commits_seen(conn)
        known = self._seen.get(id(conn))
        if known is not None and known[0] is conn and known[1:] == (seen, self._marker):
            return
        marker = emb_sql.change_marker(conn)
        if marker != self._marker:
            with self._lock:
                if marker != self._marker:
                    self._catch_up(conn, marker)
        if len(self._seen) > MAX_SEEN_CONNECTIONS:
            self._seen.clear()
        # The connection itself is kept with its state, so its id cannot be reused meanwhile.
        self._seen[id(conn)] = (conn, seen, marker)

    @classmethod
    def of(cls, config: EmbeddingConfig, embedder: Embedder, database: Path | None) -> VectorSearch:
        """The index `config` asks for over `embedder`'s vectors, its graph saved beside the
        `database` file (none for a shared database)."""
        ann_file = None
        if database is not None:
            ann_file = graph_file(database, embedder.model, embedder.dimensions)
        return cls(embedder.model, embedder.dimensions, config.index,
                   ann_min_vectors=config.ann_min_vectors, ann_file=ann_file, database=database,
                   prefilter_min_vectors=config.prefilter_min_vectors)

    @property
    def approximate(self) -> bool:
        """Whether searches go through the HNSW graph (the store is above the threshold)."""
        return isinstance(self._index, HnswIndex)

    @property
    def prefiltered(self) -> bool:
        """Whether an unfiltered search estimates only the sign codes' nearest rows."""
        return isinstance(self._index, PrefilteredIndex) and self._index.narrows

    def _wants_graph(self, count: int) -> bool:
        if self.ann_min_vectors <= 0:
            return False
        # Half the threshold to leave it again, so a store at the edge does not switch back
        # and forth (each switch is a build).
        floor = self.ann_min_vectors // 2 if self.approximate else self.ann_min_vectors
        return count >= floor

    def _catch_up(self, conn: Connection, marker: tuple[int, int]) -> None:
        if self._wants_graph(marker[1]):
            if self.approximate or self._database is None or self._read_back(conn):
                self._catch_up_graph(conn, marker)
                self._marker = marker
                return
            # The exact index answers (and is kept in step below) until the graph is ready.
            self._begin_build()
        max_id, count = self._marker
        reload = len(self._index) == 0 or marker[0] < max_id or self.approximate
        if reload or marker[1] != count + emb_sql.count_since(conn, max_id):
            # A full reload is built aside and swapped in whole: searches meanwhile (threads
            # whose sync found nothing to do) keep the old index, never a half-loaded one.
            # Sized for every row at once: growing by doubling held the old and the new
            # arrays together at each step (at 100k x 384 int8, 25 MB more at the peak).
            fresh = self._new_index(capacity=marker[1] + LOAD_STEP)
            loaded = self._load_new(conn, fresh, 0)
            self._index, self._loaded_max = fresh, loaded
        else:
            self._loaded_max = self._load_new(conn, self._index, self._loaded_max)
        self._marker = marker

    def _catch_up_graph(self, conn: Connection, marker: tuple[int, int]) -> None:
        """Bring the graph in step with the table: appended rows when the marker allows,
        otherwise a comparison of ids. Without a database file to build from on another
        thread, the graph is made here."""
        graph = self._index
        if not isinstance(graph, HnswIndex):
            self._swap(*self._made_graph(conn))
            return
        max_id, count = self._marker
        if marker[0] >= max_id and marker[1] == count + emb_sql.count_since(conn, max_id):
            before = len(graph)
            self._loaded_max = self._load_new(conn, graph, self._loaded_max)
            self._changed(len(graph) - before)
            return
        removed, added, self._loaded_max = self._reconcile(conn, graph)
        self._changed(removed + added)

    def _read_back(self, conn: Connection) -> bool:
        """Swap in the graph saved in `ann_file` here, when it holds this table's vectors and
        lacks few of them: reading it back (0.7 s CPU at 100k) is far cheaper than loading the
        exact index meanwhile (about 20 s); tried once."""
        if self._tried_file or self._build != "idle" or self.ann_file is None:
            return False
        self._tried_file = True
        if not self.ann_file.exists():
            return False
        graph = HnswIndex(self.dimensions, self._exact_rows)
        if not graph.load(self.ann_file) or not self._agrees(conn, graph):
            return False
        marker = emb_sql.change_marker(conn)
        table = emb_sql.current_ids(conn, self.model, self.dimensions)
        if len(np.setdiff1d(table, graph.ids())) > RESAVE_SHARE * max(len(graph), 1):
            return False  # much to add: built or caught up on the build's thread instead
        removed, added, top = self._reconcile(conn, graph, table)
        self._swap(graph, marker, top, {"read_back": True, "added": added, "removed": removed,
                                        "unsaved": removed + added})
        return self.approximate

    def _begin_build(self) -> None:
        """Start making the graph elsewhere (`start_build`), once; a failed build is not
        tried again by this process (its searches stay exact)."""
        if self._build != "idle" or self._closed:
            return
        self._build = "scheduled"
        self._built.clear()
        try:
            self._start_build(self._build_graph)
        except BaseException:
            self._build = "failed"
            self._built.set()
            raise

    def _build_graph(self) -> None:
        """The build job: the graph made on a connection of its own, then swapped in."""
        assert self._database is not None
        with self._lock:
            if self._closed:
                self._build = "idle"
                self._built.set()
                return
            self._build = "running"
        try:
            conn = connect(self._database)
            try:
                made = self._made_graph(conn)
            finally:
                conn.close()
            with self._lock:
                self._swap(*made)
        except _Closed:
            pass
        except Exception:  # searches stay exact; the next process tries again
            log.exception("could not make the vector graph; vector search stays exact")
            self._build = "failed"
        finally:
            if self._build == "running":
                self._build = "idle"
            self._built.set()

    def _made_graph(
        self, conn: Connection
    ) -> tuple[HnswIndex, tuple[int, int], int, dict[str, object]]:
        """A graph in step with the table as of the marker read first: read back from
        `ann_file` (when it holds this table's vectors) and brought up to date, or built; saved
        when that changed much of it. The graph, that marker, the last id it loaded, and how
        it was made."""
        marker = emb_sql.change_marker(conn)
        graph = HnswIndex(self.dimensions, self._exact_rows)
        loaded = self.ann_file is not None and graph.load(self.ann_file)
        if loaded and not self._agrees(conn, graph):
            graph, loaded = HnswIndex(self.dimensions, self._exact_rows), False
        removed, added, top = self._reconcile(conn, graph)
        unsaved = removed + added
        if unsaved and unsaved >= RESAVE_SHARE * max(len(graph), 1) and self._saved(graph):
            unsaved = 0
        how: dict[str, object] = {
            "read_back": loaded, "added": added, "removed": removed, "unsaved": unsaved}
        return graph, marker, top, how

    def _swap(self, graph: HnswIndex, marker: tuple[int, int], top: int,
              how: dict[str, object]) -> None:
        """Search through `graph` from now on (under the lock), unless the store shrank below
        the threshold meanwhile or the index was closed."""
        if self._closed or not self._wants_graph(marker[1]):
            return
        self._index, self._marker, self._loaded_max = graph, marker, top
        unsaved = how.pop("unsaved")
        assert isinstance(unsaved, int)
        self._unsaved = unsaved
        self.last_catch_up = how
        log.info("vector search through an HNSW graph: %d vectors (%s)", len(graph),
                 "read back and brought up to date" if how["read_back"] else "built")

    def wait_for_graph(self, conn: Connection, timeout: float | None = None) -> bool:
        """Sync with the table and wait (at most `timeout` seconds) for a graph being made;
        whether searches now go through the graph. For benchmarks and tests: searches never
        wait for it."""
        self.sync(conn)
        self._built.wait(timeout)
        self.sync(conn)
        return self.approximate

    def _agrees(self, conn: Connection, graph: HnswIndex, sample: int = 64) -> bool:
        """A graph read back holds this table's vectors under the ids both hold (a sample)."""
        held = graph.ids()
        if len(held) == 0:
            return True
        picked = np.random.default_rng().choice(held, size=min(sample, len(held)), replace=False)
        found, rows = emb_sql.vectors_by_id(conn, picked.tolist(), self.dimensions)
        return graph.agrees(found, rows)

    def _reconcile(
        self, conn: Connection, graph: HnswIndex, table: np.ndarray | None = None
    ) -> tuple[int, int, int]:
        """Remove the graph's ids the table (its current ids, read when not given) no longer
        holds, add the ones the graph lacks; how many it removed and added, and the last id it
        holds."""
        if table is None:
            table = emb_sql.current_ids(conn, self.model, self.dimensions)
        held = graph.ids()
        gone = np.setdiff1d(held, table, assume_unique=True)
        graph.remove(gone.tolist())
        new = np.setdiff1d(table, held, assume_unique=True)
        top = int(held.max()) if len(held) else 0
        # Rows appended since the graph last looked are read in id order (one range read);
        # anything older that it lacks, by id.
        older = new[new <= top]
        for start in range(0, len(older), LOAD_STEP):
            found, rows = emb_sql.vectors_by_id(
                conn, older[start : start + LOAD_STEP].tolist(), self.dimensions)
            if len(found):
                graph.add(found.tolist(), rows)
        loaded = self._load_new(conn, graph, top) if len(new) else top
        return len(gone), len(new), max(loaded, int(table[-1]) if len(table) else 0)

    def _changed(self, rows: int) -> None:
        """Count graph changes; save the graph once enough of it changed since the last save."""
        self._unsaved += rows
        if self._unsaved and self._unsaved >= RESAVE_SHARE * max(len(self._index), 1):
            self._save()

    def _save(self) -> None:
        graph = self._index
        if isinstance(graph, HnswIndex) and self._saved(graph):
            self._unsaved = 0

    def _saved(self, graph: HnswIndex) -> bool:
        """Write `graph` to `ann_file`; whether it was written."""
        if self.ann_file is None:
            return False
        try:
            graph.save(self.ann_file)
        except OSError as e:  # a read-only or full disk costs a rebuild later, never a search
            log.warning("could not save the vector graph to %s: %s", self.ann_file, e)
            return False
        return True

    def close(self) -> None:
        """Stop a graph being made (at its next step) and save the graph if it changed since
        it was last saved (so the next start reads it back instead of building it)."""
        with self._lock:
            self._closed = True
            running = self._build == "running"
        if running:  # a build never started (its runner gone) is not waited for
            self._built.wait()
        with self._lock:
            if self._unsaved:
                self._save()

    def _load_new(self, conn: Connection, index: VectorIndex, after_id: int) -> int:
        """Add the vectors above `after_id` to `index`, a step at a time; the last id loaded."""
        while True:
            if self._closed:
                raise _Closed
            ids, matrix = emb_sql.load_since(conn, self.model, self.dimensions, after_id, LOAD_STEP)
            if not ids:
                return after_id
            index.add(ids, matrix)
            after_id = ids[-1]

    def add(self, embedding_id: int, vector: np.ndarray) -> None:
        """Add a vector just written by this process (saves the next sync a query)."""
        with self._lock:
            self._index.add([embedding_id], vector.reshape(1, -1))
            if self.approximate:
                self._unsaved += 1

    def search(
        self, conn: Connection, query: np.ndarray, k: int
    ) -> list[tuple[str, float]]:
        """(memory id, cosine) of the nearest live memories, best first."""
        return self._search(conn, query, k)[0]

    def _search(
        self, conn: Connection, query: np.ndarray, k: int
    ) -> tuple[list[tuple[str, float]], list[tuple[int, float]]]:
        """The nearest live memories, and the index's hits (vector id, cosine) they came from:
        fewer memories than hits when a vector's memories were all deleted."""
        self.sync(conn)
        if k <= 0 or len(self._index) == 0:
            return [], []
        self._local.conn = conn
        hashes: dict[int, str] = {}
        self._local.hashes = hashes
        try:
            hits = self._index.search(query.astype(np.float32), k)
        finally:
            self._local.hashes = None
        owners = _owners(conn, [emb_id for emb_id, _ in hits], hashes)
        results: list[tuple[str, float]] = []
        for emb_id, score in hits:
            for memory_id in owners.get(emb_id, ()):
                results.append((memory_id, float(score)))
        return results, hits

    def search_within(
        self, conn: Connection, query: np.ndarray, k: int,
        allowed: Callable[[list[str]], set[str]], min_score: float, most: int | None = None,
    ) -> list[tuple[str, float]]:
        """The exact nearest `k` memories that `allowed` admits: the search widens until k are found
        or the index is exhausted (at most `most` candidates when given), so rows outside the
        filter never crowd out those inside."""
        self.sync(conn)

        def attempt(wanted: int) -> tuple[list[tuple[str, float]], bool]:
            found, hits = self._search(conn, query, wanted)
            found = [(m, s) for m, s in found if s >= min_score]
            admitted = allowed([m for m, _ in found])
            kept = [(m, s) for m, s in found if m in admitted]
            # Exhausted when the index has no more rows, or the last one is below the floor;
            # counted in hits, not memories: a deleted memory's vector is not the end.
            exhausted = (wanted >= len(self._index) or len(hits) < wanted
                         or bool(hits) and hits[-1][1] < min_score)
            return kept, exhausted

        return _widening(k, attempt, most)

    def _exact_within(
        self, conn: Connection, query: np.ndarray, k: int, filters: MemoryFilters,
        min_score: float,
    ) -> list[tuple[str, float]]:
        """The nearest `k` among the memories `filters` admit, the index searching only their
        vectors (exactly, or through the prefilter when they are that many): for a filter too
        selective for the graph's or the prefilter's candidates."""
        where, params = mem_sql.filter_sql(filters)
        ids = emb_sql.ids_within(conn, self.model, self.dimensions, where, params)
        if len(ids) == 0:
            return []
        self._local.conn = conn
        admits = set(ids.tolist())

        def attempt(wanted: int) -> tuple[list[tuple[str, float]], bool]:
            hits = self._index.search(query.astype(np.float32), wanted, admits)
            owners = emb_sql.memory_ids_for(conn, [emb_id for emb_id, _ in hits])
            # A vector is shared by equal texts: keep only its memories the filter admits.
            admitted = mem_sql.allowed_ids(
                conn, [m for emb_id, _ in hits for m in owners.get(emb_id, ())], filters)
            results = [(m, float(s)) for emb_id, s in hits for m in owners.get(emb_id, ())
                       if m in admitted and s >= min_score]
            return results, wanted >= len(ids) or bool(hits) and hits[-1][1] < min_score

        return _widening(k, attempt)

    def nearest(
        self, conn: Connection, query: np.ndarray, filters: MemoryFilters, k: int,
        min_cosine: float,
    ) -> list[tuple[str, float]]:
        """The semantic channel (store/recall_reads.py `NearestVectors`): the `k` nearest
        memories within `filters` whose cosine reaches `min_cosine`."""
        if narrows(filters):
            # The nearest memories *within* the filters (a scope), not the filtered global top.
            allowed = lambda ids: mem_sql.allowed_ids(conn, ids, filters)  # noqa: E731
            if not self.approximate and not self.prefiltered:
                return self.search_within(conn, query, k, allowed, min_cosine)
            # Over-fetch from the graph or the prefilter's candidates and filter; a filter
            # that admits too few of them is searched within the rows it admits.
            found = self.search_within(
                conn, query, k, allowed, min_cosine, most=MAX_GRAPH_FETCH // 4)
            if len(found) >= k:
                return found
            return self._exact_within(conn, query, k, filters, min_cosine)
        return [(m, s) for m, s in self.search(conn, query, k) if s >= min_cosine]

    def overlap_with_exact(self, conn: Connection, queries: np.ndarray, k: int) -> float:
        """The mean share of each query's exact top k (vector ids, every stored vector read
        once in steps, nothing kept) that this index's top k holds: 1.0 for the exact
        indexes, the graph's approximation otherwise."""
        self.sync(conn)
        self._local.conn = conn
        queries = np.asarray(queries, dtype=np.float32)
        best_ids = np.zeros((len(queries), 0), dtype=np.int64)
        best = np.zeros((len(queries), 0), dtype=np.float32)
        after = 0
        while True:
            ids, matrix = emb_sql.load_since(conn, self.model, self.dimensions, after, 8192)
            if not ids:
                break
            after = ids[-1]
            scores = np.concatenate([best, queries @ matrix.T], axis=1)
            held = np.concatenate([best_ids, np.broadcast_to(np.asarray(ids), (len(queries), len(ids)))], axis=1)
            keep = np.argsort(-scores, axis=1, kind="stable")[:, :k]
            best, best_ids = np.take_along_axis(scores, keep, 1), np.take_along_axis(held, keep, 1)
        shares = []
        for query, exact in zip(queries, best_ids, strict=True):
            got = {i for i, _ in self._index.search(query, k)}
            shares.append(len(got & set(exact.tolist())) / max(len(exact), 1))
        return float(np.mean(shares)) if shares else 1.0

    def embedded_ids(self, ids: Sequence[int]) -> list[int]:
        return [i for i in ids if i in self._index]


def _owners(
    conn: Connection, embedding_ids: list[int], hashes: dict[int, str]
) -> dict[int, list[str]]:
    """Live memory ids per embedding id; by the content hashes the search's rescoring read
    (`hashes`) when it read them all, the quantized index's case, else from the table."""
    if not all(emb_id in hashes for emb_id in embedding_ids):
        return emb_sql.memory_ids_for(conn, embedding_ids)
    by_hash = emb_sql.live_ids_by_hash(
        conn, sorted({hashes[e] for e in embedding_ids if hashes[e] is not None}))
    return {e: by_hash[hashes[e]] for e in embedding_ids if hashes[e] in by_hash}
