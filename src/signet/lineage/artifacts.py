"""Markdown artifacts: the canonical, immutable form of summaries, arcs and epochs.

Each file's YAML front matter holds everything its memory_artifacts row needs, so the table can be
rebuilt from the files alone (`signet artifacts reindex`). Files are never rewritten once indexed: a
later summary of the same session gets a new name (`...-r2--summary.md`). Layout:
`memory/sessions/<date>-<session>--summary.md`, `memory/threads/<thread>/arc-NNNN.md` and `epoch-
NNNN.md`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from signet.lineage.files import safe_name, write_atomic

__all__ = ["Artifact", "artifact_id", "parse", "summary_path", "thread_dir", "write_new"]

FENCE = "---"


def artifact_id(path: str) -> str:
    return "art_" + hashlib.sha256(path.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Artifact:
    path: str  # relative to the workspace, "/"-separated
    meta: dict[str, Any]
    body: str

    def text(self) -> str:
        head = yaml.safe_dump(self.meta, sort_keys=False, allow_unicode=True, width=100)
        return f"{FENCE}\n{head}{FENCE}\n\n{self.body}"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text().encode("utf-8")).hexdigest()


def parse(path: str, text: str) -> Artifact:
    """ValueError naming the problem when `text` is not an artifact."""
    if not text.startswith(FENCE + "\n"):
        raise ValueError(f"{path}: no front matter")
    end = text.find(f"\n{FENCE}\n", len(FENCE))
    if end < 0:
        raise ValueError(f"{path}: front matter is not closed")
    try:
        meta = yaml.safe_load(text[len(FENCE) + 1 : end + 1])
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: front matter is not YAML: {exc}") from None
    if not isinstance(meta, dict) or meta.get("kind") not in ("summary", "arc", "epoch"):
        raise ValueError(f"{path}: front matter has no kind summary, arc or epoch")
    return Artifact(path, meta, text[end + len(FENCE) + 2 :].lstrip("\n"))


def summary_path(day: str, session_id: str, revision: int) -> str:
    suffix = "" if revision <= 1 else f"-r{revision}"
    return f"memory/sessions/{day}-{safe_name(session_id)}{suffix}--summary.md"


def thread_dir(thread_key: str) -> str:
    return f"memory/threads/{safe_name(thread_key.replace(':', '-'))}"


def write_new(workspace: Path, candidates: list[str], artifact_meta: dict[str, Any], body: str,
              *, job: str) -> Artifact:
    """Write the artifact at the first candidate path that is free, or that holds an unindexed
    attempt of this same job (a worker killed after writing, before committing): an indexed
    artifact is never overwritten."""
    for path in candidates:
        target = workspace / path
        if target.exists():
            try:
                previous = parse(path, target.read_text("utf-8"))
            except (OSError, UnicodeDecodeError, ValueError):
                continue
            if previous.meta.get("job") != job:
                continue
        artifact = Artifact(path, {**artifact_meta, "artifact_id": artifact_id(path)}, body)
        write_atomic(target, artifact.text(), mode=0o600)
        return artifact
    raise RuntimeError("no free artifact path")  # callers pass an open-ended candidate list
