"""Decision: what to do with one extracted fact, given the memories most like it.

No candidates: `add`, no LLM call. Otherwise one LLM call sees up to five candidates and answers
add, update, delete or none, as a `Proposal` for the controlled writes. An update or delete naming
no candidate shown is `rejected`; an update keeps the fact's own words. Without an LLM a
near-duplicate candidate makes it `none`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from signet.errors import BadResponse
from signet.pipeline.extraction import ExtractedFact
from signet.pipeline.llm_json import CompletingLLM, parse_llm_json, reply_confidence
from signet.pipeline.tokens import content_tokens, normalize_text

__all__ = [
    "MAX_CANDIDATES",
    "Candidate",
    "Proposal",
    "build_decision_prompt",
    "decide",
    "near_duplicate",
    "parse_decision",
]

Action = Literal["add", "update", "delete", "none"]
ACTIONS: tuple[str, ...] = ("add", "update", "delete", "none")
_ACTION_ALIASES = {"skip": "none", "noop": "none", "nothing": "none", "ignore": "none"}
MAX_CANDIDATES = 5
MAX_CANDIDATE_CHARS = 1_000
NEAR_DUPLICATE_JACCARD = 0.8


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    content: str
    score: float


@dataclass(frozen=True, slots=True)
class Proposal:
    action: Action
    fact: ExtractedFact
    target_id: str | None
    confidence: float
    reason: str
    rejected: str | None = None


DECISION_SYSTEM = (
    "You maintain a user's long-term memory. You compare one new fact with existing memories "
    "and choose a single action. Reply with one JSON object and nothing else."
)

_INSTRUCTIONS = """Actions:
- "add": the new fact is new information; no existing memory says it.
- "update": the new fact refines, corrects or replaces one existing memory (give its id).
- "delete": the new fact shows one existing memory is no longer true and the new fact adds
  nothing to keep (give its id).
- "none": an existing memory already says the same thing.

Reply as {"action": "add|update|delete|none", "targetId": "<id of an existing memory or null>",
"confidence": 0.0-1.0, "reason": "<one short sentence>"}"""


def build_decision_prompt(fact: ExtractedFact, candidates: Sequence[Candidate]) -> str:
    lines = [f"New fact ({fact.type}): {json.dumps(fact.content, ensure_ascii=False)}", ""]
    lines.append("Existing memories:")
    for c in candidates[:MAX_CANDIDATES]:
        content = json.dumps(c.content[:MAX_CANDIDATE_CHARS], ensure_ascii=False)
        lines.append(f"- id {json.dumps(c.id)}: {content}")
    return "\n".join(lines + ["", _INSTRUCTIONS])


def decide(
    llm: CompletingLLM | None, fact: ExtractedFact, candidates: Sequence[Candidate]
) -> Proposal:
    """Propose an action for `fact` (see the module docstring for the rules)."""
    if not candidates:
        return Proposal("add", fact, None, fact.confidence, "no similar memories")
    shown = sorted(candidates, key=lambda c: -c.score)[:MAX_CANDIDATES]
    if llm is None:
        return _decide_without_llm(fact, shown)
    completion = llm.complete(
        build_decision_prompt(fact, shown), system=DECISION_SYSTEM, json_mode=True, max_tokens=300
    )
    return parse_decision(completion.text, fact, shown)


def near_duplicate(a: str, b: str) -> float:
    """1.0 for the same statement, else the Jaccard similarity of the content tokens."""
    if normalize_text(a) == normalize_text(b):
        return 1.0
    ta, tb = set(content_tokens(a)), set(content_tokens(b))
    return len(ta & tb) / len(ta | tb) if ta | tb else 0.0


def _decide_without_llm(fact: ExtractedFact, candidates: Sequence[Candidate]) -> Proposal:
    best = max(candidates, key=lambda c: near_duplicate(fact.content, c.content))
    similarity = near_duplicate(fact.content, best.content)
    if similarity >= NEAR_DUPLICATE_JACCARD:
        reason = f"near-duplicate of {best.id} (similarity {similarity:.2f}); no LLM"
        return Proposal("none", fact, best.id, similarity, reason)
    return Proposal("add", fact, None, fact.confidence, "no near-duplicate candidate; no LLM")


def parse_decision(text: str, fact: ExtractedFact, candidates: Sequence[Candidate]) -> Proposal:
    """Read the model's decision; `BadResponse` only when there is no usable action."""
    data = parse_llm_json(text)
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict):
        raise BadResponse("decision reply is not a JSON object")
    action = _action(data.get("action"))
    target = _target(data)
    confidence = reply_confidence(data.get("confidence"))
    given = data.get("reason")
    reason = given if isinstance(given, str) else ""
    ids = {c.id for c in candidates}
    if action in ("update", "delete"):
        rejected = _target_problem(target, ids)
        return Proposal(action, fact, target, confidence, reason, rejected)
    if action == "none":
        return Proposal("none", fact, target if target in ids else None, confidence, reason)
    return Proposal("add", fact, None, confidence, reason)


def _action(raw: Any) -> Action:
    name = raw.strip().lower() if isinstance(raw, str) else ""
    name = _ACTION_ALIASES.get(name, name)
    if name not in ACTIONS:
        raise BadResponse(f"unknown decision action {raw!r}")
    return name  # type: ignore[return-value]


def _target(data: dict[str, Any]) -> str | None:
    for key in ("targetId", "target_id", "targetID", "target"):
        value = data.get(key)
        if isinstance(value, str) and value.strip() and value.strip().lower() != "null":
            return value.strip()
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def _target_problem(target: str | None, ids: set[str]) -> str | None:
    if target is None:
        return "missing target"
    if target not in ids:
        return f"unknown target {target!r}: not one of the candidates"
    return None

