"""A forgotten (soft-deleted) memory is gone for a plain read, over a real daemon
(conftest.serve): after `DELETE /api/memory/{id}` answered 200, `GET /api/memory/{id}` and its
history answer 404, as schemathesis's use-after-free check expects of any API; a caller that
means to look at the tombstone (to recover it, say) asks with `include_deleted=true`, and
`recover` brings the memory back for every read."""

from __future__ import annotations


def test_a_forgotten_memory_is_read_only_when_asked_for(serve) -> None:
    s = serve()
    memory_id = s.client.post("/api/memory/remember", json={"content": "the old wifi password"}
                              ).json()["id"]
    path = f"/api/memory/{memory_id}"
    assert s.client.delete(path).status_code == 200
    for route in (path, f"{path}/history"):
        gone = s.client.get(route)
        assert gone.status_code == 404 and gone.json()["code"] == "not_found", gone.text
        assert "include_deleted" in gone.json()["error"]
    tombstone = s.client.get(path, params={"include_deleted": "true"})
    assert tombstone.status_code == 200 and tombstone.json()["is_deleted"] is True
    events = s.client.get(f"{path}/history", params={"include_deleted": "true"}).json()
    assert [e["event"] for e in events["history"]] == ["created", "deleted"]
    assert s.client.post(f"{path}/recover").status_code == 200
    assert s.client.get(path).json()["is_deleted"] is False
    assert s.client.get(f"{path}/history").status_code == 200
