"""Imports go one way (docs/architecture.md, "Layers"): a module may import only its own layer or lower.

The test parses every module under src/signet with `ast` (nothing is imported), maps each
`signet.*` import to its layer and fails naming the offending file and import.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "signet"

LAYERS: dict[str, int] = {
    "types": 0, "errors": 0, "config": 0, "normalize": 0, "workspace": 0,
    "store": 1, "providers": 1, "secret_store": 1,
    "pipeline": 2, "recall": 2, "graph": 2, "lineage": 2,
    "workers": 3,
    "app": 4, "telemetry": 4, "batch": 4, "maintenance": 4, "skills": 4, "identity": 4, "config_view": 4,
    "projection": 4, "documents": 4, "connectors": 4, "portable": 4,
    "sessions": 4,
    "injection": 4,
    "client": 4,
    "daemon": 5, "mcp": 5, "cli": 5, "hooks": 5, "bench": 5, "dashboard": 5, "__main__": 5,
}

ADAPTERS = 5


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "signet":
        return None
    if len(parts) == 1:
        return 0
    return LAYERS.get(parts[1])


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[str]:
    tree = ast.parse(path.read_text("utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def test_every_top_level_module_has_a_layer() -> None:
    names = {p.stem if p.is_file() else p.name for p in SRC.iterdir()}
    names -= {"__init__", "__pycache__", "resources", "py"}
    missing = sorted(n for n in names if n not in LAYERS and not n.startswith("."))
    assert not missing, f"modules without a layer in test_layers.LAYERS: {missing}"


def test_imports_go_one_way() -> None:
    violations = []
    for path in SRC.rglob("*.py"):
        name = module_name(path)
        # The root package is the public facade: it re-exports `signet.Client` (lazily, on
        # first use), so its own imports may reach any layer; others importing it get layer 0.
        own = ADAPTERS if name == "signet" else layer_of(name)
        assert own is not None, path
        for imported in imports_of(path):
            target = layer_of(imported)
            if target is not None and target > own:
                violations.append(f"{path.relative_to(SRC)} (layer {own}) imports {imported} (layer {target})")
    assert not violations, "\n".join(violations)


def test_the_checker_catches_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from signet.app import SignetApp\n")
    assert layer_of(imports_of(bad)[0]) == 4 > LAYERS["store"]
