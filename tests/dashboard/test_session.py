"""The dashboard's login, cookie session, CSRF check, Host check and logout, over real HTTP
(no browser needed to prove the refusals), plus the shell's headers and the data the pages
needed that no other client did before (communities on the map, the dead-letter list)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
from seed import dead_job

from auth_tokens import issue

COOKIE = "signet_session"


def login(daemon) -> tuple[httpx.Client, str]:
    """A browser-like client logged in by the link; returns it and the CSRF token."""
    reply = httpx.get(daemon.quick_link())
    assert reply.status_code == 303 and reply.headers["location"] == "/app/memories"
    client = httpx.Client(base_url=daemon.url, cookies={COOKIE: reply.cookies[COOKIE]})
    session = client.get("/api/dashboard/session")
    assert session.status_code == 200, session.text
    return client, session.json()["csrf"]


def test_the_login_link_sets_an_httponly_strict_cookie_once(daemon) -> None:
    link = daemon.login_link()
    assert link.startswith(f"http://127.0.0.1:{daemon.port}/app/login?code=")
    reply = httpx.get(link)
    cookie = reply.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
    assert reply.headers["cache-control"] == "no-store"
    again = httpx.get(link)
    assert again.headers["location"] == "/app/welcome?login=failed"
    assert "set-cookie" not in again.headers


def test_signet_dashboard_says_when_no_daemon_serves_the_workspace(tmp_path) -> None:
    env = {**os.environ, "SIGNET_WORKSPACE": str(tmp_path / "ws"), "SIGNET_PORT": "9",
           "SIGNET_BIND": "127.0.0.1"}
    done = subprocess.run([sys.executable, "-m", "signet", "dashboard", "--print"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert "no daemon of this workspace answers at http://127.0.0.1:9" in done.stderr
    assert "signet daemon start" in done.stderr


def test_without_the_cookie_every_data_route_is_refused(daemon) -> None:
    for method, path in [("GET", "/api/dashboard/session"), ("GET", "/api/memories"),
                         ("POST", "/api/dashboard/logout"), ("GET", "/api/embeddings/projection")]:
        reply = httpx.request(method, daemon.url + path)
        assert reply.status_code == 401 and reply.json()["code"] == "unauthorized"
    forged = httpx.get(daemon.url + "/api/memories", cookies={COOKIE: "sgt1.e30.AAAA"})
    assert forged.status_code == 401


def test_a_state_change_needs_the_sessions_csrf_token(daemon) -> None:
    client, csrf = login(daemon)
    body = {"content": "the dashboard writes through the cookie session"}
    missing = client.post("/api/memory/remember", json=body)
    assert missing.status_code == 403 and missing.json()["code"] == "csrf_failed"
    wrong = client.post("/api/memory/remember", json=body, headers={"X-Signet-CSRF": csrf[:-2] + "xx"})
    assert wrong.status_code == 403 and wrong.json()["code"] == "csrf_failed"
    other, other_csrf = login(daemon)  # another session's token does not fit this cookie
    assert other_csrf != csrf
    crossed = client.post("/api/memory/remember", json=body, headers={"X-Signet-CSRF": other_csrf})
    assert crossed.status_code == 403
    assert daemon.app.list().total == 0 or all(
        m.content != body["content"] for m in daemon.app.list().items)
    made = client.post("/api/memory/remember", json=body, headers={"X-Signet-CSRF": csrf})
    assert made.status_code == 200, made.text
    assert client.get("/api/memories").status_code == 200  # reads need no CSRF token
    assert daemon.client.post("/api/memory/remember", json={"content": "bearer needs none"}
                              ).status_code == 200


def test_logout_revokes_the_session(daemon) -> None:
    client, csrf = login(daemon)
    refused = client.post("/api/dashboard/logout")
    assert refused.status_code == 403
    reply = client.post("/api/dashboard/logout", headers={"X-Signet-CSRF": csrf})
    assert reply.status_code == 200 and reply.json() == {"logged_out": True}
    assert COOKIE in reply.headers["set-cookie"] and "max-age=0" in reply.headers["set-cookie"].lower()
    stale = client.get("/api/memories")  # the old cookie, replayed: its token is revoked
    assert stale.status_code == 401
    bearer = daemon.client.post("/api/dashboard/logout")  # a bearer token is not a session
    assert bearer.status_code == 409 and bearer.json()["code"] == "not_a_session"


def test_the_shell_is_served_only_to_an_allowed_host_with_a_strict_policy(daemon) -> None:
    page = httpx.get(daemon.url + "/app/memories")
    assert page.status_code == 200 and "<main" in page.text
    # Its icon is inline, so a browser never asks for /favicon.ico (a 404 on every page).
    assert re.search(r'<link rel="icon" href="data:image/svg\+xml,', page.text)
    policy = page.headers["content-security-policy"]
    assert "img-src 'self' data:" in policy
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert page.headers["referrer-policy"] == "no-referrer"
    rebound = httpx.get(daemon.url + "/", headers={"Host": f"evil.example:{daemon.port}"})
    assert rebound.status_code == 421 and rebound.json()["code"] == "host_not_allowed"
    script = httpx.get(daemon.url + "/app/static/js/main.js", headers={"Accept-Encoding": "gzip"})
    assert script.headers["content-type"].startswith("text/javascript")
    assert script.headers["content-encoding"] == "gzip"
    cached = httpx.get(daemon.url + "/app/static/js/main.js",
                       headers={"If-None-Match": script.headers["etag"]})
    assert cached.status_code == 304
    assert httpx.get(daemon.url + "/app/static/../pages.py").status_code == 404
    assert httpx.get(daemon.url + "/app/nothing-here").status_code == 404


def test_the_shell_preloads_every_module_it_ships(daemon) -> None:
    """index.html lists each script module for preloading (no import waterfall); a module added
    without its line, or a line for a module removed, fails here."""
    static = Path(__file__).resolve().parents[2] / "src" / "signet" / "dashboard" / "static"
    shipped = {p.relative_to(static).as_posix() for p in static.rglob("*.js")}
    page = httpx.get(daemon.url + "/").text
    preloaded = set(re.findall(r'rel="modulepreload" href="/app/static/([^"]+)"', page))
    assert preloaded | {"js/main.js"} == shipped
    for name in shipped:
        assert httpx.get(f"{daemon.url}/app/static/{name}").status_code == 200


def test_the_maps_points_carry_the_community_of_an_entity_they_mention(daemon) -> None:
    graph = {"entities": [{"name": "Orion"}, {"name": "Lyra"}],
             "dependencies": [{"source": "Orion", "target": "Lyra", "type": "near"}]}
    made = daemon.client.post("/api/memory/remember", json={
        "content": "Orion sits near Lyra in the winter sky", "graph": graph}).json()
    plain = daemon.client.post("/api/memory/remember", json={"content": "no entity here"}).json()
    detected = daemon.client.post("/api/knowledge/communities/detect").json()["communities"]
    community = next(c["id"] for c in detected if c["size"] == 2)
    nodes = {n["id"]: n for n in daemon.app.projection.compute(2)["nodes"]}
    assert nodes[made["id"]]["community"] == community
    assert nodes[plain["id"]]["community"] is None


def test_the_memories_page_filters_by_agent_in_list_and_recall(daemon) -> None:
    mine = daemon.client.post("/api/memory/remember",
                              json={"content": "the default agent logged the comet Hale"})
    assert mine.json()["memory"]["agent_id"] == "default"
    scoped = issue(daemon.app, "agent", agent="scout")
    daemon_scoped = {"Authorization": f"Bearer {scoped}"}
    own = httpx.post(daemon.url + "/api/memory/remember", headers=daemon_scoped,
                     json={"content": "scout saw the comet Hale first"}).json()["memory"]
    assert own["agent_id"] == "scout"
    listed = daemon.client.get("/api/memories", params={"agent": "scout"}).json()
    assert [m["id"] for m in listed["items"]] == [own["id"]]
    hits = daemon.client.post("/api/memory/recall", json={
        "query": "comet Hale", "filters": {"agent": "scout"}}).json()["results"]
    assert [m["id"] for m in hits] == [own["id"]]
    everyone = daemon.client.post("/api/memory/recall", json={"query": "comet Hale"}).json()
    assert {own["id"], mine.json()["id"]} <= {m["id"] for m in everyone["results"]}
    other = httpx.get(daemon.url + "/api/memories", params={"agent": "default"}, headers=daemon_scoped)
    assert other.status_code == 403


def test_dead_letters_are_listed_for_requeue(daemon) -> None:
    memory = daemon.client.post("/api/memory/remember", json={"content": "a job will die"}).json()
    job_id = dead_job(daemon.app, memory["id"])
    listed = daemon.client.get("/api/pipeline/jobs", params={"status": "dead"}).json()["items"]
    assert job_id in {j["id"] for j in listed}
    assert all(j["status"] == "dead" for j in listed)
    bad = daemon.client.get("/api/pipeline/jobs", params={"status": "zombie"})
    # Named as the API names any bad value: the field and what it accepts (never echoed back).
    assert bad.status_code == 400 and bad.json()["error"].startswith("status: invalid status")
    assert "dead" in bad.json()["error"] and "zombie" not in bad.json()["error"]
    page = daemon.client.get("/api/pipeline/jobs", params={"status": "dead", "limit": 1}).json()
    assert len(page["items"]) == 1 and page["limit"] == 1
