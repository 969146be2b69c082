"""`GET /metrics`: the daemon's telemetry (signet/telemetry.py) in Prometheus' text format.

Names and numbers, never content. The figures count every agent and project, so it needs
`diagnostics` and an unscoped token. prometheus-client is imported on the first scrape, not at
start. Beside the telemetry: the SQLite writer's turns per lane, and the seconds they waited for
the one writer and held it (`signet_write_*`), what a write's latency is made of under load.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from signet.daemon.auth import require, unscoped
from signet.daemon.dependencies import App
from signet.daemon.schemas import ErrorOut
from signet.errors import NotOnBackend
from signet.telemetry import BUCKETS_MS, Telemetry

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = ["router"]

router = APIRouter()

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 429)
}
# The text format every Prometheus reads (names here are plain ASCII, so 1.0.0 adds nothing).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
WriteStats = dict[str, dict[str, float]]
WRITE_FAMILIES = (
    ("turns", "signet_write_turns", "SQLite write transactions, per lane."),
    ("wait_s", "signet_write_wait_seconds", "Seconds writes waited for the one writer."),
    ("hold_s", "signet_write_hold_seconds", "Seconds writes held the one writer."),
)
LLM_KINDS = {"prompt_tokens": "prompt", "completion_tokens": "completion"}


@router.get(
    "/metrics", response_class=Response, responses=ERRORS,
    dependencies=[Depends(require("diagnostics")), Depends(unscoped)],
)
def metrics(app: App) -> Response:
    """The daemon's telemetry in the Prometheus text exposition format (version 0.0.4)."""
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(TelemetryCollector(app.telemetry, _write_stats(app)))
    return Response(generate_latest(registry), media_type=CONTENT_TYPE)


class TelemetryCollector:
    """A prometheus-client collector reading the telemetry at each scrape."""

    def __init__(self, telemetry: Telemetry, writes: WriteStats | None = None) -> None:
        self.telemetry = telemetry
        self.writes = writes

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import (
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )

        bounds = [f"{ms / 1000:.6g}" for ms in BUCKETS_MS]
        duration = HistogramMetricFamily(
            "signet_request_duration_seconds",
            "Latency per route template and per LLM model.", labels=["operation"],
        )
        for operation, kept in self.telemetry.buckets().items():
            buckets = [*zip(bounds, kept.cumulative, strict=True), ("+Inf", kept.count)]
            duration.add_metric([operation], buckets, sum_value=kept.total_ms / 1000)
        yield duration

        usage = self.telemetry.usage()
        yield CounterMetricFamily("signet_requests", "HTTP requests answered.",
                                  value=usage.get("requests", 0))
        responses = CounterMetricFamily("signet_responses", "Error answers by status class.",
                                        labels=["class"])
        for status_class in ("4xx", "5xx"):
            responses.add_metric([status_class], usage.get(f"responses.{status_class}", 0))
        yield responses
        yield CounterMetricFamily("signet_errors", "Errors recorded (4xx and 5xx answers).",
                                  value=self.telemetry.errors_total())
        calls = CounterMetricFamily("signet_llm_calls", "LLM completions.",
                                    labels=["provider", "model"])
        tokens = CounterMetricFamily("signet_llm_tokens", "LLM tokens by kind.",
                                     labels=["provider", "model", "kind"])
        for name, value in usage.items():
            parsed = _llm_counter(name)
            if parsed is None:
                continue
            provider, model, what = parsed
            if what == "calls":
                calls.add_metric([provider, model], value)
            elif what in LLM_KINDS:
                tokens.add_metric([provider, model, LLM_KINDS[what]], value)
        yield calls
        yield tokens
        yield GaugeMetricFamily("signet_telemetry_start_time_seconds",
                                "Unix time the telemetry began counting (the daemon's start).",
                                value=self.telemetry.started_at)
        if self.writes is not None:
            yield from _write_families(self.writes)


def _write_stats(app: SignetApp) -> WriteStats | None:
    """The SQLite writer's queue counters; None on a backend without one (PostgreSQL)."""
    try:
        return app.store.write_stats()
    except NotOnBackend:
        return None


def _write_families(writes: WriteStats) -> Iterator[Any]:
    from prometheus_client.core import CounterMetricFamily

    for key, name, text in WRITE_FAMILIES:
        family = CounterMetricFamily(name, text, labels=["lane"])
        for lane, counts in writes.items():
            family.add_metric([lane], counts[key])
        yield family


def _llm_counter(name: str) -> tuple[str, str, str] | None:
    """`llm.<provider>.<model>.<what>` -> (provider, model, what); a model name may hold dots,
    a provider's never does."""
    if not name.startswith("llm."):
        return None
    provider, _, rest = name[len("llm."):].partition(".")
    model, _, what = rest.rpartition(".")
    return (provider, model, what) if provider and model else None
