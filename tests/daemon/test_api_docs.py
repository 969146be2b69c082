"""The API's description is reachable: `signet api spec` prints the OpenAPI document with no
token or daemon (and creates no workspace), and a real daemon serves `/docs`, a readable page
without any CDN script, to a bearer token or a logged-in browser (the dashboard's cookie)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx

from auth_tokens import authority


def test_signet_api_spec_prints_the_openapi_document_and_creates_nothing(tmp_path: Path) -> None:
    workspace = tmp_path / "nowhere"
    env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "signet", "api", "spec"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    spec = json.loads(done.stdout)
    assert spec["openapi"].startswith("3.")
    assert "post" in spec["paths"]["/api/memory/recall"]
    assert "/docs" not in spec["paths"]
    assert not workspace.exists()
    out = tmp_path / "spec.json"
    subprocess.run([sys.executable, "-m", "signet", "api", "spec", "--out", str(out)], env=env,
                   check=True, capture_output=True, timeout=120)
    assert json.loads(out.read_text("utf-8")) == spec


def test_docs_are_served_to_a_token_or_a_logged_in_browser_only(serve) -> None:
    s = serve()
    anonymous = httpx.get(f"{s.url}/docs")
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "unauthorized"

    page = s.client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "<code>/api/memory/recall</code>" in page.text and "<script" not in page.text
    assert "href=/openapi.json" in page.text

    with httpx.Client(base_url=s.url) as browser:  # no Authorization header: a cookie session
        code = authority(s.app).login_code()
        login = browser.get("/app/login", params={"code": code})
        assert login.status_code in (200, 303)
        assert browser.get("/docs").status_code == 200
        assert browser.get("/openapi.json").json()["paths"]["/api/memory/recall"]
