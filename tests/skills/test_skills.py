"""Skills as procedural memory on a real store: the reconciler follows the folders (added,
changed, removed) in skill_meta and in recall, keeps a skill whose SKILL.md breaks, counts use
from positive feedback, and decays unused skills in ranking without ever deleting them."""

from __future__ import annotations

import dataclasses
import io
import tarfile
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from signet.app import SignetApp
from signet.config import Config
from signet.errors import Conflict, InvalidInput, NotFound
from signet.providers.hash_embedder import HashEmbedder
from signet.skills import MAX_ARCHIVE_BYTES
from signet.types import RecallQuery

NOW = datetime.now(UTC)

DEPLOY = """---
name: deploy-fly
description: Deploy the web app to Fly.io with flyctl
role: devops
---
# Deploying
Run `flyctl deploy` from the repository root, then check `flyctl status`.
"""


@pytest.fixture
def app(tmp_path: Path):
    cfg = Config.default(tmp_path / "ws")
    cfg = cfg.replace(pipeline=dataclasses.replace(cfg.pipeline, enabled=False))
    signet = SignetApp.open(cfg, embedder=HashEmbedder(64))
    yield signet
    signet.close()


def write_skill(app: SignetApp, folder: str, text: str) -> Path:
    path = app.config.workspace / "skills" / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / "SKILL.md").write_text(text)
    return path


def top(app: SignetApp, query: str) -> list[tuple[str, str]]:
    hits = app.recall(RecallQuery(query=query, limit=3, mode="hybrid")).hits
    return [(h.memory.type, h.memory.content) for h in hits]


def meta_rows(app: SignetApp) -> list[tuple]:
    return [tuple(r) for r in app.store.reader().execute(
        "SELECT skill_name, role_classification, filesystem_path, use_count FROM skill_meta"
    ).fetchall()]


def test_a_skill_added_changed_and_removed_is_followed_in_skill_meta_and_recall(app) -> None:
    app.remember("The office coffee machine is on the third floor")
    folder = write_skill(app, "deploy", DEPLOY)
    assert app.reconcile_skills(NOW)["added"] == ["deploy-fly"]
    assert meta_rows(app) == [("deploy-fly", "devops", str(folder), 0)]
    kind, content = top(app, "how do I deploy the app to fly.io?")[0]
    assert kind == "procedural" and "flyctl deploy" in content
    assert app.reconcile_skills(NOW)["added"] == []  # nothing changed: nothing written

    (folder / "SKILL.md").write_text(DEPLOY.replace("flyctl deploy", "kubectl rollout restart")
                                     .replace("role: devops", "role: sre"))
    assert app.reconcile_skills(NOW)["changed"] == ["deploy-fly"]
    assert meta_rows(app)[0][1] == "sre"
    assert "kubectl rollout restart" in top(app, "kubectl rollout restart")[0][1]
    [skill] = app.list_skills()
    assert app.history(skill["memory_id"])[-1].event == "updated"

    (folder / "SKILL.md").unlink()
    folder.rmdir()
    assert app.reconcile_skills(NOW)["removed"] == ["deploy-fly"]
    assert meta_rows(app) == []
    assert all(kind != "procedural" for kind, _ in top(app, "deploy the app to fly.io kubectl"))
    assert app.get(skill["memory_id"]).is_deleted  # a tombstone: recoverable


def test_a_broken_skill_file_is_reported_and_the_skill_kept(app) -> None:
    folder = write_skill(app, "deploy", DEPLOY)
    app.reconcile_skills(NOW)
    (folder / "SKILL.md").write_text("no frontmatter here")
    write_skill(app, "bad", "---\nname: [not, a, string]\ndescription: x\n---\nbody")
    report = app.reconcile_skills(NOW)
    assert report["removed"] == [] and len(report["errors"]) == 2
    assert any("must start with YAML frontmatter" in e for e in report["errors"])
    assert any("'name' must be a non-empty string" in e for e in report["errors"])
    assert [s["name"] for s in app.list_skills()] == ["deploy-fly"]


@pytest.mark.parametrize(("used", "idle"), [("alpha", "beta"), ("beta", "alpha")])
def test_unused_skills_decay_in_ranking_never_deleted_and_use_restores_them(
    app, used: str, idle: str
) -> None:
    write_skill(app, "a", DEPLOY.replace("deploy-fly", "alpha").replace("role: devops\n", ""))
    write_skill(app, "b", DEPLOY.replace("deploy-fly", "beta").replace("role: devops\n", ""))
    app.reconcile_skills(NOW - timedelta(days=60))
    chosen = next(s for s in app.list_skills() if s["name"] == used)
    app.feedback(chosen["memory_id"], "positive")
    app.reconcile_skills(NOW)
    skills = {s["name"]: s for s in app.list_skills()}
    assert skills[idle]["importance"] == pytest.approx(0.99 ** 60, abs=0.01)
    assert skills[used]["importance"] == pytest.approx(1.0, abs=0.01)
    assert (skills[used]["use_count"], skills[idle]["use_count"]) == (1, 0)
    # Twin skills: whichever was used ranks first, so the order comes from decay alone.
    first = app.recall(RecallQuery(query="deploy the web app to fly.io", limit=2, mode="hybrid"))
    assert first.hits[0].memory.id == chosen["memory_id"]

    app.reconcile_skills(NOW + timedelta(days=3000))
    skills = {s["name"]: s for s in app.list_skills()}
    assert set(skills) == {"alpha", "beta"} and skills[idle]["importance"] == 0.01
    assert not app.get(skills[idle]["memory_id"]).is_deleted


def test_install_from_a_folder_a_tarball_and_a_zip(app, tmp_path: Path) -> None:
    source = tmp_path / "src" / "any-folder-name"
    source.mkdir(parents=True)
    (source / "SKILL.md").write_text(DEPLOY)
    (source / "script.sh").write_text("flyctl deploy\n")
    done = app.install_skill(str(source))
    assert done["installed"] == "deploy-fly" and done["reconcile"]["added"] == ["deploy-fly"]
    assert (app.config.workspace / "skills" / "deploy-fly" / "script.sh").is_file()
    with pytest.raises(Conflict, match="already installed"):
        app.install_skill(str(source))

    tgz = tmp_path / "skill.tgz"
    with tarfile.open(tgz, "w:gz") as archive:
        archive.add(source, arcname="packed")
    assert app.install_skill(str(tgz), force=True)["reconcile"]["changed"] == []

    other = DEPLOY.replace("deploy-fly", "zipped")
    zipped = tmp_path / "skill.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("SKILL.md", other)
    assert app.install_skill(str(zipped))["installed"] == "zipped"
    assert app.show_skill("zipped")["instructions"].startswith("# Deploying")
    assert app.remove_skill("zipped")["reconcile"]["removed"] == ["zipped"]
    with pytest.raises(NotFound):
        app.remove_skill("zipped")


def test_archives_that_escape_the_folder_are_refused(app, tmp_path: Path) -> None:
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as archive:
        archive.writestr("SKILL.md", DEPLOY)
        archive.writestr("../../outside.txt", "gotcha")
    with pytest.raises(InvalidInput, match="points outside"):
        app.install_skill(str(evil))
    link = tmp_path / "link.tar"
    with tarfile.open(link, "w") as archive:
        info = tarfile.TarInfo("SKILL.md")
        info.size = len(DEPLOY)
        archive.addfile(info, io.BytesIO(DEPLOY.encode()))
        sym = tarfile.TarInfo("passwd")
        sym.type, sym.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(sym)
    with pytest.raises(InvalidInput, match="not a plain file"):
        app.install_skill(str(link))
    zip_link = tmp_path / "link.zip"
    with zipfile.ZipFile(zip_link, "w") as archive:
        archive.writestr("SKILL.md", DEPLOY)
        sym_info = zipfile.ZipInfo("passwd")
        sym_info.external_attr = 0o120777 << 16
        archive.writestr(sym_info, "/etc/passwd")
    with pytest.raises(InvalidInput, match="'passwd' is a symlink"):
        app.install_skill(str(zip_link))
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("SKILL.md", DEPLOY)
        archive.writestr("zeros", bytes(MAX_ARCHIVE_BYTES))
    with pytest.raises(InvalidInput, match="unpacks to more than"):
        app.install_skill(str(bomb))
    assert not (tmp_path / "outside.txt").exists()
    assert app.list_skills() == []
    with pytest.raises(InvalidInput, match="not a folder"):
        bad = tmp_path / "notes.txt"
        bad.write_text("hello")
        app.install_skill(str(bad))


def test_a_path_nothing_can_be_at_is_not_found_not_a_crash(app, tmp_path: Path) -> None:
    """Found by the API fuzzer: a 5,000-character path made `stat` raise ENAMETOOLONG (a 500)."""
    with pytest.raises(NotFound, match="no such folder"):  # nothing can be there
        app.install_skill("0" * 5000)
    a_file = tmp_path / "notes.txt"
    a_file.write_text("hello")
    with pytest.raises(NotFound):
        app.install_skill(str(a_file / "inside"))  # a component that is a file: not there
    assert app.list_skills() == []


def test_with_mutations_frozen_the_reconciler_waits(tmp_path: Path) -> None:
    cfg = Config.default(tmp_path / "ws")
    cfg = cfg.replace(pipeline=dataclasses.replace(cfg.pipeline, mutations_frozen=True))
    with SignetApp.open(cfg, embedder=HashEmbedder(64)) as app:
        write_skill(app, "deploy", DEPLOY)
        report = app.reconcile_skills(NOW)
        assert report["added"] == [] and "frozen" in report["errors"][0]
        assert app.list_skills() == []
