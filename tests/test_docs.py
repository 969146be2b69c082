"""The docs name only what exists: every source file, `signet` command, HTTP route, config key
and test a document under docs/ (or README.md, CONTRIBUTING.md) mentions is looked up in the
code, and a name that is not there fails, so a rename or removal takes its docs along."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
import yaml
from fastapi import routing
from fastapi.routing import APIRoute

from signet.app import SignetApp
from signet.cli.main import main as cli
from signet.config import Config, _schema, render_agent_yaml
from signet.daemon.server import create_app

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md", ROOT / "CONTRIBUTING.md"])
LIBRARIES = {"sqlean.py"}  # third-party projects named by their own name
# Dotted names that begin like a config section but are no key: a status field, an error code.
NOT_KEYS = {"pipeline.extraction", "auth.unscoped"}
FILES = (".json", ".yaml", ".yml", ".md", ".py", ".toml", ".db", ".sql")

SOURCE = re.compile(r"(?<![\w./-])((?:[a-z_]+/)*[a-z_][a-z0-9_]*\.py)\b")
COMMAND = re.compile(r"`signet ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)?)")
ROUTE = re.compile(r"`(?:GET |POST |PUT |PATCH |DELETE )?(/(?:api|auth|health|mcp)[^`\s]*)`")
# `tests/x/test_y.py::test_z` or, after a file named earlier on the same line, `::test_z`
# (a trailing `*` stands for any ending).
TEST_FILE = re.compile(r"`((?:[\w.-]+/)*test_\w+\.py)(?:::(test_\w*\*?))?`|`::(test_\w*\*?)`")
DOTTED = re.compile(r"`([a-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+)`")


def documents() -> Iterator[tuple[Path, str]]:
    for path in DOCS:
        if path.is_file():
            yield path, path.read_text(encoding="utf-8")


def source_exists(name: str) -> bool:
    bases = [ROOT, ROOT / "src", ROOT / "src" / "signet", ROOT / "tests"]
    if any((base / name).is_file() for base in bases):
        return True
    # A bare module name (`memory_ops.py`): some module of the tree has it.
    return name in LIBRARIES or "/" not in name and any(
        any(ROOT.joinpath(top).rglob(name)) for top in ("src", "tests"))


def test_every_source_file_named_exists() -> None:
    missing = sorted({(p.name, m) for p, text in documents() for m in SOURCE.findall(text)
                      if not source_exists(m)})
    assert not missing, f"docs name files that do not exist: {missing}"


def command_exists(words: list[str]) -> bool:
    group: click.Command = cli
    for i, word in enumerate(words):
        if not isinstance(group, click.Group):
            return True  # the rest are arguments
        found = group.commands.get(word)
        if found is None:
            return i > 0 and not isinstance(group, click.Group)
        group = found
    return True


def test_every_signet_command_named_exists() -> None:
    missing = sorted({(p.name, m) for p, text in documents() for m in COMMAND.findall(text)
                      if not command_exists(m.split())})
    assert not missing, f"docs name commands that do not exist: {missing}"


@pytest.fixture(scope="module")
def routes(tmp_path_factory: pytest.TempPathFactory) -> list[re.Pattern[str]]:
    config = Config.default(tmp_path_factory.mktemp("docs") / "ws")
    with SignetApp.open(config, embedder=None, llm=None) as app:
        api = create_app(app)
        paths = {rc.path for rc in routing.iter_route_contexts(api.routes)
                 if isinstance(rc.original_route, APIRoute)} | {"/mcp"}
    return [re.compile(re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(p)) + "$") for p in paths]


def route_exists(path: str, routes: list[re.Pattern[str]]) -> bool:
    path = path.split("?")[0].rstrip(".,;:")
    if path.endswith("*"):  # a family: `/api/pipeline/*`
        prefix = path.rstrip("*")
        return any(r.pattern.startswith(re.escape(prefix).replace("\\/", "/")[:len(prefix)])
                   or re.escape(prefix) in r.pattern for r in routes)
    return any(r.match(path) for r in routes)


def test_every_route_named_exists(routes: list[re.Pattern[str]]) -> None:
    missing = sorted({(p.name, m) for p, text in documents() for m in ROUTE.findall(text)
                      if not route_exists(m, routes)})
    assert not missing, f"docs name routes that do not exist: {missing}"


def config_keys() -> tuple[set[str], set[str]]:
    """(every key and section, YAML and attribute spellings; the top-level sections)."""
    known: set[str] = set()

    def walk(node: object, prefix: str) -> None:
        if isinstance(node, dict):
            for key, child in node.items():
                known.add(f"{prefix}{key}")
                walk(child, f"{prefix}{key}.")

    walk(yaml.safe_load(render_agent_yaml()), "")

    def attrs(section: object, prefix: str) -> None:
        for child in getattr(section, "children", {}).values():
            path = ".".join(getattr(child, "path", ()))
            if path:
                known.add(path)
            attrs(child, prefix)

    attrs(_schema(), "")
    for key in list(known):  # a section's attribute path is its leaves' prefix
        parts = key.split(".")
        known.update(".".join(parts[:i]) for i in range(1, len(parts)))
    tops = {k for k in known if "." not in k}
    return known, tops


def test_every_config_key_named_exists() -> None:
    known, tops = config_keys()
    missing = set()
    for path, text in documents():
        for name in DOTTED.findall(text):
            if (name.split(".")[0] in tops and name not in known and name not in NOT_KEYS
                    and not name.endswith(FILES)):
                missing.add((path.name, name))
    assert not missing, f"docs name config keys that do not exist: {sorted(missing)}"


def defines_test(file: str, name: str) -> bool:
    """Whether a test function `name` (a trailing * matches any ending) is defined in `file`,
    a path under the root or a file name found under tests/."""
    path = ROOT / file
    files = [path] if path.is_file() else list((ROOT / "tests").rglob(Path(file).name))
    pattern = re.compile(rf"^\s*(?:async )?def {re.escape(name.rstrip('*'))}"
                         + ("" if name.endswith("*") else r"\(") , re.M)
    return any(pattern.search(f.read_text("utf-8")) for f in files)


def test_every_test_named_exists() -> None:
    """The promises in docs/security.md (and any doc) name the tests that hold them: a test
    renamed or removed takes its promise's row along."""
    missing = set()
    for path, text in documents():
        for line in text.splitlines():
            current = None
            for file, name, bare in TEST_FILE.findall(line):
                current = file or current
                if (name or bare) and (current is None or not defines_test(current, name or bare)):
                    missing.add((path.name, current, name or bare))
    assert not missing, f"docs name tests that do not exist: {sorted(missing, key=str)}"
