"""`signet bench scale --backend sqlite,postgres`: the scale bench on each backend, one child
process after the other, so each keeps its own peak RSS, CPU and cache warmth and the two never
share the cores. The PostgreSQL URL goes to the children in SIGNET_STORE_URL, never on a command
line `ps` shows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from typing import IO, Any

BACKENDS = ("sqlite", "postgres")
URL_ENV = "SIGNET_STORE_URL"


class LegFailed(RuntimeError):
    """A backend's leg exited with an error (its stderr has been passed through)."""


def run_legs(
    options: Sequence[str], backends: Sequence[str], url: str,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """Run `signet bench scale <options> --backend B --json` for each backend in turn; the
    legs' results under their backend's name."""
    result: dict[str, Any] = {"backends": list(backends)}
    for backend in backends:
        env = {k: v for k, v in os.environ.items() if k != URL_ENV}
        if backend == "postgres":
            env[URL_ENV] = url
        command = [sys.executable, "-m", "signet", "bench", "scale", *options,
                   "--backend", backend, "--json"]
        progress(f"[{backend}] {' '.join(command[1:])}")
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) as child:
            assert child.stdout is not None and child.stderr is not None
            relay = threading.Thread(target=_relay, args=(child.stderr, backend, progress),
                                     daemon=True)
            relay.start()
            out = child.stdout.read()
            code = child.wait()
            relay.join()
        if code != 0:
            raise LegFailed(f"the {backend} leg failed (exit {code}); its error is above")
        result[backend] = json.loads(out)
    return result


def _relay(stream: IO[str], backend: str, progress: Callable[[str], None]) -> None:
    for line in stream:
        progress(f"[{backend}] {line.rstrip()}")


def _modes(leg: dict[str, Any]) -> list[str]:
    return [k[len("recall_"):-len("_ms")] for k in leg
            if k.startswith("recall_") and k.endswith("_ms") and not k.endswith("_cpu_ms")]


def _cell(value: Any) -> str:
    if isinstance(value, dict) and "p50" in value:
        return f"{value['p50']:.2f} / {value['p95']:.2f}"
    if isinstance(value, dict) and "mean" in value:
        return f"{value['mean']:.2f}"
    return "-" if value is None else str(value)


def format_legs(result: dict[str, Any]) -> str:
    """The legs as one table: a row per figure, a column per backend."""
    legs = [result[b] for b in result["backends"]]
    first = legs[0]
    rows: list[tuple[str, list[Any]]] = [
        ("ingest memories/s", [leg["ingest_per_second"] for leg in legs]),
        ("ingest seconds", [leg.get("ingest_seconds") for leg in legs]),
        ("write (transaction)", [f"{leg.get('write')} ({leg.get('transaction')})"
                                 for leg in legs]),
        ("ingest CPU ms/memory, process", [leg.get("ingest_cpu_ms_per_memory") for leg in legs]),
        ("ingest CPU ms/memory, server", [leg.get("ingest_server_cpu_ms_per_memory")
                                          for leg in legs]),
    ]
    for mode in _modes(first):
        rows.append((f"recall {mode} wall p50 / p95 ms",
                     [leg.get(f"recall_{mode}_ms") for leg in legs]))
        rows.append((f"recall {mode} CPU p50 / p95 ms",
                     [leg.get(f"recall_{mode}_cpu_ms") for leg in legs]))
        rows.append((f"recall {mode} server CPU mean ms",
                     [leg.get(f"recall_{mode}_server_cpu_ms") for leg in legs]))
    rows += [
        ("database MB", [leg.get("db_mb") for leg in legs]),
        ("RSS after recall MB", [leg.get("rss_after_recall_mb") for leg in legs]),
        ("peak RSS MB", [leg.get("peak_rss_mb") for leg in legs]),
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"n = {first['n']}, {first['queries']} queries"
             + (f"; stored vectors {first['embedder']}" if "embedder" in first else ""),
             " " * width + "  " + "  ".join(f"{b:>24}" for b in result["backends"])]
    lines += [f"{name:<{width}}  " + "  ".join(f"{_cell(v):>24}" for v in values)
              for name, values in rows]
    if "query_embedding_cpu_ms" in first:
        lines.append(f"add the bundled model's query embedding (CPU p50 / p95 ms):"
                     f" {_cell(first['query_embedding_cpu_ms'])}")
    for backend, leg in zip(result["backends"], legs, strict=True):
        for size, figures in leg.get("checkpoints", {}).items():
            modes = ", ".join(f"{m} {figures[f'recall_{m}_ms']['p95']:.1f}"
                              for m in _modes(figures))
            lines.append(f"{backend} at {size}: recall p95 ms {modes}; database"
                         f" {figures['db_mb']} MB")
    return "\n".join(lines)
