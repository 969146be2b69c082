"""/api/documents over real HTTP, the worker run in the app, URLs from a real local server:
ingest, status, chunks, delete, scope, and a redirect into loopback refused."""

from __future__ import annotations

import httpx
import pytest

from auth_tokens import auth, issue
from fakes.web_server import WebServer
from signet.config import DocumentsConfig
from signet.errors import InvalidInput

DOCS = "/api/documents"
TEXT = "\n\n".join(f"Paragraph {i}: the orchard has {i} pear trees." for i in range(150))


def _drain(s) -> None:
    s.app.run_pipeline_until_idle(only=["documents"])


def test_ingest_then_read_list_and_delete(serve, backend) -> None:
    s = serve()
    reply = s.client.post(DOCS, json={"content": TEXT, "title": "Orchard"})
    assert reply.status_code == 202 and reply.json()["status"] == "queued", reply.text
    doc_id = reply.json()["id"]
    _drain(s)
    doc = s.client.get(f"{DOCS}/{doc_id}").json()
    assert doc["status"] == "done" and doc["title"] == "Orchard" and len(doc["chunks"]) >= 2
    chunk = s.client.get(f"/api/memory/{doc['chunks'][0]['memory_id']}").json()
    assert chunk["type"] == "document_chunk" and chunk["source_id"] == doc_id
    again = s.client.post(DOCS, json={"content": TEXT})
    assert again.status_code == 200 and again.json()["outcome"] == "unchanged"
    listed = s.client.get(DOCS, params={"status": "done"}).json()
    assert [d["id"] for d in listed["items"]] == [doc_id] and listed["total"] == 1
    gone = s.client.delete(f"{DOCS}/{doc_id}")
    assert gone.status_code == 200 and gone.json()["forgotten"] == len(doc["chunks"])
    assert s.client.get(f"{DOCS}/{doc_id}").status_code == 404
    memory = s.client.get(f"/api/memory/{doc['chunks'][0]['memory_id']}",
                          params={"include_deleted": "true"}).json()
    assert memory["is_deleted"] is True


def test_bad_requests_name_the_problem(serve, backend) -> None:
    s = serve()
    both = s.client.post(DOCS, json={"content": "x", "url": "https://example.com"})
    assert both.status_code == 400 and "exactly one" in both.json()["error"]
    assert s.client.post(DOCS, json={}).status_code == 400
    assert s.client.post(DOCS, json={"content": 5}).status_code in (400, 422)
    assert s.client.post(DOCS, content=b"{not json").status_code in (400, 422)
    refused = s.client.post(DOCS, json={"url": "https://example.com/"})
    assert refused.status_code == 403 and refused.json()["code"] == "url_fetch_disabled"
    assert s.client.get(f"{DOCS}/nope").status_code == 404
    assert s.client.get(DOCS, params={"status": "weird"}).status_code == 400
    for bad in ("a\u0000b", "   "):  # no file system holds such a name: 400, never a 500
        for route, body in ((DOCS, {"path": bad}), ("/api/connectors", {"path": bad})):
            reply = s.client.post(route, json=body)
            assert reply.status_code == 400 and "path" in reply.json()["error"], reply.text


def test_a_scoped_token_sees_and_deletes_only_its_own_documents(serve, tmp_path, backend) -> None:
    s = serve()
    p = httpx.Client(base_url=s.url, headers=auth(issue(s.app, "agent", project="p")))
    q = httpx.Client(base_url=s.url, headers=auth(issue(s.app, "agent", project="q")))
    mine = p.post(DOCS, json={"content": "Project p keeps its plans here."}).json()
    assert mine["project"] == "p"
    _drain(s)
    assert q.get(DOCS).json()["items"] == []
    assert q.get(f"{DOCS}/{mine['id']}").status_code == 404
    assert q.delete(f"{DOCS}/{mine['id']}").status_code == 404
    assert [d["id"] for d in p.get(DOCS).json()["items"]] == [mine["id"]]
    note = tmp_path / "n.md"
    note.write_text("local")
    assert p.post(DOCS, json={"path": str(note)}).status_code == 403
    operator = httpx.Client(base_url=s.url, headers=auth(issue(s.app, "operator")))
    refused = operator.post(DOCS, json={"path": str(note)})
    assert refused.status_code == 403 and "admin" in refused.json()["error"]
    assert operator.post("/api/connectors", json={"path": str(tmp_path)}).status_code == 403
    assert s.client.post(DOCS, json={"path": str(note)}).status_code == 202  # the admin may
    operator.close()
    readonly = httpx.Client(base_url=s.url, headers=auth(issue(s.app, "readonly")))
    assert readonly.get(DOCS).status_code == 403
    for client in (p, q, readonly):
        client.close()


def test_urls_are_fetched_and_a_redirect_to_loopback_is_refused(serve, backend) -> None:
    routes = {
        "/tea.html": (200, {"Content-Type": "text/html"},
                      b"<title>Tea</title><article><p>Sencha is steamed.</p></article>"),
        "/jump": (302, {"Location": "http://127.0.0.1:{port}/internal"}, b""),
        "/internal": (200, {"Content-Type": "text/plain"}, b"internal only"),
    }
    with WebServer(routes) as web:
        s = serve(documents=DocumentsConfig(url_fetch_enabled=True,
                                            fetch_allowed_hosts=("localhost",)))
        good = s.client.post(DOCS, json={"url": f"{web.url}/tea.html"}).json()
        bad = s.client.post(DOCS, json={"url": f"{web.url}/jump"}).json()
        _drain(s)
        done = s.client.get(f"{DOCS}/{good['id']}").json()
        assert done["status"] == "done" and done["title"] == "Tea"
        assert "Sencha is steamed." in s.client.get(
            f"/api/memory/{done['chunks'][0]['memory_id']}").json()["content"]
        failed = s.client.get(f"{DOCS}/{bad['id']}").json()
        assert failed["status"] == "failed" and "non-public address" in failed["error"]
        assert failed["chunks"] == [] and "/internal" not in web.hits


def test_connectors_over_http_report_health_and_keep_to_their_scope(serve, tmp_path, backend) -> None:
    s = serve()
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("Apples are stored in the cellar.")
    made = s.client.post("/api/connectors", json={"path": str(vault), "project": "home"})
    assert made.status_code == 200 and made.json()["status"] == "idle", made.text
    cid = made.json()["id"]
    synced = s.client.post(f"/api/connectors/{cid}/sync").json()
    assert synced["added"] == 1
    _drain(s)
    health = s.client.get("/api/connectors").json()["connectors"]
    assert [(c["id"], c["files"], c["documents"]) for c in health] == [(cid, 1, {"done": 1})]
    assert health[0]["last_sync_at"] and health[0]["last_error"] is None
    scoped = httpx.Client(base_url=s.url, headers=auth(issue(s.app, "operator", project="work")))
    assert scoped.get("/api/connectors").json()["connectors"] == []
    assert scoped.post(f"/api/connectors/{cid}/sync").status_code == 404
    assert scoped.post("/api/connectors", json={"path": str(vault)}).status_code == 403
    scoped.close()
    assert s.client.post("/api/connectors", json={"path": str(tmp_path / "nope")}).status_code == 404
    gone = s.client.delete(f"/api/connectors/{cid}")
    assert gone.status_code == 200 and gone.json()["forgotten"] == 1
    assert s.client.get(f"/api/connectors/{cid}").status_code == 404


def test_a_url_that_cannot_be_fetched_is_refused_at_once(serve, backend) -> None:
    s = serve(documents=DocumentsConfig(url_fetch_enabled=True))
    for url, status, words in (
        ("http://[::1/notes", 400, "not a valid URL"),  # a broken IPv6 literal: was a 500
        ("http://example.com:99999/", 400, "not a valid URL"),
        ("http:///no-host", 400, "names no host"),
        ("file:///etc/passwd", 403, "only http and https"),
    ):
        reply = s.client.post(DOCS, json={"url": url})
        assert reply.status_code == status and words in reply.json()["error"], (url, reply.text)
    assert s.client.get(DOCS).json()["total"] == 0  # nothing registered, nothing queued


def test_text_holding_a_nul_is_refused_by_name_on_both_backends(serve, tmp_path, backend) -> None:
    s = serve()
    with pytest.raises(InvalidInput, match="content holds a NUL"):
        s.app.documents.ingest_text("a note\x00with a NUL")  # the CLI's in-process path
    note = tmp_path / "binary.md"
    note.write_bytes(b"looks like text\x00but is not")
    reply = s.client.post(DOCS, json={"path": str(note)})
    assert reply.status_code == 202, reply.text
    _drain(s)
    failed = s.client.get(f"{DOCS}/{reply.json()['id']}").json()
    assert failed["status"] == "failed" and "NUL character" in failed["error"]
    assert failed["chunks"] == [] and s.client.get(DOCS).json()["total"] == 1
