"""Does a new statement contradict an old one? A cheap syntactic check first, an LLM second.

A contradiction sends an update to review instead of letting the newer fact win silently.
`detect_contradiction` (no LLM) scores negation, antonym pairs and value changes when the sides
share two content tokens; `check_contradiction` adds one LLM call below the threshold (a failure
counts as none). `has_temporal_supersession` spots markers that let a newer statement supersede.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal

from signet.errors import BadResponse, SignetError
from signet.pipeline.llm_json import CompletingLLM, complete_json, reply_confidence
from signet.pipeline.tokens import content_tokens, normalize_text, stem, words

__all__ = [
    "ANTONYM_PAIRS",
    "ContradictionSignal",
    "ContradictionVerdict",
    "build_contradiction_prompt",
    "check_contradiction",
    "combine",
    "detect_contradiction",
    "has_temporal_supersession",
    "shared_tokens",
    "value_conflict",
]

MIN_SHARED_FOR_FAST_PATH = 2
MIN_SHARED_FOR_SLOW_PATH = 3
SignalKind = Literal["negation", "antonym", "value"]

NEGATIONS = frozenset(
    """
    not no never none nobody nothing nowhere neither nor without cannot cant dont doesnt didnt
    isnt arent wasnt werent wont wouldnt shouldnt couldnt hasnt havent hadnt
    """.split()
)
# Polarity and direction words say nothing about the topic, so they do not count as overlap.
_GATE_IGNORED = NEGATIONS | {"on", "off"}

_STRONG, _WEAK = 0.75, 0.55
ANTONYM_PAIRS: tuple[tuple[str, str, float], ...] = (
    ("enabled", "disabled", _STRONG),
    ("enable", "disable", _STRONG),
    ("allow", "deny", _STRONG),
    ("allowed", "denied", _STRONG),
    ("allowed", "forbidden", _STRONG),
    ("always", "never", _STRONG),
    ("true", "false", _STRONG),
    ("accept", "reject", _STRONG),
    ("accepted", "rejected", _STRONG),
    ("include", "exclude", _STRONG),
    ("included", "excluded", _STRONG),
    ("visible", "hidden", _STRONG),
    ("public", "private", _STRONG),
    ("online", "offline", _STRONG),
    ("like", "dislike", _STRONG),
    ("love", "hate", _STRONG),
    ("required", "optional", _STRONG),
    ("valid", "invalid", _STRONG),
    ("active", "inactive", _STRONG),
    ("success", "failure", _STRONG),
    ("succeeded", "failed", _STRONG),
    ("on", "off", _WEAK),
    ("yes", "no", _WEAK),
    ("start", "stop", _WEAK),
    ("started", "stopped", _WEAK),
    ("open", "closed", _WEAK),
    ("increase", "decrease", _WEAK),
    ("increased", "decreased", _WEAK),
    ("light", "dark", _WEAK),
    ("before", "after", _WEAK),
    ("more", "less", _WEAK),
    ("minimum", "maximum", _WEAK),
    ("locked", "unlocked", _WEAK),
    ("installed", "uninstalled", _WEAK),
    ("connected", "disconnected", _WEAK),
    ("sync", "async", _WEAK),
    ("synchronous", "asynchronous", _WEAK),
)
# "dark mode" vs "light mode" names two settings of one thing: stronger than light vs dark.
_PAIRED_PHRASE_BOOST = _STRONG


@dataclass(frozen=True, slots=True)
class ContradictionSignal:
    kind: SignalKind
    confidence: float
    detail: str


@dataclass(frozen=True, slots=True)
class ContradictionVerdict:
    contradicts: bool
    confidence: float
    signals: tuple[ContradictionSignal, ...]
    used_llm: bool
    reason: str


def shared_tokens(a: str, b: str) -> set[str]:
    """Content tokens both sides hold, polarity words excluded."""
    return (_content(a) & _content(b)) - _GATE_IGNORED


def detect_contradiction(a: str, b: str) -> list[ContradictionSignal]:
    """The zero-LLM fast path: negation, antonym and value signals, symmetric in a and b."""
    if normalize_text(a) == normalize_text(b):
        return []
    if len(shared_tokens(a, b)) < MIN_SHARED_FOR_FAST_PATH:
        return []
    signals = _negation_signals(a, b) + _antonym_signals(a, b) + _value_signals(a, b)
    return sorted(signals, key=lambda s: (-s.confidence, s.kind, s.detail))


# -- negation ------------------------------------------------------------------------------------


def _negations(text: str) -> list[str]:
    return [w for w in words(text) if "n't" in w or w.replace("'", "") in NEGATIONS]


def _content(text: str) -> set[str]:
    """Content tokens with apostrophes dropped, so "doesn't" meets the NEGATIONS spelling."""
    return {t.replace("'", "") for t in content_tokens(text)}


def _negation_signals(a: str, b: str) -> list[ContradictionSignal]:
    neg_a, neg_b = _negations(a), _negations(b)
    if bool(neg_a) == bool(neg_b):
        return []
    ta, tb = _content(a) - _GATE_IGNORED, _content(b) - _GATE_IGNORED
    overlap = len(ta & tb) / max(1, min(len(ta), len(tb)))
    confidence = round(0.3 + 0.6 * overlap**2, 3)
    negated = "first" if neg_a else "second"
    word = (neg_a or neg_b)[0]
    return [ContradictionSignal("negation", confidence, f"only the {negated} says {word!r}")]


# -- antonyms ------------------------------------------------------------------------------------


def _antonym_signals(a: str, b: str) -> list[ContradictionSignal]:
    wa, wb = _word_set(a), _word_set(b)
    signals = []
    for x, y, confidence in ANTONYM_PAIRS:
        if _opposed(wa, wb, x, y) or _opposed(wb, wa, x, y):
            if _paired_phrase(a, b, x, y):
                confidence = max(confidence, _PAIRED_PHRASE_BOOST)
            signals.append(ContradictionSignal("antonym", confidence, f"{x} vs {y}"))
    return signals


def _word_set(text: str) -> set[str]:
    return {stem(w.replace("'", "")) for w in words(text)}


def _opposed(one: set[str], other: set[str], x: str, y: str) -> bool:
    x, y = stem(x), stem(y)
    return x in one and y in other and y not in one and x not in other


def _paired_phrase(a: str, b: str, x: str, y: str) -> bool:
    """Are the antonyms used in parallel: followed by the same word on both sides?

    "dark mode" / "light mode" or "on for admins" / "off for admins" name two states of one
    thing, which lifts an ambiguous pair (light/dark, on/off, before/after) to a strong signal.
    """
    after_x = _followers(a, x) | _followers(b, x)
    after_y = _followers(a, y) | _followers(b, y)
    return bool(after_x & after_y)


def _followers(text: str, word: str) -> set[str]:
    tokens = words(text)
    return {stem(tokens[i + 1]) for i, t in enumerate(tokens[:-1]) if stem(t) == stem(word)}


# -- values --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Claim:
    family: str
    subject: frozenset[str]
    obj: frozenset[str]
    change: bool
    text: str


@dataclass(frozen=True, slots=True)
class _Predicate:
    family: str
    pattern: re.Pattern[str]
    change: bool
    object_first: bool = False


_OBJ = r"(?P<obj>[\w][\w.+#/'-]*(?:\s+[\w][\w.+#/'-]*){0,5})"
_SUBJ = r"(?P<subj>(?:[\w'-]+\s+){0,6}?)"
_TOPIC = r"(?P<topic>[\w-]+)"  # the noun of "default theme is", "favorite drink is"


def _p(family: str, verbs: str, *, change: bool = False) -> _Predicate:
    return _Predicate(family, re.compile(rf"{_SUBJ}\b(?:{verbs})\s+{_OBJ}"), change)


_DEFAULT_OBJECT_FIRST = re.compile(
    r"(?P<obj>(?:[\w.+#/'-]+\s+){0,2}?[\w.+#/'-]+)\s+(?:is|are)\s+(?:now\s+)?the\s+default\b"
    r"(?:\s+(?P<topic>[\w-]+))?(?P<subj>)"
)

_PREDICATES: tuple[_Predicate, ...] = (
    _p("use", r"uses|use|using|runs on|run on|is built on|built with"),
    _p(
        "use", r"migrated to|migrating to|switched to|switching to|moved to|changed to", change=True
    ),
    _p("use", r"replaced [\w.+#-]+ with", change=True),
    _p("prefer", r"prefers|prefer|preferring"),
    _p("prefer", rf"favou?rite {_TOPIC} is|favou?rite is"),
    _p("live", r"lives in|live in|living in|resides in|based in"),
    _p("live", r"moved to|relocated to|relocating to", change=True),
    _p("work", r"works at|work at|works for|work for|working at|working for|employed (?:at|by)"),
    _p("work", r"joined", change=True),
    _p("default", rf"defaults to|default to|default {_TOPIC} (?:is|are)|default is"),
    _Predicate("default", _DEFAULT_OBJECT_FIRST, change=False, object_first=True),
    _p("be", r"is|are|am"),
)

_FAMILY_CONFIDENCE = {
    "default": 0.8,
    "live": 0.7,
    "prefer": 0.65,
    "work": 0.6,
    "use": 0.55,
    "be": 0.4,
}
_CHANGE_CONFIDENCE = 0.75
# Where an object ends: "uses PostgreSQL for storage since 2020" -> "PostgreSQL".
_OBJECT_STOP = re.compile(
    r"\b(?:for|because|since|when|while|but|as|at|in|on|with|over|instead|than|to|from|"
    r"during|until|via|by|every|each|after|before|now|anymore|today|currently|which|who|that)\b"
)
_CLAUSE_BREAK = re.compile(r"[.;:!?,()]|\b(?:but|while|whereas|although|though)\b")


def _claims(text: str) -> list[_Claim]:
    claims: list[_Claim] = []
    for clause in _CLAUSE_BREAK.split(text.lower().replace("\u2019", "'")):
        for predicate in _PREDICATES:
            for match in predicate.pattern.finditer(clause):
                claim = _claim(predicate, match)
                if claim is not None:
                    claims.append(claim)
    return claims


def _claim(predicate: _Predicate, match: re.Match[str]) -> _Claim | None:
    raw_obj = match.group("obj")
    if not predicate.object_first:
        raw_obj = _OBJECT_STOP.split(raw_obj, maxsplit=1)[0]
    obj = frozenset(t.replace("'", "") for t in content_tokens(raw_obj)[:4])
    subject_words = [w.replace("'", "") for w in words(match.group("subj"))]
    if not obj or obj & NEGATIONS or set(subject_words[-2:]) & NEGATIONS:
        return None  # "does not use X" is a negation signal, not a value
    if predicate.family == "be" and "default" in match.group(0):
        return None  # the default family reads these
    subject = _content(match.group("subj") + " " + (match.groupdict().get("topic") or ""))
    subject -= _GATE_IGNORED
    return _Claim(
        predicate.family, frozenset(subject), obj, predicate.change, match.group(0).strip()
    )


def _value_signals(a: str, b: str) -> list[ContradictionSignal]:
    best: dict[str, ContradictionSignal] = {}
    for ca in _claims(a):
        for cb in _claims(b):
            signal = _value_conflict(ca, cb)
            if signal and (ca.family not in best or best[ca.family].confidence < signal.confidence):
                best[ca.family] = signal
    return list(best.values())


def _value_conflict(ca: _Claim, cb: _Claim) -> ContradictionSignal | None:
    if ca.family != cb.family or ca.obj <= cb.obj or cb.obj <= ca.obj:
        return None
    if ca.subject and cb.subject and not ca.subject & cb.subject:
        return None
    confidence = _FAMILY_CONFIDENCE[ca.family]
    if ca.change or cb.change:
        confidence = max(confidence, _CHANGE_CONFIDENCE)
    return ContradictionSignal("value", confidence, f"{ca.text!r} vs {cb.text!r}")


def value_conflict(a: str, b: str, *, ignore: frozenset[str] = frozenset()) -> bool:
    """Whether some claim of `a` and some claim of `b` hold one predicate with different
    objects, without the shared-word gate; `ignore`: subject words that do not name a subject
    ("now", "decided"), set aside before the subjects are compared."""
    for ca in _claims(a):
        for cb in _claims(b):
            ca_, cb_ = replace(ca, subject=ca.subject - ignore), replace(cb, subject=cb.subject - ignore)
            if _value_conflict(ca_, cb_) is not None:
                return True
    return False


# -- temporal supersession --------------------------------------------------------------------

_TEMPORAL = re.compile(
    r"\b(?:now|currently|no longer|as of|switched to|from now on|any ?more|nowadays|these days|"
    r"not any longer|since then)\b",
    re.IGNORECASE,
)


def has_temporal_supersession(text: str) -> bool:
    """Does the statement mark itself as the new state ("now", "no longer", "as of")?"""
    return bool(_TEMPORAL.search(text.replace("\u2019", "'")))


# -- the verdict ---------------------------------------------------------------------------------

CONTRADICTION_SYSTEM = (
    "You compare two statements from a user's long-term memory and decide whether they "
    "contradict each other: whether both cannot be true at the same time. Statements that add "
    "different details about the same subject are not contradictions. Reply with JSON only."
)

_EXAMPLES = """Examples:
A: "The API uses REST." B: "The endpoint returns JSON."
{"contradicts": false, "confidence": 0.9, "reason": "complementary details"}
A: "Dark mode is the default." B: "Light mode is the default."
{"contradicts": true, "confidence": 0.95, "reason": "two different defaults for one setting"}
A: "The user has a dog named Rex." B: "The user has a cat."
{"contradicts": false, "confidence": 0.85, "reason": "a person can have both pets"}
A: "The meeting is on Tuesdays." B: "The weekly meeting moved to Thursdays."
{"contradicts": true, "confidence": 0.8, "reason": "different day for the same meeting"}"""


def build_contradiction_prompt(a: str, b: str) -> str:
    return (
        f"{_EXAMPLES}\n\nNow compare:\nA: {_quote(a)}\nB: {_quote(b)}\n"
        'Reply as {"contradicts": true|false, "confidence": 0.0-1.0, "reason": "..."}'
    )


def _quote(text: str) -> str:
    """A one-line, double-quoted rendering of a statement for the prompt."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def combine(confidences: Iterable[float]) -> float:
    """Noisy-or: independent signals reinforce each other without exceeding 1."""
    miss = 1.0
    for c in confidences:
        miss *= 1.0 - c
    return round(1.0 - miss, 3)


def check_contradiction(
    a: str, b: str, llm: CompletingLLM | None = None, threshold: float = 0.6
) -> ContradictionVerdict:
    """Fast path, then (when it is clean and the sides share >= 3 tokens) one LLM call."""
    signals = tuple(detect_contradiction(a, b))
    confidence = combine(s.confidence for s in signals)
    if confidence >= threshold:
        reason = "; ".join(f"{s.kind}: {s.detail}" for s in signals)
        return ContradictionVerdict(True, confidence, signals, False, reason)
    fast_reason = "no signal" if not signals else f"weak signals ({confidence})"
    if llm is None or normalize_text(a) == normalize_text(b):
        return ContradictionVerdict(False, confidence, signals, False, fast_reason)
    if len(shared_tokens(a, b)) < MIN_SHARED_FOR_SLOW_PATH:
        return ContradictionVerdict(False, confidence, signals, False, fast_reason)
    return _slow_path(a, b, llm, threshold, signals)


def _slow_path(
    a: str, b: str, llm: CompletingLLM, threshold: float, signals: tuple[ContradictionSignal, ...]
) -> ContradictionVerdict:
    try:
        data = complete_json(
            llm, build_contradiction_prompt(a, b), system=CONTRADICTION_SYSTEM, max_tokens=200
        )
        contradicts, confidence, reason = _parse_llm_verdict(data)
    except SignetError as err:
        fast = combine(s.confidence for s in signals)
        return ContradictionVerdict(False, fast, signals, True, f"slow path failed: {err}")
    return ContradictionVerdict(
        contradicts and confidence >= threshold, confidence, signals, True, reason
    )


def _parse_llm_verdict(data: Any) -> tuple[bool, float, str]:
    if not isinstance(data, dict) or "contradicts" not in data:
        raise BadResponse("contradiction reply has no 'contradicts'")
    flag = data["contradicts"]
    if isinstance(flag, str) and flag.strip().lower() in ("true", "yes", "false", "no"):
        flag = flag.strip().lower() in ("true", "yes")
    if not isinstance(flag, bool):
        raise BadResponse("'contradicts' is not a boolean")
    reason = data.get("reason")
    confidence = reply_confidence(data.get("confidence"))
    return flag, confidence, reason if isinstance(reason, str) else "llm verdict"
