"""The portable bundle: a folder (`manifest.json`, `tables/NAME.jsonl`, `files/`,
`config/agent.yaml` without inline credentials) that `signet import` turns back into the same
store on either backend. Export reads one transaction into PATH.partial, renamed when complete.
Import keeps ids, hashes and history; a memory already held live is skipped with its dependents,
so importing twice adds nothing. A bundle is not trusted: rows whose path leaves its folder are
refused and connectors arrive disabled.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from signet.errors import InvalidInput
from signet.lineage.files import ARTIFACTS, TRANSCRIPTS, inside
from signet.store import portable as port_sql
from signet.store.db import Store
from signet.store.portable import PortableStore
from signet.types import utc_now
from signet.version import __version__
from signet.workspace import IDENTITY_FILES, private_dir, private_file, private_tree

FORMAT = "signet-export"
VERSION = 1
IMPORT_BATCH = 500
# Folders of user data beside the database: cleaned transcripts, the markdown artifacts
# (session summaries, thread arcs and epochs) and installed skills.
FOLDERS = (Path("memory") / "transcripts", Path("memory") / "sessions",
           Path("memory") / "threads", Path("skills"))
_CREDENTIAL = re.compile(r"(api_?key|token|password|secret)", re.IGNORECASE)

Progress = Callable[[str, int], None]


def _quiet(_what: str, _n: int) -> None:
    pass


def export_bundle(
    store: PortableStore, workspace: Path, target: Path, progress: Progress = _quiet
) -> dict[str, Any]:
    """Write the bundle to `target` (which must not exist or be an empty folder)."""
    target = Path(target)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InvalidInput(f"{target} exists and is not an empty folder")
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        private_dir(partial)  # 0700 from the start: nothing inside is reachable meanwhile
        (partial / "tables").mkdir()
        counts = _export_tables(store, partial / "tables", progress)
        files = _export_files(workspace, partial / "files")
        config = _export_config(workspace, partial / "config")
        manifest = {
            "format": FORMAT, "version": VERSION, "created_at": utc_now(),
            "signet_version": __version__, "backend": store.backend,
            "tables": counts, "files": files,
            "config": config,
        }
        (partial / "manifest.json").write_text(json.dumps(manifest, indent=2), "utf-8")
        private_tree(partial)  # the store's content: the user's alone, whatever the umask
        if target.exists():
            target.rmdir()
        partial.rename(target)
    except OSError as exc:  # an unwritable or full disk: say where, leave no half bundle
        shutil.rmtree(partial, ignore_errors=True)
        raise InvalidInput(f"cannot write the export to {target}: {exc.strerror or exc}") from exc
    return manifest


def _export_tables(store: PortableStore, folder: Path, progress: Progress) -> dict[str, int]:
    counts: dict[str, int] = {}
    with store.snapshot() as snapshot:  # one moment for every table
        for table in snapshot.tables():
            n = 0
            with (folder / f"{table.name}.jsonl").open("w", encoding="utf-8") as out:
                for row in snapshot.rows(table):
                    out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
                    n += 1
            counts[table.name] = n
            progress(table.name, n)
    return counts


def _export_files(workspace: Path, folder: Path) -> list[str]:
    copied: list[str] = []
    for name in IDENTITY_FILES:
        if (workspace / name).is_file():
            copied.append(_copy(workspace, folder, Path(name)))
    for sub in FOLDERS:
        if (workspace / sub).is_dir():
            for path in sorted(p for p in (workspace / sub).rglob("*") if p.is_file()):
                copied.append(_copy(workspace, folder, path.relative_to(workspace)))
    return copied


def _copy(source_root: Path, target_root: Path, rel: Path) -> str:
    (target_root / rel).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source_root / rel, target_root / rel)
    return rel.as_posix()


def _export_config(workspace: Path, folder: Path) -> dict[str, Any]:
    source = workspace / "agent.yaml"
    if not source.is_file():
        return {"included": False}
    data = yaml.safe_load(source.read_text("utf-8")) or {}
    removed = _strip_credentials(data)
    folder.mkdir(parents=True)
    (folder / "agent.yaml").write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    return {"included": True, "removed": removed}


def _strip_credentials(data: Any, path: str = "") -> list[str]:
    """Drop inline credentials (a `secret:NAME` reference is kept: it names, not holds)."""
    removed: list[str] = []
    if isinstance(data, dict):
        for key in list(data):
            dotted = f"{path}{key}"
            value = data[key]
            if _CREDENTIAL.search(str(key)) and isinstance(value, str) and value \
                    and not value.startswith("secret:") and not str(key).endswith("_env"):
                del data[key]
                removed.append(dotted)
            else:
                removed += _strip_credentials(value, f"{dotted}.")
    return removed


# --- import ---------------------------------------------------------------------------------


def read_manifest(source: Path) -> dict[str, Any]:
    path = Path(source) / "manifest.json"
    if not path.is_file():
        raise InvalidInput(f"{source} is not a Signet export (no manifest.json)")
    try:
        manifest = json.loads(path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InvalidInput(f"{path} is not a Signet export manifest")
    if manifest.get("version") != VERSION:
        raise InvalidInput(f"export format version {manifest.get('version')} is not supported"
                           f" (this Signet reads version {VERSION})")
    return manifest


def import_bundle(
    store: PortableStore, workspace: Path, source: Path, progress: Progress = _quiet
) -> dict[str, Any]:
    source = Path(source)
    manifest = read_manifest(source)
    inserted: dict[str, int] = {}
    skipped: dict[str, set[Any]] = {}
    dropped: dict[str, set[str]] = {}
    checks = _Checks()
    targets = store.tables()
    _check_tables(source, manifest, targets)
    for table in targets:
        path = source / "tables" / f"{table.name}.jsonl"
        if not path.is_file():
            continue
        inserted[table.name] = _import_table(store, table, path, skipped, dropped, checks)
        progress(table.name, inserted[table.name])
    left_behind = _left_behind(source, manifest, {t.name for t in targets})
    files = _import_files(source / "files", workspace)
    config = source / "config" / "agent.yaml"
    installed_config = False
    if config.is_file() and not config.is_symlink() and not (workspace / "agent.yaml").exists():
        workspace.mkdir(parents=True, exist_ok=True)
        shutil.copy2(config, workspace / "agent.yaml")
        installed_config = True
    return {
        "source": str(source), "exported_at": manifest.get("created_at"),
        "inserted": inserted, "skipped": {k: len(v) for k, v in skipped.items() if v},
        "deduped_memories": len(skipped.get("memories", ())), "files": files,
        "config_installed": installed_config, "backend": store.backend,
        "left_behind": left_behind,
        "columns_left_behind": {k: sorted(v) for k, v in dropped.items() if v},
        "refused": checks.refused,
        "connectors_disabled": [c for c in checks.connectors
                                if c["id"] not in skipped.get("connectors", ())],
    }


def _left_behind(source: Path, manifest: dict[str, Any], targets: set[str]) -> dict[str, int]:
    """The bundle's tables with rows that the target's schema has no table for."""
    counts = manifest.get("tables")
    counts = counts if isinstance(counts, dict) else {}
    return {path.stem: int(counts.get(path.stem, 0) or 0)
            for path in sorted((source / "tables").glob("*.jsonl"))
            if path.stem not in targets and (counts.get(path.stem) or path.stat().st_size)}


# Columns holding a workspace path, and the folders each row's paths must lie under.
PATH_COLUMNS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "session_transcripts": (("path", "raw_path"), TRANSCRIPTS),
    "memory_artifacts": (("source_path", "parent_path"), ARTIFACTS),
}


class _Checks:
    """What import refuses or changes in a bundle's rows, for the report."""

    def __init__(self) -> None:
        self.refused: dict[str, list[dict[str, Any]]] = {}
        self.connectors: list[dict[str, Any]] = []

    def admit(self, table: port_sql.Table, row: dict[str, Any]) -> dict[str, Any] | None:
        """The row to insert (a connector disabled), or None when it is refused."""
        columns, folders = PATH_COLUMNS.get(table.name, ((), ()))
        for column in columns:
            value = row.get(column)
            if value is not None and not inside(value, folders):
                self.refused.setdefault(table.name, []).append({
                    "key": port_sql.key_of(row, table),
                    "reason": f"{column} {str(value)[:200]!r} is not a path under"
                              f" {' or '.join(folders)}",
                })
                return None
        if table.name == "connectors":
            return self._disabled(table, row)
        return row

    def _disabled(self, table: port_sql.Table, row: dict[str, Any]) -> dict[str, Any] | None:
        try:
            config = json.loads(row.get("config_json") or "{}")
        except (TypeError, json.JSONDecodeError):
            config = None
        if not isinstance(config, dict):
            self.refused.setdefault(table.name, []).append({
                "key": port_sql.key_of(row, table), "reason": "config_json is not a JSON object"})
            return None
        self.connectors.append({"id": row.get("id"), "name": row.get("display_name"),
                                "path": config.get("path"), "project": row.get("project")})
        return {**row, "config_json": json.dumps({**config, "enabled": False})}


def _import_table(
    store: PortableStore, table: port_sql.Table, path: Path, skipped: dict[str, set[Any]],
    dropped: dict[str, set[str]], checks: _Checks,
) -> int:
    total = 0
    batch: list[dict[str, Any]] = []
    for row in _rows(path, table.name):
        if extra := row.keys() - set(table.columns):  # a column the target has not
            dropped.setdefault(table.name, set()).update(extra)
        admitted = checks.admit(table, row)
        if admitted is None:  # its dependents are skipped as orphans
            skipped.setdefault(table.name, set()).add(port_sql.key_of(row, table))
            continue
        batch.append(admitted)
        if len(batch) >= IMPORT_BATCH:
            total += _write(store, table, batch, skipped)
            batch = []
    return total + (_write(store, table, batch, skipped) if batch else 0)


def _rows(path: Path, table: str) -> Iterator[dict[str, Any]]:
    """The rows of one table file; InvalidInput naming the file and line of a damaged one."""
    try:
        with path.open("rb") as lines:
            for number, raw in enumerate(lines, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InvalidInput(f"{path}, line {number}: not UTF-8 ({exc.reason})") from exc
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InvalidInput(
                        f"{path}, line {number}: not valid JSON ({exc.msg})") from exc
                if not isinstance(row, dict):
                    raise InvalidInput(f"{path}, line {number}: expected a JSON object")
                yield row
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from exc


def _check_tables(source: Path, manifest: dict[str, Any], targets: list[port_sql.Table]) -> None:
    """Read every table file before any row is written, so a truncated or damaged bundle is
    refused whole instead of after some of its tables (or batches) went in. A table's row count
    must match the manifest's: a file cut at a line boundary parses, but is not the export."""
    counts = manifest.get("tables")
    counts = counts if isinstance(counts, dict) else {}
    for table in targets:
        path = source / "tables" / f"{table.name}.jsonl"
        expected = counts.get(table.name)
        listed = type(expected) is int
        if not path.is_file():
            if listed and expected:
                raise InvalidInput(f"{path} is missing; the manifest lists {expected} rows"
                                   f" of {table.name}")
            continue
        found = 0
        for row in _rows(path, table.name):
            for value in row.values():
                port_sql.decode(value, table.name)  # a {"$b64": ...} that is no base64
            found += 1
        if listed and found != expected:
            raise InvalidInput(f"{path} holds {found} rows; the manifest lists {expected}:"
                               " the bundle is truncated or altered")


def _write(
    store: PortableStore, table: port_sql.Table, batch: list[dict[str, Any]],
    skipped: dict[str, set[Any]],
) -> int:
    return store.insert(table, batch, skipped)


def _import_files(folder: Path, workspace: Path) -> dict[str, list[str]]:
    copied: list[str] = []
    kept: list[str] = []
    if not folder.is_dir():
        return {"copied": copied, "kept": kept}
    root = folder.resolve()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder)
        if not (str(rel) in IDENTITY_FILES or any(rel.is_relative_to(f) for f in FOLDERS)) \
                or ".." in rel.parts:
            continue  # only what export writes; a crafted bundle cannot drop files elsewhere
        if path.is_symlink() or not path.resolve().is_relative_to(root):
            # Export writes plain files only. A link would copy whatever it points at on this
            # machine (a key, a password file) into an identity file the hooks inject.
            continue
        target = workspace / rel
        if target.exists():
            kept.append(rel.as_posix())
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        copied.append(rel.as_posix())
    return {"copied": copied, "kept": kept}


def backup(store: Store, target: Path) -> dict[str, Any]:
    """A consistent copy of the live database (SQLite's online backup API) at `target`."""
    target = Path(target)
    if target.exists():
        raise InvalidInput(f"{target} exists; choose a new file")
    partial = target.with_name(target.name + ".partial")
    try:
        private_dir(target.parent)
        if partial.exists():
            partial.unlink()
        private_file(partial)  # 0600 before SQLite writes into it (its journal takes its mode)
        port_sql.backup(store.reader(), partial)
        os.replace(partial, target)
    except OSError as exc:
        raise InvalidInput(f"cannot write a backup at {target}: {exc.strerror or exc}") from exc
    return {"path": str(target), "bytes": target.stat().st_size}
