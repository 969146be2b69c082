"""Importers of other tools' memories, through the same write path as `remember`. mem0: its export
or `get_all` JSON, text to content, categories to tags, user to `who`, its id kept as
`source_id`. Markdown folders: every paragraph and list item a memory tagged with its file's
name, `source_id` the file's path, so the whole-source channel ranks files. Each returns counts:
read, imported, deduped, refused.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from signet.errors import InvalidInput, SignetError
from signet.pipeline.writes import PreparedMemory
from signet.types import Actor, RememberResult

BATCH = 64
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")


class Writer(Protocol):
    def prepare_memories(
        self, items: Sequence[dict[str, Any]], *, actor: Actor, prefixes: bool = True
    ) -> list[PreparedMemory]: ...

    def write_prepared(self, prepared: PreparedMemory) -> RememberResult: ...


def import_mem0(writer: Writer, path: Path, *, actor: Actor, project: str | None = None) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"{path} is not a readable mem0 JSON export: {exc}") from exc
    if isinstance(data, dict):
        data = data.get("results", data.get("memories"))
    if not isinstance(data, list):
        raise InvalidInput(f"{path}: expected a list of memories (or results/memories holding one)")
    return _write_all(writer, _mem0_items(data, project), actor)


def _mem0_items(data: list[Any], project: str | None) -> Iterator[dict[str, Any] | str]:
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            yield f"item {index}: not an object"
            continue
        text = item.get("memory", item.get("text", item.get("content")))
        if not isinstance(text, str) or not text.strip():
            yield f"item {index}: no memory text"
            continue
        fields: dict[str, Any] = {"content": text, "source_type": "mem0", "project": project}
        if isinstance(item.get("id"), str):
            fields["source_id"] = item["id"]
        if isinstance(item.get("user_id"), str):
            fields["who"] = item["user_id"]
        metadata = item.get("metadata")
        categories = item.get("categories") or (
            metadata.get("categories") if isinstance(metadata, dict) else None)
        if isinstance(categories, list):
            fields["tags"] = [c for c in categories if isinstance(c, str)]
        if isinstance(item.get("created_at"), str):
            fields["event_at"] = item["created_at"]
        yield fields


def import_markdown(writer: Writer, folder: Path, *, actor: Actor, project: str | None = None) -> dict[str, Any]:
    folder = Path(folder)
    if not folder.is_dir():
        raise InvalidInput(f"{folder} is not a folder")
    return _write_all(writer, _markdown_items(folder, project), actor)


def _markdown_items(folder: Path, project: str | None) -> Iterator[dict[str, Any] | str]:
    for path in sorted(folder.rglob("*.md")):
        rel = path.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts):
            continue
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            yield f"{rel}: {exc}"
            continue
        for piece in markdown_pieces(text):
            yield {"content": piece, "tags": [path.stem], "source_type": "markdown",
                   "source_id": f"markdown:{rel.as_posix()}", "project": project}


def markdown_pieces(text: str) -> list[str]:
    """Paragraphs and list items, without front matter, headings and code blocks."""
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.DOTALL)
    text = re.sub(r"^```.*?^```\s*$", "", text, flags=re.DOTALL | re.MULTILINE)
    pieces: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            pieces.append(" ".join(paragraph))
            paragraph.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            flush()
        elif _LIST_ITEM.match(line):
            flush()
            paragraph.append(_LIST_ITEM.sub("", line).strip())
        else:
            paragraph.append(stripped)
    flush()
    return [p for p in pieces if p]


def _write_all(writer: Writer, items: Iterator[dict[str, Any] | str], actor: Actor) -> dict[str, Any]:
    counts: dict[str, Any] = {"read": 0, "imported": 0, "deduped": 0, "refused": []}
    batch: list[dict[str, Any]] = []
    for item in items:
        counts["read"] += 1
        if isinstance(item, str):
            counts["refused"].append(item)
            continue
        batch.append(item)
        if len(batch) >= BATCH:
            _write_batch(writer, batch, actor, counts)
            batch = []
    if batch:
        _write_batch(writer, batch, actor, counts)
    return counts


def _write_batch(writer: Writer, batch: list[dict[str, Any]], actor: Actor, counts: dict[str, Any]) -> None:
    try:
        prepared = writer.prepare_memories(batch, actor=actor, prefixes=False)
    except SignetError:
        # One bad item must not cost the batch: prepare them one by one to name it.
        prepared = []
        for item in batch:
            try:
                prepared += writer.prepare_memories([item], actor=actor, prefixes=False)
            except SignetError as exc:
                counts["refused"].append(f"{item['content'][:60]!r}: {exc}")
    for one in prepared:
        result = writer.write_prepared(one)
        counts["deduped" if result.deduped else "imported"] += 1
