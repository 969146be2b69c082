"""Imports go one way (docs/architecture.md, "Layers"): a module may import only its own layer or
lower; no two top-level packages import each other, even through a third; and an adapter never
imports another adapter or the store.

The tests parse every module under src/signet with `ast` (nothing is imported). Every import is
resolved to the module it names: relative imports against the importing package, and
`from signet import batch` to `signet.batch` (not to the root package, which would hide it).
Imports inside functions and under TYPE_CHECKING count too: they are dependencies all the same.

The exceptions that exist today are listed below, each with why. The lists may only shrink: an
entry that no longer matches any import fails the tests, so whoever removes the import removes
the entry too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "signet"

LAYERS: dict[str, int] = {
    "types": 0, "version": 0, "errors": 0, "config": 0, "normalize": 0, "workspace": 0, "clock": 0,
    "paths": 0, "spool": 0, "ids": 0,
    "store": 1, "providers": 1, "secret_store": 1,
    "pipeline": 2, "recall": 2, "graph": 2, "lineage": 2,
    "workers": 3,
    "app": 4, "services": 4, "telemetry": 4, "batch": 4, "maintenance": 4, "skills": 4, "identity": 4, "config_view": 4,
    "projection": 4, "documents": 4, "connectors": 4, "portable": 4,
    "sessions": 4, "worker_list": 4,
    "injection": 4,
    "client": 4,
    "daemon": 5, "mcp": 5, "cli": 5, "hooks": 5, "bench": 5, "dashboard": 5, "__main__": 5,
}
ADAPTERS = 5

# Import circles between top-level packages that exist today: (importer, imported); the circle
# test ignores these edges. None left: batch, maintenance and skills depend on the memory
# service (services/memory.py), not on the composition root.
CIRCLE_EDGES: set[tuple[str, str]] = set()

# Adapter -> adapter and adapter -> store imports that exist today: (file under src/signet,
# imported top-level package). Each says why; the goal is that every one goes away.
ADAPTER_EXCEPTIONS: dict[tuple[str, str], str] = {
    # The entry point dispatches: the hook fast path first, else the click CLI.
    ("__main__.py", "cli"): "entry point",
    ("__main__.py", "hooks"): "entry point (the hooks' fast path skips click)",
    ("__main__.py", "mcp"): "entry point (the MCP stdio relay to the daemon skips click)",
    # The CLI starts the other adapters in this process: the daemon, the MCP stdio server,
    # the benchmarks, and prints the daemon's OpenAPI document.
    ("cli/daemon_commands.py", "daemon"): "`signet daemon start` runs the daemon",
    ("cli/mcp_command.py", "mcp"): "`signet mcp` runs the MCP stdio server",
    ("cli/bench_commands.py", "bench"): "`signet bench ...` runs the benchmarks",
    ("cli/api_command.py", "daemon"): "`signet api` prints the daemon's OpenAPI spec",
    # Tokens: the CLI issues and lists them on the store directly, and the dashboard and
    # workspace commands mint the local admin token; tokens belong in a service.
    ("cli/token_commands.py", "daemon"): "token issuing lives in daemon/tokens.py",
    ("cli/token_commands.py", "store"): "token rows read without a service",
    ("cli/workspace_commands.py", "daemon"): "`signet init` writes the local admin token",
    # The daemon mounts the other served surfaces: MCP at /mcp and the dashboard.
    ("daemon/server.py", "mcp"): "mounts MCP over streamable HTTP at /mcp",
    ("daemon/server.py", "dashboard"): "serves the dashboard",
    ("daemon/mcp_guard.py", "mcp"): "the scoped /mcp backend extends mcp.AppBackend",
    # The daemon reaches the store for what has no service yet.
    ("daemon/errors.py", "store"): "maps SQLite errors (disk full, locked) to answers",
    ("daemon/guards.py", "store"): "maps SQLite errors in the guards",
    ("daemon/tokens.py", "store"): "token rows (tokens belong in a service)",
    # Benchmarks build corpora and read state below the services.
    ("bench/documents_bench.py", "store"): "reads projection cache state",
    ("bench/graph_corpus.py", "store"): "builds a graph corpus directly",
    ("bench/load.py", "store"): "bulk-loads a store for the scale bench",
    ("bench/write_queue.py", "store"): "marks its writers background, compares writer designs",
}


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "signet":
        return None
    if len(parts) == 1:
        return 0
    return LAYERS.get(parts[1])


def top_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "signet" and len(parts) > 1 else None


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str, root: Path) -> bool:
    rel = Path(*name.split("."))
    return (root / rel).with_suffix(".py").is_file() or (root / rel / "__init__.py").is_file()


def imports_of(path: Path, package: str | None = None, root: Path = SRC.parent) -> list[str]:
    """Every module `path` imports, resolved. `package`: the package the file belongs to (for
    relative imports); by default from its place under `root`."""
    if package is None:
        name = module_name(path) if path.is_relative_to(root) else path.stem
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            for alias in node.names:
                # `from signet import batch` imports the module signet.batch.
                sub = f"{base}.{alias.name}"
                found.append(sub if _is_module(sub, root) else base)
    return found


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if node.level == 0:
        return node.module or ""
    parts = package.split(".")
    if node.level - 1 > len(parts) - 1:
        raise AssertionError(f"relative import beyond the top-level package in {package}")
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def all_imports() -> Iterator[tuple[Path, str, str]]:
    """(file, its module name, an imported signet module) for every import in src/signet."""
    for path in sorted(SRC.rglob("*.py")):
        name = module_name(path)
        for imported in imports_of(path):
            if imported == "signet" or imported.startswith("signet."):
                yield path, name, imported


def test_every_top_level_module_has_a_layer() -> None:
    names = {p.stem if p.is_file() else p.name for p in SRC.iterdir()}
    names -= {"__init__", "__pycache__", "resources", "py"}
    missing = sorted(n for n in names if n not in LAYERS and not n.startswith("."))
    assert not missing, f"modules without a layer in test_layers.LAYERS: {missing}"


def test_imports_go_one_way() -> None:
    violations = []
    for path, name, imported in all_imports():
        # The root package is the public facade: it re-exports `signet.Client` (lazily, on
        # first use), so its own imports may reach any layer; others importing it get layer 0.
        own = ADAPTERS if name == "signet" else layer_of(name)
        assert own is not None, path
        target = layer_of(imported)
        if target is not None and target > own:
            violations.append(f"{path.relative_to(SRC)} (layer {own}) imports {imported} (layer {target})")
    assert not violations, "\n".join(violations)


def package_graph() -> dict[str, set[str]]:
    """Top-level package -> the top-level packages it imports (itself and the root excluded)."""
    graph: dict[str, set[str]] = {}
    for _path, name, imported in all_imports():
        source, target = top_of(name), top_of(imported)
        if source and target and source != target:
            graph.setdefault(source, set()).add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_between_top_level_packages() -> None:
    graph = package_graph()
    stale = sorted(edge for edge in CIRCLE_EDGES if edge[1] not in graph.get(edge[0], set()))
    assert not stale, f"CIRCLE_EDGES lists imports that are gone; remove them: {stale}"
    pruned = {src: {dst for dst in dsts if (src, dst) not in CIRCLE_EDGES} for src, dsts in graph.items()}
    assert not circles(pruned), f"import circles between top-level packages: {circles(pruned)}"


def module_graph() -> dict[str, set[str]]:
    """Module -> the signet modules it imports (every import, in functions too)."""
    graph: dict[str, set[str]] = {}
    for _path, name, imported in all_imports():
        if imported != name:
            graph.setdefault(name, set()).add(imported)
    return graph


def test_no_import_circle_between_modules() -> None:
    found = circles(module_graph())
    assert not found, "import circles between modules:\n" + "\n".join(" <-> ".join(c) for c in found)


# The modules outside store/postgres that may import it: where the backend is chosen, and the
# tools whose job is PostgreSQL itself.
POSTGRES_IMPORTERS: dict[str, str] = {
    "signet.store.choose": "the one place the configured backend is opened",
    "signet.services.store_backend": "scratch databases for the benchmarks' --backend postgres",
    "signet.services.store_copy": "`signet store migrate` copies a SQLite store into PostgreSQL",
    "signet.bench.load": "the shared-database load bench checks the jobs in PostgreSQL",
}


def test_the_backend_is_chosen_in_one_place() -> None:
    """No SQLite module imports a PostgreSQL one; the backend is picked in store/choose.py."""
    seen, violations = set(), []
    for path, name, imported in all_imports():
        if imported.startswith("signet.store.postgres") and not name.startswith("signet.store.postgres"):
            seen.add(name)
            if name not in POSTGRES_IMPORTERS:
                violations.append(f"{path.relative_to(SRC)} imports {imported}")
    assert not violations, "\n".join(violations)
    stale = sorted(set(POSTGRES_IMPORTERS) - seen)
    assert not stale, f"POSTGRES_IMPORTERS lists modules that no longer import it: {stale}"


def test_the_cycle_finder_sees_a_module_circle(tmp_path: Path) -> None:
    pkg = tmp_path / "signet"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from signet import b\n")
    (pkg / "b.py").write_text("from signet.a import f\n")
    graph = {f"signet.{m}": set(imports_of(pkg / f"{m}.py", package="signet", root=tmp_path))
             for m in ("a", "b")}
    assert circles(graph) == [["signet.a", "signet.b"]]


def test_adapters_import_neither_each_other_nor_the_store() -> None:
    adapters = {name for name, layer in LAYERS.items() if layer == ADAPTERS}
    seen: set[tuple[str, str]] = set()
    violations = []
    for path, name, imported in all_imports():
        source, target = top_of(name), top_of(imported)
        if source not in adapters or target == source:
            continue
        if target in adapters or target == "store":
            key = (str(path.relative_to(SRC)), target)
            seen.add(key)
            if key not in ADAPTER_EXCEPTIONS:
                violations.append(f"{key[0]} imports {imported}")
    assert not violations, "adapters must reach the core through services or signet.Client:\n" + "\n".join(violations)
    stale = sorted(set(ADAPTER_EXCEPTIONS) - seen)
    assert not stale, f"ADAPTER_EXCEPTIONS lists imports that are gone; remove them: {stale}"


def test_the_checker_catches_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from signet.app import SignetApp\n")
    assert layer_of(imports_of(bad)[0]) == 4 > LAYERS["store"]


def test_the_checker_resolves_relative_and_package_imports(tmp_path: Path) -> None:
    # A fake tree: signet/store/bad.py importing upwards in the three spellings.
    pkg = tmp_path / "signet" / "store"
    pkg.mkdir(parents=True)
    for folder in (tmp_path / "signet", pkg, tmp_path / "signet" / "recall"):
        folder.mkdir(exist_ok=True)
        (folder / "__init__.py").write_text("")
    (tmp_path / "signet" / "app.py").write_text("")
    (tmp_path / "signet" / "recall" / "hybrid.py").write_text("")
    bad = pkg / "bad.py"
    bad.write_text("from .. import app\nfrom ..recall.hybrid import Recaller\nfrom . import db\n"
                   "from signet import app as again\n")
    found = imports_of(bad, package="signet.store", root=tmp_path)
    assert found == ["signet.app", "signet.recall.hybrid", "signet.store", "signet.app"]
    assert [layer_of(m) for m in found] == [4, 2, 1, 4]


def test_the_circle_finder_sees_a_circle_through_a_third_package() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": {"c"}}) == []


def test_the_composition_root_stays_a_composition_root() -> None:
    """app.py wires; policy lives in the services below it (issue 12: under 300 lines; 350
    since the wiring names what it imports only on first use twice, for mypy and at run time)."""
    lines = (SRC / "app.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 350, f"app.py has {len(lines)} lines: move policy into a service"
