"""init_workspace: lays out every path of seed 000's layout, with modes, and never overwrites."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from signet.config import Config, render_agent_yaml
from signet.errors import ConfigError
from signet.workspace import init_workspace

DIRS = {
    "memory": 0o700,
    "memory/scripts": 0o755,
    "skills": 0o755,
    ".secrets": 0o700,
    ".daemon": 0o700,
    ".daemon/logs": 0o700,
}
FILES = ("agent.yaml", "AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "MEMORY.md")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_init_creates_every_path_with_its_mode(tmp_path: Path) -> None:
    root = tmp_path / "agents"
    report = init_workspace(root)
    assert report.workspace == root and report.kept == ()
    expected = {root} | {root / d for d in DIRS} | {root / f for f in FILES}
    assert set(report.created) == expected and len(report.created) == len(expected)
    assert mode(root) == 0o700
    for relative, dir_mode in DIRS.items():
        assert (root / relative).is_dir() and mode(root / relative) == dir_mode, relative
    for name in FILES:
        assert (root / name).is_file() and mode(root / name) == 0o600, name
    assert not (root / "memory" / "memories.db").exists()  # the store creates it


def test_created_files_have_starter_text_and_a_loadable_config(tmp_path: Path) -> None:
    init_workspace(tmp_path)
    assert (tmp_path / "agent.yaml").read_text() == render_agent_yaml()
    assert Config.load(tmp_path, env={}) == Config.default(tmp_path)
    for name in FILES[1:]:
        text = (tmp_path / name).read_text()
        assert text.startswith("# ") and len(text) > 80, name


def test_second_run_keeps_everything_and_edited_files_byte_for_byte(tmp_path: Path) -> None:
    first = init_workspace(tmp_path)
    everything = set(first.created) | set(first.kept)  # tmp_path itself existed already
    assert first.kept == (tmp_path,)
    edited = b"# My soul\r\n\xc3\xa9dited by hand, no trailing newline"
    (tmp_path / "SOUL.md").write_bytes(edited)
    (tmp_path / "agent.yaml").write_bytes(b"port: 4000\n")
    (tmp_path / "USER.md").unlink()
    second = init_workspace(tmp_path)
    assert second.created == (tmp_path / "USER.md",)
    assert set(second.kept) == everything - {tmp_path / "USER.md"}
    assert (tmp_path / "SOUL.md").read_bytes() == edited
    assert (tmp_path / "agent.yaml").read_bytes() == b"port: 4000\n"
    third = init_workspace(tmp_path)
    assert third.created == () and set(third.kept) == everything


def test_existing_directory_keeps_its_mode(tmp_path: Path) -> None:
    (tmp_path / "skills").mkdir(mode=0o750)
    (tmp_path / "skills").chmod(0o750)
    report = init_workspace(tmp_path)
    assert tmp_path / "skills" in report.kept
    assert mode(tmp_path / "skills") == 0o750


def test_a_file_where_a_directory_belongs_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "memory").write_text("not a dir")
    with pytest.raises(ConfigError, match="memory: exists but is not a directory"):
        init_workspace(tmp_path)
    assert (tmp_path / "memory").read_text() == "not a dir"


def test_an_open_workspace_is_warned_about_and_its_identity_files_tightened(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    (tmp_path / "USER.md").write_text("# me\n")
    (tmp_path / "USER.md").chmod(0o644)
    report = init_workspace(tmp_path)
    assert mode(tmp_path / "USER.md") == 0o600 and (tmp_path / "USER.md").read_text() == "# me\n"
    assert len(report.warnings) == 1 and "chmod 700" in report.warnings[0]
    assert mode(tmp_path) == 0o755  # the user's folder: warned about, not changed
    tmp_path.chmod(0o700)
    assert init_workspace(tmp_path).warnings == ()
