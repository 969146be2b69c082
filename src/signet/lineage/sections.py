"""Bulleted sections kept by name: an item goes in once across all sections (compared as
normalised text), and each section stops at its limit."""

from __future__ import annotations

from collections.abc import Mapping

from signet.pipeline.tokens import normalize_text

__all__ = ["add_once"]


def add_once(
    sections: dict[str, list[str]], limits: Mapping[str, int], name: str, item: str,
    seen: set[str],
) -> None:
    """Append `item` to section `name` unless an equal item is in `seen` or the section is full."""
    key = normalize_text(item)
    if key in seen or len(sections[name]) >= limits[name]:
        return
    seen.add(key)
    sections[name].append(item)
