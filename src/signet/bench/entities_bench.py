"""`signet bench entities`: entity and relation precision and recall of `extract_without_llm` on the
hand-labelled tests/data/entities/labelled.json (names compared case-insensitively, the speaker
"user" and `mentions` relations left out).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from signet.pipeline.rule_extractor import extract_without_llm

__all__ = ["DEFAULT_DATA", "format_entities", "run_entities"]

DEFAULT_DATA = Path("tests") / "data" / "entities" / "labelled.json"


def run_entities(path: Path = DEFAULT_DATA) -> dict[str, Any]:
    """Score the extractor on every labelled item; totals and per-item misses."""
    items = json.loads(path.read_text("utf-8"))["items"]
    totals = {"entity_tp": 0, "entity_found": 0, "entity_gold": 0,
              "relation_tp": 0, "relation_found": 0, "relation_gold": 0}
    per_item = []
    for item in items:
        scored = _score(item)
        for key in totals:
            totals[key] += scored[key]
        per_item.append({"id": item["id"], "kind": item["kind"],
                         "false_entities": scored["false_entities"],
                         "missed_entities": scored["missed_entities"],
                         "false_relations": scored["false_relations"],
                         "missed_relations": scored["missed_relations"]})
    return {
        "items": len(items),
        "entity_precision": _ratio(totals["entity_tp"], totals["entity_found"]),
        "entity_recall": _ratio(totals["entity_tp"], totals["entity_gold"]),
        "relation_precision": _ratio(totals["relation_tp"], totals["relation_found"]),
        "relation_recall": _ratio(totals["relation_tp"], totals["relation_gold"]),
        **totals,
        "per_item": per_item,
    }


def _score(item: dict[str, Any]) -> dict[str, Any]:
    extraction = extract_without_llm(item["text"])
    found_names: dict[str, str] = {}
    found_rel: dict[tuple[str, str, str], list[str]] = {}
    for e in extraction.entities:
        for name in (e.source, e.target):
            if name.lower() != "user":
                found_names.setdefault(name.lower(), name)
        if e.relationship != "mentions":
            found_rel[_rel_key(e.source, e.relationship, e.target)] = [
                e.source, e.relationship, e.target]
    gold_rel = {_rel_key(*r): r for r in item["relations"]}
    gold_names = {n.lower(): n for n in item["entities"]}
    for source, _, target in item["relations"]:
        for name in (source, target):
            if name.lower() != "user":
                gold_names.setdefault(name.lower(), name)
    return {
        "entity_tp": len(found_names.keys() & gold_names.keys()),
        "entity_found": len(found_names),
        "entity_gold": len(gold_names),
        "relation_tp": len(found_rel.keys() & gold_rel.keys()),
        "relation_found": len(found_rel),
        "relation_gold": len(gold_rel),
        "false_entities": sorted(found_names[k] for k in found_names.keys() - gold_names.keys()),
        "missed_entities": sorted(gold_names[k] for k in gold_names.keys() - found_names.keys()),
        "false_relations": [found_rel[k] for k in found_rel.keys() - gold_rel.keys()],
        "missed_relations": [gold_rel[k] for k in gold_rel.keys() - found_rel.keys()],
    }


def _rel_key(source: str, relation: str, target: str) -> tuple[str, str, str]:
    return (source.lower(), relation.lower(), target.lower())


def _ratio(num: int, den: int) -> float:
    return round(num / den, 3) if den else 0.0


def format_entities(result: dict[str, Any]) -> str:
    lines = [
        f"items {result['items']}",
        f"entities   precision {result['entity_precision']:.3f}  recall "
        f"{result['entity_recall']:.3f}  ({result['entity_tp']} right of "
        f"{result['entity_found']} found, {result['entity_gold']} labelled)",
        f"relations  precision {result['relation_precision']:.3f}  recall "
        f"{result['relation_recall']:.3f}  ({result['relation_tp']} right of "
        f"{result['relation_found']} found, {result['relation_gold']} labelled)",
    ]
    for item in result["per_item"]:
        if item["false_entities"] or item["missed_entities"]:
            lines.append(f"  {item['id']}: false {item['false_entities']} "
                         f"missed {item['missed_entities']}")
    return "\n".join(lines)
