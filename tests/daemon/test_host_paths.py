"""No route makes the daemon read a path on its host for a caller without the admin permission.

A path in a request is read with the daemon's own rights, so for any other token it is either
refused outright (`POST /api/sessions/{id}/transcript {"path"}`, like documents, connectors,
skills and imports) or, for the harness hooks' `transcript_path`, confined to the harness's own
transcript folder after symlinks and `..` are resolved. Every refusal is one status and one
message, whether the file is missing, outside, unreadable or not a transcript: a token learns
nothing about the host's files. HOME points at a tmp folder; the real home is never touched.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from auth_tokens import auth, issue
from fakes.transcripts import claude_code, conversation
from signet.portable.bundle import export_bundle

TURNS = [("user", "The staging cluster is called Heron."), ("assistant", "Heron, noted.")]
TOKEN = "gho_SECRETSECRETSECRET"
# Unscoped tokens without the admin permission (what docs/deploy.md hands a laptop).
NON_ADMIN = ("agent", "operator")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with secrets in it and Claude Code's transcript folder."""
    home = tmp_path / "home"
    secret = home / ".config" / "gh" / "hosts.yml"
    secret.parent.mkdir(parents=True)
    secret.write_text(f"github.com:\n    oauth_token: {TOKEN}\n    user: me\n", "utf-8")
    (home / ".claude" / "projects" / "-home-me-app").mkdir(parents=True)
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    return home


def secret_path(home: Path) -> Path:
    return home / ".config" / "gh" / "hosts.yml"


def sessions_total(s: Any) -> int:
    return int(s.client.get("/api/sessions").json()["total"])


def test_importing_a_transcript_by_path_needs_the_admin_permission(
    serve, backend: str, home: Path
) -> None:
    s = serve()
    missing = home / "nothing-here.txt"
    answers = []
    for role in NON_ADMIN:
        headers = auth(issue(s.app, role))
        for path in (secret_path(home), missing, s.cfg.workspace / "agent.yaml"):
            reply = s.client.post("/api/sessions/x/transcript", headers=headers,
                                  json={"harness": "generic", "path": str(path)})
            answers.append((reply.status_code, reply.json()["error"]))
    # The same refusal whatever the file: nothing read, nothing learnt.
    assert len(set(answers)) == 1, answers
    status, error = answers[0]
    assert status == 403 and "admin" in error and "content" in error
    assert TOKEN not in str(answers) and sessions_total(s) == 0
    # The admin still may (the local CLI's `signet session import PATH`).
    file = home / "t.jsonl"
    file.write_text(claude_code(conversation(2)), "utf-8")
    ok = s.client.post("/api/sessions/y/transcript", json={"harness": "claude-code", "path": str(file)})
    assert ok.status_code == 201, ok.text


def _hook(
    s: Any, headers: dict[str, str], path: str, harness: str = "claude-code", session: str = "s1"
) -> Any:
    return s.client.post("/api/hooks/session-end", headers=headers, json={
        "harness": harness, "session_id": session, "cwd": "/home/me/app", "transcript_path": path})


def test_a_non_admin_hook_reads_only_the_harness_transcript_folder(
    serve, backend: str, home: Path
) -> None:
    s = serve()
    folder = home / ".claude" / "projects" / "-home-me-app"
    (folder / "link.jsonl").symlink_to(secret_path(home))
    (folder / "broken.jsonl").write_text("{not json\n", "utf-8")
    (folder / "latin1.jsonl").write_bytes(b"caf\xe9\n")
    os.mkfifo(folder / "pipe.jsonl")  # reading it would wait for a writer forever
    big = folder / "big.jsonl"
    big.write_text(claude_code(conversation(40)), "utf-8")
    refused = {
        "outside": str(secret_path(home)),
        "dot-dot": str(folder / ".." / ".." / ".." / ".config" / "gh" / "hosts.yml"),
        "symlink out": str(folder / "link.jsonl"),
        "missing": str(folder / "gone.jsonl"),
        "a pipe": str(folder / "pipe.jsonl"),
        "a folder": str(folder),
        "not a transcript": str(folder / "broken.jsonl"),
        "not UTF-8": str(folder / "latin1.jsonl"),
        "relative": ".claude/projects/-home-me-app/big.jsonl",
        "agent.yaml": str(s.cfg.workspace / "agent.yaml"),
    }
    for role in NON_ADMIN:
        headers = auth(issue(s.app, role))
        before = sessions_total(s)
        answers = {name: _hook(s, headers, path) for name, path in refused.items()}
        answers["generic harness"] = _hook(s, headers, str(big), harness="generic")
        shown = {(r.status_code, r.json()["error"]) for r in answers.values()}
        assert len(shown) == 1, {n: (r.status_code, r.text) for n, r in answers.items()}
        status, error = shown.pop()
        assert status == 403 and "admin" in error and TOKEN not in error
        assert sessions_total(s) == before
        # A real transcript inside the harness's folder is imported.
        ok = _hook(s, headers, str(big))
        assert ok.status_code == 200, ok.text
        assert ok.json()["session"]["session"]["message_count"] == 80
    # The admin's hook (the local `signet hook`) reads what the admin names.
    elsewhere = home / "elsewhere.jsonl"
    elsewhere.write_text(claude_code(TURNS, session_id="other"), "utf-8")
    admin = _hook(s, {}, str(elsewhere), session="s2")
    assert admin.status_code == 200 and admin.json()["session"]["status"] == "created"


def test_the_transcript_folders_follow_the_harness_environment(
    serve, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CODEX_HOME and XDG_DATA_HOME move the folders as they move the harnesses' own files."""
    s = serve()
    headers = auth(issue(s.app, "agent"))
    codex_home = tmp_path / "codex-home"
    rollout = codex_home / "sessions" / "2026" / "11" / "rollout.jsonl"
    rollout.parent.mkdir(parents=True)
    from fakes.transcripts import codex

    rollout.write_text(codex(TURNS), "utf-8")
    assert _hook(s, headers, str(rollout), harness="codex").status_code == 403
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    ok = _hook(s, headers, str(rollout), harness="codex")
    assert ok.status_code == 200, ok.text
    # One harness's folder is not another's.
    assert _hook(s, headers, str(rollout), harness="claude-code").status_code == 403


def test_a_non_admin_cursor_hook_reads_only_agent_transcripts(serve, home: Path) -> None:
    """Cursor keeps more than transcripts under ~/.cursor/projects/<project>/ (terminal output,
    tool results, MCP descriptors); only its `agent-transcripts/` are a hook's to import. A
    terminal log that happens to read as a plain-text transcript is refused like any host file."""
    s = serve()
    project = home / ".cursor" / "projects" / "home-me-app"
    transcripts, terminals = project / "agent-transcripts", project / "terminals"
    transcripts.mkdir(parents=True)
    terminals.mkdir()
    # `kubectl config view --raw` in Cursor's terminal: "user:" reads as a plain-text turn.
    (terminals / "1.txt").write_text(f"users:\n- name: me\n  user:\n    token: {TOKEN}\n", "utf-8")
    (project / "loose.txt").write_text(f"user: hi\nassistant: {TOKEN}\n", "utf-8")
    (transcripts / "link.txt").symlink_to(terminals / "1.txt")
    kept = transcripts / "c1.jsonl"
    kept.write_text(json.dumps({"role": "user", "message": {"content": [
        {"type": "text", "text": "<user_query>Heron is the staging cluster.</user_query>"}]}}) + "\n",
        "utf-8")
    refused = {
        "terminal": terminals / "1.txt",
        "beside the folders": project / "loose.txt",
        "link out of agent-transcripts": transcripts / "link.txt",
        "dot-dot": transcripts / ".." / "terminals" / "1.txt",
        "the gh token": secret_path(home),
    }
    for role in NON_ADMIN:
        headers = auth(issue(s.app, role))
        answers = {name: _hook(s, headers, str(path), harness="cursor")
                   for name, path in refused.items()}
        shown = {(r.status_code, r.json().get("error")) for r in answers.values()}
        assert len(shown) == 1, {n: (r.status_code, r.text) for n, r in answers.items()}
        assert shown.pop()[0] == 403
        assert sessions_total(s) == 0
    ok = _hook(s, auth(issue(s.app, "agent")), str(kept), harness="cursor")
    assert ok.status_code == 200, ok.text
    assert TOKEN not in s.client.get("/api/sessions").text


# --- links out of a folder: the folder connector and skill install -----------------------------

CHAT = "the door code of the lab is 7319"
SKILL = """---
name: release-notes
description: Write release notes from the merged pull requests
---
Collect merged pull requests with `gh pr list --state merged`, group them by label.
"""


def _private(home: Path) -> Path:
    private = home / "private"
    private.mkdir(mode=0o700)
    (private / "chat.txt").write_text(CHAT, "utf-8")
    return private


def test_a_folder_connector_skips_and_reports_links_out_of_its_folder(
    serve, backend: str, home: Path
) -> None:
    s = serve()
    private = _private(home)
    vault = home / "vault"
    (vault / "daily").mkdir(parents=True)
    (vault / "garden.md").write_text("The tomatoes go in the south bed.", "utf-8")
    (vault / "leak.md").symlink_to(private / "chat.txt")
    (vault / "daily" / "up.md").symlink_to(Path("..") / ".." / "private" / "chat.txt")
    (vault / "same.md").symlink_to(vault / "garden.md")  # inside the folder: kept
    (vault / "private").symlink_to(private)  # a folder link out: reported, never walked
    made = s.client.post("/api/connectors", json={"path": str(vault), "project": "beta"})
    assert made.status_code == 200, made.text
    report = s.client.post(f"/api/connectors/{made.json()['id']}/sync").json()
    assert report["added"] >= 1
    assert sorted(report["links_skipped"]) == ["daily/up.md", "leak.md", "private"]
    s.app.run_pipeline_until_idle(only=["documents"])
    sources = [d["source_url"] for d in s.client.get("/api/documents").json()["items"]]
    assert {Path(p).name for p in sources} == {"garden.md"}  # same.md is garden.md's link
    beta = auth(issue(s.app, "agent", project="beta"))
    found = s.client.post("/api/memory/recall", headers=beta,
                          json={"query": "door code of the lab", "mode": "keyword"}).json()
    assert "7319" not in str(found) and found["results"] == []
    health = s.client.get(f"/api/connectors/{made.json()['id']}").json()
    assert "leak.md" in (health["last_error"] or "")  # said where the operator looks


def test_a_skill_folder_is_installed_without_links_out_of_it(
    serve, backend: str, home: Path
) -> None:
    s = serve()
    private = _private(home)
    source = home / "skill-src"
    (source / "refs").mkdir(parents=True)
    (source / "SKILL.md").write_text(SKILL, "utf-8")
    (source / "refs" / "guide.md").write_text("Group by label.", "utf-8")
    (source / "notes.md").symlink_to(private / "chat.txt")
    (source / "private").symlink_to(private)  # a folder link out
    (source / "guide.md").symlink_to(source / "refs" / "guide.md")  # inside: kept
    reply = s.client.post("/api/skills", json={"path": str(source)})
    assert reply.status_code in (200, 201), reply.text
    assert sorted(reply.json()["links_skipped"]) == ["notes.md", "private"]
    installed = s.cfg.workspace / "skills" / "release-notes"
    assert sorted(p.relative_to(installed).as_posix() for p in installed.rglob("*")) == [
        "SKILL.md", "guide.md", "refs", "refs/guide.md"]
    assert CHAT not in "".join(p.read_text("utf-8") for p in installed.rglob("*.md"))


# --- paths from an export bundle or the database ----------------------------------------------

SECRET_KEY = "ssh-ed25519 AAAA-the-real-authorized-key me@laptop"
SECRET_TALK = "the payroll password is hunter2"


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _rewrite(table: Path, change: Any) -> None:
    rows = [json.loads(line) for line in table.read_text("utf-8").splitlines() if line.strip()]
    table.write_text(_jsonl([change(r) for r in rows]), "utf-8")


def _secrets(home: Path) -> tuple[Path, Path]:
    keys = home / ".ssh" / "authorized_keys"
    keys.parent.mkdir(mode=0o700)
    keys.write_text(SECRET_KEY + "\n", "utf-8")
    talk = home / "other" / "talk.jsonl"  # a cleaned transcript elsewhere on the host
    talk.parent.mkdir()
    talk.write_text(json.dumps({"role": "user", "text": SECRET_TALK}) + "\n", "utf-8")
    return keys, talk


def test_a_crafted_bundle_plants_no_path_and_no_live_connector(
    serve, backend: str, home: Path, tmp_path: Path
) -> None:
    keys, talk = _secrets(home)
    private = _private(home)
    source = serve()
    for sid in ("s1", "s2"):
        made = source.client.post(f"/api/sessions/{sid}/transcript", json={
            "harness": "claude-code", "content": claude_code(TURNS), "project": "beta"})
        assert made.status_code == 201, made.text
    vault = tmp_path / "vault"
    vault.mkdir()
    connector = source.client.post("/api/connectors", json={"path": str(vault), "project": "beta"})
    bundle = tmp_path / "bundle"
    export_bundle(source.app.portable, source.cfg.workspace, bundle)
    # The crafted rows: s1 points its files at ~/.ssh (absolute, and by `..`), s2 at a
    # transcript outside the workspace; the connector at a private 0700 folder.
    climb = "/".join([".."] * len(source.cfg.workspace.relative_to("/").parts))
    paths = {"s1": (str(keys), f"{climb}{keys}"), "s2": (str(talk), str(talk))}
    _rewrite(bundle / "tables" / "session_transcripts.jsonl", lambda r: {
        **r, "path": paths[r["session_id"]][0], "raw_path": paths[r["session_id"]][1]})
    _rewrite(bundle / "tables" / "connectors.jsonl", lambda r: {
        **r, "config_json": json.dumps({**json.loads(r["config_json"]), "path": str(private)})})

    s = serve()
    report = s.client.post("/api/import", json={"path": str(bundle)})
    assert report.status_code == 200, report.text
    refused = report.json()["refused"]["session_transcripts"]
    assert len(refused) == 2 and all("memory/transcripts" in r["reason"] for r in refused)
    disabled = report.json()["connectors_disabled"]
    assert [c["id"] for c in disabled] == [connector.json()["id"]]
    assert disabled[0]["path"] == str(private)
    beta = auth(issue(s.app, "agent", project="beta"))
    # A later transcript write of the same session id replaces nothing outside the workspace.
    more = [*TURNS, ("user", "And production is Osprey."), ("assistant", "Osprey, noted.")]
    wrote = s.client.post("/api/sessions/s1/transcript", headers=beta,
                          json={"harness": "claude-code", "content": claude_code(more)})
    assert wrote.status_code in (200, 201), wrote.text
    assert keys.read_text("utf-8") == SECRET_KEY + "\n"
    # A project-scoped read shows no file outside the workspace.
    shown = s.client.get("/api/sessions/s2", headers=beta)
    assert SECRET_TALK not in shown.text
    # The planted connector is disabled: the worker's sync passes it by, a sync asks for it.
    cid = connector.json()["id"]
    assert s.client.get(f"/api/connectors/{cid}").json()["enabled"] is False
    assert s.app.connectors.sync_all() == []
    refused_sync = s.client.post(f"/api/connectors/{cid}/sync")
    assert refused_sync.status_code == 409 and "enable" in refused_sync.json()["error"]
    s.app.run_pipeline_until_idle(only=["documents"])
    found = s.client.post("/api/memory/recall", headers=beta,
                          json={"query": "door code of the lab", "mode": "keyword"}).json()
    assert found["results"] == []


def test_paths_in_the_database_stay_inside_the_workspace(
    serve, backend: str, home: Path
) -> None:
    """Rows written behind the daemon's back (an older import, a shared database): a stored
    path outside memory/transcripts is never read, written or deleted."""
    keys, talk = _secrets(home)
    s = serve()
    for sid in ("s1", "s2"):
        s.client.post(f"/api/sessions/{sid}/transcript", json={
            "harness": "claude-code", "content": claude_code(TURNS), "project": "beta"})
    s.sql(f"UPDATE session_transcripts SET path = '{keys}', raw_path = '{keys}'"
          " WHERE session_id = 's1'")
    s.sql(f"UPDATE session_transcripts SET path = '{talk}', raw_path = '../../{talk.name}'"
          " WHERE session_id = 's2'")
    beta = auth(issue(s.app, "agent", project="beta"))
    assert SECRET_TALK not in s.client.get("/api/sessions/s2", headers=beta).text
    more = [*TURNS, ("user", "And production is Osprey."), ("assistant", "Osprey, noted.")]
    wrote = s.client.post("/api/sessions/s1/transcript", headers=beta,
                          json={"harness": "claude-code", "content": claude_code(more)})
    assert wrote.status_code == 409 and "memory/transcripts" in wrote.json()["error"]
    assert keys.read_text("utf-8") == SECRET_KEY + "\n"
    gone = s.client.delete("/api/sessions/s1", headers=beta)
    assert gone.status_code == 200 and str(keys) not in gone.json()["removed_paths"]
    assert keys.read_text("utf-8") == SECRET_KEY + "\n" and talk.exists()


# --- every surface that takes a path ------------------------------------------------------------

# The routes whose body names a file or folder on the daemon's host, with the field and a
# minimal body: admin only, except the hooks' transcript_path (confined, tested above).
PATH_ROUTES: dict[str, tuple[str, dict[str, Any]]] = {
    "/api/sessions/{session_id}/transcript": ("path", {"harness": "generic"}),
    "/api/documents": ("path", {}),
    "/api/connectors": ("path", {}),
    "/api/skills": ("path", {}),
    "/api/import": ("path", {}),
    "/api/hooks/{event}": ("transcript_path", {}),
}
PATHLIKE = ("path", "file", "folder", "dir")


def _body_fields(op: dict[str, Any], spec: dict[str, Any]) -> set[str]:
    schema = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    if "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return set(schema.get("properties", {})) | {p["name"] for p in op.get("parameters", [])}


def test_no_route_tool_prompt_or_resource_reads_a_host_path_for_a_non_admin(
    serve, home: Path
) -> None:
    """The whole surface walked: every route naming a host path in its body is in PATH_ROUTES
    (a new one fails here until it is judged), each refuses a non-admin token alike; no MCP
    tool, prompt or resource template takes a path at all."""
    import anyio
    from mcp.client import Client

    from auth_tokens import mcp_http

    s = serve()
    spec = s.client.get("/openapi.json").json()
    taking = {
        route for route, ops in spec["paths"].items() for method, op in ops.items()
        if method == "post" and any(f.endswith(PATHLIKE) for f in _body_fields(op, spec))
    }
    assert taking == set(PATH_ROUTES), taking
    operator = auth(issue(s.app, "operator"))  # every permission but admin
    for route, (field, body) in PATH_ROUTES.items():
        if field == "transcript_path":
            continue
        for target in (secret_path(home), home / "missing", home):
            reply = s.client.post(route.format(session_id="x"), headers=operator,
                                  json={**body, field: str(target)})
            assert reply.status_code == 403 and "admin" in reply.json()["error"], (route, reply.text)

    async def listed() -> list[tuple[str, set[str]]]:
        async with Client(mcp_http(f"{s.url}/mcp", issue(s.app, "operator"))) as client:
            tools = [(t.name, set(t.input_schema.get("properties", {})))
                     for t in (await client.list_tools()).tools]
            prompts = [(p.name, {a.name for a in p.arguments or []})
                       for p in (await client.list_prompts()).prompts]
            templates = [(str(t.uri_template), set(re.findall(r"{(\w+)}", str(t.uri_template))))
                         for t in (await client.list_resource_templates()).resource_templates]
            return tools + prompts + templates

    surface = anyio.run(listed)
    assert surface and not [(name, args) for name, args in surface
                            if any(a.endswith(PATHLIKE) for a in args)]


def test_a_bundled_document_row_cannot_turn_a_text_ingest_into_a_file_read(
    serve, backend: str, home: Path, tmp_path: Path
) -> None:
    """A documents row naming a host file under the key a scoped token's text produces: the
    requeue reads what that registration sent, never the row's stored path."""
    import hashlib

    private = _private(home)
    source = serve()
    text = "Notes on the south bed."
    made = source.client.post("/api/documents", json={"content": "placeholder", "project": "beta"})
    assert made.status_code == 202, made.text
    bundle = tmp_path / "bundle"
    export_bundle(source.app.portable, source.cfg.workspace, bundle)
    _rewrite(bundle / "tables" / "documents.jsonl", lambda r: {
        **r, "source_type": "file", "source_url": str(private / "chat.txt"),
        "source_key": "text:" + hashlib.sha256(text.encode()).hexdigest(),
        "content_hash": "0" * 64, "status": "done"})
    s = serve()
    assert s.client.post("/api/import", json={"path": str(bundle)}).status_code == 200
    beta = auth(issue(s.app, "agent", project="beta"))
    again = s.client.post("/api/documents", headers=beta, json={"content": text})
    assert again.status_code in (200, 202), again.text
    s.app.run_pipeline_until_idle(only=["documents"])
    found = s.client.post("/api/memory/recall", headers=beta,
                          json={"query": "door code of the lab", "mode": "keyword"}).json()
    assert "7319" not in str(found)
    shown = s.client.get(f"/api/documents/{again.json()['id']}", headers=beta).json()
    assert shown["source_type"] == "text" and CHAT not in str(shown)
