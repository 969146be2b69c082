"""Hardening findings of issue 10, each reproduced over real HTTP against a real daemon
(conftest.serve): a token nested past the recursion limit, lone surrogates in the graph
payload, a caller naming another actor, 429 without Retry-After, 405 without Allow, the
communities limit, and the modes of log files."""

from __future__ import annotations

import base64
import json
import logging
import os
import stat
from pathlib import Path

import httpx

from auth_tokens import auth, issue
from signet.config import AuthConfig
from signet.daemon.logfile import DailyFileHandler

REMEMBER = "/api/memory/remember"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def test_a_token_payload_nested_past_the_recursion_limit_is_a_401(serve) -> None:
    s = serve()
    deep = b64(b"[" * 1500 + b"]" * 1500)
    for token in (f"sgt1.{deep}.{b64(b'x' * 32)}", f"sgt1.{b64(b'{' * 900)}.{b64(b'y' * 32)}"):
        reply = httpx.get(f"{s.url}/api/memories", headers=auth(token))
        assert reply.status_code == 401 and reply.json()["code"] == "unauthorized", reply.text


def test_a_lone_surrogate_anywhere_in_the_graph_is_refused_and_nothing_is_stored(serve) -> None:
    s = serve()
    bad = "bad \\ud800 text"
    payloads = [
        '{"entities": [{"name": "BAD", "type": "person"}]}',
        '{"entities": [{"name": "Ann", "type": "BAD"}]}',
        '{"entities": [{"name": "Ann", "aliases": ["BAD"]}]}',
        '{"attributes": [{"entity": "Ann", "aspect": "x", "key": "k", "value": "BAD"}]}',
        '{"relations": [{"source": "Ann", "target": "BAD", "type": "knows"}]}',
        '{"BAD": []}',
    ]
    for graph in payloads:
        body = '{"content": "Ann met Bob", "graph": ' + graph.replace("BAD", bad) + "}"
        reply = s.client.post(REMEMBER, content=body, headers={"Content-Type": "application/json"})
        assert reply.status_code == 400 and reply.json()["code"] == "invalid_input", (graph, reply.text)
        assert "graph" in reply.json()["error"] and "surrogate" in reply.json()["error"]
    assert s.client.get("/api/memories").json()["total"] == 0
    ok = s.client.post(REMEMBER, json={"content": "Ann met Bob",
                                       "graph": {"entities": [{"name": "Ann", "type": "person"}]}})
    assert ok.status_code == 200 and ok.json()["deduped"] is False


def test_a_graph_that_fails_leaves_no_memory_behind(serve) -> None:
    s = serve()
    body = {"content": "Ann met Bob", "graph": {"relations": [{"source": "Ann"}]}}
    reply = s.client.post(REMEMBER, json=body)
    assert reply.status_code == 400, reply.text
    assert s.client.get("/api/memories").json()["total"] == 0


def test_only_the_install_token_names_an_actor_and_history_keeps_the_token(serve) -> None:
    s = serve()
    scoped = issue(s.app, "agent", agent="a", name="ci-agent")
    made = httpx.post(f"{s.url}{REMEMBER}", json={"content": "written by the agent"},
                      headers={**auth(scoped), "X-Signet-Actor": "someone-else"}).json()
    event = s.client.get(f"/api/memory/{made['id']}/history").json()["history"][0]
    token_id = s.sql("SELECT id FROM tokens WHERE name = 'ci-agent'")[0][0]
    assert (event["changed_by"], event["token_id"]) == ("ci-agent", token_id)
    for name in ("pipeline", "Pipeline-Shadow"):
        refused = s.client.post(REMEMBER, json={"content": "x"}, headers={"X-Signet-Actor": name})
        assert refused.status_code == 400 and "X-Signet-Actor" in refused.json()["error"]
    named = s.client.post(REMEMBER, json={"content": "via a hook"},
                          headers={"X-Signet-Actor": "claude-code"}).json()
    event = s.client.get(f"/api/memory/{named['id']}/history").json()["history"][0]
    assert event["changed_by"] == "claude-code" and event["token_id"]


def test_429_says_when_to_retry_and_405_which_methods_are_allowed(serve) -> None:
    s = serve(auth=AuthConfig(rate_limit_per_minute=2))
    replies = [s.client.post(REMEMBER, json={"content": f"n {n}"}) for n in range(3)]
    assert replies[-1].status_code == 429
    assert int(replies[-1].headers["retry-after"]) >= 1
    wrong = s.client.put("/api/memories")
    assert wrong.status_code == 405 and wrong.headers["allow"] == "GET"


def test_the_communities_list_takes_a_bounded_limit(serve) -> None:
    s = serve()
    for limit, status in ((0, 400), (1001, 400), (5, 200)):
        reply = s.client.get("/api/knowledge/communities", params={"limit": limit})
        assert reply.status_code == status, (limit, reply.text)


def test_log_files_are_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        handler = DailyFileHandler(tmp_path / "logs")
        handler.emit(logging.LogRecord("t", logging.INFO, __file__, 1, "hello", (), None))
        handler.close()
    finally:
        os.umask(old)
    (path,) = list((tmp_path / "logs").iterdir())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text().splitlines()[0])["msg"] == "hello"


def test_the_published_schema_refuses_what_the_server_refuses(serve) -> None:
    s = serve()
    spec = s.client.get("/openapi.json").json()
    params = {p["name"]: p["schema"] for p in spec["paths"]["/api/memories"]["get"]["parameters"]}
    assert (params["limit"]["minimum"], params["limit"]["maximum"]) == (1, 1000)
    assert params["offset"]["minimum"] == 0
    since = next(s for s in params["since"]["anyOf"] if s.get("type") == "string")
    assert {f["format"] for f in since["anyOf"]} == {"date", "date-time"}
    for query in ({"limit": 0}, {"limit": 1001}, {"since": ""}, {"offset": -1}):
        assert s.client.get("/api/memories", params=query).status_code == 400, query
    communities = spec["paths"]["/api/knowledge/communities"]["get"]["parameters"]
    assert {p["name"]: p["schema"]["maximum"] for p in communities} == {"limit": 1000}
