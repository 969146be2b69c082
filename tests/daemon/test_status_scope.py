"""`/api/status` for a scoped token, over a real daemon on SQLite and on PostgreSQL: its own
slice's memory count and nothing that counts other scopes (docs/security.md "Scope")."""

from __future__ import annotations

from dataclasses import replace

import httpx

from auth_tokens import auth, issue


def test_a_scoped_token_sees_its_own_count_and_nothing_global(serve) -> None:
    s = serve()
    for n in range(2):
        s.app.remember(f"p's note {n}", project="p")
    for n in range(5):
        s.app.remember(f"q's note {n}", project="q", agent_id="b")
    for fields, own in (({"project": "p"}, 2), ({"agent": "b"}, 5), ({"project": "r"}, 0)):
        for role in ("readonly", "admin"):
            token = auth(issue(s.app, role, **fields))
            status = httpx.get(f"{s.url}/api/status", headers=token).json()
            assert status["memories"] == own, (fields, role, status)
            # Counts over every scope (embeddings, maintenance problems, request telemetry)
            # and the host's paths are for unscoped tokens.
            assert not {"embeddings", "maintenance", "telemetry", "workspace", "database"} & set(status)
            assert status["daemon"]["pid"] and "degraded" in status
    whole = s.client.get("/api/status").json()
    assert whole["memories"] == 7 and {"embeddings", "maintenance", "telemetry"} <= set(whole)


def test_a_scoped_status_does_not_change_when_another_scope_is_used(
    tmp_path, backend: str, backend_store
) -> None:
    """The bundled model loads on the first embedding, whoever's it is: `embedder.loaded` would
    tell a token scoped to project p that someone wrote or recalled elsewhere since the start."""
    from signet.app import SignetApp
    from signet.config import Config
    from signet.daemon.server import create_app
    from signet.providers.local_embedder import LocalEmbedder
    from uvicorn_thread import serve_in_thread
    from write_paths import inline

    cfg = inline(Config.default(tmp_path / "ws")).replace(store=backend_store)
    app = SignetApp.open(cfg, embedder=LocalEmbedder())
    running = serve_in_thread(create_app(app))
    try:
        admin, scoped = auth(issue(app, "admin")), auth(issue(app, "readonly", project="p"))

        def seen() -> dict[str, object]:
            reply = httpx.get(f"{running.url}/api/status", headers=scoped, timeout=60)
            assert reply.status_code == 200, reply.text
            return {k: v for k, v in reply.json().items() if k != "daemon"}

        before = seen()
        wrote = httpx.post(f"{running.url}/api/memory/remember", headers=admin, timeout=60,
                           json={"content": "q's launch date is the ninth", "project": "q"})
        assert wrote.status_code == 200 and wrote.json()["embedded"] is True, wrote.text
        assert seen() == before
        # The admin's own view still says the model is in memory (`signet doctor` reads it).
        whole = httpx.get(f"{running.url}/api/status", headers=admin, timeout=60).json()
        assert whole["embedder"]["loaded"] is True
    finally:
        running.stop()
        app.close()


def test_a_scoped_status_does_not_count_another_scopes_failed_recalls(
    tmp_path, backend: str, backend_store
) -> None:
    """The query embedding's breaker counts every caller's failures and keeps the last error:
    a token scoped to project p saw the count rise when another caller recalled. It keeps the
    breaker's state (its own recalls run without the semantic channel while it is open)."""
    from daemon_process import free_port

    from signet.app import SignetApp
    from signet.config import Config
    from signet.daemon.server import create_app
    from uvicorn_thread import serve_in_thread

    cfg = Config.default(tmp_path / "ws").replace(store=backend_store)
    cfg = cfg.replace(embedding=replace(cfg.embedding, provider="ollama", model="nomic",
                                        base_url=f"http://127.0.0.1:{free_port()}"))
    app = SignetApp.open(cfg)
    running = serve_in_thread(create_app(app))
    try:
        admin, scoped = auth(issue(app, "admin")), auth(issue(app, "readonly", project="p"))

        def seen() -> dict[str, object]:
            reply = httpx.get(f"{running.url}/api/status", headers=scoped, timeout=60)
            assert reply.status_code == 200, reply.text
            return {k: v for k, v in reply.json().items() if k != "daemon"}

        before = seen()
        recalled = httpx.post(f"{running.url}/api/memory/recall", headers=admin, timeout=60,
                              json={"query": "q's launch date"})
        assert recalled.status_code == 200, recalled.text
        whole = httpx.get(f"{running.url}/api/status", headers=admin, timeout=60).json()
        assert whole["embedder"]["health"]["consecutive_failures"] >= 1  # it did fail
        assert seen() == before
        assert before["embedder"]["health"]["state"] == "closed"  # type: ignore[index]
    finally:
        running.stop()
        app.close()
