"""The secret store end to end: a key set through the CLI (stdin, never argv) authenticates a
real daemon's LLM provider configured as `secret:NAME` against the loopback fake LLM server,
and the value appears nowhere in plaintext: not in any file of the workspace, not in the
daemon's logs or output, not in any API answer. Admin-only `/api/secrets` never returns it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
from daemon_process import free_port, make_workspace

from fakes.llm_server import FakeLLMServer, Reply

VALUE = "sk-live-9f8e7d6c5b4a3210-SECRET"
OTHER = "pg-password-from-http-7777"


def signet(ws: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIGNET_WORKSPACE": str(ws), "SIGNET_PORT": "1",
           "SIGNET_BIND": "127.0.0.1", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "signet", *args], env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)


def llm_yaml(url: str, reference: str = "secret:LLM_KEY") -> str:
    return (
        "embedding:\n  provider: none\n"
        f"llm:\n  provider: openai\n  model: fake\n  base_url: {url}\n  api_key: {reference}\n"
        "memory:\n  pipelineV2:\n    hints:\n      enabled: false\n"
    )


def wait_for(predicate, timeout_s: float = 20) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_a_cli_secret_authenticates_the_llm_and_is_nowhere_in_plaintext(tmp_path, daemons) -> None:
    with FakeLLMServer(default=Reply(json.dumps({"facts": []}))) as llm:
        ws = make_workspace(tmp_path / "ws", llm_yaml(llm.url))
        stored = signet(ws, "--json", "secret", "set", "LLM_KEY", stdin=VALUE + "\n")
        assert stored.returncode == 0, stored.stderr
        assert VALUE not in stored.stdout + stored.stderr

        daemon = daemons(ws, free_port())
        daemon.wait_healthy()
        answers = []
        with httpx.Client(base_url=daemon.url, headers=daemon.headers(), timeout=10) as client:
            reply = client.post("/api/memory/remember", json={"content": "Alice moved to Paris"})
            assert reply.status_code == 200, reply.text
            assert wait_for(lambda: len(llm.requests) >= 1), "the extraction never reached the LLM"
            assert llm.requests[0].headers["authorization"] == f"Bearer {VALUE}"

            put = client.put("/api/secrets/PG_URL", json={"value": OTHER})
            assert put.status_code == 200 and set(put.json()) == {"name", "created_at", "updated_at"}
            listed = client.get("/api/secrets")
            assert [s["name"] for s in listed.json()["secrets"]] == ["LLM_KEY", "PG_URL"]
            config = client.get("/api/config").json()
            assert config["llm"]["api_key"] == "secret:LLM_KEY"
            for path in ("/api/secrets", "/api/config", "/api/status", "/api/pipeline/status",
                         "/api/telemetry/usage", "/api/telemetry/errors", "/api/memories",
                         "/openapi.json"):
                answers.append(client.get(path).text)
            assert client.delete("/api/secrets/PG_URL").json() == {"deleted": "PG_URL"}
            assert client.delete("/api/secrets/PG_URL").status_code == 404
        code, err = daemon.terminate()
        assert code == 0, err

    seen = "\n".join(answers) + err + put.text + listed.text
    for value in (VALUE, OTHER):
        assert value not in seen
        on_disk = [p for p in ws.rglob("*") if p.is_file() and value.encode() in p.read_bytes()]
        assert on_disk == []
    assert any((ws / ".daemon" / "logs").iterdir()), "the daemon wrote no log to scan"

    shown = signet(ws, "--json", "secret", "list")
    assert VALUE not in shown.stdout and json.loads(shown.stdout)["secrets"][0]["name"] == "LLM_KEY"
    refused = signet(ws, "secret", "get", "LLM_KEY")
    assert refused.returncode == 1 and "--reveal" in refused.stderr and VALUE not in refused.stdout
    assert signet(ws, "secret", "get", "LLM_KEY", "--reveal").stdout.strip() == VALUE


def test_a_scoped_or_non_admin_token_cannot_reach_the_secrets(serve) -> None:
    from auth_tokens import auth, issue

    served = serve()
    served.client.put("/api/secrets/K", json={"value": VALUE})
    for token in (issue(served.app, "operator"), issue(served.app, "admin", project="p")):
        for method, path in (("GET", "/api/secrets"), ("PUT", "/api/secrets/K"),
                             ("DELETE", "/api/secrets/K")):
            body = {"value": "x"} if method == "PUT" else None
            reply = served.client.request(method, path, json=body, headers=auth(token))
            assert reply.status_code == 403, (method, path, reply.text)
    bad = served.client.put("/api/secrets/bad%20name", json={"value": "x"})
    assert bad.status_code == 400 and "invalid secret name" in bad.json()["error"]
    assert served.client.put("/api/secrets/K", json={"value": ""}).status_code in (400, 422)
    assert served.app.secret_store().get("K") == VALUE


def test_a_missing_secret_stops_the_start_naming_the_key(tmp_path, daemons) -> None:
    ws = make_workspace(tmp_path / "ws", llm_yaml("http://127.0.0.1:9", "secret:ABSENT"))
    daemon = daemons(ws, free_port())
    code, err = daemon.finish()
    assert code != 0 and "llm.api_key: secret 'ABSENT' is not in the secret store" in err


def test_a_plaintext_api_key_in_agent_yaml_is_refused(tmp_path) -> None:
    ws = make_workspace(tmp_path / "ws", llm_yaml("http://127.0.0.1:9", "sk-plaintext-oops"))
    done = signet(ws, "status")
    assert done.returncode == 1 and "llm.api_key must be a secret reference" in done.stderr
    assert "sk-plaintext-oops" not in done.stderr


def test_set_reads_stdin_never_argv(tmp_path) -> None:
    ws = make_workspace(tmp_path / "ws", None)
    extra = signet(ws, "secret", "set", "K", VALUE)
    assert extra.returncode == 2  # no value argument exists
    empty = signet(ws, "secret", "set", "K", stdin="")
    assert empty.returncode == 1 and "empty value" in empty.stderr
