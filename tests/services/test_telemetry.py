"""Local telemetry: quantiles from log-spaced buckets, counters, the bounded error ring, LLM
usage through the providers' usage sink (a real provider against the fake LLM server), and no
content anywhere in what it keeps."""

from __future__ import annotations

import json
import random

from fakes.llm_server import FakeLLMServer, Reply
from signet.providers.llm_registry import make_llm
from signet.telemetry import Histogram, Telemetry, percentile_of


def test_quantiles_from_buckets_stay_within_one_bucket_of_the_exact_value() -> None:
    rng = random.Random(7)
    values = [rng.lognormvariate(2.0, 1.0) for _ in range(5000)]
    histogram = Histogram()
    for value in values:
        histogram.observe(value)
    for q in (0.5, 0.95, 0.99):
        exact = percentile_of(values, q)
        assert exact / 1.34 <= histogram.quantile(q) <= exact * 1.34, (q, exact)
    summary = histogram.summary()
    assert summary["count"] == 5000 and summary["max_ms"] == round(max(values), 3)
    assert summary["p50_ms"] <= summary["p95_ms"] <= summary["p99_ms"] <= summary["max_ms"]


def test_an_empty_histogram_reports_zeros() -> None:
    assert Histogram().summary() == {
        "count": 0, "p50_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0, "mean_ms": 0.0, "max_ms": 0.0
    }


def test_requests_count_and_errors_go_to_a_ring_of_the_configured_size() -> None:
    telemetry = Telemetry(error_ring_size=3)
    for n in range(5):
        telemetry.record_request("GET /api/memory/{memory_id}", 404, 1.0 + n, "not_found", f"r{n}")
    telemetry.record_request("POST /api/memory/recall", 200, 3.0, None, "ok")
    errors = telemetry.errors()
    assert [e["request_id"] for e in errors] == ["r4", "r3", "r2"]  # newest first, 3 kept
    assert errors[0]["code"] == "not_found" and errors[0]["status"] == 404
    usage = telemetry.usage()
    assert usage["requests"] == 6 and usage["responses.4xx"] == 5
    assert telemetry.summary()["errors"] == 5
    assert telemetry.latency()["GET /api/memory/{memory_id}"]["count"] == 5


def test_the_key_set_is_bounded() -> None:
    telemetry = Telemetry()
    for n in range(600):
        telemetry.observe(f"op{n}", 1.0)
    latency = telemetry.latency()
    assert len(latency) == 501 and latency["other"]["count"] == 100


def test_disabled_telemetry_keeps_nothing() -> None:
    telemetry = Telemetry(enabled=False)
    telemetry.record_request("GET /x", 500, 1.0, "internal", None)
    assert telemetry.latency() == {} and telemetry.usage() == {} and telemetry.errors() == []


def test_llm_calls_report_tokens_and_latency_but_never_the_prompt() -> None:
    telemetry = Telemetry()
    secret = "the-prompt-says-marmalade-4471"
    with FakeLLMServer(default=Reply("a reply about nothing")) as server:
        llm = make_llm("openai", model="tiny", base_url=server.url,
                       usage_sink=telemetry.record_llm)
        assert llm is not None
        llm.complete(f"{secret} and more words", system="be brief")
        llm.complete(secret)
    usage = telemetry.usage()
    assert usage["llm.openai.tiny.calls"] == 2
    assert usage["llm.openai.tiny.prompt_tokens"] > 0
    assert usage["llm.openai.tiny.completion_tokens"] == 2 * len("a reply about nothing".split())
    assert telemetry.latency()["llm openai:tiny"]["count"] == 2
    assert telemetry.summary()["llm_calls"] == 2
    dumped = json.dumps([telemetry.usage(), telemetry.latency(), telemetry.errors(),
                         telemetry.summary()])
    assert "marmalade" not in dumped and "reply" not in dumped


def test_the_app_wires_its_configured_llm_to_its_telemetry(tmp_path) -> None:
    from signet.app import SignetApp
    from signet.config import Config, LlmConfig

    with FakeLLMServer(default=Reply("ok then")) as server:
        cfg = Config.default(tmp_path).replace(
            llm=LlmConfig(provider="ollama", model="m1", base_url=server.url)
        )
        with SignetApp.open(cfg, embedder=None) as app:
            assert app.llm is not None
            app.llm.complete("hello")
            assert app.telemetry.usage()["llm.ollama.m1.calls"] == 1
