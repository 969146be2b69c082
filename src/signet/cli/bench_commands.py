"""`signet bench ...`: the benchmarks as commands (quality on LoCoMo and MemAware; speed on a
synthetic corpus). Each creates fresh temporary workspaces and goes through the real remember
and recall paths; see docs/benchmarks.md for recorded figures."""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from signet.bench import cli_start, perf, retrieval
from signet.bench import load as load_bench
from signet.bench.metrics import format_table
from signet.errors import InvalidInput
from signet.providers.llm_registry import LLM_PROVIDERS

LLM_CHOICES = tuple(sorted(LLM_PROVIDERS))

def _setup_threads() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _emit(ctx: click.Context, as_json: bool, data: Any, table: str | None = None) -> None:
    if as_json or (ctx.obj is not None and getattr(ctx.obj, "json", False)):
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(table if table is not None else json.dumps(data, indent=2))


def _progress(message: str) -> None:
    click.echo(message, err=True)


@click.group()
def bench() -> None:
    """Benchmarks: retrieval quality (locomo, memaware) and speed (write, recall, scale, cli)."""


_mode = click.option("--mode", default="all", show_default=True,
                     help="bm25, vector, hybrid, full, a comma list, or all.")
_limit = click.option("--limit", type=int, default=None, help="Only the first N questions.")
_json = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
_no_timings = click.option(
    "--no-timings", is_flag=True,
    help="Leave out latencies and ingest times: two runs of the same code then print the same"
         " bytes (compare a refactor's output with diff).")
_cache = click.option(
    "--cache", "cache", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Folder of the persistent embedding cache (default $SIGNET_BENCH_CACHE, else "
    "./.cache/embeddings).",
)
_no_cache = click.option("--no-cache", is_flag=True, help="Embed everything afresh.")
_rows = click.option(
    "--rows", type=click.Path(dir_okay=False, path_type=Path),
    help="With --inject: write every prompt's candidates with the judge's features and labels"
         " to this JSON file (for `signet bench inject-fit`).")


def _injection(asked: str, hit: str, per: str, where: str) -> Callable[[Any], Any]:
    """--inject, --negatives and --rows, worded for what the benchmark asks."""
    inject = click.option("--inject", is_flag=True, help=(
        f"Also pass every {asked} through the user-prompt-submit hook's code: context hit{hit},"
        f" tokens per injected prompt, precision per {per}; false injection on easy and hard"
        " negatives."))
    negatives = click.option(
        "--negatives", type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help=f"With --inject: the easy negatives, a JSON list of prompts about nothing stored{where}."
             " Default: the bundled bench/negatives.json.")
    return lambda command: inject(negatives(_rows(command)))


_embedder = click.option(
    "--embedder", type=click.Choice(["local", "none"]), default="local", show_default=True,
    help="none: no vectors (keyword recall only; with --inject the hook's judge reads recall's"
    " coverage-only confidence).")


_leads = click.option(
    "--leads", default="", help="Also ask hybrid with each of these lexical leads of the"
    " query-adaptive fusion (a comma list; 0: the fixed weights; X/Y: lexical lead X with"
    " dense lead Y), for `signet bench loo`.")
_save = click.option(
    "--save", "save", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Write every question's ranking per mode and variant to this JSON file (for"
    " `signet bench loo`).")


def _parse_leads(leads: str) -> list[tuple[float, float]]:
    try:
        values = [(float(x.split("/")[0]), float(x.split("/")[1]) if "/" in x else 0.0)
                  for x in leads.split(",") if x.strip()]
    except (ValueError, IndexError) as exc:
        raise click.BadParameter("a comma list of numbers or X/Y pairs",
                                 param_hint="--leads") from exc
    if any(v < 0 for pair in values for v in pair):
        raise click.BadParameter("leads are >= 0", param_hint="--leads")
    return values


_candidates = click.option(
    "--candidates", is_flag=True, help="With --save: also keep each question's candidates and"
    " their features (the default and a dense-heavy hybrid page), for the combiner's fit in"
    " `signet bench loo`.")


def _save_run(path: Path | None, benchmark: str, result: Any) -> None:
    if path is None:
        return
    from signet.bench import loo

    loo.save(path, benchmark, result.questions, result.ranked, result.candidates)


def _comma_ints(text: str, option: str) -> list[int]:
    """The integers of a comma list given to `option` (empty items skipped), or a usage error
    naming the option."""
    try:
        return [int(item) for item in text.split(",") if item.strip()]
    except ValueError as exc:
        raise click.BadParameter("a comma list of integers", param_hint=option) from exc


def _cache_dir(cache: Path | None, no_cache: bool) -> Path | None:
    return None if no_cache else cache or retrieval.default_cache_dir()


# The retrieval benchmarks on either store backend (each group a scratch database on postgres).
_backend = click.option(
    "--backend", type=click.Choice(["sqlite", "postgres"]), default="sqlite", show_default=True,
    help="postgres: each store is a scratch database on the server of --store-url.")
_store_url = click.option(
    "--store-url", default=None, metavar="URL",
    help="With --backend postgres: any database on a server whose role may create databases"
         " (default: $SIGNET_STORE_URL).")


def _bench_store_url(backend: str, store_url: str | None) -> str | None:
    if backend != "postgres":
        return None
    url = store_url or os.environ.get("SIGNET_STORE_URL")
    if not url:
        raise click.BadParameter("--backend postgres needs --store-url or SIGNET_STORE_URL")
    return url


@bench.command()
@click.option("--file", "path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_mode
@_limit
@click.option("--long-queries", "long_queries", is_flag=True,
              help="Each question preceded by the dialogue turns before its first evidence turn "
              "(the conversation so far, as an agent's prompt holds it).")
@click.option("--turns", type=int, default=10, show_default=True,
              help="Dialogue turns before each question with --long-queries.")
@_injection("question", " (an evidence turn injected)", "category",
            ", asked in every conversation's store")
@_embedder
@_cache
@_no_cache
@_backend
@_store_url
@_leads
@_save
@_candidates
@_no_timings
@_json
@click.pass_context
def locomo(
    ctx: click.Context, path: Path | None, mode: str, limit: int | None, long_queries: bool,
    turns: int, inject: bool, negatives: Path | None, rows: Path | None, embedder: str,
    cache: Path | None, no_cache: bool, backend: str, store_url: str | None, leads: str,
    save: Path | None, candidates: bool, no_timings: bool, as_json: bool,
) -> None:
    """LoCoMo: one store per conversation, each turn a memory; Hit@k per category (and, with
    --inject, what the prompt hook injects)."""
    _setup_threads()
    if turns < 1:
        raise click.BadParameter("at least one turn", param_hint="--turns")
    from signet.bench import hard_negatives
    from signet.bench.datasets import load_locomo
    from signet.bench.metrics import locomo_groups

    url = _bench_store_url(backend, store_url)
    injector = None
    if inject:
        _, questions = load_locomo(path or retrieval.bench_data_dir() / "locomo" / "locomo-dev.json")
        hard = hard_negatives.for_locomo(questions, hard_negatives.memaware_requests(
            _other_data("memaware", "questions-dev.json")))
        injector = _injection_bench("locomo", negatives, hard, rows, locomo_groups)
    result = retrieval.run_locomo(
        path, retrieval.parse_modes(mode), limit=limit, progress=_progress,
        cache=_cache_dir(cache, no_cache), long_queries=turns if long_queries else 0,
        after_ask=injector, store_url=url, leads=_parse_leads(leads), candidates=candidates,
        embedder=None if embedder == "none" else "config",
    )
    _save_run(save, "locomo-long" if long_queries else "locomo", result)
    _emit_retrieval(ctx, as_json, result, no_timings, injector, rows)


@bench.command()
@click.option("--sessions", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--questions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_mode
@_limit
@click.option("--hints", is_flag=True,
              help="Run the hints worker after ingest (LLM hints, or vocabulary hints with none).")
@_injection("request", "", "tier", "")
@click.option("--sessions-as-transcripts", "as_transcripts", is_flag=True,
              help="Also import each session as a transcript (summaries, gate, MEMORY.md) and"
                   " compare windows, transcripts and both.")
@_cache
@_no_cache
@_embedder
@_backend
@_store_url
@_leads
@_save
@_candidates
@click.option("--llm", "llm_provider", type=click.Choice(LLM_CHOICES), default=None,
              help="Run the whole write path (extraction, decisions, graph, hints) through this"
                   " provider, one session at a time, its replies cached per session (resumable;"
                   " docs/benchmarks.md says what it costs).")
@click.option("--llm-model", default="", help="With --llm: the model (default: the provider's).")
@click.option("--llm-base-url", default="", help="With --llm: the server URL.")
@click.option("--llm-command", default="",
              help="With --llm: the binary (claude-code, codex, opencode) or argv (command).")
@click.option("--llm-api-key-env", default="", help="With --llm: the variable holding the API key.")
@click.option("--llm-timeout-ms", type=int, default=120_000, show_default=True)
@click.option("--llm-max-calls-per-hour", type=int, default=1_000_000, show_default=True,
              help="With --llm: the provider's rate limit (a subscription's own limit applies"
                   " too).")
@click.option("--llm-cache", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="With --llm: the reply cache (default: ./.cache/llm beside the embeddings'"
                   " cache); <provider>/<model>/<session>.jsonl.")
@click.option("--first-sessions", type=int, default=None,
              help="Only the haystack's first N sessions and the questions about them (a tiny"
                   " run, e.g. to measure the cost of --llm).")
@_no_timings
@_json
@click.pass_context
def memaware(
    ctx: click.Context, sessions: Path | None, questions: Path | None, mode: str,
    limit: int | None, hints: bool, inject: bool, negatives: Path | None, rows: Path | None,
    as_transcripts: bool, embedder: str, cache: Path | None, no_cache: bool, backend: str,
    store_url: str | None, leads: str, save: Path | None, candidates: bool,
    llm_provider: str | None,
    llm_model: str, llm_base_url: str, llm_command: str, llm_api_key_env: str,
    llm_timeout_ms: int, llm_max_calls_per_hour: int, llm_cache: Path | None,
    first_sessions: int | None,
    no_timings: bool, as_json: bool,
) -> None:
    """MemAware: every session into one store; Hit@k per tier (and, with --inject, what the
    prompt hook injects)."""
    _setup_threads()
    url = _bench_store_url(backend, store_url)
    llm = None
    if llm_provider is not None:
        if as_transcripts or hints:
            raise click.BadParameter("--llm runs hints itself; not with --hints or"
                                     " --sessions-as-transcripts", param_hint="--llm")
        llm = _bench_llm(llm_provider, llm_model, llm_base_url, llm_command, llm_api_key_env,
                         llm_timeout_ms, llm_cache, llm_max_calls_per_hour)
    if url is not None and (as_transcripts or hints):
        raise click.BadParameter(
            "--sessions-as-transcripts and --hints run on the sqlite backend only",
            param_hint="--backend")
    if as_transcripts:
        from signet.bench import sessions_bench

        data = sessions_bench.run_memaware_transcripts(
            sessions, questions, retrieval.parse_modes("hybrid" if mode == "all" else mode),
            limit=limit, progress=_progress, embedder=None if embedder == "none" else "config",
        )
        table = format_table(data["results"], data["latency_ms"])
        _emit(ctx, as_json, data, table + "\n" + json.dumps(data["lineage"], indent=2))
        return
    injector = None
    if inject:
        from signet.bench import hard_negatives

        hard = hard_negatives.for_memaware(_other_data("locomo", "locomo-dev.json"))
        injector = _injection_bench("memaware", negatives, {"memaware": hard}, rows)
    result = retrieval.run_memaware(
        sessions, questions, retrieval.parse_modes(mode), limit=limit, progress=_progress,
        hints=hints, after_ask=injector, cache=_cache_dir(cache, no_cache), store_url=url,
        leads=_parse_leads(leads), embedder=None if embedder == "none" else "config",
        candidates=candidates,
        llm=llm, first_sessions=first_sessions,
    )
    if llm is not None:
        result.extra["llm"] = llm.usage()
        llm.close()
    _save_run(save, "memaware", result)
    _emit_retrieval(ctx, as_json, result, no_timings, injector, rows)


@bench.command()
@click.option("--data", "data_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="A coding-project set of that shape (default: the bundled"
              " bench/coding_project.json).")
@_mode
@_rows
@_cache
@_no_cache
@_no_timings
@_json
@click.pass_context
def coding(
    ctx: click.Context, data_file: Path | None, mode: str, rows: Path | None,
    cache: Path | None, no_cache: bool, no_timings: bool, as_json: bool,
) -> None:
    """A coding project's store: Hit@k of its prompts and what the prompt hook injects, with
    near-miss prompts about the same project as hard negatives (and the easy set)."""
    from signet.bench import coding_project

    _setup_threads()
    docs, questions, near = coding_project.load(data_file)
    injector = _injection_bench(
        "coding", None, {coding_project.GROUP: {coding_project.NEAR_MISS: near}}, rows,
        coding_project.form_groups)
    result = retrieval.run(
        docs, questions, coding_project.form_groups(questions), retrieval.parse_modes(mode),
        depth=10, progress=_progress, after_ask=injector, cache=_cache_dir(cache, no_cache))
    _emit_retrieval(ctx, as_json, result, no_timings, injector, rows)


def _emit_retrieval(
    ctx: click.Context, as_json: bool, result: Any, no_timings: bool, injector: Any,
    rows: Path | None,
) -> None:
    """A retrieval run's Hit@k table or JSON; with --inject (`injector` set) also what the
    prompt hook injected, and with --rows its rows written."""
    injected = ""
    if injector is not None:
        result.extra["inject"] = injector.result()
        if rows is not None:
            injector.dump_rows(rows)
        injected = "\n\ninject: " + json.dumps(result.extra["inject"], indent=2)
    _emit(ctx, as_json, result.to_json(timings=not no_timings),
          format_table(result.results, None if no_timings else result.latency_ms) + injected)


def _bench_llm(
    provider: str, model: str, base_url: str, command: str, api_key_env: str, timeout_ms: int,
    cache: Path | None, max_calls_per_hour: int,
) -> Any:
    """The provider the options name, in the per-session reply cache (bench/llm_cache.py)."""
    from signet.bench.llm_cache import SessionCachedLLM
    from signet.config import Config, LlmConfig
    from signet.services.providers import configured_llm

    settings = LlmConfig(provider=provider, model=model,  # type: ignore[arg-type]
                         base_url=base_url, command=tuple(shlex.split(command)), api_key_env=api_key_env,
                         timeout_ms=timeout_ms, max_calls_per_hour=max_calls_per_hour,
                         burst=max(1, min(max_calls_per_hour, 100)))
    inner = configured_llm(Config.default(Path.cwd()).replace(llm=settings))
    if inner is None:
        raise click.BadParameter("--llm none runs no model", param_hint="--llm")
    folder = cache or retrieval.default_cache_dir().parent / "llm"
    return SessionCachedLLM(inner, folder)


def _injection_bench(
    benchmark: str, negatives: Path | None, hard: Any, rows: Path | None, groups: Any = None
) -> Any:
    from importlib import resources

    from signet.bench.injection import InjectionBench, load_negatives

    if negatives is None:
        with resources.as_file(resources.files("signet.bench").joinpath("negatives.json")) as path:
            prompts = load_negatives(path)
    else:
        prompts = load_negatives(negatives)
    bench = InjectionBench(benchmark, easy=prompts, hard=hard, progress=_progress,
                           rows=rows is not None)
    if groups is not None:
        bench.groups = groups
    return bench


def _other_data(folder: str, name: str) -> Path | None:
    """A file of the development data, for hard negatives; None when the data is elsewhere."""
    try:
        path = retrieval.bench_data_dir() / folder / name
    except InvalidInput:
        return None
    return path if path.is_file() else None


@bench.command()
@click.option("--data", "data_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The bench-data folder (holding locomo/ and memaware/). Default:"
                   " $SIGNET_BENCH_DATA, else ../shared/bench-data.")
def baseline(data_dir: Path | None) -> None:
    """Plain BM25 on the whole development data: the tables, then the checks that the loaders
    and metrics reproduce the published baselines (exit 1 when one fails)."""
    from signet.bench import bm25_reference

    root = data_dir or retrieval.bench_data_dir()
    if not root.is_dir():
        raise click.ClickException(f"benchmark data not found at {root}")
    click.echo(bm25_reference.report(root))
    problems = bm25_reference.verify(root)
    for problem in problems:
        click.echo(f"check failed: {problem}", err=True)
    if problems:
        raise SystemExit(1)
    click.echo(f"checks: the whole development data at {root} loads and reproduces the published"
               " BM25 baselines")


@bench.command()
@click.option("--modes", default="bm25,hybrid", show_default=True,
              help="The keyword mode and the vector-using mode to calibrate on.")
@_limit
@_cache
@_no_cache
@_json
@click.pass_context
def confidence(
    ctx: click.Context, modes: str, limit: int | None, cache: Path | None, no_cache: bool,
    as_json: bool,
) -> None:
    """Fit recall's confidence on LoCoMo and MemAware (+ negatives.json) and tabulate the
    floor: gold results dropped, noise removed."""
    from signet.bench import calibration

    _setup_threads()
    chosen = retrieval.parse_modes(modes)
    if len(chosen) != 2:
        raise click.BadParameter("two modes: keyword-only first, then one with vectors")
    data = calibration.run(
        (chosen[0], chosen[1]), limit=limit, cache=_cache_dir(cache, no_cache), progress=_progress
    )
    _emit(ctx, as_json, data, calibration.format_tradeoff(data))


@bench.command("inject-fit")
@click.argument("rows", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_json
@click.pass_context
def inject_fit(ctx: click.Context, rows: tuple[Path, ...], as_json: bool) -> None:
    """Fit the prompt hook's per-memory judge on rows of `bench locomo|memaware --inject
    --rows`, with its floors and k, held out: each benchmark on the other, each LoCoMo
    conversation left out; and the trade-off between context hit and precision."""
    from signet.bench import injection_fit

    data = injection_fit.run(list(rows))
    _emit(ctx, as_json, data, injection_fit.format_fit(data))


@bench.command()
@click.option("--n", "n", type=int, default=10_000, show_default=True)
@click.option("--embedder", type=click.Choice(["none", "local"]), default="none", show_default=True)
@_json
@click.pass_context
def write(ctx: click.Context, n: int, embedder: str, as_json: bool) -> None:
    """Remember N memories one by one: latency p50/p95 and throughput."""
    _setup_threads()
    _emit(ctx, as_json, perf.bench_write(n, embedder=None if embedder == "none" else "config"))


@bench.command()
@click.option("--n", "n", type=int, default=10_000, show_default=True)
@click.option("--keyword", is_flag=True, help="Keyword recall only, no embedder.")
@click.option("--queries", type=int, default=300, show_default=True)
@_json
@click.pass_context
def recall(ctx: click.Context, n: int, keyword: bool, queries: int, as_json: bool) -> None:
    """Recall latency at N memories (keyword only with --keyword, else every mode)."""
    _setup_threads()
    modes = ("keyword",) if keyword else ("keyword", "vector", "hybrid")
    data = perf.bench_recall(
        n, modes, queries=queries, embedder=None if keyword else "config", progress=_progress
    )
    _emit(ctx, as_json, data)


@bench.command()
@click.option("--n", "n", type=int, default=100_000, show_default=True)
@click.option("--queries", type=int, default=300, show_default=True)
@click.option("--entities", type=int, default=None,
              help="Entities of the synthetic knowledge graph (default N/10; 0: no graph), on"
                   " every backend.")
@click.option("--db", "keep", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Build the store in this folder and keep it; a later run with the same folder,"
                   " N, entities and embedder reuses it (skipping ingest), or resumes the"
                   " ingest where a stopped run left it.")
@click.option("--embedder", type=click.Choice(["local", "hash"]), default="local",
              show_default=True,
              help="Vectors of the store: the bundled model, or the hash embedder at 384"
                   " dimensions (a 1M ingest in minutes, not hours); with hash the bundled"
                   " model's query embedding is timed apart on the same queries.")
@click.option("--batch", type=int, default=512, show_default=True,
              help="Memories per remember_many call during the ingest.")
@click.option("--batch-tx", is_flag=True,
              help="One write transaction per batch (each memory still through the write path,"
                   " as a savepoint) instead of one per memory; SQLite's only (postgres writes"
                   " through remember_many, a transaction per memory).")
@click.option("--checkpoints", default="",
              help="A comma list of sizes at which the ingest stops to time every mode (before"
                   " the graph is written), e.g. 100000.")
@click.option("--backend", "backends", default="sqlite", show_default=True,
              help="Store backends, a comma list (sqlite, postgres): several run one after the"
                   " other, each in a process of its own, and are reported side by side.")
@click.option("--store-url", default=None, metavar="URL",
              help="An empty PostgreSQL database for the postgres leg (default:"
                   " $SIGNET_STORE_URL).")
@click.option("--ann-min-vectors", type=click.IntRange(min=0), default=None,
              help="embedding.ann_min_vectors for this run (default: the configured default):"
                   " from this many vectors on, vector search goes through the HNSW graph.")
@click.option("--prefilter-min-vectors", type=click.IntRange(min=0), default=None,
              help="embedding.prefilter_min_vectors for this run (default: the configured"
                   " default): from this many vectors on, sign codes pick the rows the int8"
                   " codes estimate; 0: every row is estimated (exact).")
@_json
@click.pass_context
def scale(
    ctx: click.Context, n: int, queries: int, entities: int | None, keep: Path | None,
    embedder: str, batch: int, batch_tx: bool, checkpoints: str, backends: str,
    store_url: str | None, ann_min_vectors: int | None, prefilter_min_vectors: int | None,
    as_json: bool,
) -> None:
    """Ingest N synthetic memories with local embeddings and a knowledge graph (Zipf
    mentions, aspects, attributes, dependencies); recall p50/p95 per mode, the traversal
    stage's p50/p95 and its overhead (full p95 - hybrid p95), size, RSS; per backend."""
    from signet.bench import scale_backends

    _setup_threads()
    if n < 1 or queries < 1 or batch < 1 or (entities is not None and entities < 0):
        raise click.BadParameter("N, queries and batch must be positive, entities not negative")
    sizes = _comma_ints(checkpoints, "--checkpoints")
    if any(size < 1 or size >= n for size in sizes):
        raise click.BadParameter("sizes between 1 and N - 1", param_hint="--checkpoints")
    chosen = list(dict.fromkeys(b.strip() for b in backends.split(",") if b.strip()))
    if not chosen or set(chosen) - set(scale_backends.BACKENDS):
        raise click.BadParameter("a comma list of sqlite, postgres", param_hint="--backend")
    url = ""
    if "postgres" in chosen:
        url = store_url or os.environ.get(scale_backends.URL_ENV, "")
        if not url:
            raise click.BadParameter("the postgres leg needs --store-url or SIGNET_STORE_URL")
        if keep is not None:
            raise click.BadParameter("a kept store is a SQLite folder: not with postgres",
                                     param_hint="--db")
    if len(chosen) > 1:
        graph = n // 10 if entities is None else entities
        options = ["--n", str(n), "--queries", str(queries), "--entities", str(graph),
                   "--embedder", embedder, "--batch", str(batch), "--checkpoints", checkpoints,
                   *(["--batch-tx"] if batch_tx else []),
                   *([] if ann_min_vectors is None else ["--ann-min-vectors", str(ann_min_vectors)]),
                   *([] if prefilter_min_vectors is None
                     else ["--prefilter-min-vectors", str(prefilter_min_vectors)])]
        try:
            legs = scale_backends.run_legs(options, chosen, url, _progress)
        except scale_backends.LegFailed as exc:
            raise click.ClickException(str(exc)) from exc
        _emit(ctx, as_json, legs, scale_backends.format_legs(legs))
        return
    stored, query_embedder, name = perf.scale_embedders(embedder)
    try:
        data = perf.bench_recall(
            n, ("keyword", "vector", "hybrid", "full"), queries=queries, embedder=stored,
            progress=_progress, entities=n // 10 if entities is None else entities, keep=keep,
            batch=batch, batch_tx=batch_tx, checkpoints=sizes, embedder_name=name,
            query_embedder=query_embedder, store_url=url, ann_min_vectors=ann_min_vectors,
            prefilter_min_vectors=prefilter_min_vectors,
        )
    except perf.KeptStoreError as exc:
        raise click.BadParameter(str(exc), param_hint="--db") from exc
    except perf.NotEmptyStore as exc:
        raise click.BadParameter(str(exc), param_hint="--store-url") from exc
    _emit(ctx, as_json, data, perf.format_recall(data))



@bench.command(name="vector-graph")
@click.option("--db", "folder", required=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A store kept by `signet bench scale --db`.")
@click.option("--sizes", default="", help="A comma list of store sizes (the first N vectors)"
              " measured besides the whole store, e.g. 25000,50000.")
@click.option("--ef", "efs", default="128,256,512", show_default=True,
              help="A comma list of the graph's search widths.")
@click.option("--queries", type=int, default=300, show_default=True)
@_json
@click.pass_context
def vector_graph(
    ctx: click.Context, folder: Path, sizes: str, efs: str, queries: int, as_json: bool
) -> None:
    """The HNSW graph against the exact search on a kept scale store: per size and ef, the
    top-10 overlap with the exact top 10 and the CPU per search of both; the build CPU."""
    from signet.bench import vector_graph as bench_graph

    _setup_threads()
    sized, widths = _comma_ints(sizes, "--sizes"), _comma_ints(efs, "--ef")
    if not (folder / "bench-scale.json").exists():
        raise click.BadParameter("not a store kept by `signet bench scale --db`",
                                 param_hint="--db")
    if queries < 1 or not widths or min(widths + sized + [1]) < 1:
        raise click.BadParameter("positive queries, sizes and search widths")
    data = bench_graph.run(folder, sized, widths, queries, _progress)
    _emit(ctx, as_json, data, bench_graph.format_result(data))


@bench.command()
@click.option("--clients", default="10,50", show_default=True,
              help="Concurrent clients, a comma list: one run (and one daemon) per count.")
@click.option("--seconds", type=float, default=20.0, show_default=True, help="Length of each run.")
@click.option("--embedder", type=click.Choice(load_bench.EMBEDDERS), default="none",
              show_default=True, help="The daemon's embedding provider.")
@click.option("--fault", type=click.Choice(load_bench.FAULTS), default="none", show_default=True,
              help="hang: run each count twice, without a provider and with one that never"
                   " answers, and compare the p95 of remember and list.")
@click.option("--write-path", type=click.Choice(["deferred", "inline"]), default="deferred",
              show_default=True, help="The daemon's embedding.write_path.")
@click.option("--rate", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Open loop: requests arrive at this many per second (Poisson), at most"
                   " --clients in flight; latency counts from each arrival. Default: a closed"
                   " loop (each client sends again when answered).")
@click.option("--daemons", type=click.IntRange(min=1), default=1, show_default=True,
              help="Daemon processes sharing one database (needs --backend postgres).")
@click.option("--backend", type=click.Choice(["sqlite", "postgres"]), default="sqlite",
              show_default=True, help="postgres: the daemons' store is --store-url.")
@click.option("--store-url", default=None, metavar="URL",
              help="An empty PostgreSQL database for --backend postgres (default:"
                   " $SIGNET_STORE_URL).")
@_json
@click.pass_context
def load(
    ctx: click.Context, clients: str, seconds: float, embedder: str, fault: str,
    write_path: str, rate: float | None, daemons: int, backend: str, store_url: str | None,
    as_json: bool,
) -> None:
    """Mixed remember/recall from N concurrent clients against a real daemon: throughput,
    p50/p95 per operation, errors, lost writes, the daemon's peak RSS, CPU per request (daemon
    and clients), the embed jobs left waiting."""
    _setup_threads()
    counts = _comma_ints(clients, "--clients")
    if not counts or min(counts) < 1 or seconds <= 0:
        raise click.BadParameter("positive client counts and seconds", param_hint="--clients")
    url = _bench_store_url(backend, store_url)
    if url is not None and fault != "none":
        raise click.BadParameter("--fault runs on the sqlite backend only", param_hint="--fault")
    if url is None and daemons > 1:
        raise click.BadParameter("several daemons need a shared store: --backend postgres",
                                 param_hint="--daemons")
    result = load_bench.run_load(
        counts, seconds, embedder=embedder, progress=_progress, fault=fault,
        write_path=write_path, rate=rate, daemons=daemons, store_url=url,
    )
    _emit(ctx, as_json, result, load_bench.format_load(result))


@bench.command()
@click.option("--probes", type=int, default=30, show_default=True, help="Probes per run.")
@click.option("--clients", default="0,50", show_default=True,
              help="Background clients, a comma list: one run (and one daemon) per count.")
@click.option("--seconds", type=float, default=20.0, show_default=True,
              help="Length of the background load (probes stop with it).")
@_json
@click.pass_context
def freshness(ctx: click.Context, probes: int, clients: str, seconds: float, as_json: bool) -> None:
    """Time from remember to semantic findability with the bundled model (deferred
    embedding), idle and under `bench load` traffic; remember latency; lexical recall of
    memories not embedded yet."""
    from signet.bench import freshness as fresh_bench

    _setup_threads()
    counts = _comma_ints(clients, "--clients")
    if probes < 1 or not counts or min(counts) < 0 or seconds <= 0:
        raise click.BadParameter("positive probes and seconds, client counts >= 0")
    result = fresh_bench.run_freshness(probes, counts, seconds, progress=_progress)
    _emit(ctx, as_json, result, fresh_bench.format_freshness(result))


@bench.command(name="embed-ingest")
@click.option("--n", "n", type=int, default=3000, show_default=True)
@click.option("--write-path", type=click.Choice(["deferred", "inline"]), default="deferred",
              show_default=True, help="deferred: write, the embed worker beside; inline: embed"
              " each batch before writing it.")
@click.option("--model", type=click.Choice(["all-MiniLM-L6-v2-int8-dynamic", "all-MiniLM-L6-v2-int8"]),
              default=None, help="One of the bundled models (default: the configured default,"
              " int8 products); all-MiniLM-L6-v2-int8 runs the products in fp32.")
@click.option("--processes", type=click.IntRange(min=0), default=None,
              help="The embed worker's child processes (embedding.worker_processes; 0: the"
              " model in the worker's thread). Default: the configured default.")
@_json
@click.pass_context
def embed_ingest(
    ctx: click.Context, n: int, write_path: str, model: str | None, processes: int | None,
    as_json: bool,
) -> None:
    """Ingest N synthetic memories with the bundled model until every vector is stored:
    memories/s, CPU ms per memory, and the model alone."""
    from signet.bench import writes

    _setup_threads()
    if n < 1:
        raise click.BadParameter("N must be positive", param_hint="--n")
    _emit(ctx, as_json, writes.bench_ingest(n, write_path, progress=_progress, model=model or "",
                                                  processes=-1 if processes is None else processes))


@bench.command(name="remember")
@click.option("--n", "n", type=int, default=100_000, show_default=True,
              help="Memories in the store before timing.")
@click.option("--calls", type=int, default=300, show_default=True)
@_json
@click.pass_context
def remember_bench(ctx: click.Context, n: int, calls: int, as_json: bool) -> None:
    """remember's latency (p50/p95) at N memories on the deferred write path."""
    from signet.bench import writes

    _setup_threads()
    if n < 0 or calls < 1:
        raise click.BadParameter("N must not be negative, calls must be positive")
    _emit(ctx, as_json, writes.bench_remember(n, calls, progress=_progress))


@bench.command()
@click.option("--sessions", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--n", "n", type=int, default=None, help="Only the first N sessions.")
@click.option("--embedder", type=click.Choice(["none", "local"]), default="local", show_default=True,
              help="Embedder of the summary memories.")
@_json
@click.pass_context
def sessions(
    ctx: click.Context, sessions: Path | None, n: int | None, embedder: str, as_json: bool
) -> None:
    """Transcript import (sessions/s, messages/s, idempotent re-import) and summary throughput
    without an LLM, over the MemAware haystack."""
    _setup_threads()
    from signet.bench import sessions_bench

    data = sessions_bench.run_sessions(
        sessions, n=n, embedder=None if embedder == "none" else "config", progress=_progress
    )
    _emit(ctx, as_json, data)


@bench.command(name="store")
@click.option("--n", "n", type=click.IntRange(min=1), default=10_000, show_default=True)
@click.option("--queries", type=click.IntRange(min=1), default=200, show_default=True)
@click.option("--backend", "backends", default="sqlite,postgres", show_default=True,
              help="Backends to run, a comma list (sqlite, postgres), in one run side by side.")
@click.option("--store-url", default=None, metavar="URL",
              help="An empty PostgreSQL database for the postgres leg (default: $SIGNET_STORE_URL).")
@_json
@click.pass_context
def store_bench(
    ctx: click.Context, n: int, queries: int, backends: str, store_url: str | None, as_json: bool
) -> None:
    """The core store operations per backend: ingest/s, lexical and vector search p50/p95,
    size, and the top-10 overlap between backends (real local embeddings, not timed)."""
    _setup_threads()
    from signet.bench import store_bench as bench_store

    url = store_url or os.environ.get("SIGNET_STORE_URL", "")
    chosen = [b.strip() for b in backends.split(",") if b.strip()]
    result = bench_store.run_store_bench(n, queries=queries, backends=chosen, url=url,
                                         progress=_progress)
    _emit(ctx, as_json, result, bench_store.format_store(result))


@bench.command(name="cli")
@click.option("--runs", type=click.IntRange(min=1), default=20, show_default=True,
              help="Processes timed per command.")
@click.option("--embedder", type=click.Choice(cli_start.EMBEDDERS), default="local",
              show_default=True, help="The daemon's embedding provider.")
@_json
@click.pass_context
def cli_bench(ctx: click.Context, runs: int, embedder: str, as_json: bool) -> None:
    """`signet --version` and `signet recall` against a running daemon, each a whole process:
    wall time p50/p95 against the targets (150 ms, 300 ms)."""
    _setup_threads()
    result = cli_start.run_cli(runs, embedder=embedder, progress=_progress)
    _emit(ctx, as_json, result, cli_start.format_cli(result))


@bench.command(name="dashboard")
@click.option("--memories", type=click.IntRange(min=0), default=200, show_default=True,
              help="Memories in the daemon the first load lists from.")
@click.option("--points", default="10000,100000", show_default=True,
              help="Map renderer sizes, a comma list.")
@click.option("--runs", type=click.IntRange(min=1), default=5, show_default=True,
              help="Cold and warm first loads timed (the median is shown).")
@click.option("--map-memories", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also time the map page end to end on this many real memories (0: skip).")
@click.option("--chromium", default="/usr/bin/chromium", show_default=True,
              help="The Chromium binary playwright drives.")
@_json
@click.pass_context
def dashboard_bench(
    ctx: click.Context, memories: int, points: str, runs: int, map_memories: int, chromium: str,
    as_json: bool,
) -> None:
    """The dashboard in headless Chromium: first load (bytes, ms; cold and warm) and the
    embeddings map's frame time at 10k and 100k points."""
    from signet.bench import dashboard as dashboard_bench_module

    _setup_threads()
    sizes = _comma_ints(points, "--points")
    result = dashboard_bench_module.run_dashboard(
        memories, sizes, runs, map_memories=map_memories, chromium=chromium, progress=_progress
    )
    _emit(ctx, as_json, result, dashboard_bench_module.format_dashboard(result))


@bench.command()
@click.option("--n", "n", type=int, default=10_000, show_default=True, help="Memories in the store.")
@click.option("--runs", type=int, default=50, show_default=True, help="Hook processes timed.")
@click.option("--embedder", type=click.Choice(["local", "none"]), default="local", show_default=True)
@_json
@click.pass_context
def hooks(ctx: click.Context, n: int, runs: int, embedder: str, as_json: bool) -> None:
    """Wall time of `signet hook user-prompt-submit` as a subprocess against a running daemon
    with N memories: p50/p95 (target p95 <= 150 ms), and with the daemon stopped."""
    from signet.bench.hooks_latency import format_hooks, run_hooks

    _setup_threads()
    if n < 1 or runs < 1:
        raise click.BadParameter("N and runs must be positive")
    result = run_hooks(n, runs, embedder=embedder, progress=_progress)
    _emit(ctx, as_json, result, format_hooks(result))


@bench.command(name="mcp-start")
@click.option("--runs", type=int, default=20, show_default=True, help="MCP sessions timed.")
@_json
@click.pass_context
def mcp_start(ctx: click.Context, runs: int, as_json: bool) -> None:
    """From spawning `signet mcp` to its answered initialize and tools/list, through a real
    stdio MCP client, with the daemon running and without (target p95 <= 300 ms)."""
    from signet.bench.mcp_start import format_mcp_start, run_mcp_start

    if runs < 1:
        raise click.BadParameter("runs must be positive")
    result = run_mcp_start(runs, progress=_progress)
    _emit(ctx, as_json, result, format_mcp_start(result))


@bench.command(name="daemon-start")
@click.option("--runs", type=int, default=10, show_default=True, help="Daemon starts timed.")
@click.option("--memories", type=int, default=1000, show_default=True,
              help="Memories in the store the daemon opens.")
@click.option("--embedder", default="local", show_default=True,
              help="embedding.provider of the workspace (local: the bundled model).")
@_json
@click.pass_context
def daemon_start(ctx: click.Context, runs: int, memories: int, embedder: str,
                 as_json: bool) -> None:
    """From spawning the daemon to /health, the first /api/status and the first recall, with
    the daemon's CPU time at each (target /health p95 <= 2 s)."""
    from signet.bench.daemon_start import format_daemon_start, run_daemon_start

    if runs < 1 or memories < 0:
        raise click.BadParameter("runs must be positive and memories not negative")
    result = run_daemon_start(runs, memories, embedder=embedder, progress=_progress)
    _emit(ctx, as_json, result, format_daemon_start(result))


@bench.command(name="entities")
@click.option("--data", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, help="The labelled set (default: tests/data/entities/labelled.json).")
@_json
@click.pass_context
def entities_bench(ctx: click.Context, data: Path | None, as_json: bool) -> None:
    """Entity and relation precision/recall of the no-LLM extractor on a hand-labelled set."""
    from signet.bench.entities_bench import DEFAULT_DATA, format_entities, run_entities

    path = data or DEFAULT_DATA
    if not path.is_file():
        raise click.BadParameter(f"{path} not found; run from a clone or pass --data")
    result = run_entities(path)
    _emit(ctx, as_json, result, format_entities(result))


COMMANDS = [bench]


@bench.command(name="ingest")
@click.option("--files", type=int, default=1000, show_default=True, help="Markdown notes made.")
@click.option("--embedder", type=click.Choice(["none", "local"]), default="local", show_default=True)
@_json
@click.pass_context
def ingest_bench(ctx: click.Context, files: int, embedder: str, as_json: bool) -> None:
    """Document ingest of a generated folder of markdown notes: documents/s and chunks/s."""
    from signet.bench.documents_bench import bench_ingest

    _setup_threads()
    _emit(ctx, as_json, bench_ingest(files, embedder=None if embedder == "none" else "config",
                                     progress=_progress))


@bench.command(name="projection")
@click.option("--sizes", default="10000,100000", show_default=True, help="Point counts, a comma list.")
@click.option("--method", type=click.Choice(["auto", "pca", "umap"]), default="auto",
              show_default=True, help="auto: PCA, and UMAP too when the viz extra is installed.")
@_json
@click.pass_context
def projection_bench(ctx: click.Context, sizes: str, method: str, as_json: bool) -> None:
    """The embedding projection's compute time (PCA; UMAP too with the viz extra)."""
    from signet.bench.documents_bench import bench_projection

    _setup_threads()
    counts = _comma_ints(sizes, "--sizes")
    methods = None if method == "auto" else [method]
    _emit(ctx, as_json, bench_projection(counts, methods=methods, progress=_progress))


@bench.command(name="writer")
@click.option("--calls", type=int, default=200, show_default=True, help="Foreground remembers timed.")
@click.option("--workers", type=int, default=4, show_default=True,
              help="Background threads writing back to back.")
@click.option("--mode", "modes", multiple=True, type=click.Choice(["queue", "fifo", "lock"]),
              help="Writer design(s) to time (default: all three).")
@_json
@click.pass_context
def writer_bench(
    ctx: click.Context, calls: int, workers: int, modes: tuple[str, ...], as_json: bool
) -> None:
    """A request's remember latency beside busy background writers: the write queue with
    lanes, the queue as one FIFO, and the plain lock it replaced."""
    from signet.bench import write_queue

    _setup_threads()
    result = write_queue.bench_writer(calls, workers, modes or write_queue.MODES,
                                      progress=_progress)
    _emit(ctx, as_json, result, write_queue.format_writer(result))


@bench.command()
@click.argument("runs", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_json
@click.pass_context
def loo(ctx: click.Context, runs: tuple[Path, ...], as_json: bool) -> None:
    """Leave-one-out for the query-adaptive fusion over runs saved with --leads and --save:
    one LoCoMo conversation out, one benchmark out, the long-query form. Runs saved with
    --candidates also judge the learned combiner so (bench/combiner_fit.py)."""
    from signet.bench import combiner_fit
    from signet.bench import loo as loo_report

    loaded = [loo_report.load(path) for path in runs]
    found = loo_report.reports(loaded)
    text = loo_report.format_reports(found)
    if any(run.candidates for run in loaded):
        combined = combiner_fit.reports(loaded)
        found += combined
        text += "\n" + combiner_fit.format_reports(combined)
    _emit(ctx, as_json, found, text)
