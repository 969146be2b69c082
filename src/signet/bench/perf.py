"""Speed benchmarks on a synthetic corpus: remember latency, recall latency per mode, ingest
throughput, database size and peak memory.

The corpus is generated from a seeded RNG: sentences built from a Zipf-distributed vocabulary
of real words and made-up project names, each unique, 10-25 words long — close enough to agent
memories for the index to do realistic work. Queries are drawn from the same vocabulary, half
of them paraphrasing a stored sentence, half random word bags.

With `entities` > 0 (the scale bench: n/10) the corpus comes with a knowledge graph
(bench/graph_corpus.py): each memory names and mentions one to three Zipf-chosen entities, and
half the queries name an entity, so `full` recall has focal entities to walk from. The result
then adds the graph's counts, the traversal stage's own p50/p95 (`timings_ms["traversal"]`),
how many queries traversal answered, and `traversal_overhead_ms` = full p95 - hybrid p95.
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
from signet.config import Config
from signet.providers.embedder import Embedder
from signet.types import RecallQuery, RecallResponse

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


def _config(workspace: Path, hints: bool = False) -> Config:
    config = Config.default(workspace)
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
) -> dict[str, Any]:
    """Ingest `n` memories in batches (with a graph of `entities` entities when > 0), then
    time recall per mode; size and peak RSS. With `keep` the store is built in that folder
    and kept, and a later run with the same folder, `n` and `entities` reuses it (ingest
    figures from the run that built it)."""
    corpus = synthetic_corpus(n)
    graph = graph_corpus.plan_graph(n, entities) if entities > 0 else None
    if graph is not None:
        corpus = [text + graph.suffix(i) for i, text in enumerate(corpus)]
    asked = synthetic_queries(corpus, queries)
    if graph is not None:
        asked = with_entity_names(asked, graph)
    result: dict[str, Any] = {"n": n, "queries": len(asked)}
    with contextlib.ExitStack() as stack:
        folder = keep or Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="signet-bench-", dir=workdir)))
        config = _config(folder)
        built = _kept_store(folder, n, entities)
        with SignetApp.open(config, embedder=embedder) as app:
            if built is None:
                built = _build(app, corpus, graph, progress)
                if keep is not None:
                    (folder / _KEPT).write_text(json.dumps({"n": n, "entities": entities, **built}))
            else:
                result["reused"] = str(folder)
            result.update(built)
            result.update(_time_modes(app, modes, asked))
            result.update(_time_maintenance(app))
            app.store.checkpoint()
        result["db_mb"] = round(config.db_path.stat().st_size / 2**20, 1)
    if "recall_full_ms" in result and "recall_hybrid_ms" in result:
        overhead = result["recall_full_ms"]["p95"] - result["recall_hybrid_ms"]["p95"]
        result["traversal_overhead_ms"] = round(overhead, 3)
    result["peak_rss_mb"] = round(_peak_rss_mb(), 1)
    return result


_KEPT = "bench-scale.json"


class KeptStoreError(ValueError):
    """The --db folder holds something other than a store this benchmark built for these
    parameters."""


def _kept_store(folder: Path, n: int, entities: int) -> dict[str, Any] | None:
    """The ingest figures of a store a previous run built in `folder` for the same `n` and
    `entities` (so experiments skip the half hour of ingest), or None when there is none yet.
    A folder holding anything else is refused rather than mixed into the measurement."""
    marker = folder / _KEPT
    if marker.exists():
        kept = json.loads(marker.read_text())
        if kept.get("n") == n and kept.get("entities") == entities:
            return {k: v for k, v in kept.items() if k not in ("n", "entities")}
        raise KeptStoreError(f"{folder} holds a store built for n={kept.get('n')}, "
                         f"entities={kept.get('entities')}, not n={n}, entities={entities}")
    if folder.exists() and any(folder.iterdir()):
        raise KeptStoreError(f"{folder} is not empty and holds no benchmark store ({_KEPT})")
    return None


def _build(
    app: SignetApp,
    corpus: Sequence[str],
    graph: graph_corpus.SyntheticGraph | None,
    progress: Callable[[str], None] | None,
) -> dict[str, Any]:
    """Ingest the corpus in batches of 512, then write the graph; the ingest figures."""
    n = len(corpus)
    started = time.perf_counter()
    ids: list[str] = []
    for start in range(0, n, 512):
        batch = app.remember_many([{"content": t} for t in corpus[start : start + 512]])
        ids.extend(r.id for r in batch)
        if progress and (start // 512) % 20 == 0:
            progress(f"ingested {min(start + 512, n)}/{n}")
    built: dict[str, Any] = {"ingest_per_second": round(n / (time.perf_counter() - started), 1)}
    if graph is not None:
        if progress:
            progress(f"writing the graph: {len(graph.names)} entities")
        built["graph"] = graph_corpus.write_graph(app.store, graph, ids)
        built["entities"] = built["graph"]["entities"]
    return built


def _time_modes(app: SignetApp, modes: Sequence[str], asked: Sequence[str]) -> dict[str, Any]:
    """Each query in every mode in turn, so the modes share the machine's moods (another
    job's load, the page cache) and their difference is the modes' own."""
    for mode in modes:
        app.recall(RecallQuery(asked[0], mode=mode, touch=False))  # type: ignore[arg-type]  # warm up
    latencies: dict[str, list[float]] = {mode: [] for mode in modes}
    cpu: dict[str, list[float]] = {mode: [] for mode in modes}
    responses: dict[str, list[RecallResponse]] = {mode: [] for mode in modes}
    for query in asked:
        for mode in modes:
            mark, spent = time.perf_counter(), time.process_time()
            response = app.recall(RecallQuery(query, mode=mode, touch=False))  # type: ignore[arg-type]
            latencies[mode].append((time.perf_counter() - mark) * 1000)
            # The process's CPU (every thread: the query embedding runs on the batcher's):
            # the figure other jobs on a shared machine do not inflate.
            cpu[mode].append((time.process_time() - spent) * 1000)
            responses[mode].append(response)
    out: dict[str, Any] = {f"recall_{mode}_ms": _stats(latencies[mode]) for mode in modes}
    out.update({f"recall_{mode}_cpu_ms": _stats(cpu[mode]) for mode in modes})
    if "full" in modes:
        out.update(_graph_stages(responses["full"]))
    return out


def _time_maintenance(app: SignetApp) -> dict[str, Any]:
    """One maintenance run in observe mode (every health check, read only) on the full store:
    what the scheduled worker costs a live daemon each `autonomous.intervalMs`."""
    mark = time.perf_counter()
    report = app.run_maintenance(execute=False, trigger="bench")
    return {"maintenance_observe_ms": round((time.perf_counter() - mark) * 1000, 1),
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
    return out


def format_recall(data: dict[str, Any]) -> str:
    """The readable form of `bench_recall`'s result."""
    lines = [f"n = {data['n']}, ingest {data['ingest_per_second']} memories/s"]
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
            lines.append(
                f"recall {mode:<8} p50 {value['p50']:>8.2f} ms  p95 {value['p95']:>8.2f} ms{spent}"
            )
    for stage in ("traversal", "graph_boost"):
        if f"{stage}_ms" in data:
            value = data[f"{stage}_ms"]
            lines.append(
                f"  {stage} stage (full) p50 {value['p50']:.2f} ms  p95 {value['p95']:.2f} ms"
            )
    if "traversal_answered" in data:
        lines.append(
            f"  queries with traversal results: {data['traversal_answered']}/{data['queries']}"
        )
    if "traversal_overhead_ms" in data:
        overhead = data["traversal_overhead_ms"]
        lines.append(f"traversal overhead (full p95 - hybrid p95): {overhead:.2f} ms")
    if "maintenance_observe_ms" in data:
        found = ", ".join(data["maintenance_problems"]) or "none"
        lines.append(f"maintenance run (observe, every check): {data['maintenance_observe_ms']} ms;"
                     f" problems: {found}")
    lines.append(f"database {data['db_mb']} MB, peak RSS {data['peak_rss_mb']} MB")
    return "\n".join(lines)
