"""Thread heads: per-topic rolling condensation of session summaries. A thread is a project, else
the entity community most of the session's entities belong to, else "general". Every `arc_size`
summaries condense into an arc and every `epoch_size` arcs into an epoch, keeping what lasts
(constraints, decisions, direction changes, the most named entities, the newest open questions)
and listing what each condenses. The head (`signet threads show`) is the newest epoch, the arcs
after it and the summaries after those.
"""

from __future__ import annotations

import re
from collections import Counter

from signet.lineage.artifacts import Artifact
from signet.lineage.sections import add_once

__all__ = ["condense", "sections_of", "thread_key"]

KEPT = ("Decisions", "Constraints", "Direction changes", "Entities", "Open questions")
LIMITS = {"Decisions": 20, "Constraints": 20, "Direction changes": 10, "Entities": 15,
          "Open questions": 5}
_TURN = re.compile(r"\b(instead|no longer|switch(ed)? to|from now on|actually|changed? (our|my) mind"
                   r"|rather than|moved? (away|to))\b", re.I)
_HEADING = re.compile(r"^##\s+(.+?)\s*$")


def thread_key(project: str | None) -> str:
    return f"project:{project}" if project else "general"


def sections_of(body: str) -> dict[str, list[str]]:
    """The bullets under each "## " heading of a markdown body."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in body.splitlines():
        heading = _HEADING.match(line)
        if heading:
            current = out.setdefault(heading.group(1), [])
        elif current is not None and line.lstrip().startswith(("- ", "* ")):
            current.append(line.lstrip()[2:].strip())
    return out


def condense(children: list[Artifact], *, level: str, thread: str) -> tuple[str, str]:
    """(gist, markdown body) of an arc or epoch condensing `children`, oldest first."""
    parts = [sections_of(child.body) for child in children]
    kept: dict[str, list[str]] = {name: [] for name in KEPT}
    seen: set[str] = set()
    for sections in parts:
        for name in ("Decisions", "Constraints", "Direction changes"):
            for item in sections.get(name, []):
                add_once(kept, LIMITS, name, item, seen)
        for items in sections.values():
            for item in items:
                if _TURN.search(item):
                    add_once(kept, LIMITS, "Direction changes", item, seen)
    names = Counter(e for sections in parts for e in sections.get("Entities", []))
    for name, _ in names.most_common(LIMITS["Entities"]):
        add_once(kept, LIMITS, "Entities", name, seen)
    for item in parts[-1].get("Open questions", []) if parts else []:
        add_once(kept, LIMITS, "Open questions", item, seen)
    first = _when(children[0]) if children else ""
    last = _when(children[-1]) if children else ""
    latest = children[-1].meta.get("memory_sentence", "") if children else ""
    gist = f"{level.title()} of {len(children)} for {thread}, {first} to {last}. Latest: {latest}"
    lines = [gist, ""]
    for name in KEPT:
        if kept[name]:
            lines += [f"## {name}", *(f"- {item}" for item in kept[name]), ""]
    lines.append("## Condenses")
    lines += [f"- {c.meta.get('memory_sentence', '')} ({c.path})" for c in children]
    return gist[:600], "\n".join(lines) + "\n"


def _when(artifact: Artifact) -> str:
    value = artifact.meta.get("started_at") or artifact.meta.get("captured_at") or ""
    return str(value)[:10]
