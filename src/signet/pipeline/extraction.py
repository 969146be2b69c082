"""Extraction: raw memory content -> atomic facts and entity triples, by one LLM call over at most
12,000 characters. Validation forgives: a malformed item costs a warning, never the job (at most
20 facts and 50 entities kept); only a reply with no recoverable JSON raises `BadResponse`, so
the job retries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from signet.pipeline.llm_json import DEFAULT_CONFIDENCE, CompletingLLM, parse_llm_json, reply_number

__all__ = [
    "FACT_TYPES",
    "MAX_ENTITIES",
    "MAX_FACTS",
    "MAX_INPUT_CHARS",
    "ExtractedEntity",
    "ExtractedFact",
    "Extraction",
    "build_extraction_prompt",
    "extract",
    "parse_extraction",
]

FactType = Literal["fact", "preference", "decision", "procedural", "semantic"]
FACT_TYPES: tuple[str, ...] = ("fact", "preference", "decision", "procedural", "semantic")
MAX_INPUT_CHARS = 12_000
MAX_FACTS = 20
MAX_ENTITIES = 50
MIN_FACT_CHARS = 8
MAX_REPLY_TOKENS = 2048


@dataclass(frozen=True, slots=True)
class ExtractedFact:
    content: str
    type: str
    confidence: float


@dataclass(frozen=True, slots=True)
class ExtractedEntity:
    source: str
    relationship: str
    target: str
    confidence: float


@dataclass(frozen=True, slots=True)
class Extraction:
    facts: tuple[ExtractedFact, ...] = ()
    entities: tuple[ExtractedEntity, ...] = ()
    warnings: tuple[str, ...] = ()


EXTRACTION_SYSTEM = (
    "You extract durable knowledge from text for a personal long-term memory. "
    "Reply with one JSON object and nothing else."
)

_INSTRUCTIONS = """Extract the facts worth remembering from the text below.

Rules:
- Each fact is atomic (one piece of knowledge) and self-contained: it must make sense alone,
  without the surrounding text. Resolve "it", "he", "this project" to what they refer to.
- Write in the third person: "The user prefers ...", not "I prefer ...".
- Keep dates, names, numbers and versions exactly as written.
- Skip greetings, small talk, and anything only true for this moment.
- type is one of: fact, preference, decision, procedural, semantic.
- confidence is 0.0-1.0: how clearly the text states the fact.
- entities are relations between named things: {"source", "relationship", "target"}.
- If there is nothing worth remembering, reply {"facts": [], "entities": []}.

Reply as:
{"facts": [{"content": "...", "type": "fact", "confidence": 0.9}],
 "entities": [{"source": "...", "relationship": "...", "target": "...", "confidence": 0.8}]}

Text:
"""


def build_extraction_prompt(content: str) -> str:
    """The extraction prompt; the content is cut at MAX_INPUT_CHARS."""
    return _INSTRUCTIONS + content[:MAX_INPUT_CHARS]


def extract(llm: CompletingLLM, content: str) -> Extraction:
    """One LLM call; empty content gives an empty extraction without calling the model."""
    if not content.strip():
        return Extraction()
    completion = llm.complete(
        build_extraction_prompt(content),
        system=EXTRACTION_SYSTEM,
        json_mode=True,
        max_tokens=MAX_REPLY_TOKENS,
    )
    return parse_extraction(completion.text)


def parse_extraction(text: str) -> Extraction:
    """Validate a reply; malformed items become warnings (see the module docstring)."""
    warnings: list[str] = []
    raw_facts, raw_entities = _shape(parse_llm_json(text), warnings)
    facts = _capped(_valid_facts(raw_facts, warnings), MAX_FACTS, "facts", warnings)
    entities = _capped(_valid_entities(raw_entities, warnings), MAX_ENTITIES, "entities", warnings)
    return Extraction(tuple(facts), tuple(entities), tuple(warnings))


def _shape(data: Any, warnings: list[str]) -> tuple[list[Any], list[Any]]:
    if isinstance(data, list):
        return data, []
    facts = data.get("facts", data.get("memories"))
    entities = data.get("entities", [])
    if facts is None:
        warnings.append("reply has no 'facts' list")
        facts = []
    return _as_list(facts, "facts", warnings), _as_list(entities, "entities", warnings)


def _as_list(value: Any, name: str, warnings: list[str]) -> list[Any]:
    if isinstance(value, list):
        return value
    warnings.append(f"'{name}' is not a list; ignored")
    return []


def _capped(items: list[Any], cap: int, name: str, warnings: list[str]) -> list[Any]:
    if len(items) > cap:
        warnings.append(f"dropped {len(items) - cap} {name} over the cap of {cap}")
    return items[:cap]


def _valid_facts(items: list[Any], warnings: list[str]) -> list[ExtractedFact]:
    facts = []
    for n, item in enumerate(items):
        fact = _fact(item, f"fact {n}", warnings)
        if fact is not None:
            facts.append(fact)
    return facts


def _fact(item: Any, label: str, warnings: list[str]) -> ExtractedFact | None:
    if isinstance(item, str):
        item = {"content": item}
    if not isinstance(item, dict):
        warnings.append(f"{label}: not an object; dropped")
        return None
    content = _first_string(item, ("content", "fact", "text"))
    if len(content) < MIN_FACT_CHARS:
        warnings.append(f"{label}: content empty or too short; dropped")
        return None
    return ExtractedFact(
        content, _fact_type(item, label, warnings), _confidence(item, label, warnings)
    )


def _first_string(item: dict[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return ""


def _fact_type(item: dict[str, Any], label: str, warnings: list[str]) -> str:
    raw = item.get("type")
    if raw is None:
        return "fact"
    name = raw.strip().lower() if isinstance(raw, str) else ""
    if name in FACT_TYPES:
        return name
    warnings.append(f"{label}: unknown type {raw!r}; using 'fact'")
    return "fact"


def _confidence(item: dict[str, Any], label: str, warnings: list[str]) -> float:
    raw = item.get("confidence")
    value = reply_number(raw)
    if value is None:
        warnings.append(f"{label}: confidence {raw!r} is not a number; using {DEFAULT_CONFIDENCE}")
        return DEFAULT_CONFIDENCE
    if not 0.0 <= value <= 1.0:
        warnings.append(f"{label}: confidence {raw!r} clamped to [0, 1]")
    return min(1.0, max(0.0, value))


def _valid_entities(items: list[Any], warnings: list[str]) -> list[ExtractedEntity]:
    entities = []
    for n, item in enumerate(items):
        label = f"entity {n}"
        if not isinstance(item, dict):
            warnings.append(f"{label}: not an object; dropped")
            continue
        source = _first_string(item, ("source",))
        relationship = _first_string(item, ("relationship", "relation"))
        target = _first_string(item, ("target",))
        if not (source and relationship and target):
            warnings.append(f"{label}: needs source, relationship and target; dropped")
            continue
        confidence = _confidence(item, label, warnings)
        entities.append(ExtractedEntity(source, relationship, target, confidence))
    return entities
