"""`GET /metrics` over a real daemon: the telemetry in Prometheus' text format, read back with
prometheus-client's own parser, and guarded like every route (a token with diagnostics, and
unscoped: the figures count every agent and project)."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from auth_tokens import auth, issue
from signet.providers.llm import Completion


def samples(text: str) -> list[Sample]:
    return [s for family in text_string_to_metric_families(text) for s in family.samples]


def value(found: list[Sample], name: str, **labels: str) -> float:
    matching = [s.value for s in found if s.name == name and s.labels == labels]
    assert len(matching) == 1, (name, labels, [s for s in found if s.name == name])
    return matching[0]


def test_metrics_expose_the_daemons_telemetry(serve) -> None:
    s = serve()
    for n in range(3):
        assert s.client.post("/api/memory/remember", json={"content": f"note {n}"}).status_code == 200
    assert s.client.post("/api/memory/recall", json={"query": "note"}).status_code == 200
    assert s.client.get("/api/memory/" + "0" * 32).status_code == 404
    s.app.telemetry.record_llm(Completion("ok", 120, 30, 850.0, "qwen3.5:4b", "ollama"))

    scraped = s.client.get("/metrics")
    assert scraped.status_code == 200, scraped.text
    assert scraped.headers["content-type"].startswith("text/plain; version=0.0.4")
    found = samples(scraped.text)

    remember = {"operation": "POST /api/memory/remember"}
    count = value(found, "signet_request_duration_seconds_count", **remember)
    assert count == 3
    assert value(found, "signet_request_duration_seconds_sum", **remember) > 0
    buckets = [s for s in found if s.name == "signet_request_duration_seconds_bucket"
               and s.labels["operation"] == remember["operation"]]
    assert buckets[-1].labels["le"] == "+Inf" and buckets[-1].value == count
    assert [b.value for b in buckets] == sorted(b.value for b in buckets)  # cumulative
    assert value(found, "signet_request_duration_seconds_count",
                 operation="GET /api/memory/{memory_id}") == 1
    assert value(found, "signet_requests_total") >= 5
    assert value(found, "signet_responses_total", **{"class": "4xx"}) >= 1
    assert value(found, "signet_errors_total") >= 1
    llm = {"provider": "ollama", "model": "qwen3.5:4b"}
    assert value(found, "signet_llm_calls_total", **llm) == 1
    assert value(found, "signet_llm_tokens_total", **llm, kind="prompt") == 120
    assert value(found, "signet_llm_tokens_total", **llm, kind="completion") == 30
    assert value(found, "signet_request_duration_seconds_count",
                 operation="llm ollama:qwen3.5:4b") == 1
    assert value(found, "signet_telemetry_start_time_seconds") > 0
    if s.app.config.store.backend == "sqlite":
        # The three remembers each took a foreground turn of the one writer.
        assert value(found, "signet_write_turns_total", lane="foreground") >= 3
        assert value(found, "signet_write_hold_seconds_total", lane="foreground") > 0
        assert value(found, "signet_write_wait_seconds_total", lane="background") >= 0
    else:
        # PostgreSQL has no single writer: no writer figures rather than zeros.
        assert not [x for x in found if x.name.startswith("signet_write_")]
    # Names and numbers only: no memory's content reaches the scrape.
    assert "note" not in scraped.text


def test_metrics_need_an_unscoped_token_with_diagnostics(serve) -> None:
    s = serve()
    url = f"{s.url}/metrics"
    assert httpx.get(url).status_code == 401
    assert httpx.get(url, headers=auth("not-a-token")).status_code == 401
    assert httpx.get(url, headers=auth(issue(s.app, "readonly"))).status_code == 200
    # An agent's token has no diagnostics permission.
    assert httpx.get(url, headers=auth(issue(s.app, "agent"))).status_code == 403
    for scope in ({"project": "p"}, {"agent": "b"}):
        for role in ("readonly", "admin"):
            refused = httpx.get(url, headers=auth(issue(s.app, role, **scope)))
            assert refused.status_code == 403, (scope, role, refused.text)
            assert refused.json()["code"] == "forbidden"


def test_made_up_methods_cannot_crowd_the_routes_out_of_the_metrics(serve) -> None:
    """The telemetry keeps 500 operation names and folds the rest into `other`. Unauthenticated
    requests with invented methods (`X0 /api/status`, ...) each made a name of their own
    `(unmatched)`: a few hundred of them, in well under a second, sent every real route's
    figures to `other` and grew the scrape to megabytes."""
    s = serve()
    with httpx.Client(base_url=s.url) as anyone:
        for n in range(520):
            assert anyone.request(f"X{n}", "/api/status").status_code == 401
    assert s.client.post("/api/memory/remember", json={"content": "note"}).status_code == 200
    found = samples(s.client.get("/metrics").text)
    assert value(found, "signet_request_duration_seconds_count",
                 operation="POST /api/memory/remember") == 1
    operations = {x.labels["operation"] for x in found if "operation" in x.labels}
    assert "other" not in operations and len(operations) < 20, sorted(operations)[:30]
