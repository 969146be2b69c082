"""`signet init` and `signet token ...` as real subprocesses, against a real daemon where it
matters (a revoke must bite the running daemon at once; a login link must work on it)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from daemon_process import free_port, make_workspace

from auth_tokens import auth
from signet.config import Config
from signet.daemon.tokens import TokenAuthority
from signet.store.db import Store


def signet(ws: Path, *args: str, port: int = 1) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIGNET_WORKSPACE": str(ws), "SIGNET_PORT": str(port),
           "SIGNET_BIND": "127.0.0.1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "signet", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def signet_json(ws: Path, *args: str, port: int = 1) -> Any:
    done = signet(ws, "--json", *args, port=port)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def verify(ws: Path, token: str) -> Any:
    cfg = Config.default(ws)
    store = Store.open(cfg.db_path)
    try:
        return TokenAuthority.for_workspace(cfg, store).verify(token)
    finally:
        store.close()


def test_init_makes_the_secret_and_a_private_admin_token_once(tmp_path) -> None:
    ws = tmp_path / "ws"
    first = signet_json(ws, "init", "--path", str(ws))
    token_path, secret = ws / ".daemon" / "token", ws / ".secrets" / "auth.key"
    assert str(token_path) in first["created"]
    assert token_path.stat().st_mode & 0o777 == 0o600 and secret.stat().st_mode & 0o777 == 0o600
    token = token_path.read_text().strip()
    principal = verify(ws, token)
    assert principal.role == "admin" and not principal.scoped
    again = signet_json(ws, "init", "--path", str(ws))
    assert str(token_path) in again["kept"] and token_path.read_text().strip() == token


def test_create_shows_the_token_once_and_list_never_does(tmp_path) -> None:
    ws = tmp_path / "ws"
    signet_json(ws, "init", "--path", str(ws))
    made = signet(ws, "token", "create", "--role", "agent", "--permissions", "recall,remember",
                  "--project", "acme", "--agent", "claude", "--ttl-days", "2", "--name", "ci")
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert token.startswith("sgt1.") and "shown once" in made.stderr
    principal = verify(ws, token)
    assert principal.permissions == {"recall", "remember"}
    assert (principal.scope_project, principal.scope_agent) == ("acme", "claude")
    listed = signet_json(ws, "token", "list")["items"]
    assert [t["name"] for t in listed] == ["install-admin", "ci"]
    assert token not in json.dumps(listed) and token.split(".")[2] not in json.dumps(listed)
    assert "ci" in signet(ws, "token", "list").stdout
    refused = signet(ws, "token", "create", "--role", "readonly", "--permissions", "admin")
    assert refused.returncode == 1 and "cannot carry admin" in refused.stderr
    unknown = signet(ws, "token", "revoke", "tok_nope")
    assert unknown.returncode == 1 and "no live token" in unknown.stderr


def test_revoke_and_login_link_act_on_a_running_daemon(tmp_path, daemons) -> None:
    ws = make_workspace(tmp_path / "ws")
    port = free_port()
    daemon = daemons(ws, port)
    daemon.wait_healthy()
    made = signet_json(ws, "token", "create", "--role", "readonly", "--name", "dash", port=port)
    headers = auth(made["token"])
    assert httpx.get(f"{daemon.url}/api/memories", headers=headers).status_code == 200
    assert signet_json(ws, "token", "revoke", made["id"], port=port) == {"revoked": made["id"]}
    assert httpx.get(f"{daemon.url}/api/memories", headers=headers).status_code == 401
    listed = signet_json(ws, "token", "list", "--all", port=port)["items"]
    assert next(t for t in listed if t["id"] == made["id"])["revoked_at"] is not None
    assert made["id"] not in {t["id"] for t in signet_json(ws, "token", "list", port=port)["items"]}

    link = signet(ws, "token", "login-link", port=port)
    assert link.returncode == 0, link.stderr
    url = link.stdout.strip()
    assert url.startswith(f"http://127.0.0.1:{port}/app/login?code=")
    exchanged = httpx.get(url)
    assert exchanged.status_code == 303 and exchanged.headers["location"] == "/app/memories"
    session = exchanged.cookies["signet_session"]
    cookie = {"Cookie": f"signet_session={session}"}
    assert httpx.get(f"{daemon.url}/api/status", headers=cookie).status_code == 200
    again = httpx.get(url)  # single use
    assert again.status_code == 303 and "login=failed" in again.headers["location"]
    assert "signet_session" not in again.cookies
    code = url.split("code=")[1]
    with sqlite3.connect(ws / "memory" / "memories.db") as conn:
        stored = {row[0] for row in conn.execute("SELECT key_hash FROM tokens")}
    assert session not in stored and code not in stored
