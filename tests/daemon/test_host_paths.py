"""No route makes the daemon read a path on its host for a caller without the admin permission.

A path in a request is read with the daemon's own rights, so for any other token it is either
refused outright (`POST /api/sessions/{id}/transcript {"path"}`, like documents, connectors,
skills and imports) or, for the harness hooks' `transcript_path`, confined to the harness's own
transcript folder after symlinks and `..` are resolved. Every refusal is one status and one
message, whether the file is missing, outside, unreadable or not a transcript: a token learns
nothing about the host's files. HOME points at a tmp folder; the real home is never touched.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from auth_tokens import auth, issue
from fakes.transcripts import claude_code, conversation

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
