"""GET /api/embeddings/projection over real HTTP: 202 while computing, then 200 with
coordinates in range, cached in umap_cache until the number of vectors changes; a scoped token
sees only its slice. On both store backends (the `backend` fixture): the same service over
store/projection.py and store/postgres/projection.py."""

from __future__ import annotations

import time

import httpx

from auth_tokens import auth, issue

ROUTE = "/api/embeddings/projection"


def _wait_200(client: httpx.Client, url: str, **params: object) -> dict:
    first = client.get(url, params=params)
    assert first.status_code == 202, first.text
    assert first.json()["status"] == "computing" and int(first.headers["Retry-After"]) >= 1
    # PCA (no viz extra) answers within a second; with umap-learn installed its first import
    # compiles with numba for minutes on a busy machine.
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        reply = client.get(url, params=params)
        if reply.status_code == 200:
            return dict(reply.json())
        assert reply.status_code == 202
        time.sleep(0.05)
    raise AssertionError("projection never finished")


def _remember(s, n: int, **fields: object) -> list[str]:
    ids = []
    for i in range(n):
        reply = s.client.post("/api/memory/remember",
                              json={"content": f"note {i} about topic {i % 4} {fields}", **fields})
        ids.append(reply.json()["id"])
    return ids


def test_projection_is_202_then_200_in_range_and_cached(serve, backend: str) -> None:
    s = serve()
    ids = _remember(s, 12)
    body = _wait_200(s.client, ROUTE, dimensions=3)
    assert {n["id"] for n in body["nodes"]} == set(ids)
    assert body["count"] == 12 and body["dimensions"] == 3 and body["n_neighbors"] == 11
    assert body["method"] in ("umap", "pca") and body["fallback"] == (body["method"] == "pca")
    for axis in "xyz":
        values = [n[axis] for n in body["nodes"]]
        assert -210 <= min(values) and max(values) <= 210
        assert min(values) == -210 and max(values) == 210
    assert all("content" in n for n in body["nodes"])
    # Cached: answered at once, the same coordinates, and a row in umap_cache.
    again = s.client.get(ROUTE, params={"dimensions": 3})
    assert again.status_code == 200 and again.json()["nodes"] == body["nodes"]
    cached = s.app.projection.store.cached(3, "*/*", s.app.embedder.model)
    assert cached is not None and cached[0] == 12 and cached[1]["nodes"] == body["nodes"]
    assert s.app.projection.store.cached(2, "*/*", s.app.embedder.model) is None
    # A new vector makes the cache stale: computing again.
    _remember(s, 1, who="later")
    assert _wait_200(s.client, ROUTE, dimensions=3)["count"] == 13


def test_two_dimensions_have_no_z_and_bad_dimensions_are_refused(serve, backend: str) -> None:
    s = serve()
    _remember(s, 5)
    body = _wait_200(s.client, ROUTE, dimensions=2)
    assert all(set(n) >= {"id", "x", "y"} and "z" not in n for n in body["nodes"])
    for bad in ("4", "1", "two"):
        reply = s.client.get(ROUTE, params={"dimensions": bad})
        assert reply.status_code in (400, 422), reply.text


def test_an_empty_store_answers_an_empty_map_at_once(serve, backend: str) -> None:
    s = serve()
    reply = s.client.get(ROUTE)
    assert reply.status_code == 200 and reply.json()["nodes"] == []


def test_a_scoped_token_sees_only_its_own_slice(serve, backend: str) -> None:
    s = serve()
    mine = _remember(s, 4, project="p")
    _remember(s, 6, project="q")
    scoped = httpx.Client(base_url=s.url, headers=auth(issue(s.app, "agent", project="p")))
    body = _wait_200(scoped, ROUTE)
    assert {n["id"] for n in body["nodes"]} == set(mine)
    full = _wait_200(s.client, ROUTE)
    assert full["count"] == 10
    scoped.close()
