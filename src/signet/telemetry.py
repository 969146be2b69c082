"""Local operational telemetry: latency histograms, usage counters and an error ring buffer, in this
process's memory only. Requests are keyed by route template, so ids cannot multiply the keys; LLM
calls by provider and model (`record_llm`). Only names and numbers are kept, never content or
error messages, so the diagnostics permission may see it all. Histograms have fixed log-spaced
buckets (8 per decade, 0.1 ms to 100 s): constant memory, quantiles exact to within one bucket.
"""

from __future__ import annotations

import bisect
import itertools
import math
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["BUCKETS_MS", "Buckets", "Histogram", "Telemetry"]

# Upper bounds of the buckets, in ms: 0.1 * 10^(i/8) for i in 0..48 (0.1 ms .. 100 s).
BUCKETS_MS: tuple[float, ...] = tuple(0.1 * 10 ** (i / 8) for i in range(49))
MAX_OPERATIONS = 500  # distinct keys kept; later ones are folded into "other"


class _Usage(Protocol):
    """What the LLM providers report per call (signet.providers.llm.Completion)."""

    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: float
    model: str
    provider: str


class Histogram:
    """Counts per fixed bucket (the last one open-ended), plus count, sum and max."""

    __slots__ = ("counts", "count", "total_ms", "max_ms")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS_MS) + 1)
        self.count = 0
        self.total_ms = 0.0
        self.max_ms = 0.0

    def observe(self, ms: float) -> None:
        ms = max(0.0, float(ms))
        self.counts[bisect.bisect_left(BUCKETS_MS, ms)] += 1
        self.count += 1
        self.total_ms += ms
        self.max_ms = max(self.max_ms, ms)

    def quantile(self, q: float) -> float:
        """The q-quantile (0-1) in ms, interpolated inside its bucket; 0 when empty."""
        if self.count == 0:
            return 0.0
        rank = q * self.count
        seen = 0
        for index, n in enumerate(self.counts):
            if n and seen + n >= rank:
                low, high = _bounds(index, self.max_ms)
                fraction = (rank - seen) / n
                value = low * (high / low) ** fraction if low > 0 else high * fraction
                return round(min(value, self.max_ms), 3)
            seen += n
        return round(self.max_ms, 3)

    def summary(self) -> dict[str, float | int]:
        return {
            "count": self.count,
            "p50_ms": self.quantile(0.50),
            "p95_ms": self.quantile(0.95),
            "p99_ms": self.quantile(0.99),
            "mean_ms": round(self.total_ms / self.count, 3) if self.count else 0.0,
            "max_ms": round(self.max_ms, 3),
        }


def _bounds(index: int, max_ms: float) -> tuple[float, float]:
    low = BUCKETS_MS[index - 1] if index > 0 else BUCKETS_MS[0] / 10 ** (1 / 8)
    high = BUCKETS_MS[index] if index < len(BUCKETS_MS) else max(max_ms, BUCKETS_MS[-1])
    return low, high


@dataclass(frozen=True, slots=True)
class Buckets:
    """One operation's latency histogram, cumulative per bound of `BUCKETS_MS` (ms)."""

    cumulative: tuple[int, ...]
    count: int
    total_ms: float


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """One failed operation: where, which status and code; never the message or the body."""

    at: float
    operation: str
    status: int
    code: str
    request_id: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": _iso(self.at), "operation": self.operation, "status": self.status,
            "code": self.code, "request_id": self.request_id,
        }


class Telemetry:
    """Thread-safe: request threads, the event loop and the worker thread all write to it."""

    def __init__(self, *, enabled: bool = True, error_ring_size: int = 200) -> None:
        self.enabled = enabled
        self.started_at = time.time()
        self._lock = threading.Lock()
        self._latency: dict[str, Histogram] = {}
        self._counters: dict[str, int] = {}
        self._errors: deque[ErrorEvent] = deque(maxlen=max(1, error_ring_size))
        self._errors_total = 0

    # --- feeding -------------------------------------------------------------------------

    def observe(self, operation: str, ms: float) -> None:
        """One latency observation of `operation`, also counted as a call of it."""
        if not self.enabled:
            return
        with self._lock:
            key = self._key(operation, self._latency)
            self._latency.setdefault(key, Histogram()).observe(ms)

    def count(self, name: str, n: int = 1) -> None:
        if not self.enabled or n == 0:
            return
        with self._lock:
            key = self._key(name, self._counters)
            self._counters[key] = self._counters.get(key, 0) + int(n)

    def error(self, operation: str, status: int, code: str, request_id: str | None = None) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._errors.append(ErrorEvent(time.time(), operation, status, code, request_id))
            self._errors_total += 1

    def record_request(
        self, operation: str, status: int, ms: float, code: str | None, request_id: str | None
    ) -> None:
        """What the daemon's middleware reports for each request."""
        self.observe(operation, ms)
        self.count("requests")
        if status >= 400:
            self.count(f"responses.{status // 100}xx")
            self.error(operation, status, code or f"http_{status}", request_id)

    def record_llm(self, usage: _Usage) -> None:
        """The providers' usage sink: calls, tokens and latency per provider and model."""
        prefix = f"llm.{usage.provider}.{usage.model or '-'}"
        self.observe(f"llm {usage.provider}:{usage.model or '-'}", usage.latency_ms)
        self.count(f"{prefix}.calls")
        self.count(f"{prefix}.prompt_tokens", usage.prompt_tokens or 0)
        self.count(f"{prefix}.completion_tokens", usage.completion_tokens or 0)

    # --- reading ---------------------------------------------------------------------------

    def latency(self) -> dict[str, dict[str, float | int]]:
        with self._lock:
            return {op: h.summary() for op, h in sorted(self._latency.items())}

    def usage(self) -> dict[str, int]:
        with self._lock:
            return dict(sorted(self._counters.items()))

    def errors(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The most recent errors, newest first."""
        with self._lock:
            events = list(self._errors)[::-1]
        return [e.to_dict() for e in events[: limit if limit is not None else len(events)]]

    def buckets(self) -> dict[str, Buckets]:
        """Each operation's histogram as it is kept: the count at or below each bound of
        `BUCKETS_MS` (cumulative, the open last bucket left out), the count and the sum (ms)."""
        with self._lock:
            kept = sorted(self._latency.items())
            return {op: Buckets(tuple(itertools.accumulate(h.counts[:-1])), h.count, h.total_ms)
                    for op, h in kept}

    def errors_total(self) -> int:
        """Every error recorded since start (the ring keeps only the newest)."""
        with self._lock:
            return self._errors_total

    def summary(self) -> dict[str, Any]:
        """A compact view for `signet status`: totals and the slowest operations by p95."""
        latency = self.latency()
        slowest = sorted(
            ((op, s) for op, s in latency.items() if not op.startswith("llm ")),
            key=lambda item: item[1]["p95_ms"], reverse=True,
        )[:5]
        usage = self.usage()
        with self._lock:
            errors_total = self._errors_total
        return {
            "enabled": self.enabled,
            "since": _iso(self.started_at),
            "requests": usage.get("requests", 0),
            "errors": errors_total,
            "llm_calls": sum(v for k, v in usage.items() if k.endswith(".calls")),
            "llm_tokens": sum(v for k, v in usage.items() if k.endswith("_tokens")),
            "slowest": [{"operation": op, "p95_ms": s["p95_ms"], "count": s["count"]}
                        for op, s in slowest],
        }

    def _key(self, name: str, table: dict[str, Any]) -> str:
        # A bounded number of keys: telemetry must not grow with whatever callers send.
        if name in table or len(table) < MAX_OPERATIONS:
            return name
        return "other"


def _iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment)) + f".{int(moment % 1 * 1000):03d}Z"


def percentile_of(values: list[float], q: float) -> float:
    """Exact nearest-rank percentile of a list (for tests and benchmarks comparing histograms)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]
