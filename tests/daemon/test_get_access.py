"""A caller's GET of a memory is an access (issue 11): over real HTTP it raises access_count and
last_accessed once the writer has written it, and recall then reports the rehearsal boost. The
list route and search are no access. On both backends (the `backend` fixture)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def listed(served: Any, memory_id: str) -> dict[str, Any]:
    items = served.client.get("/api/memories", params={"limit": 50}).json()["items"]
    return next(item for item in items if item["id"] == memory_id)


def test_http_get_counts_as_an_access_and_feeds_rehearsal(
    serve: Callable[..., Any], backend: str
) -> None:
    served = serve()
    got = served.app.remember("The billing service is written in Go").id
    other = served.app.remember("The billing service is deployed on Fridays").id
    body = {"query": "billing service", "mode": "keyword"}
    served.client.post("/api/memory/recall", json=body)  # a search is no access
    first = served.client.get(f"/api/memory/{got}")
    assert first.status_code == 200 and first.json()["access_count"] == 0
    deadline = time.monotonic() + 20
    while listed(served, got)["access_count"] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    row = listed(served, got)
    assert row["access_count"] == 1 and row["last_accessed"] is not None
    assert listed(served, other)["access_count"] == 0
    if backend != "sqlite":
        return  # recall on PostgreSQL applies no rehearsal yet (docs/deploy.md)
    results = served.client.post("/api/memory/recall", json=body).json()["results"]
    adjustments = {r["id"]: r["adjustments"] for r in results}
    assert "rehearsal" in adjustments[got] and "rehearsal" not in adjustments[other]
