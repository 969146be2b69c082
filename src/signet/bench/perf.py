"""Speed benchmarks on a synthetic corpus: remember latency, recall latency per mode, ingest
throughput, database size and peak memory.

The corpus is generated from a seeded RNG: sentences built from a Zipf-distributed vocabulary
of real words and made-up project names, each unique, 10-25 words long — close enough to agent
memories for the index to do realistic work. Queries are drawn from the same vocabulary, half
of them paraphrasing a stored sentence, half random word bags.
"""

from __future__ import annotations

import dataclasses
import random
import resource
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from signet.app import SignetApp
from signet.bench.metrics import percentile
from signet.config import Config
from signet.providers.embedder import Embedder
from signet.types import RecallQuery

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
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    texts = []
    for i in range(n):
        chosen = rng.choices(words, weights=weights, k=rng.randint(9, 24))
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
    return dataclasses.replace(config, pipeline=dataclasses.replace(config.pipeline, enabled=False))


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


def bench_recall(
    n: int,
    modes: Sequence[str],
    *,
    queries: int = 300,
    embedder: Embedder | None | str = None,
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Ingest `n` memories in batches, then time recall per mode; size and peak RSS."""
    corpus = synthetic_corpus(n)
    asked = synthetic_queries(corpus, queries)
    result: dict[str, Any] = {"n": n}
    with tempfile.TemporaryDirectory(prefix="signet-bench-", dir=workdir) as tmp:
        config = _config(Path(tmp))
        with SignetApp.open(config, embedder=embedder) as app:
            started = time.perf_counter()
            for start in range(0, n, 512):
                app.remember_many([{"content": t} for t in corpus[start : start + 512]])
                if progress and (start // 512) % 20 == 0:
                    progress(f"ingested {min(start + 512, n)}/{n}")
            elapsed = time.perf_counter() - started
            result["ingest_per_second"] = round(n / elapsed, 1)
            for mode in modes:
                app.recall(RecallQuery(asked[0], mode=mode, touch=False))  # warm the index
                latencies = []
                for query in asked:
                    mark = time.perf_counter()
                    app.recall(RecallQuery(query, mode=mode, touch=False))  # type: ignore[arg-type]
                    latencies.append((time.perf_counter() - mark) * 1000)
                result[f"recall_{mode}_ms"] = _stats(latencies)
            app.store.checkpoint()
        result["db_mb"] = round(config.db_path.stat().st_size / 2**20, 1)
    result["peak_rss_mb"] = round(_peak_rss_mb(), 1)
    return result
