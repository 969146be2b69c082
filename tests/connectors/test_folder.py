"""The folder connector on a real folder and store (SQLite and PostgreSQL): incremental by mtime
and hash, changes replace chunks, deletions forget them, health reported, synced on an
interval."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config, DocumentsConfig, PipelineConfig, StoreConfig
from signet.connectors.folder import ConnectorWorker, FolderConnectors
from signet.errors import Conflict, Forbidden, Frozen, InvalidInput, NotFound
from signet.providers.hash_embedder import HashEmbedder
from signet.types import MemoryScope, RecallQuery


@pytest.fixture
def app(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> Iterator[SignetApp]:
    """The app on each backend (tests/conftest.py `backend`): SQLite, then PostgreSQL."""
    cfg = Config.default(tmp_path / "ws").replace(pipeline=PipelineConfig(enabled=False))
    if backend == "postgres":
        cfg = cfg.replace(store=StoreConfig(backend="postgres",
                                            url=request.getfixturevalue("pg_url")))
    opened = SignetApp.open(cfg, embedder=HashEmbedder(64), llm=None)
    yield opened
    opened.close()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "daily").mkdir(parents=True)
    (root / ".obsidian").mkdir()
    (root / "garden.md").write_text("# Garden\n\nThe tomatoes go in the south bed.")
    (root / "daily" / "mon.md").write_text("Monday: fixed the greenhouse door.")
    (root / ".obsidian" / "app.md").write_text("editor settings")
    return root


def _drain(app: SignetApp) -> None:
    app.run_pipeline_until_idle(only=["documents"])


def _bump(path: Path, text: str) -> None:
    path.write_text(text)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))


def test_sync_is_incremental_and_honours_changes_and_deletions(app: SignetApp, vault: Path) -> None:
    added = app.connectors.add(vault, project="home")
    first = app.connectors.sync(added["id"])
    assert (first.added, first.changed, first.removed, first.skipped) == (2, 0, 0, 0)
    _drain(app)
    health = app.connectors.get(added["id"])
    assert health["status"] == "idle" and health["files"] == 2 and health["last_sync_at"]
    assert health["documents"] == {"done": 2}
    # Nothing touched: nothing read.
    assert app.connectors.sync(added["id"]).skipped == 2
    # Touched but the same bytes: read, found unchanged.
    _bump(vault / "garden.md", (vault / "garden.md").read_text())
    assert app.connectors.sync(added["id"]).unchanged == 1
    # Changed: its chunks are replaced.
    _bump(vault / "garden.md", "# Garden\n\nThe peppers go in the south bed now.")
    assert app.connectors.sync(added["id"]).changed == 1
    _drain(app)
    hits = app.recall(RecallQuery("peppers south bed", limit=3, mode="keyword")).hits
    assert hits and "peppers" in hits[0].memory.content and hits[0].memory.project == "home"
    assert not app.recall(RecallQuery("tomatoes", mode="keyword")).hits
    # Deleted: its document goes, its chunks are forgotten.
    (vault / "daily" / "mon.md").unlink()
    assert app.connectors.sync(added["id"]).removed == 1
    assert not app.recall(RecallQuery("greenhouse door", mode="keyword")).hits
    assert app.connectors.get(added["id"])["documents"] == {"done": 1}


def test_a_missing_folder_puts_the_connector_in_error(app: SignetApp, vault: Path) -> None:
    added = app.connectors.add(vault)
    vault.rename(vault.with_name("moved"))
    with pytest.raises(InvalidInput, match="folder is gone"):
        app.connectors.sync(added["id"])
    health = app.connectors.get(added["id"])
    assert health["status"] == "error" and "folder is gone" in health["last_error"]
    with pytest.raises(NotFound, match="no such folder"):
        app.connectors.add(vault)


def test_remove_forgets_the_documents_and_scope_is_enforced(app: SignetApp, vault: Path) -> None:
    added = app.connectors.add(vault, project="home")
    app.connectors.sync(added["id"])
    _drain(app)
    with pytest.raises(Forbidden):
        app.connectors.add(vault, scope=MemoryScope(project="home"))
    other = MemoryScope(project="work")
    assert app.connectors.list(other) == []
    with pytest.raises(NotFound):
        app.connectors.sync(added["id"], other)
    assert app.connectors.remove(added["id"])["forgotten"] == 2
    assert app.connectors.list() == [] and app.documents.list()["total"] == 0


def test_the_worker_syncs_every_interval(app: SignetApp, vault: Path) -> None:
    app.connectors.add(vault)
    worker = ConnectorWorker(app.connectors, DocumentsConfig().connector_sync_interval_ms)
    now = datetime.now(UTC)
    assert worker.tick(now) is True
    (vault / "new.md").write_text("A new note about compost.")
    assert worker.tick(now + timedelta(minutes=1)) is False  # not due yet
    assert worker.tick(now + timedelta(minutes=6)) is True
    assert app.documents.list()["total"] == 3


def test_a_file_that_grows_past_the_limit_keeps_its_document(app: SignetApp, vault: Path) -> None:
    app.documents.cfg = DocumentsConfig(max_file_bytes=200)
    added = app.connectors.add(vault)
    app.connectors.sync(added["id"])
    _drain(app)
    _bump(vault / "garden.md", "The tomatoes go in the south bed. " * 20)
    report = app.connectors.sync(added["id"])
    assert report.removed == 0 and "garden.md" in report.errors[0]
    assert app.connectors.get(added["id"])["documents"] == {"done": 2}
    assert "max_file_bytes" in app.connectors.get(added["id"])["last_error"]
    hits = app.recall(RecallQuery("tomatoes south bed", mode="keyword")).hits
    assert hits and "tomatoes" in hits[0].memory.content


def test_with_mutations_frozen_connectors_change_nothing(app: SignetApp, vault: Path) -> None:
    added = app.connectors.add(vault)
    app.documents.frozen = True
    for attempt in (lambda: app.connectors.add(vault), lambda: app.connectors.sync(added["id"]),
                    lambda: app.connectors.remove(added["id"])):
        with pytest.raises(Frozen):
            attempt()
    assert [c["id"] for c in app.connectors.list()] == [added["id"]]
    assert app.connectors.get(added["id"])["status"] == "idle"
    assert app.connectors.get(added["id"])["last_sync_at"] is None


def test_only_a_daemon_on_the_folders_host_syncs_it(app: SignetApp, vault: Path) -> None:
    """Daemons on other machines share the database, not the folder: one elsewhere neither
    reads the path nor forgets the documents of files it cannot see."""
    here = FolderConnectors(app.documents, host="laptop")
    elsewhere = FolderConnectors(app.documents, host="server")
    added = here.add(vault)
    assert added["config"]["host"] == "laptop"
    here.sync(added["id"])
    with pytest.raises(Conflict, match="host 'laptop'"):
        elsewhere.sync(added["id"])
    now = datetime.now(UTC)
    assert ConnectorWorker(elsewhere, 1000).tick(now) is False  # skipped, not synced
    (vault / "garden.md").unlink()
    assert ConnectorWorker(elsewhere, 1000).tick(now) is False
    assert here.get(added["id"])["documents"] == {"queued": 2}  # nothing forgotten elsewhere
    assert ConnectorWorker(here, 1000).tick(now) is True
    assert here.get(added["id"])["documents"] == {"queued": 1}


def _texts(app: SignetApp, query: str) -> list[str]:
    return [h.memory.content for h in app.recall(RecallQuery(query, mode="keyword")).hits]


def test_a_file_has_one_document_whoever_ingested_it(app: SignetApp, vault: Path) -> None:
    # `signet ingest vault/` then `signet connector add vault/`: the connector adopts the
    # documents already there; edits and deletions then reach recall.
    for path in (vault / "garden.md", vault / "daily" / "mon.md"):
        app.documents.ingest_file(path)
    _drain(app)
    added = app.connectors.add(vault)
    first = app.connectors.sync(added["id"])
    assert (first.added, first.unchanged) == (0, 2)
    listed = app.documents.list()
    assert listed["total"] == 2
    assert {d["connector_id"] for d in listed["items"]} == {added["id"]}

    _bump(vault / "garden.md", "# Garden\n\nThe squash goes in the north bed.")
    (vault / "daily" / "mon.md").unlink()
    second = app.connectors.sync(added["id"])
    assert (second.changed, second.removed) == (1, 1)
    _drain(app)
    assert app.documents.list()["total"] == 1
    assert not any("greenhouse" in t for t in _texts(app, "greenhouse door"))
    assert not any("tomatoes" in t for t in _texts(app, "tomatoes south bed"))
    assert any("north bed" in t for t in _texts(app, "squash north bed"))
    # And `signet ingest` of a file the connector holds finds its document, not a new one.
    again = app.documents.ingest_file(vault / "garden.md")
    assert again.outcome == "unchanged" and again.document.connector_id == added["id"]
