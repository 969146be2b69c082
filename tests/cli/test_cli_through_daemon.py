"""The CLI's commands reach a running daemon instead of opening a store of their own.

A real daemon serves workspace A on a loopback port; the CLI runs as a subprocess on workspace
B, which has no database, with SIGNET_DAEMON_URL/SIGNET_TOKEN pointing at A's daemon. Every
command must show or change A's data: a command that opened its own store would find B empty
(or refuse it as missing), and B must still hold no database afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from daemon_process import DaemonProcess, free_port, make_workspace

from signet.client import Client

DEPENDENCIES = [{"source": a, "target": b, "type": "uses", "strength": 0.9}
                for a, b in [("Ford Mustang", "Garage"), ("Garage", "Toolbox"),
                             ("Ford Mustang", "Toolbox")]]


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    process = DaemonProcess(make_workspace(tmp_path_factory.mktemp("a") / "ws"), free_port())
    process.wait_healthy(timeout_s=60)
    yield process
    process.kill()


@pytest.fixture(scope="module")
def client(daemon: DaemonProcess) -> Iterator[Client]:
    with Client(daemon.url, daemon.headers()["Authorization"].split()[1], actor="test") as opened:
        yield opened


@pytest.fixture
def workspace_b(tmp_path: Path) -> Iterator[Path]:
    b = make_workspace(tmp_path / "b")
    yield b
    assert not list(b.rglob("*.db")), "the CLI opened a store of its own in workspace B"


def cli(daemon: DaemonProcess, workspace: Path, *args: str, stdin: str | None = None) -> Any:
    token = daemon.headers()["Authorization"].split()[1]
    env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "HOME": str(workspace.parent),
           "SIGNET_DAEMON_URL": daemon.url, "SIGNET_TOKEN": token, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "signet", *args, "--json"], env=env, input=stdin,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_graph_commands_read_and_pin_the_daemons_graph(
    daemon: DaemonProcess, client: Client, workspace_b: Path
) -> None:
    client._call("POST", "/api/knowledge/apply", json={"graph": {"dependencies": DEPENDENCIES}})
    listed = cli(daemon, workspace_b, "graph", "entities")
    assert {e["name"] for e in listed["items"]} >= {"Ford Mustang", "Garage", "Toolbox"}
    shown = cli(daemon, workspace_b, "graph", "entity", "ford mustang")  # by name, any case
    assert shown["name"] == "Ford Mustang" and len(shown["dependencies"]) == 2

    cli(daemon, workspace_b, "graph", "pin", "Garage", "--weight", "2")
    assert client.entity("Garage")["pinned"] == "pin"
    assert cli(daemon, workspace_b, "graph", "stats")["pinned"] == 1
    cli(daemon, workspace_b, "graph", "pin", "Garage", "--remove")
    assert client.entity("Garage")["pinned"] is None

    found = cli(daemon, workspace_b, "graph", "communities", "--detect")["communities"]
    assert [c["size"] for c in found] == [3]
    assert client.communities()["communities"][0]["id"] == found[0]["id"]


def test_jobs_retention_and_maintenance_run_against_the_daemon(
    daemon: DaemonProcess, client: Client, workspace_b: Path
) -> None:
    stored = client.remember("The garage door code changed in March.")
    jobs = cli(daemon, workspace_b, "jobs", "list")
    mine = [j for j in jobs["jobs"] if j["memory_id"] == stored["id"]]
    assert mine and jobs["depths"]
    shown = cli(daemon, workspace_b, "jobs", "show", mine[0]["id"])
    assert shown["id"] == mine[0]["id"] and shown["memory_id"] == stored["id"]
    assert cli(daemon, workspace_b, "jobs", "requeue-dead") == {"requeued": 0}

    client.forget(stored["id"])
    swept = cli(daemon, workspace_b, "retention", "run", "--dry-run")
    assert swept["dry_run"] is True and "tombstones" in json.dumps(swept["steps"])
    assert client.get(stored["id"])["is_deleted"] is True  # a dry run changes nothing

    report = cli(daemon, workspace_b, "maintenance", "report")
    assert report["checks"] and "runs" in report
    before = len(report["runs"])
    cli(daemon, workspace_b, "maintenance", "run")
    assert len(client.maintenance_report()["runs"]) == before + 1  # recorded in A


def test_documents_and_lineage_go_to_the_daemon(
    daemon: DaemonProcess, client: Client, workspace_b: Path, tmp_path: Path
) -> None:
    note = tmp_path / "boat.md"
    note.write_text("# The boat\n\nThe sailing boat is moored at pier 7 in the marina.\n")
    ingested = cli(daemon, workspace_b, "ingest", str(note))
    assert ingested["done"] == 1 and ingested["chunks"] >= 1
    (item,) = ingested["items"]
    assert client.document(item["id"])["status"] == "done"  # A's worker indexed it
    listed = cli(daemon, workspace_b, "documents", "list")
    assert item["id"] in {d["id"] for d in listed["items"]}
    chunk = cli(daemon, workspace_b, "documents", "show", item["id"])["chunks"][0]["memory_id"]
    assert "pier 7" in client.get(chunk)["content"]

    assert cli(daemon, workspace_b, "lineage", chunk)["node"]["id"] == chunk
    assert "items" in cli(daemon, workspace_b, "threads", "list")
    synthesized = cli(daemon, workspace_b, "memory", "synthesize")
    assert Path(synthesized["path"]).is_relative_to(daemon.workspace)

    deleted = cli(daemon, workspace_b, "documents", "delete", item["id"])
    assert deleted["forgotten"] >= 1 and client.get(chunk)["is_deleted"] is True


def test_connectors_and_the_embedding_audit_go_to_the_daemon(
    daemon: DaemonProcess, client: Client, workspace_b: Path, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "kiln.md").write_text("# Kiln\n\nThe pottery kiln fires at 1240 degrees.\n")
    (vault / "glaze.md").write_text("# Glaze\n\nThe celadon glaze needs a reduction firing.\n")
    added = cli(daemon, workspace_b, "connector", "add", str(vault), "--name", "vault")
    assert added["sync"]["added"] == 2
    (mine,) = [c for c in client.connectors()["connectors"] if c["id"] == added["id"]]
    assert mine["documents"] == {"done": 2}  # A's worker indexed both before add returned
    listed = cli(daemon, workspace_b, "connector", "list")["connectors"]
    assert added["id"] in {c["id"] for c in listed}

    (vault / "kiln.md").write_text("# Kiln\n\nThe pottery kiln now fires at 1260 degrees.\n")
    (synced,) = cli(daemon, workspace_b, "connector", "sync", added["id"])["synced"]
    assert synced["changed"] == 1
    found = client.recall("kiln fires degrees", mode="keyword")["results"]
    assert any("1260" in hit["content"] for hit in found)

    removed = cli(daemon, workspace_b, "connector", "remove", added["id"])
    assert removed["forgotten"] >= 2
    assert added["id"] not in {c["id"] for c in client.connectors()["connectors"]}

    # In-process, B (no database) would be refused; A's daemon answers, with its embedder.
    assert cli(daemon, workspace_b, "embed", "audit")["provider"] == "none"


def test_skills_are_installed_into_the_daemons_workspace(
    daemon: DaemonProcess, client: Client, workspace_b: Path, tmp_path: Path
) -> None:
    source = tmp_path / "incoming"
    source.mkdir()
    (source / "SKILL.md").write_text(
        "---\nname: brew-coffee\ndescription: Brew pour-over coffee\nrole: kitchen\n---\n"
        "# Brewing\nBloom 30 g of coffee with 60 g of water, then pour to 500 g.\n"
    )
    installed = cli(daemon, workspace_b, "skill", "install", str(source))
    assert installed["installed"] == "brew-coffee"
    assert (daemon.workspace / "skills" / "brew-coffee" / "SKILL.md").is_file()
    assert not (workspace_b / "skills" / "brew-coffee").exists()
    listed = cli(daemon, workspace_b, "skill", "list")["skills"]
    assert [s["name"] for s in listed] == [s["name"] for s in client.skills()["skills"]]
    assert "brew-coffee" in {s["name"] for s in listed}
    assert cli(daemon, workspace_b, "skill", "show", "brew-coffee")["name"] == "brew-coffee"
    assert cli(daemon, workspace_b, "skill", "remove", "brew-coffee")["removed"] == "brew-coffee"
    assert "brew-coffee" not in {s["name"] for s in client.skills()["skills"]}


def test_import_writes_through_the_daemon(
    daemon: DaemonProcess, client: Client, workspace_b: Path, tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "bikes.md").write_text("# Bikes\n\n- The gravel bike needs new brake pads.\n")
    done = cli(daemon, workspace_b, "import", str(notes), "--from", "markdown")
    assert done["imported"] == 1
    found = client.recall("gravel bike brake pads", mode="keyword")["results"]
    assert found and found[0]["source_type"] == "markdown"
    events = client.history(found[0]["id"])["history"]
    assert events[0]["changed_by"] == "import-markdown"
