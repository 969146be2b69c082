"""Export -> import into a fresh workspace: the same ids, hashes, history, graph, documents and
files, and the same recall for 50 queries (the bundled embedding model on both sides); a re-import adds nothing; content the target holds
already is deduped; a broken bundle is refused naming the problem; backup copies a live store."""

from __future__ import annotations

import json
import random
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from signet.app import SignetApp
from signet.clock import Clock, ManualClock
from signet.config import Config, PipelineConfig
from signet.errors import InvalidInput
from signet.portable.bundle import backup, export_bundle, import_bundle
from signet.providers.embedder import Embedder, make_embedder
from signet.providers.hash_embedder import HashEmbedder
from signet.store.connection import connect
from signet.types import RecallQuery
from write_paths import inline

PEOPLE = ["Ava", "Ben", "Chloe", "Dev", "Elif", "Farid", "Gina", "Hugo"]
THINGS = ["tea", "chess", "rust", "gardens", "jazz", "sailing", "pottery", "ramen", "trains"]
VERBS = ["likes", "studies", "avoids", "writes about", "teaches", "collects"]


def _open(root: Path, embedder: Embedder | None = None, clock: Clock | None = None) -> SignetApp:
    cfg = inline(Config.default(root)).replace(pipeline=PipelineConfig(enabled=False))
    return SignetApp.open(cfg, embedder=embedder or HashEmbedder(64), llm=None, clock=clock)


@pytest.fixture(scope="module")
def bundled() -> Embedder:
    """The bundled model, loaded once for the module (the round trip recalls with it)."""
    embedder = make_embedder("local", threads=1)
    assert embedder is not None
    return embedder


@pytest.fixture
def source(tmp_path: Path) -> Iterator[SignetApp]:
    app = _seeded(tmp_path / "a", HashEmbedder(64))
    yield app
    app.close()


@pytest.fixture
def source_with_model(tmp_path: Path, bundled: Embedder) -> Iterator[SignetApp]:
    # A clock that stands still: recall decays importance by the age of a memory at the moment
    # of the query, so on the wall clock the same memory scores a little lower on the side
    # asked later (about 1e-7 a second), and a loaded machine made the round trip differ in
    # the sixth decimal. Both sides share this clock, so every input to the scores is the same.
    app = _seeded(tmp_path / "a", bundled, ManualClock())
    yield app
    app.close()


def _seeded(root: Path, embedder: Embedder, clock: Clock | None = None) -> SignetApp:
    app = _open(root, embedder, clock)
    rng = random.Random(7)
    ids = []
    for i in range(200):
        text = f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} {rng.choice(THINGS)} since {1990 + i}"
        ids.append(app.remember(text, graph={"entities": [{"name": text.split()[0]}]}).id)
    app.modify(ids[0], {"content": "Ava now prefers green tea"})
    app.forget(ids[1])
    app.documents.ingest_text("Orchard notes.\n\nThe pears ripen in September.", title="Orchard")
    app.run_pipeline_until_idle(only=["documents"])
    ws = app.config.workspace
    (ws / "AGENTS.md").write_text("# Agent\nBe brief.")
    (ws / "memory" / "transcripts" / "claude-code").mkdir(parents=True)
    (ws / "memory" / "transcripts" / "claude-code" / "s1.jsonl").write_text('{"role":"user"}\n')
    (ws / "memory" / "sessions").mkdir(parents=True)
    (ws / "memory" / "sessions" / "2026-12-01-s1--summary.md").write_text("---\nkind: summary\n---\n")
    (ws / "agent.yaml").write_text(
        "llm:\n  provider: openai\n  api_key: secret:OPENAI\n  sneaky_token: abc123\n")
    return app


def _queries() -> list[str]:
    rng = random.Random(11)
    return [f"who {rng.choice(VERBS)} {rng.choice(THINGS)}" for _ in range(45)] + \
        ["green tea", "pears September", "Ben chess", "Hugo trains", "jazz 1995"]


def _recall(app: SignetApp, query: str) -> list[tuple[str, float]]:
    """Ids in order with their exact scores: the same rows, vectors and clock on both sides
    give the same floats, so any difference is something the round trip changed."""
    hits = app.recall(RecallQuery(query, limit=10, touch=False)).hits
    return [(h.memory.id, h.score) for h in hits]


def test_round_trip_keeps_everything_and_recalls_the_same(
    source_with_model: SignetApp, tmp_path: Path
) -> None:
    source = source_with_model
    manifest = export_bundle(source.portable, source.config.workspace, tmp_path / "bundle")
    assert manifest["tables"]["memories"] == 201 and "agent.yaml" not in manifest["files"]
    assert manifest["config"]["removed"] == ["llm.sneaky_token"]
    target = _open(tmp_path / "b", source.embedder, source.clock)
    try:
        report = import_bundle(target.portable, target.config.workspace, tmp_path / "bundle")
        assert report["inserted"]["memories"] == 201 and report["deduped_memories"] == 0
        conn_a, conn_b = source.store.reader(), target.store.reader()
        for table in ("memories", "memory_history", "entities", "memory_entity_mentions",
                      "documents", "document_memories"):
            cols = "*" if table != "memories" else "id, content_hash, content, is_deleted, version"
            order = "1, 2" if table in ("memory_entity_mentions", "document_memories") else "1"
            a = [tuple(r) for r in conn_a.execute(f"SELECT {cols} FROM {table} ORDER BY {order}")]
            b = [tuple(r) for r in conn_b.execute(f"SELECT {cols} FROM {table} ORDER BY {order}")]
            assert a == b, table
        queries = _queries()
        assert len(queries) == 50
        for query in queries:
            assert _recall(target, query) == _recall(source, query), query
        ws = target.config.workspace
        assert (ws / "AGENTS.md").read_text() == "# Agent\nBe brief."
        assert (ws / "memory" / "transcripts" / "claude-code" / "s1.jsonl").is_file()
        assert (ws / "memory" / "sessions" / "2026-12-01-s1--summary.md").is_file()
        assert "sneaky_token" not in (ws / "agent.yaml").read_text()
        assert "secret:OPENAI" in (ws / "agent.yaml").read_text()
        again = import_bundle(target.portable, target.config.workspace, tmp_path / "bundle")
        assert sum(again["inserted"].values()) == 0
    finally:
        target.close()


def test_content_the_target_holds_is_deduped_with_what_hangs_on_it(
    source: SignetApp, tmp_path: Path
) -> None:
    export_bundle(source.portable, source.config.workspace, tmp_path / "bundle")
    existing = source.get(source.list().items[-1].id)
    target = _open(tmp_path / "b")
    try:
        mine = target.remember(existing.content).id
        report = import_bundle(target.portable, target.config.workspace, tmp_path / "bundle")
        assert report["deduped_memories"] == 1 and report["inserted"]["memories"] == 200
        conn = target.store.reader()
        assert conn.execute("SELECT count(*) FROM memories WHERE content_hash = ? AND"
                            " is_deleted = 0", (existing.content_hash,)).fetchone()[0] == 1
        assert conn.execute("SELECT count(*) FROM memory_history WHERE memory_id = ?",
                            (existing.id,)).fetchone()[0] == 0
        assert target.get(mine).content == existing.content
    finally:
        target.close()


def test_a_broken_bundle_is_refused_naming_the_problem(source: SignetApp, tmp_path: Path) -> None:
    target = _open(tmp_path / "b")
    try:
        with pytest.raises(InvalidInput, match="no manifest.json"):
            import_bundle(target.portable, target.config.workspace, tmp_path)
        export_bundle(source.portable, source.config.workspace, tmp_path / "bundle")
        with (tmp_path / "bundle" / "tables" / "entities.jsonl").open("a") as f:
            f.write("{not json\n")
        with pytest.raises(InvalidInput, match=r"entities.jsonl, line 9: not valid JSON"):
            import_bundle(target.portable, target.config.workspace, tmp_path / "bundle")
        manifest = tmp_path / "bundle" / "manifest.json"
        manifest.write_text(json.dumps({"format": "signet-export", "version": 99}))
        with pytest.raises(InvalidInput, match="version 99"):
            import_bundle(target.portable, target.config.workspace, tmp_path / "bundle")
        with pytest.raises(InvalidInput, match="not an empty folder"):
            export_bundle(source.portable, source.config.workspace, tmp_path / "bundle")
    finally:
        target.close()


def _cut_mid_row(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-20])


def _drop_last_row(path: Path) -> None:
    path.write_text("".join(path.read_text("utf-8").splitlines(keepends=True)[:-1]), "utf-8")


def _not_utf8(path: Path) -> None:
    with path.open("ab") as f:
        f.write(b'{"id": "\xff\xfe"}\n')


@pytest.mark.parametrize("table, damage, names", [
    ("memory_history", _cut_mid_row, r"memory_history.jsonl, line \d+: not valid JSON"),
    ("memory_history", _drop_last_row, r"memory_history.jsonl holds \d+ rows; the manifest lists"),
    ("memory_history", Path.unlink, r"memory_history.jsonl is missing; the manifest lists \d+"),
    ("embeddings", _not_utf8, r"embeddings.jsonl, line \d+: not UTF-8"),
])
def test_a_damaged_bundle_is_refused_before_anything_is_written(
    source: SignetApp, tmp_path: Path, table: str, damage: Any, names: str
) -> None:
    export_bundle(source.portable, source.config.workspace, tmp_path / "bundle")
    damage(tmp_path / "bundle" / "tables" / f"{table}.jsonl")
    target = _open(tmp_path / "b")
    try:
        with pytest.raises(InvalidInput, match=names):
            import_bundle(target.portable, target.config.workspace, tmp_path / "bundle")
        conn = target.store.reader()
        for written in ("memories", "embeddings", "memory_history", "entities"):
            assert conn.execute(f"SELECT count(*) FROM {written}").fetchone()[0] == 0, written
    finally:
        target.close()


def _rewrite_first_row(path: Path, **changes: object) -> None:
    lines = path.read_text("utf-8").splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), **changes})
    path.write_text("\n".join(lines) + "\n", "utf-8")


@pytest.mark.parametrize("table, changes, names", [
    ("memories", {"content": ["not", "text"]}, "memories: the row"),
    ("embeddings", {"vector": {"$b64": "not base64!"}}, "embeddings: a $b64 value is not base64"),
])
def test_a_row_of_the_wrong_shape_is_refused_naming_its_table(
    source: SignetApp, tmp_path: Path, table: str, changes: dict[str, object], names: str
) -> None:
    export_bundle(source.portable, source.config.workspace, tmp_path / "bundle")
    _rewrite_first_row(tmp_path / "bundle" / "tables" / f"{table}.jsonl", **changes)
    target = _open(tmp_path / "b")
    try:
        with pytest.raises(InvalidInput, match=re.escape(names)):
            import_bundle(target.portable, target.config.workspace, tmp_path / "bundle")
    finally:
        target.close()


def test_idempotency_keys_do_not_travel(source: SignetApp, tmp_path: Path) -> None:
    source.remember("Keyed once", idempotency_key="k-1")
    manifest = export_bundle(source.portable, source.config.workspace, tmp_path / "bundle")
    assert not any("idempotency" in name for name in manifest["tables"])


def test_backup_is_a_consistent_copy_taken_while_writes_go_on(source: SignetApp, tmp_path: Path) -> None:
    stop = threading.Event()

    def write() -> None:
        i = 0
        while not stop.is_set():
            source.remember(f"concurrent note {i}")
            i += 1

    writer = threading.Thread(target=write)
    before = source.status()["memories"]
    writer.start()
    try:
        result = backup(source.store, tmp_path / "copy.db")
    finally:
        stop.set()
        writer.join()
    copy = connect(tmp_path / "copy.db", read_only=True)
    assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert copy.execute("SELECT count(*) FROM memories WHERE is_deleted = 0").fetchone()[0] >= before
    copy.close()
    assert result["bytes"] > 0 and not (tmp_path / "copy.db-wal").exists()
    with pytest.raises(InvalidInput, match="exists"):
        backup(source.store, tmp_path / "copy.db")


def test_an_unwritable_target_is_refused_naming_it_and_leaves_nothing(
    source: SignetApp, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(InvalidInput, match="cannot write the export to .*a-file"):
        export_bundle(source.portable, source.config.workspace, blocker / "bundle")
    with pytest.raises(InvalidInput, match="cannot write a backup at .*a-file"):
        backup(source.store, blocker / "memories.db")
    assert blocker.read_text() == "not a folder"
    assert not list(tmp_path.glob("*.partial"))


def test_a_link_in_a_bundle_copies_nothing_from_outside_it(source: SignetApp, tmp_path: Path) -> None:
    export_bundle(source.portable, source.config.workspace, tmp_path / "bundle")
    private = tmp_path / "private-key"
    private.write_text("-----BEGIN PRIVATE KEY-----")
    files = tmp_path / "bundle" / "files"
    files.mkdir(exist_ok=True)
    (files / "USER.md").unlink(missing_ok=True)
    (files / "USER.md").symlink_to(private)
    config = tmp_path / "bundle" / "config" / "agent.yaml"
    config.parent.mkdir(exist_ok=True)
    config.unlink(missing_ok=True)
    config.symlink_to(private)
    target = _open(tmp_path / "b")
    try:
        (target.config.workspace / "USER.md").unlink(missing_ok=True)
        (target.config.workspace / "agent.yaml").unlink(missing_ok=True)
        report = import_bundle(target.portable, target.config.workspace, tmp_path / "bundle")
        assert "USER.md" not in report["files"]["copied"]
        assert not (target.config.workspace / "USER.md").exists()
        assert report["config_installed"] is False
        assert not (target.config.workspace / "agent.yaml").exists()
    finally:
        target.close()
