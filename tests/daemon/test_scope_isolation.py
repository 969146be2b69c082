"""Scope isolation, channel by channel, over real HTTP (docs/security.md "Scope").

The promise: a caller scoped to an agent or a project gets exactly the answer it would get if
nothing outside its scope existed. Each test builds two daemons holding the same memories of the
caller's scope, writes into the second one words of the query in *another* scope, asks both the
same recalls, and compares everything the caller sees: which memories, in which order, their
scores, every channel's evidence, adjustments, the method, `meta.count`, `meta.degraded` and
which stages ran (`meta.timings`' keys). One test per recall channel: lexical, hint, semantic,
whole source, dated, conversation context, graph traversal; then every mode over a mixed world.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx

from auth_tokens import auth, issue
from signet.config import PipelineConfig, PipelineTelemetryConfig, SearchConfig
from signet.store import memories as mem_sql

REMEMBER = "/api/memory/remember"
RECALL = "/api/memory/recall"
P, Q = {"project": "p"}, {"project": "q"}  # the caller's scope and the other one
Write = Callable[[Any, dict[str, str], dict[str, str], bool], None]


def remember(s: Any, token: dict[str, str], content: str, **fields: Any) -> str:
    """Remember `content`; each memory in a session of its own unless the test names one (so
    conversation context links only what a test means to link, and no two results tie)."""
    own_session = {"X-Signet-Session": "s-" + hashlib.sha256(content.encode()).hexdigest()[:12]}
    headers = {**token, **fields.pop("headers", own_session)}
    reply = httpx.post(f"{s.url}{REMEMBER}", json={"content": content, **fields}, headers=headers)
    assert reply.status_code == 200, reply.text
    return str(reply.json()["id"])


def view(answer: dict[str, Any]) -> dict[str, Any]:
    """Everything a caller sees of a recall answer, but ids and clocks."""
    return {
        "results": [(h["content"], h["score"], h["evidence"], h["adjustments"])
                    for h in answer["results"]],
        "method": answer["method"],
        "count": answer["meta"]["count"],
        "degraded": answer["meta"]["degraded"],
        "stages": sorted(answer["meta"]["timings"]),
    }


def same(left: Any, right: Any) -> bool:
    """Equal, with floats equal to a relative 1e-6 (scores carry a decay by the clock)."""
    if isinstance(left, float) or isinstance(right, float):
        return isinstance(left, int | float) and isinstance(right, int | float) and math.isclose(
            left, right, rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(same(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    return bool(left == right)


def answers(
    serve: Any, write: Write, queries: list[dict[str, Any]], plant: bool,
    mine: dict[str, str], theirs: dict[str, str], **sections: Any,
) -> list[dict[str, Any]]:
    s = serve(**sections)
    me, other = auth(issue(s.app, "agent", **mine)), auth(issue(s.app, "agent", **theirs))
    write(s, me, other, plant)
    out = []
    for query in queries:
        reply = httpx.post(f"{s.url}{RECALL}", json={"limit": 20, **query}, headers=me)
        assert reply.status_code == 200, reply.text
        out.append(view(reply.json()))
    return out


def assert_unmoved(
    serve: Any, write: Write, queries: list[dict[str, Any]], *, mine: dict[str, str] = P,
    theirs: dict[str, str] = Q, **sections: Any,
) -> list[dict[str, Any]]:
    alone = answers(serve, write, queries, False, mine, theirs, **sections)
    planted = answers(serve, write, queries, True, mine, theirs, **sections)
    for query, a, b in zip(queries, alone, planted, strict=True):
        assert same(a, b), f"{query}:\n without the other scope: {a}\n with it: {b}"
    return planted


def test_lexical_scores_ignore_another_scopes_words(serve) -> None:
    def write(s: Any, me: dict[str, str], other: dict[str, str], plant: bool) -> None:
        for text in ("the kite festival is in may", "kite repair needs glue and string",
                     "the garden needs water", "a festival of music"):
            remember(s, me, text)
        if plant:
            for n in range(6):
                remember(s, other, f"kite kite festival crowd number {n}")

    found = assert_unmoved(serve, write, [{"query": "kite festival", "mode": "keyword"},
                                          {"query": "glue string water", "mode": "keyword"}])
    assert [r[0] for r in found[0]["results"]][:1] == ["the kite festival is in may"]
    assert all(r[2]["lexical_rank"] for r in found[0]["results"])


def test_hint_scores_ignore_another_scopes_hints(serve) -> None:
    def write(s: Any, me: dict[str, str], other: dict[str, str], plant: bool) -> None:
        mine = remember(s, me, "we repainted the shed blue")
        remember(s, me, "the shed roof leaks")
        hinted = {mine: "what colour is the shed"}
        if plant:
            theirs = remember(s, other, "an unrelated note")
            hinted[theirs] = "what colour is the car colour paint"
        if s.cfg.store.backend != "sqlite":  # the hints column, as the hints worker sets it
            for memory_id, hints in hinted.items():
                s.sql(f"UPDATE memories SET hints = '{hints}' WHERE id = '{memory_id}'")
            return
        with s.app.store.write_tx() as conn:
            for memory_id, hints in hinted.items():
                mem_sql.set_hints(conn, memory_id, hints)

    found = assert_unmoved(serve, write, [{"query": "shed colour", "mode": "keyword"},
                                          {"query": "paint colour", "mode": "keyword"}])
    assert found[0]["results"][0][2]["hint"] and "hint" not in found[1]["stages"]


def test_semantic_neighbours_of_another_scope_do_not_crowd_out_ones_own(serve) -> None:
    def write(s: Any, me: dict[str, str], other: dict[str, str], plant: bool) -> None:
        for text in ("kite festival tickets", "kite string", "garden hose"):
            remember(s, me, text)
        if plant:  # closer to the query than anything of mine, and more than the pool holds
            for n in range(8):
                remember(s, other, f"kite festival tickets {n}")

    search = replace(SearchConfig(), candidate_pool=3)
    found = assert_unmoved(
        serve, write, [{"query": "kite festival tickets", "mode": "vector", "limit": 3}],
        search=search,
    )
    assert len(found[0]["results"]) == 2  # the third is below search.min_cosine
    assert found[0]["results"] and found[0]["results"][0][0] == "kite festival tickets"


def test_whole_sources_of_another_scope_move_nothing(serve) -> None:
    def write(s: Any, me: dict[str, str], other: dict[str, str], plant: bool) -> None:
        for text in ("we flew the kite on the beach", "the wind was strong", "lunch was late"):
            remember(s, me, text, source_id="chat-1")
        for text in ("kite lessons start monday", "bring a jacket"):
            remember(s, me, text, source_id="chat-2")
        if plant:
            for source in ("chat-1", "chat-9"):
                for text in ("kite kite beach wind", "kite surfing beach"):
                    remember(s, other, f"{text} {source}", source_id=source)

    found = assert_unmoved(serve, write, [{"query": "kite beach wind", "mode": "keyword"},
                                          {"query": "kite jacket", "mode": "hybrid"}])
    assert any(r[2]["source"] for r in found[0]["results"])


def test_the_dated_channel_ignores_another_scopes_day(serve) -> None:
    def write(s: Any, me: dict[str, str], other: dict[str, str], plant: bool) -> None:
        remember(s, me, "we went to the kite show", event_at="2026-01-05T10:00:00Z")
        remember(s, me, "the show was long and the show was loud", event_at="2026-01-05T11:00:00Z")
        remember(s, me, "the kite broke", event_at="2026-02-01T10:00:00Z")
        if plant:
            for n in range(4):
                remember(s, other, f"show day {n} with friends", event_at="2026-01-05T12:00:00Z")

    found = assert_unmoved(serve, write, [{"query": "kite show on 2026-01-05", "mode": "keyword"}])
    assert found[0]["results"][0][0] == "we went to the kite show"


def test_conversation_context_skips_another_projects_turns(serve) -> None:
    session = {"headers": {"X-Signet-Session": "s1"}}

    def write(s: Any, me: dict[str, str], other: dict[str, str], plant: bool) -> None:
        remember(s, me, "what should I plant in spring", **session)
        if plant:  # the same agent and session, written in between, in another project
            remember(s, other, "tomatoes want full sun", **session)
        remember(s, me, "basil and parsley did well", **session)

    found = assert_unmoved(serve, write, [{"query": "plant spring", "mode": "keyword"}])
    assert {r[0] for r in found[0]["results"]} == {
        "what should I plant in spring", "basil and parsley did well"}


def test_another_projects_graph_shapes_nothing(serve, backend) -> None:
    def write(s: Any, me: dict[str, str], other: dict[str, str], plant: bool) -> None:
        if plant:  # the entity exists only because project q named it
            graph = {"entities": [{"name": "Zorro Bakery", "type": "organization"}]}
            remember(s, other, "Zorro Bakery sells rye bread", graph=graph)
        remember(s, me, "we met at Zorro Bakery on friday")
        remember(s, me, "friday was rainy")

    assert_unmoved(serve, write, [{"query": "Zorro Bakery", "mode": "full"},
                                  {"query": "friday", "mode": "full"}])


def test_another_agents_graph_shapes_nothing(serve, backend) -> None:
    def write(s: Any, me: dict[str, str], other: dict[str, str], plant: bool) -> None:
        if plant:
            graph = {"entities": [{"name": "Zorro Bakery", "type": "organization"}],
                     "relations": [{"source": "Zorro Bakery", "target": "Rye", "type": "sells"}]}
            remember(s, other, "Zorro Bakery sells rye bread", graph=graph)
        remember(s, me, "we met at Zorro Bakery on friday")
        remember(s, me, "rye bread for lunch")

    assert_unmoved(serve, write, [{"query": "Zorro Bakery rye", "mode": "full"}],
                   mine={"agent": "a"}, theirs={"agent": "b"})


def test_every_mode_answers_as_if_the_other_scope_did_not_exist(serve) -> None:
    def write(s: Any, me: dict[str, str], other: dict[str, str], plant: bool) -> None:
        for n, text in enumerate(("the deploy runs at noon", "deploy keys rotate monthly",
                                  "the staging deploy failed twice", "lunch at noon",
                                  "tea in the garden", "the cat sleeps", "rain all week")):
            remember(s, me, text, source_id="ops" if n < 2 else None)
        if plant:
            for n in range(5):
                remember(s, other, f"deploy deploy noon staging {n}", source_id="ops")

    queries = [{"query": "deploy noon staging", "mode": mode}
               for mode in ("keyword", "hybrid", "vector", "full")]
    for mine, theirs in ((P, Q), ({"agent": "a"}, {"agent": "b"}),
                         ({"agent": "a", "project": "p"}, {"agent": "a", "project": "q"})):
        assert_unmoved(serve, write, queries, mine=mine, theirs=theirs)


# --- sessions, documents, threads and lineage ------------------------------------------------

HERON = "User: the staging cluster is called Heron\nAssistant: Heron, noted.\n"
OSPREY = ("User: the staging cluster Heron moves to Osprey\nAssistant: Osprey it is.\n"
          "User: and Heron is retired\nAssistant: noted.\n")


def scrub(value: Any, ids: dict[str, str]) -> Any:
    """A reply as a caller compares it: clocks (`*_at`, timings) left out, generated ids named
    by role (the same probe gets a different random id in each daemon)."""
    if isinstance(value, dict):
        return {k: scrub(v, ids) for k, v in sorted(value.items())
                if not k.endswith("_at") and k not in ("timings", "ms", "compute_ms")}
    if isinstance(value, list):
        return [scrub(v, ids) for v in value]
    if isinstance(value, str):
        for real, role in ids.items():
            value = value.replace(real, role)
        return re.sub(r"\b[0-9a-f]{32}\b", "<generated id>", value)  # a job's, a memory's
    return value


def session_probes(serve: Any, plant: bool, mine: dict[str, str], theirs: dict[str, str]) -> list[Any]:
    """What a caller scoped to `mine` sees of sessions, documents, threads and lineage, in a
    daemon where `theirs` holds sessions and a document (plant) or nothing."""
    s = serve()
    me, other = auth(issue(s.app, "agent", **mine)), auth(issue(s.app, "agent", **theirs))
    ids = {"0" * 32: "<their document>"}
    if plant:  # written first: the caller's own writes come after, under the same session id
        for sid, text in (("shared", OSPREY), ("s-theirs", OSPREY)):
            reply = httpx.post(f"{s.url}/api/sessions/{sid}/transcript", headers=other,
                               json={"harness": "generic", "content": text})
            assert reply.status_code == 201, reply.text
        doc = httpx.post(f"{s.url}/api/documents", headers=other,
                         json={"content": "Heron and Osprey runbook", "title": "runbook"})
        assert doc.status_code == 202, doc.text
        ids = {doc.json()["id"]: "<their document>"}
    their_doc = next(iter(ids))
    seen: list[Any] = []

    def ask(method: str, path: str, **kwargs: Any) -> None:
        reply = httpx.request(method, f"{s.url}{path}", headers=me, **kwargs)
        body = reply.json() if reply.headers.get("content-type", "").startswith("application/json") else reply.text
        seen.append((method, path.replace(their_doc, "<their document>"), reply.status_code,
                     scrub(body, ids)))

    for sid in ("shared", "mine"):
        ask("POST", f"/api/sessions/{sid}/transcript", json={"harness": "generic", "content": HERON})
    ask("GET", "/api/sessions")
    for q in ("Heron", "Osprey", "retired"):
        ask("GET", "/api/sessions/search", params={"q": q})
    for sid in ("shared", "s-theirs", "never-existed"):
        ask("GET", f"/api/sessions/{sid}")
        ask("GET", f"/api/lineage/{sid}")
    ask("GET", "/api/threads")
    ask("GET", "/api/documents")
    ask("GET", f"/api/documents/{their_doc}")
    ask("DELETE", f"/api/documents/{their_doc}")
    ask("DELETE", "/api/sessions/s-theirs", params={"reason": "probe"})
    ask("DELETE", "/api/sessions/never-existed", params={"reason": "probe"})
    ask("POST", "/api/memory/recall", json={"query": "Heron Osprey runbook", "limit": 20})
    if plant:  # and the probes changed nothing of theirs
        assert httpx.get(f"{s.url}/api/sessions", headers=other).json()["total"] == 2
        assert httpx.get(f"{s.url}/api/documents/{their_doc}", headers=other).status_code == 200
    return seen


def test_sessions_documents_and_lineage_of_another_scope_are_as_if_absent(serve) -> None:
    for mine, theirs in ((P, Q), ({"agent": "a"}, {"agent": "b"}),
                         ({"agent": "a", "project": "p"}, {"agent": "a", "project": "q"})):
        alone = session_probes(serve, False, mine, theirs)
        planted = session_probes(serve, True, mine, theirs)
        for a, b in zip(alone, planted, strict=True):
            assert same(a, b), f"{mine} vs {theirs}:\n without the other scope: {a}\n with it: {b}"
        statuses = {(m, p): code for m, p, code, _ in planted}
        assert statuses[("POST", "/api/sessions/shared/transcript")] == 201  # a session of its own
        assert statuses[("GET", "/api/sessions/s-theirs")] == 404
        assert statuses[("DELETE", "/api/sessions/s-theirs")] == 404
        assert statuses[("GET", "/api/documents/<their document>")] == 404


def test_a_community_filter_tells_a_scoped_caller_nothing(serve) -> None:
    """Another project's community, an unknown name and an id answer a scoped caller alike:
    resolving the name would tell it that the other project's entities exist."""
    s = serve()
    names = [f"Heron{i}" for i in range(4)]
    deps = [{"source": a, "target": b, "type": "uses", "strength": 0.9}
            for i, a in enumerate(names) for b in names[i + 1:]]
    s.app.apply_graph({"dependencies": deps})
    for name in names:
        remember(s, auth(issue(s.app, "admin")), f"runbook of {name}", project="q",
                 graph={"entities": [name]})
    s.app.graph.detect_communities("default")
    (community,) = s.app.graph.communities()
    theirs = {"label": community["label"], "id": community["id"], "unknown": "no-such-group"}
    me = auth(issue(s.app, "agent", project="p"))
    seen = set()
    for ref in theirs.values():
        recall = httpx.post(f"{s.url}{RECALL}", json={"query": "runbook", "filters":
                            {"community": ref}}, headers=me)
        listing = httpx.get(f"{s.url}/api/memories", params={"community": ref}, headers=me)
        seen.add((recall.status_code, recall.json().get("error"), listing.status_code,
                  listing.json().get("error")))
    assert len(seen) == 1 and next(iter(seen))[0::2] == (403, 403), seen
    admin = httpx.get(f"{s.url}/api/memories", params={"community": community["label"]},
                      headers=auth(issue(s.app, "admin")))
    assert admin.status_code == 200 and admin.json()["total"] == 4


# --- derived views: the embedding projection and the recall QA ledger ------------------------


def projection(s: Any, token: dict[str, str]) -> dict[str, Any]:
    """GET /api/embeddings/projection, polled past its 202s until the map is cached."""
    for _ in range(600):
        reply = httpx.get(f"{s.url}/api/embeddings/projection", headers=token)
        if reply.status_code == 200:
            return dict(reply.json())
        assert reply.status_code == 202, reply.text
        time.sleep(0.05)
    raise AssertionError("the projection never finished")


def test_a_scope_named_like_the_wildcard_gets_only_its_own_projection(serve) -> None:
    """The projection cache is keyed by the caller's slice: a token scoped to agent `*` or
    project `*` must never be answered from the unscoped map, whatever it does with its own
    count (the cache answers when the count matches, so it writes as many memories as the
    unscoped map holds)."""
    s = serve()
    for n in range(3):
        remember(s, auth(s.token), f"the quarterly launch code is {n}{n}{n}", project="q")
    assert projection(s, auth(s.token))["count"] == 3  # cached for the unscoped admin
    for spelling in ({"agent": "*"}, {"project": "*"}):
        star = auth(issue(s.app, "agent", **spelling))
        for n in range(3):
            remember(s, star, f"my own note number {n}")
        seen = projection(s, star)
        assert sorted(node["content"] for node in seen["nodes"]) == [
            f"my own note number {n}" for n in range(3)], spelling


def test_the_recall_ledger_shows_a_scoped_reader_only_recalls_of_its_slice(serve) -> None:
    """A ledger row keeps a recall's query and results: a scoped reader gets only rows of
    callers inside its slice. An unscoped or a project-scoped recall spans agents, so a token
    scoped to agent `default` (the agent those callers write as) must not read it, nor one
    scoped to agent `a` a project-scoped caller's recall narrowed to agent `a`."""
    s = serve(pipeline=PipelineConfig(
        telemetry=PipelineTelemetryConfig(memory_search_qa_enabled=True)))
    agent_a = auth(issue(s.app, "operator", agent="a"))
    project_p = auth(issue(s.app, "operator", project="p"))
    remember(s, agent_a, "agent a keeps the espresso grinder code 4471", project="p")
    for token in (auth(s.token), project_p, agent_a):
        reply = httpx.post(f"{s.url}{RECALL}", json={"query": "espresso grinder"}, headers=token)
        assert reply.status_code == 200 and reply.json()["results"], reply.text
    narrowed = {"query": "grinder code", "filters": {"agent": "a"}}
    assert httpx.post(f"{s.url}{RECALL}", json=narrowed, headers=project_p).json()["results"]
    default = auth(issue(s.app, "operator", agent="default"))
    for route in ("/api/telemetry/search", "/api/telemetry/search/export"):
        seen = httpx.get(f"{s.url}{route}", headers=default)
        assert seen.status_code == 200 and seen.json()["total"] == 0, seen.text
        assert "4471" not in seen.text and "espresso" not in seen.text
    for token, queries in ((agent_a, ["espresso grinder"]),  # each reads its own recalls
                           (project_p, ["grinder code", "espresso grinder"])):
        own = httpx.get(f"{s.url}/api/telemetry/search", headers=token).json()["items"]
        assert [row["query"] for row in own] == queries
    assert httpx.get(f"{s.url}/api/telemetry/search", headers=auth(s.token)).json()["total"] == 4


def test_another_agents_entities_do_not_make_ones_own_a_hub(serve) -> None:
    """Hub dampening demotes a memory the graph alone brought in when all its entities are
    among the most linked (the top 10% by degree, once a graph holds ten entities): another
    agent's entities must count neither towards the ten nor in the percentile."""
    def write(s: Any, me: dict[str, str], other: dict[str, str], plant: bool) -> None:
        graph = {"entities": [{"name": "Zorro Bakery", "type": "organization"},
                              {"name": "Rye", "type": "concept"}],
                 "dependencies": [{"source": "Zorro Bakery", "target": "Rye", "strength": 0.9}]}
        remember(s, me, "we met at Zorro Bakery on friday", graph=graph)
        remember(s, me, "the rye flour order arrived",
                 graph={"entities": [{"name": "Rye", "type": "concept"}]})
        if plant:  # a dozen entities of theirs, each linked once
            for n in range(12):
                remember(s, other, f"note {n} about a thing",
                         graph={"entities": [{"name": f"Thing {n}", "type": "concept"}]})

    found = assert_unmoved(serve, write, [{"query": "Zorro Bakery", "mode": "full"}],
                           mine={"agent": "a"}, theirs={"agent": "b"})
    assert any(r[2]["traversal"] for r in found[0]["results"]), found


def test_a_project_scoped_projection_shows_no_community_of_the_agents_graph(serve) -> None:
    """Communities are detected over the agent's whole graph, other projects' links included;
    a project-scoped caller's recall walks no graph, and its projection names no community:
    otherwise a node's community says that another project links its entity to others."""
    def communities(plant: bool) -> list[Any]:
        s = serve()
        if plant:  # project q links the entity p mentions to another one
            graph = {"dependencies": [{"source": "Zorro Bakery", "target": "Rye", "strength": 0.9}]}
            remember(s, auth(s.token), "Zorro Bakery sells rye bread", project="q", graph=graph)
        mine = auth(issue(s.app, "agent", project="p"))
        remember(s, mine, "we met at Zorro Bakery on friday",
                 graph={"entities": [{"name": "Zorro Bakery", "type": "organization"}]})
        detected = httpx.post(f"{s.url}/api/knowledge/communities/detect", headers=auth(s.token))
        assert detected.status_code == 200 and bool(detected.json()["communities"]) == plant
        return [node["community"] for node in projection(s, mine)["nodes"]]

    assert communities(False) == communities(True) == [None]


def test_a_new_session_never_writes_over_another_sessions_transcript(serve) -> None:
    """A transcript's file is named by its session id, cleaned, and a short hash of the
    session's key: sessions of two scopes can be given one name (ids that clean alike, short
    hashes that meet, which a caller can search for offline). A new session takes a free
    name: it neither replaces the other's transcript nor shares its file (a later import
    would merge the other's messages into its own, a forget would delete them)."""
    mine_text = "User: the kiln runs at 1200 degrees\nAssistant: noted.\n"
    more = mine_text + "User: and cools overnight\nAssistant: ok.\n"

    def post(s: Any, token: dict[str, str], sid: str, text: str) -> dict[str, Any]:
        reply = httpx.post(f"{s.url}/api/sessions/{sid}/transcript", headers=token,
                           json={"harness": "generic", "content": text})
        assert reply.status_code in (200, 201), reply.text
        return dict(reply.json()["session"])

    learnt = serve()  # the name the caller's session is given
    named = post(learnt, auth(issue(learnt.app, "agent", project="p")), "kiln", mine_text)
    s = serve()
    ws = s.cfg.workspace
    theirs = post(s, auth(issue(s.app, "agent", project="q")), "glaze",
                  "User: the glaze recipe is secret 5512\nAssistant: noted.\n")
    for name in ("path", "raw_path"):  # theirs under that name: what a collision leaves
        (ws / named[name]).write_bytes((ws / theirs[name]).read_bytes())
    planted = {name: (ws / named[name]).read_bytes() for name in ("path", "raw_path")}
    me = auth(issue(s.app, "agent", project="p"))
    mine = post(s, me, "kiln", mine_text)
    assert {mine["path"], mine["raw_path"]}.isdisjoint({named["path"], named["raw_path"]})
    post(s, me, "kiln", more)
    shown = httpx.get(f"{s.url}/api/sessions/kiln", headers=me)
    assert shown.status_code == 200 and "5512" not in shown.text and "overnight" in shown.text
    assert httpx.delete(f"{s.url}/api/sessions/kiln", headers=me,
                        params={"reason": "probe"}).status_code == 200
    assert {name: (ws / named[name]).read_bytes() for name in planted} == planted
