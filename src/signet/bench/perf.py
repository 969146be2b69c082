"""Speed benchmarks on a seeded synthetic corpus (unique 10-25 word sentences from a Zipf
vocabulary; half the queries paraphrase one): remember and recall latency per mode, ingest
throughput, database size and peak memory. With `entities` a knowledge graph comes along
(bench/graph_corpus.py). At a million memories the scale bench may store the `hash` embedder's
384-dimension vectors and time the bundled model's query embedding apart (`query_embedding_ms`);
`checkpoints` time every mode again as the ingest passes those sizes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import random
import resource
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from signet.app import SignetApp
from signet.bench import graph_corpus
from signet.bench.metrics import percentile
from signet.bench.server_cpu import postgres_cpu
from signet.config import Config, StoreConfig
from signet.providers.embedder import Embedder, make_embedder
from signet.types import Actor, MemoryFilters, RecallQuery, RecallResponse

_WORDS = """user prefers dark mode editor project deploy server database postgres redis cache
queue worker api endpoint token auth login password rotate monthly weekly daily meeting standup
review design doc spec test suite coverage flaky build pipeline release version branch merge
rebase commit bug fix crash latency memory leak profile trace metric alert pager incident
customer invoice billing payment refund subscription plan tier trial discount coupon store
shopping grocery car mustang filter oil tire insurance flight hotel trip vacation beach mountain
hiking running marathon gym diet coffee tea breakfast lunch dinner recipe pasta curry sushi
birthday anniversary gift sister brother mother father friend colleague manager team hire
interview salary budget quarter roadmap milestone deadline launch feature flag rollout
migration schema index query backup restore replica cluster node kubernetes docker container
python rust typescript golang java kotlin swift react vue svelte css html browser mobile
android ios laptop keyboard monitor headphones music guitar piano concert movie book novel
podcast garden plants dog cat vet school course exam degree thesis paper conference talk""".split()
_PROJECTS = [f"{a}{b}" for a in ("Nova", "Atlas", "Orion", "Vega", "Lyra", "Cobalt", "Indigo")
             for b in ("DB", "API", "Sync", "Hub", "Core", "Edge")]


_SYLLABLES = ("ka", "lo", "mi", "ren", "tas", "vo", "quin", "dor", "pel", "sar", "ti", "mun",
              "gra", "bel", "zo", "fen", "ric", "hal", "nor", "ves")


def _vocabulary(size: int, rng: random.Random) -> list[str]:
    """Real topic words first (the frequent ones), then made-up words to a realistic size."""
    words = list(dict.fromkeys(_WORDS))
    seen = set(words)
    while len(words) < size:
        word = "".join(rng.choices(_SYLLABLES, k=rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def synthetic_corpus(n: int, seed: int = 7, vocabulary: int = 20_000) -> list[str]:
    """`n` unique sentences over a Zipf(1.0) vocabulary of `vocabulary` words, as in English
    text, so posting lists have realistic lengths."""
    rng = random.Random(seed)
    words = _vocabulary(vocabulary, rng)
    # Cumulative weights once: `choices(weights=...)` sums all 20,000 again on every call
    # (minutes at 100k sentences); the draws, and so the corpus, are the same.
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(words))))
    texts = []
    for i in range(n):
        chosen = rng.choices(words, cum_weights=cumulative, k=rng.randint(9, 24))
        project = rng.choice(_PROJECTS)
        texts.append(f"{project} note {i}: " + " ".join(chosen) + f" ({rng.randint(1, 9999)})")
    return texts


def synthetic_queries(corpus: Sequence[str], count: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    queries = []
    for i in range(count):
        if i % 2 == 0:
            words = rng.choice(corpus).split()[3:]
            queries.append(" ".join(rng.sample(words, min(5, len(words)))))
        else:
            queries.append(" ".join(rng.sample(_WORDS, 4)) + "?")
    return queries


def _stats(values: Sequence[float]) -> dict[str, float]:
    return {"p50": round(percentile(values, 50), 3), "p95": round(percentile(values, 95), 3)}


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _config(
    workspace: Path, hints: bool = False, store_url: str = "", ann_min_vectors: int | None = None,
    prefilter_min_vectors: int | None = None,
) -> Config:
    config = Config.default(workspace)
    embedding = config.embedding
    if ann_min_vectors is not None:
        embedding = dataclasses.replace(embedding, ann_min_vectors=ann_min_vectors)
    if prefilter_min_vectors is not None:
        embedding = dataclasses.replace(embedding, prefilter_min_vectors=prefilter_min_vectors)
    config = dataclasses.replace(config, embedding=embedding)
    if store_url:  # the shared state in that PostgreSQL database, the workspace for the rest
        config = dataclasses.replace(config, store=StoreConfig(backend="postgres", url=store_url))
    # No query-vector cache: every mode asks each query in turn, and each recall's time must
    # include its own query embedding, as a fresh question's does. Ingest embeds as it
    # writes (write_path inline); the deferred path's ingest is `signet bench embed-ingest`.
    return dataclasses.replace(
        config, pipeline=dataclasses.replace(config.pipeline, enabled=False),
        search=dataclasses.replace(config.search, query_cache_size=0),
        embedding=dataclasses.replace(config.embedding, write_path="inline"),
    )


def bench_write(
    n: int, *, embedder: Embedder | None | str = None, workdir: Path | None = None
) -> dict[str, Any]:
    """Remember `n` memories one at a time; latency per call and throughput."""
    corpus = synthetic_corpus(n)
    with tempfile.TemporaryDirectory(prefix="signet-bench-", dir=workdir) as tmp:
        with SignetApp.open(_config(Path(tmp)), embedder=embedder) as app:
            latencies = []
            started = time.perf_counter()
            for text in corpus:
                mark = time.perf_counter()
                app.remember(text)
                latencies.append((time.perf_counter() - mark) * 1000)
            elapsed = time.perf_counter() - started
    return {"n": n, "remember_ms": _stats(latencies), "per_second": round(n / elapsed, 1)}


def scale_embedders(name: str) -> tuple[Embedder | str, Embedder | None, str]:
    """For the scale bench's `--embedder`: the embedder that fills the store, the one whose
    query embedding is timed apart (the bundled model, when the store's vectors are hash
    vectors), and the name recorded with the figures ("" for the configured bundled model)."""
    if name == "local":
        return "config", None, ""
    if name == "hash":
        stored = make_embedder("hash", dimensions=384)
        assert stored is not None
        return stored, make_embedder("local"), stored.model
    raise ValueError(f"unknown scale embedder {name!r} (local, hash)")


def scale_inputs(
    n: int, entities: int, queries: int
) -> tuple[list[str], graph_corpus.SyntheticGraph | None, list[str]]:
    """The scale bench's corpus of `n` memories (with their entities' names when `entities` >
    0), its knowledge graph's plan, and its `queries`."""
    corpus = synthetic_corpus(n)
    graph = graph_corpus.plan_graph(n, entities) if entities > 0 else None
    if graph is not None:
        corpus = [text + graph.suffix(i) for i, text in enumerate(corpus)]
    asked = synthetic_queries(corpus, queries)
    if graph is not None:
        asked = with_entity_names(asked, graph)
    return corpus, graph, asked


def with_entity_names(
    queries: Sequence[str], graph: graph_corpus.SyntheticGraph, seed: int = 19
) -> list[str]:
    """Half the queries (both kinds alike) name an entity, so traversal has focal entities."""
    rng = random.Random(seed)
    return [f"{q} {graph.draw(rng)}" if (i // 2) % 2 == 0 else q for i, q in enumerate(queries)]


def bench_recall(
    n: int,
    modes: Sequence[str],
    *,
    queries: int = 300,
    embedder: Embedder | None | str = None,
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    entities: int = 0,
    keep: Path | None = None,
    batch: int = 512,
    checkpoints: Sequence[int] = (),
    batch_tx: bool = False,
    embedder_name: str = "",
    query_embedder: Embedder | None = None,
    store_url: str = "",
    ann_min_vectors: int | None = None,
    prefilter_min_vectors: int | None = None,
) -> dict[str, Any]:
    """Ingest `n` memories in batches of `batch` (with `entities` graph entities), then time recall
    per mode, size and peak RSS. `keep` builds the store in that folder for reuse by a later run
    with the same parameters; `store_url` uses an empty PostgreSQL database and measures the
    server's CPU too."""
    corpus, graph, asked = scale_inputs(n, entities, queries)
    result: dict[str, Any] = {"n": n, "queries": len(asked),
                              "backend": "postgres" if store_url else "sqlite"}
    if ann_min_vectors is not None:
        result["ann_min_vectors"] = ann_min_vectors
    if prefilter_min_vectors is not None:
        result["prefilter_min_vectors"] = prefilter_min_vectors
    if store_url and keep is not None:
        raise ValueError("on postgres the scale bench keeps no store")
    if embedder_name:
        result["embedder"] = embedder_name
    identity = {"n": n, "entities": entities, "embedder": embedder_name or "local"}
    with contextlib.ExitStack() as stack:
        folder = keep or Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="signet-bench-", dir=workdir)))
        config = _config(folder, store_url=store_url, ann_min_vectors=ann_min_vectors,
                         prefilter_min_vectors=prefilter_min_vectors)
        built = _kept_store(folder, identity)
        journal = _Journal(folder, identity) if keep is not None and built is None else None
        with SignetApp.open(config, embedder=embedder) as app:
            server = postgres_cpu(app) if store_url else None
            if store_url:
                _check_empty(app)
            if built is None:
                plan = _Plan(modes, len(asked), batch, sorted(c for c in checkpoints if c < n),
                             batch_tx, server)
                built = _build(app, corpus, graph, plan, progress, journal)
                if journal is not None:
                    (folder / _KEPT).write_text(json.dumps({**identity, **built}))
                    journal.finish()
            else:
                result["reused"] = str(folder)
            result.update(built)
            result.update(_graph_wait(app, progress))
            if progress:
                progress(f"timing recall: {len(asked)} queries x {', '.join(modes)}")
            timed = _time_modes(app, modes, asked, server)
            result.update(timed)
            if app.vectors is not None and (app.vectors.approximate or app.vectors.prefiltered):
                result["vector_search"] = "graph" if app.vectors.approximate else "prefilter"
                result["vector_top10_overlap"] = _graph_overlap(app, asked)
            if progress:  # on stderr at once: the maintenance run at 1M may take long
                progress(f"recall at {n}: {json.dumps(timed)}")
                progress("one maintenance run (observe)")
            result.update(_time_maintenance(app))
            result["rss_after_recall_mb"] = _current_rss_mb()
            result["db_mb"] = _db_mb(app)
    if query_embedder is not None:
        result.update(time_query_embedding(query_embedder, asked))
    if "recall_full_ms" in result and "recall_hybrid_ms" in result:
        overhead = result["recall_full_ms"]["p95"] - result["recall_hybrid_ms"]["p95"]
        result["traversal_overhead_ms"] = round(overhead, 3)
    result["peak_rss_mb"] = round(_peak_rss_mb(), 1)
    return result


_KEPT = "bench-scale.json"
# A kept store's ingest so far: the ids written (one a line, in corpus order) and the meter's
# figures, so a stopped run resumes where it stopped instead of starting again.
_PARTIAL = "bench-scale.partial.json"
_IDS = "bench-scale.ids"


class _Journal:
    """The progress of a kept store's ingest, written after every batch (ids to `_IDS`, totals to
    `_PARTIAL`). A resumed run starts after the recorded ids; a batch committed but not recorded
    is written again and deduplicated by the store."""

    def __init__(self, folder: Path, identity: dict[str, Any]) -> None:
        self.folder, self.identity = folder, identity
        folder.mkdir(parents=True, exist_ok=True)
        ids_file = folder / _IDS
        self.ids = ids_file.read_text().split() if ids_file.exists() else []
        partial = folder / _PARTIAL
        self.state: dict[str, Any] = (
            json.loads(partial.read_text()) if partial.exists() and self.ids else {}
        )
        if not partial.exists():  # before the store: a run stopped at once still resumes
            partial.write_text(json.dumps({**identity, "done": 0}))

    def record(self, new_ids: Sequence[str], meter: _Meter, at: dict[str, Any]) -> None:
        """After a batch: `new_ids`, already appended to `self.ids` by the caller."""
        with (self.folder / _IDS).open("a") as out:
            out.write("".join(f"{i}\n" for i in new_ids))
        state = {**self.identity, "done": len(self.ids),
                 "seconds": meter.seconds, "cpu_seconds": meter.cpu_seconds,
                 "server_seconds": meter.server_seconds, "checkpoints": at}
        tmp = self.folder / (_PARTIAL + ".tmp")
        tmp.write_text(json.dumps(state))
        tmp.replace(self.folder / _PARTIAL)

    def finish(self) -> None:
        for name in (_PARTIAL, _IDS):
            (self.folder / name).unlink(missing_ok=True)


class KeptStoreError(ValueError):
    """The --db folder holds something other than a store this benchmark built for these
    parameters."""


def _kept_store(folder: Path, identity: dict[str, Any]) -> dict[str, Any] | None:
    """The ingest figures of a store built in `folder` for the same `n`, `entities` and embedder, or
    None. A folder holding anything else is refused rather than mixed into the measurement; a
    marker without an embedder counts as the bundled model's."""
    marker = folder / _KEPT
    partial = folder / _PARTIAL
    for path in (marker, partial):
        if not path.exists():
            continue
        kept = {"embedder": "local", **json.loads(path.read_text())}
        if all(kept.get(key) == value for key, value in identity.items()):
            if path is partial:
                return None  # an ingest stopped part way: `_build` resumes it
            return {k: v for k, v in kept.items() if k not in identity}
        held = ", ".join(f"{key}={kept.get(key)}" for key in identity)
        wanted = ", ".join(f"{key}={value}" for key, value in identity.items())
        raise KeptStoreError(f"{folder} holds a store built for {held}, not {wanted}")
    if folder.exists() and any(folder.iterdir()):
        raise KeptStoreError(f"{folder} is not empty and holds no benchmark store ({_KEPT})")
    return None


@dataclasses.dataclass(frozen=True)
class _Plan:
    """How `_build` ingests: batch size, and the sizes at which it stops to time recall."""

    modes: Sequence[str]
    queries: int
    batch: int
    checkpoints: Sequence[int]
    # One write transaction per batch instead of per memory (each memory still goes through
    # the same write path, as a savepoint): a third less CPU per memory at 5k, the commits'
    # page writes being most of the difference. Vectors then reach the index at the next
    # search's sync, which reads them back from the table. SQLite only (`_remember`).
    batch_tx: bool = False
    # The PostgreSQL server's CPU seconds (bench/server_cpu.py), None on SQLite.
    server: Callable[[], float] | None = None


def _build(
    app: SignetApp,
    corpus: Sequence[str],
    graph: graph_corpus.SyntheticGraph | None,
    plan: _Plan,
    progress: Callable[[str], None] | None,
    journal: _Journal | None = None,
) -> dict[str, Any]:
    """Ingest the corpus in batches, timing recall at each checkpoint on the way, then write
    the graph; the ingest figures (the checkpoints' time is not ingest time). With `journal`
    (a kept store) the progress is recorded after each batch and a stopped ingest resumes."""
    n = len(corpus)
    ids: list[str] = journal.ids if journal else []  # the journal's own list, extended here
    at: dict[str, Any] = dict(journal.state.get("checkpoints", {})) if journal else {}
    pending = [c for c in plan.checkpoints if c > len(ids)]
    meter = _Meter(n, progress, plan.server)
    if journal and journal.state:
        meter.seconds = float(journal.state["seconds"])
        meter.cpu_seconds = float(journal.state["cpu_seconds"])
        meter.server_seconds = float(journal.state.get("server_seconds", 0.0))
        if progress:
            progress(f"resuming the ingest after {len(ids)} memories")
    write = _writer(app, plan.batch_tx)
    for start in range(len(ids), n, plan.batch):
        written = write(corpus[start : start + plan.batch])
        ids.extend(written)
        meter.done(len(ids))
        while pending and len(ids) >= pending[0]:
            size = pending.pop(0)
            with meter.paused():
                at[str(len(ids))] = _checkpoint(app, corpus[: len(ids)], plan, meter)
            if progress:
                progress(f"checkpoint {size}: {json.dumps(at[str(len(ids))])}")
        if journal:
            journal.record(written, meter, at)
    built: dict[str, Any] = {
        "ingest_per_second": round(n / meter.seconds, 1), "ingest_seconds": round(meter.seconds),
        "batch": plan.batch, "write": write.__name__,
        "transaction": "per batch" if write.__name__ == "write_prepared" else "per memory",
        **meter.cpu(n),
    }
    if at:
        built["checkpoints"] = at
    if graph is not None:
        if progress:
            progress(f"writing the graph: {len(graph.names)} entities")
        built["graph"] = graph_corpus.write_graph(app.graph.store, graph, ids)
        built["entities"] = built["graph"]["entities"]
    return built


def _writer(app: SignetApp, batch_tx: bool) -> Callable[[Sequence[str]], list[str]]:
    """How a batch of texts is remembered: through `remember_many` (a transaction per memory),
    or prepared (validated, normalised, embedded: no transaction open) and then written in one
    SQLite transaction (`batch_tx`; PostgreSQL has no writer transaction to widen). The
    function's name is recorded with the figures."""

    def write_prepared(texts: Sequence[str]) -> list[str]:
        prepared = app.memory.prepare_memories([{"content": t} for t in texts], actor=Actor())
        with app.store.write_tx():
            return [app.memory.write_prepared(p).id for p in prepared]

    def remember_many(texts: Sequence[str]) -> list[str]:
        return [r.id for r in app.remember_many([{"content": t} for t in texts])]

    # A batch in one transaction is the one writer's (a file store); a shared database takes
    # each memory in a transaction of its own.
    if batch_tx and app.backend.file() is not None:
        return write_prepared
    return remember_many


def _check_empty(app: SignetApp) -> None:
    """A shared database must be empty: memories already there would be timed as the corpus."""
    held = app.list(MemoryFilters(include_deleted=True), limit=1).total
    if held:
        raise NotEmptyStore(f"the scale bench needs an empty database; this one holds {held}"
                            " memories")


class NotEmptyStore(ValueError):
    """The PostgreSQL database given to the scale bench already holds memories."""


def _db_mb(app: SignetApp) -> float:
    """The store's size: the SQLite file after a checkpoint (the WAL folded back), or the
    PostgreSQL database's (`pg_database_size`: tables, indexes, TOAST; not the server's WAL)."""
    return round(app.backend.size_bytes() / 2**20, 1)


class _Meter:
    """Ingest time without the checkpoints' recall timing, wall and CPU (the process's, and the
    PostgreSQL server's when `server` reads it), and progress with a rate and an ETA on stderr
    every 30 seconds."""

    def __init__(self, total: int, progress: Callable[[str], None] | None,
                 server: Callable[[], float] | None = None) -> None:
        self.total, self.progress, self.server = total, progress, server
        self.seconds = self.cpu_seconds = self.server_seconds = 0.0
        self._since = time.perf_counter()
        self._cpu_since = time.process_time()
        self._server_since = server() if server else 0.0
        self._told = self._since

    def done(self, count: int) -> None:
        now, cpu = time.perf_counter(), time.process_time()
        self.seconds += now - self._since
        self.cpu_seconds += cpu - self._cpu_since
        self._since, self._cpu_since = now, cpu
        if self.server:
            spent = self.server()
            self.server_seconds += spent - self._server_since
            self._server_since = spent
        if self.progress and (now - self._told >= 30 or count == self.total):
            self._told = now
            rate = count / self.seconds if self.seconds else 0.0
            eta = (self.total - count) / rate if rate else 0.0
            self.progress(f"ingested {count}/{self.total}: {rate:.1f}/s, "
                          f"{self.seconds / 60:.1f} min so far, ETA {eta / 60:.1f} min")

    @contextlib.contextmanager
    def paused(self) -> Any:
        yield
        self._since, self._cpu_since = time.perf_counter(), time.process_time()
        if self.server:
            self._server_since = self.server()

    def cpu(self, count: int) -> dict[str, float]:
        """CPU ms per memory ingested so far: the process's, and the server's."""
        out = {"ingest_cpu_ms_per_memory": round(self.cpu_seconds * 1000 / count, 3)}
        if self.server:
            out["ingest_server_cpu_ms_per_memory"] = round(
                self.server_seconds * 1000 / count, 3)
        return out


def _checkpoint(
    app: SignetApp, ingested: Sequence[str], plan: _Plan, meter: _Meter
) -> dict[str, Any]:
    """Recall timed per mode on the store as ingested so far (queries drawn from what it
    holds, no entity names: the graph comes after the ingest), its size and the RSS."""
    seconds = meter.seconds
    out: dict[str, Any] = {"ingest_seconds": round(seconds),
                           "ingest_per_second": round(len(ingested) / seconds, 1),
                           **meter.cpu(len(ingested))}
    out.update(_graph_wait(app, None))
    out.update(_time_modes(app, plan.modes, synthetic_queries(ingested, plan.queries),
                           plan.server))
    out["db_mb"] = _db_mb(app)
    out["rss_mb"] = _current_rss_mb()
    out["peak_rss_mb"] = round(_peak_rss_mb(), 1)
    return out


def _current_rss_mb() -> float:
    """The resident set now (Linux /proc; the peak where that is missing)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return round(_peak_rss_mb(), 1)
    line = next((x for x in status.splitlines() if x.startswith("VmRSS:")), None)
    return round(int(line.split()[1]) / 1024, 1) if line else round(_peak_rss_mb(), 1)


def time_query_embedding(embedder: Embedder, queries: Sequence[str]) -> dict[str, Any]:
    """The embedder's time to embed each query alone (what a recall's query embedding costs
    when the store's vectors came from another embedder), wall and CPU."""
    embedder.embed([queries[0]])  # warm up: the first call loads the session
    wall: list[float] = []
    cpu: list[float] = []
    for query in queries:
        mark, spent = time.perf_counter(), time.process_time()
        embedder.embed([query])
        wall.append((time.perf_counter() - mark) * 1000)
        cpu.append((time.process_time() - spent) * 1000)
    return {"query_embedder": embedder.model, "query_embedding_ms": _stats(wall),
            "query_embedding_cpu_ms": _stats(cpu)}


def _time_modes(
    app: SignetApp, modes: Sequence[str], asked: Sequence[str],
    server: Callable[[], float] | None = None,
) -> dict[str, Any]:
    """Each query in every mode in turn, so the modes share the machine's moods (another
    job's load, the page cache) and their difference is the modes' own. With `server` (a
    PostgreSQL server's CPU clock) each mode's mean server CPU per query as well."""
    for mode in modes:
        app.recall(RecallQuery(asked[0], mode=mode, touch=False))  # type: ignore[arg-type]  # warm up
    latencies: dict[str, list[float]] = {mode: [] for mode in modes}
    cpu: dict[str, list[float]] = {mode: [] for mode in modes}
    responses: dict[str, list[RecallResponse]] = {mode: [] for mode in modes}
    served = dict.fromkeys(modes, 0.0)
    for query in asked:
        for mode in modes:
            mark, spent = time.perf_counter(), time.process_time()
            before = server() if server else 0.0
            response = app.recall(RecallQuery(query, mode=mode, touch=False))  # type: ignore[arg-type]
            latencies[mode].append((time.perf_counter() - mark) * 1000)
            # The process's CPU (every thread: the query embedding runs on the batcher's):
            # the figure other jobs on a shared machine do not inflate.
            cpu[mode].append((time.process_time() - spent) * 1000)
            if server:
                served[mode] += server() - before
            responses[mode].append(response)
    out: dict[str, Any] = {f"recall_{mode}_ms": _stats(latencies[mode]) for mode in modes}
    out.update({f"recall_{mode}_cpu_ms": _stats(cpu[mode]) for mode in modes})
    if server:  # ticks of 10 ms: a mean over the queries, no percentiles (server_cpu.py)
        out.update({f"recall_{mode}_server_cpu_ms": {"mean": round(
            served[mode] * 1000 / len(asked), 3)} for mode in modes})
    if "full" in modes:
        out.update(_graph_stages(responses["full"]))
    return out


def _graph_wait(app: SignetApp, progress: Callable[[str], None] | None) -> dict[str, Any]:
    """Wait for the HNSW graph the store's size asks for (made on another thread, searches
    exact meanwhile), so the timed searches go through it: how it was made, wall and the
    process's CPU (all threads). Nothing when the store is below the threshold."""
    vectors = app.vectors
    if vectors is None or vectors.ann_min_vectors <= 0:
        return {}
    mark, cpu = time.perf_counter(), time.process_time()
    if progress:
        progress("waiting for the vector graph (read back or built)")
    if not vectors.wait_for_graph(app.store.reader()):
        return {}
    return {"vector_graph": {**vectors.last_catch_up,
                             "wait_s": round(time.perf_counter() - mark, 2),
                             "wait_cpu_s": round(time.process_time() - cpu, 2)}}


def _graph_overlap(app: SignetApp, asked: Sequence[str], k: int = 10) -> float:
    """The mean share of the exact top k that the approximate search's top k holds (the HNSW
    graph's or the sign-code prefilter's), over the benchmark's queries (recall/vectors.py
    `overlap_with_exact`)."""
    vectors, embedder = app.vectors, app.embedder
    assert vectors is not None and embedder is not None
    queries = embedder.embed(list(asked))
    return round(vectors.overlap_with_exact(app.store.reader(), queries, k), 4)


def _time_maintenance(app: SignetApp) -> dict[str, Any]:
    """One maintenance run in observe mode (every health check, read only) on the full store:
    what the scheduled worker costs a live daemon each `autonomous.intervalMs`."""
    mark, cpu = time.perf_counter(), time.process_time()
    report = app.run_maintenance(execute=False, trigger="bench")
    return {"maintenance_observe_ms": round((time.perf_counter() - mark) * 1000, 1),
            "maintenance_observe_cpu_ms": round((time.process_time() - cpu) * 1000, 1),
            "maintenance_problems": report["problems"]}


def _graph_stages(responses: Sequence[RecallResponse]) -> dict[str, Any]:
    """The graph channels' own time in `full` recall, and how many queries traversal answered."""
    out: dict[str, Any] = {}
    for stage in ("traversal", "graph_boost"):
        spent = [r.timings_ms[stage] for r in responses if stage in r.timings_ms]
        if spent:
            out[f"{stage}_ms"] = _stats(spent)
    out["traversal_answered"] = sum(
        any(h.evidence.traversal is not None for h in r.hits) for r in responses
    )
    out["full_stages_ms"] = _stages(responses)
    return out


def _stages(responses: Sequence[RecallResponse]) -> dict[str, dict[str, float]]:
    """Every stage's wall time (`meta.timings`) over the queries that ran it, and how many did:
    where a recall's time goes, and so what grows with the store."""
    names = dict.fromkeys(name for r in responses for name in r.timings_ms if name != "total")
    out: dict[str, dict[str, float]] = {}
    for name in names:
        spent = [r.timings_ms[name] for r in responses if name in r.timings_ms]
        out[name] = {**_stats(spent), "runs": len(spent)}
    return out


def format_recall(data: dict[str, Any]) -> str:
    """The readable form of `bench_recall`'s result."""
    lines = [f"n = {data['n']}" + (f" on {data['backend']}" if "backend" in data else "")
             + f", ingest {data['ingest_per_second']} memories/s"
             + (f" ({data['ingest_seconds']} s)" if "ingest_seconds" in data else "")]
    if "ingest_cpu_ms_per_memory" in data:
        server = data.get("ingest_server_cpu_ms_per_memory")
        lines.append(f"ingest CPU per memory: {data['ingest_cpu_ms_per_memory']} ms (this"
                     " process)" + ("" if server is None else f", {server} ms (the PostgreSQL"
                                    " server)") + f"; write {data.get('write', '-')},"
                     f" a transaction {data.get('transaction', '-')}")
    if "embedder" in data:
        lines.append(f"stored vectors: {data['embedder']} (not the bundled model); recall's"
                     " query embedding is that embedder's")
    if "query_embedding_ms" in data:
        wall, cpu = data["query_embedding_ms"], data["query_embedding_cpu_ms"]
        lines.append(f"query embedding, {data['query_embedder']} alone (add to each mode): "
                     f"p50 {wall['p50']:.2f} ms  p95 {wall['p95']:.2f} ms  "
                     f"(CPU p50 {cpu['p50']:.2f}, p95 {cpu['p95']:.2f} ms)")
    for size, figures in data.get("checkpoints", {}).items():
        modes = ", ".join(
            f"{key[len('recall_'):-len('_ms')]} {value['p95']:.1f}"
            for key, value in figures.items()
            if key.startswith("recall_") and key.endswith("_ms") and not key.endswith("_cpu_ms")
        )
        lines.append(f"at {size}: recall p95 ms {modes}; database {figures['db_mb']} MB,"
                     f" RSS {figures['rss_mb']} MB")
    graph = data.get("graph")
    if graph:
        lines.append(
            "graph: " + ", ".join(f"{k} {v}" for k, v in graph.items() if k != "build_seconds")
            + f" (written in {graph['build_seconds']} s)"
        )
    for key, value in data.items():
        if key.startswith("recall_") and key.endswith("_ms") and not key.endswith("_cpu_ms"):
            mode = key[len("recall_") : -len("_ms")]
            cpu = data.get(f"recall_{mode}_cpu_ms")
            spent = f"  (CPU p50 {cpu['p50']:.2f}, p95 {cpu['p95']:.2f} ms)" if cpu else ""
            served = data.get(f"recall_{mode}_server_cpu_ms")
            spent += f" + server CPU mean {served['mean']:.2f} ms" if served else ""
            lines.append(
                f"recall {mode:<8} p50 {value['p50']:>8.2f} ms  p95 {value['p95']:>8.2f} ms{spent}"
            )
    for stage in ("traversal", "graph_boost"):
        if f"{stage}_ms" in data:
            value = data[f"{stage}_ms"]
            lines.append(
                f"  {stage} stage (full) p50 {value['p50']:.2f} ms  p95 {value['p95']:.2f} ms"
            )
    if "full_stages_ms" in data:
        stages = ", ".join(f"{name} {v['p50']:.1f}/{v['p95']:.1f}"
                           for name, v in data["full_stages_ms"].items())
        lines.append(f"  stages (full, wall p50/p95 ms): {stages}")
    if "traversal_answered" in data:
        lines.append(
            f"  queries with traversal results: {data['traversal_answered']}/{data['queries']}"
        )
    if "traversal_overhead_ms" in data:
        overhead = data["traversal_overhead_ms"]
        lines.append(f"traversal overhead (full p95 - hybrid p95): {overhead:.2f} ms")
    if data.get("maintenance_observe_ms") is None and data.get("maintenance_problems"):
        lines.append(f"maintenance run: not measured ({data['maintenance_problems'][0]})")
    elif "maintenance_observe_ms" in data:
        found = ", ".join(data["maintenance_problems"]) or "none"
        cpu = data.get("maintenance_observe_cpu_ms")
        lines.append(f"maintenance run (observe, every check): {data['maintenance_observe_ms']} ms"
                     + (f" (CPU {cpu} ms)" if cpu is not None else "") + f"; problems: {found}")
    if "vector_top10_overlap" in data:
        through = {"graph": "the HNSW graph", "prefilter": "the sign-code prefilter"}
        lines.append(f"vector search through {through[data.get('vector_search', 'graph')]}:"
                     f" top-10 overlap with the exact search {data['vector_top10_overlap']}")
    if "vector_graph" in data:
        made = data["vector_graph"]
        lines.append(f"vector graph {'read back' if made['read_back'] else 'built'}"
                     f" (+{made['added']} -{made['removed']} rows) before the timing:"
                     f" {made['wait_s']} s (CPU {made['wait_cpu_s']} s)")
    lines.append(f"database {data['db_mb']} MB, peak RSS {data['peak_rss_mb']} MB")
    return "\n".join(lines)
