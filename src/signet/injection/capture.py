"""Explicit "remember that ..." requests in a prompt, stored as memories.

Only a request at the start of a sentence or line counts, so "do you remember when ..." stays a
question. The type is guessed from the wording (decision, preference, else fact); the memory carries
the prompt's session and project. A request the store refuses is kept with its error: the hook then
keeps its spooled copy, and the daemon's spool import sets it aside with the reason (never a
silent drop).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from signet.errors import SignetError
from signet.injection.request import HookRequest
from signet.types import Actor

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = ["Captures", "capture_requests", "requests_in"]

log = logging.getLogger(__name__)

_REQUEST = re.compile(
    r"(?:^|(?<=[.!?\n]))\s*(?:please\s+|signet,?\s+)?remember(?:\s+that|\s*:)\s+"
    r"(?P<fact>[^\n]+?)(?=(?<=[.!?])\s|\n|$)",
    re.IGNORECASE,
)
_DECISION = re.compile(r"\b(decided|decision|we will|we'll|going with|chose|agreed)\b", re.I)
_PREFERENCE = re.compile(r"\b(prefer|prefers|like|likes|love|hate|always|never|favou?rite)\b", re.I)
MIN_CHARS = 8
MAX_CAPTURES = 3


def requests_in(prompt: str) -> list[str]:
    """The statements the prompt asks to remember, in order."""
    found = []
    for match in _REQUEST.finditer(prompt):
        fact = match.group("fact").strip()
        if len(fact) >= MIN_CHARS:
            found.append(fact[0].upper() + fact[1:])
    return found[:MAX_CAPTURES]


@dataclass(frozen=True, slots=True)
class Captures:
    """What a prompt's requests became: the stored memories' ids, and each refusal's error."""

    ids: list[str] = field(default_factory=list)
    refused: list[SignetError] = field(default_factory=list)


def capture_requests(app: SignetApp, request: HookRequest) -> Captures:
    """Store each request; a refusal is logged and returned, never raised (the prompt still
    gets its context)."""
    captures = Captures()
    if not request.prompt or not app.config.hooks.capture_remember:
        return captures
    actor = Actor(name=f"hook:{request.harness}", type="agent", session_id=request.session_id)
    for fact in requests_in(request.prompt):
        try:
            result = app.remember(
                fact, actor=actor, type=_type_of(fact), project=request.project_name,
                source_type="hook",
            )
        except SignetError as exc:
            log.warning('a "remember" request in a prompt was not stored: %s', exc)
            captures.refused.append(exc)
            continue
        captures.ids.append(result.id)
    return captures


def _type_of(fact: str) -> str:
    if _DECISION.search(fact):
        return "decision"
    if _PREFERENCE.search(fact):
        return "preference"
    return "fact"
