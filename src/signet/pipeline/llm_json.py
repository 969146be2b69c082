"""Turning a language model's reply into JSON. Small local models think aloud, fence and write
almost-JSON: `parse_llm_json` drops `<think>` blocks, prefers a fence, and otherwise scans for
the longest value with a re-writer that repairs only what cannot change the meaning (trailing
commas, Python literals, bare keys, quotes, two missing closers); anything else is `BadResponse`.
`reply_number` and `reply_confidence` read the numbers such a reply holds, alike for every caller.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from signet.errors import BadResponse
from signet.providers.llm import CompletingLLM, Completion

__all__ = [
    "DEFAULT_CONFIDENCE",
    "Completion",
    "CompletingLLM",
    "complete_json",
    "parse_llm_json",
    "reply_confidence",
    "reply_number",
]

DEFAULT_CONFIDENCE = 0.5  # what a missing or unreadable confidence in a reply counts as
MAX_MISSING_CLOSERS = 2
MAX_SCAN_STARTS = 64  # enough for any real reply; bounds the work on pathological prose

_THINK_BLOCK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.IGNORECASE | re.DOTALL)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"^\s*<think(?:ing)?>", re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)

_DOUBLE_OPENERS = '"\u201c\u201d'  # straight, left and right double quotes
_SINGLE_OPENERS = "'\u2018\u2019"
_WORDS = {"true": "true", "false": "false", "null": "null", "none": "null"}
_VALID_ESCAPES = set('"\\/bfnrtu')
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def complete_json(
    llm: CompletingLLM, prompt: str, *, system: str | None = None, max_tokens: int | None = None
) -> Any:
    """Ask in JSON mode and parse the reply; `BadResponse` when no JSON can be recovered."""
    completion = llm.complete(prompt, system=system, json_mode=True, max_tokens=max_tokens)
    return parse_llm_json(completion.text)


def parse_llm_json(text: str) -> Any:
    """The JSON object or array in a model's reply (see the module docstring for the rules)."""
    if not isinstance(text, str) or not text.strip():
        raise BadResponse("empty reply")
    body, answer_is_last = _strip_thinking(text)
    if not body.strip():
        raise BadResponse("empty reply once the reasoning is removed")
    for candidate in _fenced_bodies(body) + [body]:
        value = _parse_candidate(candidate, answer_is_last)
        if value is not _MISSING:
            return value
    if "{" not in body and "[" not in body:
        raise BadResponse("no JSON object or array in reply")
    raise BadResponse(f"unrepairable JSON in reply ({_first_failure(body)})")


def reply_number(raw: Any) -> float | None:
    """A finite number the model wrote as a number or a numeric string; None for anything else
    (a boolean, prose, NaN, infinity)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str):
        try:
            raw = float(raw.strip())
        except ValueError:
            return None
    if isinstance(raw, int | float) and math.isfinite(raw):
        return float(raw)
    return None


def reply_confidence(raw: Any) -> float:
    """A confidence from a reply, clamped to [0, 1]; DEFAULT_CONFIDENCE when it is no number."""
    value = reply_number(raw)
    return DEFAULT_CONFIDENCE if value is None else min(1.0, max(0.0, value))


_MISSING = object()


def _strip_thinking(text: str) -> tuple[str, bool]:
    body = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(body))
    if closes:  # the opening tag was part of the prompt template
        return body[closes[-1].end() :], False
    opened = _THINK_OPEN.match(body)
    if opened:  # reasoning never closed: the answer, if any, comes last
        return body[opened.end() :], True
    return body, False


def _fenced_bodies(body: str) -> list[str]:
    if "```" not in body:
        return []
    return [m.group(1) for m in _FENCE.finditer(body) if "{" in m.group(1) or "[" in m.group(1)]


def _parse_candidate(candidate: str, answer_is_last: bool) -> Any:
    try:
        value = json.loads(candidate)
    except ValueError:
        value = _MISSING
    if isinstance(value, dict | list):
        return value
    found = _scan(candidate)
    if not found:
        return _MISSING
    if answer_is_last:
        return found[-1][2]
    # The longest value wins; on a tie, the later one (a final answer follows its drafts).
    return max(found, key=lambda item: (item[1] - item[0], item[0]))[2]


def _scan(text: str) -> list[tuple[int, int, Any]]:
    """Every JSON value recoverable from a `{` or `[`, as (start, end, value), in text order."""
    found: list[tuple[int, int, Any]] = []
    position, attempts = 0, 0
    while attempts < MAX_SCAN_STARTS:
        start = _next_opener(text, position)
        if start < 0:
            break
        attempts += 1
        try:
            repaired, end = _Rewriter(text, start).run()
            found.append((start, end, json.loads(repaired, strict=False)))
            position = end
        except _Truncated:
            break  # every later opener lies inside this cut-off value: no fragments
        except (_Unrepairable, ValueError):
            position = start + 1
    return found


def _next_opener(text: str, position: int) -> int:
    starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
    return min(starts) if starts else -1


def _first_failure(body: str) -> str:
    start = _next_opener(body, 0)
    try:
        repaired, _ = _Rewriter(body, start).run()
        json.loads(repaired, strict=False)
    except _Unrepairable as err:
        return str(err)
    except json.JSONDecodeError as err:
        return f"invalid JSON: {err.msg}"
    return "no usable value"


class _Unrepairable(Exception):
    pass


class _Truncated(_Unrepairable):
    """The value runs to the end of the reply and cannot be closed safely."""


class _Rewriter:
    """Walks one JSON value from `start` and writes it out as strict JSON text."""

    def __init__(self, text: str, start: int) -> None:
        self.text, self.i = text, start
        self.out: list[str] = []
        self.closers: list[str] = []

    def run(self) -> tuple[str, int]:
        while self.i < len(self.text):
            if self._step():
                return "".join(self.out), self.i
        return self._close_truncated(), self.i

    def _step(self) -> bool:
        """Consume one token; True once the outermost value is closed."""
        c = self.text[self.i]
        if c in "{[":
            self.closers.append("}" if c == "{" else "]")
            self._emit(c, 1)
        elif c in "}]":
            return self._close(c)
        elif c in ",:":
            self._emit(c, 1)
        elif c.isspace():
            self.i += 1
        elif c in _DOUBLE_OPENERS:
            self._double_string()
        elif c in _SINGLE_OPENERS:
            self._single_string()
        else:
            self._scalar(c)
        return False

    def _emit(self, token: str, width: int) -> None:
        self.out.append(token)
        self.i += width

    def _close(self, c: str) -> bool:
        if not self.closers or self.closers[-1] != c:
            raise _Unrepairable(f"unbalanced {c!r} at offset {self.i}")
        self._drop_trailing_comma()
        self.closers.pop()
        self._emit(c, 1)
        return not self.closers

    def _drop_trailing_comma(self) -> None:
        if self.out and self.out[-1] == ",":
            self.out.pop()

    def _close_truncated(self) -> str:
        if len(self.closers) > MAX_MISSING_CLOSERS:
            raise _Truncated(f"reply ends with {len(self.closers)} values still open")
        self._drop_trailing_comma()
        if self.out and self.out[-1] == ":":
            raise _Truncated("reply ends after a key")
        return "".join(self.out + self.closers[::-1])

    def _double_string(self) -> None:
        opener = self.text[self.i]
        # A straight quote is closed only by a straight quote; a curly one by either kind.
        enders = '"' if opener == '"' else _DOUBLE_OPENERS
        chars, self.i = _read_string(self.text, self.i + 1, lambda j: self.text[j] in enders)
        self.out.append('"' + chars + '"')

    def _single_string(self) -> None:
        chars, self.i = _read_string(self.text, self.i + 1, self._ends_single)
        self.out.append('"' + chars + '"')

    def _ends_single(self, j: int) -> bool:
        # Unambiguous only when the quote is followed by structure: "it's" stays inside.
        if self.text[j] not in _SINGLE_OPENERS:
            return False
        rest = self.text[j + 1 :].lstrip()
        return not rest or rest[0] in ",:}]"

    def _scalar(self, c: str) -> None:
        number = _NUMBER.match(self.text, self.i)
        if number:
            self._emit(number.group(0), len(number.group(0)))
            return
        word = _WORD.match(self.text, self.i)
        if not word:
            raise _Unrepairable(f"unexpected {c!r} at offset {self.i}")
        name = word.group(0)
        if name.lower() in _WORDS and (name.islower() or name in ("True", "False", "None")):
            self._emit(_WORDS[name.lower()], len(name))
        elif self.text[word.end() :].lstrip().startswith(":"):
            self._emit(json.dumps(name), len(name))  # a bare key: {facts: [...]}
        else:
            raise _Unrepairable(f"bare word {name!r} at offset {self.i}")


def _read_string(text: str, i: int, ends_at: Any) -> tuple[str, int]:
    """Read string contents from `i` up to the closing quote; return (escaped body, next index)."""
    chars: list[str] = []
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in "'\u2019":
                chars.append(nxt)  # \' is not a JSON escape; the quote needs none
            elif nxt in _VALID_ESCAPES:
                chars.append(c + nxt)
            else:
                chars.append("\\\\" + nxt)  # C:\Users -> keep the backslash literally
            i += 2
            continue
        if ends_at(i):
            return "".join(chars), i + 1
        chars.append('\\"' if c == '"' else c)
        i += 1
    raise _Truncated("reply ends inside a string")
