"""`/api/status` for a scoped token, over a real daemon: its own slice's memory count and
nothing that counts other scopes (docs/security.md "Scope")."""

from __future__ import annotations

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
