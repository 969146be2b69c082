"""The retrieval benchmarks' LLM (`--llm PROVIDER`), its replies kept on disk per session.

A MemAware run is hours of calls, so each reply is appended to
`<folder>/<provider>/<model>/<session>.jsonl`, keyed by a hash of the whole request. Runs repeat
byte for byte (seeded ids, a still clock), so a second or resumed run asks the model only for what
is not kept. `usage()` counts calls, cache answers, characters and tokens per session.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signet.providers.llm import LLM, Completion

__all__ = ["SessionCachedLLM"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class _Count:
    calls: int = 0
    cached: int = 0
    prompt_chars: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class SessionCachedLLM:
    """`inner`'s completions, cached per (provider, model, session); see the module docstring."""

    def __init__(self, inner: LLM, folder: Path) -> None:
        self.inner = inner
        self.root = folder / _safe(inner.name) / _safe(inner.model or "default")
        self.current = "-"
        self._kept: dict[str, dict[str, Any]] = {}
        self._counts: dict[str, _Count] = {}
        self._seen: set[str] = set()
        self.session("-")
        self._seen.clear()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    def session(self, key: str) -> None:
        """Calls from now on belong to session `key`: its kept replies are loaded."""
        self.current = key
        self._seen.add(key)
        self._kept = {}
        try:
            lines = self._file().read_text("utf-8").splitlines()
        except FileNotFoundError:
            lines = []
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # the line a killed run was writing
            if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                self._kept[entry["key"]] = entry

    def complete(
        self, prompt: str, *, system: str | None = None, json_mode: bool = False,
        max_tokens: int | None = None,
    ) -> Completion:
        key = hashlib.sha256(json.dumps([system, json_mode, max_tokens, prompt]).encode()).hexdigest()
        count = self._counts.setdefault(self.current, _Count())
        count.calls += 1
        count.prompt_chars += len(prompt) + len(system or "")
        kept = self._kept.get(key)
        if kept is not None:
            count.cached += 1
            completion = Completion(kept["text"], kept.get("prompt_tokens"),
                                    kept.get("completion_tokens"), 0.0, self.model, self.name)
        else:
            completion = self.inner.complete(prompt, system=system, json_mode=json_mode,
                                             max_tokens=max_tokens)
            entry = {"key": key, "text": completion.text,
                     "prompt_tokens": completion.prompt_tokens,
                     "completion_tokens": completion.completion_tokens}
            self._kept[key] = entry
            path = self._file()
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(entry) + "\n")
        count.prompt_tokens += completion.prompt_tokens or 0
        count.completion_tokens += completion.completion_tokens or 0
        return completion

    def usage(self) -> dict[str, Any]:
        """Totals, and means per session ingested (with or without a call)."""
        counts = list(self._counts.values())
        total = _Count(*(sum(getattr(c, f) for c in counts) for f in _Count.__dataclass_fields__))
        n = max(1, len(self._seen))
        return {
            "provider": self.name, "model": self.model, "cache": str(self.root),
            "sessions": len(self._seen), "calls": total.calls, "cached": total.cached,
            "prompt_chars": total.prompt_chars, "prompt_tokens": total.prompt_tokens,
            "completion_tokens": total.completion_tokens,
            "per_session": {"calls": round(total.calls / n, 1),
                            "prompt_chars": round(total.prompt_chars / n),
                            "prompt_tokens": round(total.prompt_tokens / n),
                            "completion_tokens": round(total.completion_tokens / n)},
        }

    def _file(self) -> Path:
        return self.root / f"{_safe(self.current)}.jsonl"


def _safe(name: str) -> str:
    return _UNSAFE.sub("_", name)[:120] or "_"
