"""MEMORY.md synthesis: the global head rendered from the database (lineage/synthesis.py).

`synthesize(now)` renders within `sessions.memory_md_budget_tokens`, backs the previous file up
under `memory/backups/` and replaces MEMORY.md atomically. The daemon runs it when memory changed
and then stayed still for `sessions.synthesis_idle_minutes` (`due`). It runs under `one_at_a_time`
(an advisory lock on PostgreSQL), so one daemon renders at a time. The head renders the default
agent's memories only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from signet.config import Config
from signet.errors import Conflict
from signet.lineage import synthesis
from signet.lineage.files import write_atomic
from signet.lineage.summarize import answered
from signet.lineage.synthesis import Candidate
from signet.pipeline.tokens import normalize_text
from signet.store.head import section_items
from signet.store.session_store import SessionStore
from signet.types import format_ts, parse_ts

__all__ = ["HeadSynthesis"]

OWNER = "default"
LOCK = "memory-md-synthesis"
_RENDERED = re.compile(r"Rendered by Signet from the memory database at (\S+);")
TYPE_SECTION = {"constraint": "Constraints", "decision": "Open decisions"}
SUMMARIES = 3
# Without an LLM no decision or constraint memories are distilled: the newest summaries'
# sections stand in for them, just above the open questions.
SUMMARY_ITEM_SCORE = 0.3


@dataclass
class HeadSynthesis:
    config: Config
    store: SessionStore
    last_run: str | None = field(default=None)

    @property
    def path(self) -> Path:
        return self.config.workspace / "MEMORY.md"

    def synthesize(self, now: datetime) -> dict[str, Any]:
        with self.store.one_at_a_time(LOCK) as held:
            if not held:
                raise Conflict("MEMORY.md is being rendered by another daemon; try again")
            return self._render(now)

    def _render(self, now: datetime) -> dict[str, Any]:
        stamp = format_ts(now)
        previous = self.path.read_text("utf-8") if self.path.is_file() else ""
        head = synthesis.render(
            self._candidates(now), kept=synthesis.hand_edits(previous),
            budget=self.config.sessions.memory_md_budget_tokens, generated_at=stamp,
        )
        backup = None
        if previous:
            name = f"MEMORY-{stamp.replace(':', '').replace('.', '')}.md"
            backup = self.config.workspace / "memory" / "backups" / name
            write_atomic(backup, previous, mode=0o600)
        write_atomic(self.path, head.text, mode=0o644)
        self.last_run = stamp
        return {
            "path": str(self.path), "tokens": head.tokens,
            "budget": self.config.sessions.memory_md_budget_tokens, "items": head.items,
            "dropped": head.dropped, "over_budget": head.over_budget,
            "backup": str(backup) if backup else None,
        }

    def due(self, now: datetime) -> bool:
        if self.last_run is None and self.path.is_file():
            # After a restart: the file says when it was rendered.
            found = _RENDERED.search(self.path.read_text("utf-8", errors="replace"))
            self.last_run = found.group(1) if found else None
        changed = self.store.last_change()
        if changed is None or (self.last_run is not None and changed <= self.last_run):
            return False
        idle = timedelta(minutes=self.config.sessions.synthesis_idle_minutes)
        return now - parse_ts(changed) >= idle

    def run_if_due(self, now: datetime) -> bool:
        if not self.due(now):
            return False
        # One daemon at a time renders (an advisory lock on PostgreSQL); one that finds the
        # lock taken tries again at its next tick.
        with self.store.one_at_a_time(LOCK) as held:
            if not held:
                return False
            self._render(now)
        return True

    # -- candidates -------------------------------------------------------------------------

    def _candidates(self, now: datetime) -> list[Candidate]:
        rate = self.config.sessions.synthesis_decay_per_day
        out: list[Candidate] = []
        for m in self.store.head_memories(OWNER):
            score = synthesis.decayed(
                float(m["importance"]), m["last_accessed"] or m["created_at"], bool(m["pinned"]),
                now, rate,
            )
            if score < synthesis.MIN_SCORE:
                continue
            section = "Constraints" if m["pinned"] else TYPE_SECTION.get(m["type"], "Also important")
            out.append(Candidate(section, m["content"], score + (1.0 if m["pinned"] else 0.0)))
        since = format_ts(now - timedelta(days=synthesis.ACTIVE_DAYS))
        gists = self.store.latest_gists(OWNER)
        for p in self.store.head_projects(OWNER, since):
            counts = f"{_count(p['sessions'], 'session')}, {_count(p['memories'], 'memory', 'memories')}"
            line = f"**{p['project']}** ({counts}, last {str(p['last'])[:10]})"
            if gists.get(p["project"]):
                line += f": {gists[p['project']]}"
            out.append(Candidate("Active projects", line, float(p["sessions"] + p["memories"])))
        out += self._from_summaries()
        for e in self.store.head_entities(OWNER):
            kind = "" if e["entity_type"] in (None, "unknown") else f" ({e['entity_type']})"
            out.append(Candidate("Key people and tools", f"{e['name']}{kind}", float(e["mentions"])))
        return out

    def _from_summaries(self) -> list[Candidate]:
        """The open questions of the newest summaries that no summary answers, and without an
        LLM their decisions and constraints."""
        summaries = self.store.latest_summaries(OWNER, SUMMARIES)
        decisions = section_items(summaries, "Decisions")
        constraints = section_items(summaries, "Constraints")
        out: list[Candidate] = []
        if self.config.llm.provider == "none":
            seen: set[str] = set()
            for section, prefix, items in (("Open decisions", "Decided: ", decisions),
                                           ("Constraints", "", constraints)):
                for i, item in enumerate(items):
                    if normalize_text(item) not in seen:
                        seen.add(normalize_text(item))
                        out.append(Candidate(section, prefix + item,
                                             SUMMARY_ITEM_SCORE - i * 0.001))
        settled = decisions + constraints
        questions = [q for q in section_items(summaries, "Open questions")
                     if not answered(q, settled)]
        for i, question in enumerate(questions):
            out.append(Candidate("Open decisions", f"Open: {question}", 0.05 - i * 0.001))
        return out


def _count(n: int, one: str, many: str | None = None) -> str:
    """"1 session", "2 sessions"."""
    return f"{n} {one if n == 1 else many or one + 's'}"
