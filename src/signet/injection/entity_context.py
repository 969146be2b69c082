"""Entity context of prompt-submit: the current attributes of known entities named in the prompt.

Every run of one to three words is looked up as a canonical key (store/graph.py `canonical`), by
name then alias, in one query. Entities mentioned by more than 5% of memories are common, not news,
and are skipped. Read through the graph store, so it works on either backend.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from signet.injection.budget import ContextBlock
from signet.store.graph import canonical

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = ["add_entity_context", "named_entities"]

_WORD = re.compile(r"[\w][\w.+#&'@-]*", re.UNICODE)
MAX_NGRAM = 3
MAX_ENTITIES = 2
MAX_ASPECTS = 3
MAX_ATTRIBUTES = 4
MIN_ATTRIBUTE_CONFIDENCE = 0.5
COMMON_FRACTION = 0.05
COMMON_MIN_MEMORIES = 200


def named_entities(app: SignetApp, prompt: str, agent_id: str = "default") -> list[str]:
    """Ids of the known entities the prompt names, in order of first mention."""
    words = _WORD.findall(prompt[:4000])
    keys: list[str] = []
    for size in range(MAX_NGRAM, 0, -1):
        for start in range(len(words) - size + 1):
            key = canonical(" ".join(words[start : start + size]))
            if len(key) >= 2 and key not in keys:
                keys.append(key)
    if not keys:
        return []
    with app.graph.store.reading() as graph:
        found = graph.resolve(keys[:500], agent_id)
        ids = list(dict.fromkeys(found[k] for k in keys if k in found))
        common = graph.common_entities(ids, COMMON_FRACTION, COMMON_MIN_MEMORIES)
    return [i for i in ids if i not in common][:MAX_ENTITIES]


def add_entity_context(app: SignetApp, block: ContextBlock, entity_ids: list[str]) -> list[str]:
    """Add each entity's current attributes; return the ids of the entities added."""
    added = []
    with app.graph.store.reading() as graph:
        for entity_id in entity_ids:
            entity = graph.get_entity(entity_id)
            if entity is None:
                continue
            lines = _attribute_lines(graph.aspects_with_attributes(entity_id))
            if not lines:
                continue
            if block.add("\n".join([f"## {entity['name']}", *lines]), cap=block.budget // 2):
                added.append(entity_id)
    return added


def _attribute_lines(aspects: list[dict[str, Any]]) -> list[str]:
    lines = []
    for aspect in aspects[:MAX_ASPECTS]:
        attributes = [
            a for a in aspect["attributes"] if (a["confidence"] or 0) >= MIN_ATTRIBUTE_CONFIDENCE
        ][:MAX_ATTRIBUTES]
        for attribute in attributes:
            value = " ".join(str(attribute["value"] or "").split())
            lines.append(f"- {aspect['name']}: {attribute['key']} = {value}")
    return lines
