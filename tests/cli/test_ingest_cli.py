"""`signet ingest` as a real subprocess: a folder recursively, stdin, a no-op re-run, and a
file that cannot be read failing with its reason."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

YAML = "embedding:\n  provider: none\nmemory:\n  pipelineV2:\n    enabled: false\n"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(ws: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIGNET_WORKSPACE": str(ws), "SIGNET_PORT": str(_free_port()),
           "HOME": str(ws.parent), "OMP_NUM_THREADS": "1", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "signet", *args], env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_a_folder_is_ingested_recursively_and_a_rerun_is_a_no_op(tmp_path: Path) -> None:
    ws = tmp_path / "agents"
    ws.mkdir()
    (ws / "agent.yaml").write_text(YAML)
    vault = tmp_path / "vault"
    (vault / "daily").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    (vault / "plans.md").write_text("# Plans\n\nShip the retention worker on Friday.")
    (vault / "daily" / "monday.md").write_text("Met Dana about the garden shed.")
    (vault / "daily" / "page.html").write_text("<title>Page</title><p>Dana likes roses.</p>")
    (vault / ".obsidian" / "workspace.md").write_text("editor state, not a note")
    (vault / "image.png").write_bytes(b"\x89PNG")
    first = _run(ws, "--json", "ingest", str(vault))
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)
    assert (data["documents"], data["done"], data["unchanged"], data["failed"]) == (3, 3, 0, [])
    assert {i["title"] for i in data["items"]} == {"Plans", "monday", "Page"}
    again = json.loads(_run(ws, "--json", "ingest", str(vault)).stdout)
    assert (again["unchanged"], again["done"]) == (3, 3)
    found = json.loads(_run(ws, "--json", "recall", "garden shed Dana").stdout)
    assert any("garden shed" in h["content"] for h in found["results"])
    readable = _run(ws, "ingest", str(vault / "plans.md"))
    assert "1 of 1 document(s) done (1 unchanged)" in readable.stdout
    listed = json.loads(_run(ws, "--json", "documents", "list").stdout)
    assert listed["total"] == 3 and {d["status"] for d in listed["items"]} == {"done"}
    plans = next(d for d in listed["items"] if d["title"] == "Plans")
    shown = json.loads(_run(ws, "--json", "documents", "show", plans["id"]).stdout)
    assert len(shown["chunks"]) == 1
    deleted = json.loads(_run(ws, "--json", "documents", "delete", plans["id"]).stdout)
    assert deleted["forgotten"] == 1
    assert _run(ws, "documents", "show", plans["id"]).returncode == 1


def test_stdin_and_a_failing_file(tmp_path: Path) -> None:
    ws = tmp_path / "agents"
    ws.mkdir()
    (ws / "agent.yaml").write_text(YAML)
    piped = json.loads(_run(ws, "--json", "ingest", "-", "--title", "Pasted",
                            stdin="Pasted text about kettles.").stdout)
    assert piped["done"] == 1 and piped["items"][0]["title"] == "Pasted"
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe\xfa")
    failed = _run(ws, "ingest", str(bad))
    assert failed.returncode == 1 and "not UTF-8" in failed.stderr
    missing = _run(ws, "ingest", str(tmp_path / "nope.md"))
    assert missing.returncode == 1 and "no such file" in missing.stderr
    # A device (or a FIFO) is there but is no document: said so, and never opened.
    device = _run(ws, "ingest", "/dev/null")
    assert device.returncode == 1 and "/dev/null is not a regular file" in device.stderr, device.stderr


def test_connector_add_list_sync_remove(tmp_path: Path) -> None:
    ws = tmp_path / "agents"
    ws.mkdir()
    (ws / "agent.yaml").write_text(YAML)
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "one.md").write_text("The boat is moored at pier nine.")
    added = json.loads(_run(ws, "--json", "connector", "add", str(vault)).stdout)
    assert added["sync"]["added"] == 1
    (vault / "two.md").write_text("The sails were mended in March.")
    synced = json.loads(_run(ws, "--json", "connector", "sync").stdout)["synced"]
    assert [(r["added"], r["skipped"]) for r in synced] == [(1, 1)]
    listed = _run(ws, "connector", "list")
    assert added["id"] in listed.stdout and "idle" in listed.stdout
    found = json.loads(_run(ws, "--json", "recall", "sails mended").stdout)
    assert any("mended" in h["content"] for h in found["results"])
    removed = json.loads(_run(ws, "--json", "connector", "remove", added["id"]).stdout)
    assert removed["forgotten"] == 2
    assert json.loads(_run(ws, "--json", "connector", "list").stdout)["connectors"] == []


def test_a_refused_file_in_a_folder_is_reported_and_the_rest_indexed(tmp_path: Path) -> None:
    ws = tmp_path / "agents"
    ws.mkdir()
    (ws / "agent.yaml").write_text(YAML + "documents:\n  max_file_bytes: 200\n")
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a-big.md").write_text("A long note about the orchard. " * 20)
    (vault / "b-small.md").write_text("Pears ripen in September.")
    done = _run(ws, "--json", "ingest", str(vault))
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert (data["documents"], data["done"]) == (1, 1)
    [refused] = data["failed"]
    assert refused["source"].endswith("a-big.md") and "max_file_bytes" in refused["error"]
    listed = json.loads(_run(ws, "--json", "documents", "list").stdout)
    assert [d["status"] for d in listed["items"]] == ["done"]


def test_an_ingested_document_is_found_by_meaning_without_a_daemon(tmp_path: Path) -> None:
    """No embed worker runs in the CLI's process: the chunks it writes embed on the write
    path (a deferred vector would wait for the next daemon start)."""
    ws = tmp_path / "agents"
    ws.mkdir()
    (ws / "agent.yaml").write_text(
        "embedding:\n  provider: local\nmemory:\n  pipelineV2:\n    enabled: false\n"
    )
    note = tmp_path / "archive.md"
    note.write_text("The quarterly invoices are archived in the blue cabinet.")
    assert _run(ws, "ingest", str(note)).returncode == 0
    done = _run(ws, "--json", "recall", "where do the invoices get filed", "--mode", "vector")
    assert done.returncode == 0, done.stderr
    assert any("blue cabinet" in h["content"] for h in json.loads(done.stdout)["results"])
