"""Loaders for the external retrieval benchmarks: LoCoMo and MemAware.

A `BenchDoc` is one unit to remember: its `key` is what scoring maps a memory back to, its `group`
the store it goes into (one per LoCoMo conversation, one for MemAware). A `BenchQuestion` is a query
with its gold keys. The loaders name the file in every error, so a truncated copy fails loudly, and
never store MemAware's `## Session <id>` header, whose `answer_` ids would give the gold away.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from signet.errors import InvalidInput

Unit = Literal["session", "window", "message"]
UNITS: tuple[Unit, ...] = ("session", "window", "message")

# LoCoMo's numeric category ids, in the order the benchmark's papers report them.
LOCOMO_CATEGORIES: dict[int, str] = {
    4: "single-hop",
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    5: "adversarial",
}
MEMAWARE_TIERS: tuple[str, ...] = ("easy", "medium", "hard")
MEMAWARE_GROUP = "memaware"

WINDOW_CHARS = 1_000
LONG_TURN_CHARS = 4_000

_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
_SESSION_KEY = re.compile(r"session_(\d+)")
_LOCOMO_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y")
_HEADER = re.compile(r"## Session (\S+)\s*")
_DATE = re.compile(r"Session Date:\s*(\S+)\s*")
_ROLE = re.compile(r"(User|Assistant):(?: (.*))?")


@dataclass(frozen=True, slots=True)
class BenchDoc:
    key: str
    text: str
    event_at: str | None
    group: str
    # The conversation the doc was said in (a LoCoMo session): recall's context links turns of
    # one session only (recall/context.py).
    session: str | None = None


@dataclass(frozen=True, slots=True)
class BenchQuestion:
    qid: str
    text: str
    group: str
    category: str
    gold: frozenset[str]
    # Keys the query itself quotes (long queries): the agent already holds them, so scoring
    # skips them in the ranked list.
    quoted: frozenset[str] = frozenset()


# --- shared helpers ----------------------------------------------------------------------------


def _bad(path: Path, problem: str) -> InvalidInput:
    return InvalidInput(f"{path}: {problem}")


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise _bad(path, "no such file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise _bad(path, f"not UTF-8 text ({e})") from e


def _read_json(path: Path) -> Any:
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as e:
        raise _bad(path, f"not valid JSON ({e})") from e


def _field(path: Path, obj: Any, name: str, kind: type, where: str) -> Any:
    """`obj[name]`, checked to be a `kind`; the error says which record lacks it."""
    if not isinstance(obj, dict):
        raise _bad(path, f"{where}: expected an object, got {type(obj).__name__}")
    value = obj.get(name)
    if not isinstance(value, kind):
        raise _bad(path, f"{where}: field {name!r} missing or not a {kind.__name__}")
    return value


# --- LoCoMo ------------------------------------------------------------------------------------


def load_locomo(path: Path, *, captions: bool = True) -> tuple[list[BenchDoc], list[BenchQuestion]]:
    """Every turn of every conversation as a doc, and every question with valid evidence.

    A turn that shared a photo gets " [image: <blip_caption>]" appended unless `captions` is
    False; the README's BM25 baseline indexed the bare "<speaker>: <text>".
    """
    data = _read_json(path)
    if not isinstance(data, list):
        raise _bad(path, "expected a list of conversations")
    docs: list[BenchDoc] = []
    questions: list[BenchQuestion] = []
    for index, sample in enumerate(data):
        sample_docs, sample_questions = _locomo_sample(path, index, sample, captions)
        docs += sample_docs
        questions += sample_questions
    return docs, questions


def _locomo_sample(
    path: Path, index: int, sample: Any, captions: bool
) -> tuple[list[BenchDoc], list[BenchQuestion]]:
    where = f"conversation {index}"
    conversation = _field(path, sample, "conversation", dict, where)
    qa = _field(path, sample, "qa", list, where)
    group = str(sample.get("sample_id", index))
    docs = [
        BenchDoc(key=key, text=text, event_at=event_at, group=group, session=f"{group}/{session}")
        for key, text, event_at, session in _locomo_turns(path, conversation, where, captions)
    ]
    keys = {doc.key for doc in docs}
    questions = []
    for number, item in enumerate(qa):
        question = _locomo_question(path, item, f"{where}, question {number}", keys)
        if question is not None:
            qid = f"{group}/q{number}"
            questions.append(BenchQuestion(qid, question[0], group, question[1], question[2]))
    return docs, questions


def _locomo_turns(
    path: Path, conversation: dict, where: str, captions: bool
) -> Iterator[tuple[str, str, str | None, str]]:
    """(key, text, event_at, session name) for each turn, sessions in numeric order."""
    numbers = sorted(int(m[1]) for k in conversation if (m := _SESSION_KEY.fullmatch(k)))
    for number in numbers:
        turns = _field(path, conversation, f"session_{number}", list, where)
        raw_date = conversation.get(f"session_{number}_date_time")
        event_at = _locomo_date(raw_date) if isinstance(raw_date, str) else None
        for position, turn in enumerate(turns):
            at = f"{where}, session {number}, turn {position}"
            key, text = _locomo_turn(path, turn, at, captions)
            yield key, text, event_at, f"session_{number}"


def _locomo_turn(path: Path, turn: Any, where: str, captions: bool) -> tuple[str, str]:
    speaker = _field(path, turn, "speaker", str, where)
    text = _field(path, turn, "text", str, where)
    key = _dia_key(_field(path, turn, "dia_id", str, where))
    if key is None:
        raise _bad(path, f"{where}: dia_id {turn['dia_id']!r} is not of the form D<session>:<turn>")
    caption = turn.get("blip_caption")
    if captions and isinstance(caption, str) and caption.strip():
        return key, f"{speaker}: {text} [image: {caption.strip()}]"
    return key, f"{speaker}: {text}"


def _locomo_question(
    path: Path, item: Any, where: str, keys: set[str]
) -> tuple[str, str, frozenset[str]] | None:
    """(text, category, gold), or None when none of the evidence names a real turn."""
    text = _field(path, item, "question", str, where)
    category_id = item.get("category")
    if category_id not in LOCOMO_CATEGORIES:
        raise _bad(path, f"{where}: unknown category {category_id!r}")
    evidence = item.get("evidence") or []
    if not isinstance(evidence, list):
        raise _bad(path, f"{where}: 'evidence' is not a list")
    # A few evidence entries are malformed ("D:11:26", "D8:6; D9:17", "D") or name turns that do
    # not exist; keep the ids that resolve and drop the question only when none do.
    found = {f"D{int(s)}:{int(t)}" for entry in evidence for s, t in _DIA_ID.findall(str(entry))}
    gold = frozenset(found & keys)
    return (text, LOCOMO_CATEGORIES[category_id], gold) if gold else None


def _dia_key(dia_id: str) -> str | None:
    match = _DIA_ID.fullmatch(dia_id.strip())
    return f"D{int(match[1])}:{int(match[2])}" if match else None


def _locomo_date(raw: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08T13:56:00'; anything unparseable stays as it is."""
    for fmt in _LOCOMO_DATE_FORMATS:
        try:
            return datetime.strptime(raw.strip(), fmt).isoformat()
        except ValueError:
            continue
    return raw


# --- MemAware ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Turn:
    role: str
    text: str

    def render(self) -> str:
        return f"{self.role}: {self.text}"


@dataclass(frozen=True, slots=True)
class _Session:
    sid: str
    date: str | None
    turns: tuple[_Turn, ...]


def load_memaware(
    sessions_dir: Path, questions_path: Path, unit: Unit = "window"
) -> tuple[list[BenchDoc], list[BenchQuestion]]:
    """The haystack cut into `unit`s (all keyed by session id) and the requests with their gold.

    "session": a whole session, user and assistant. "window": consecutive whole turns up to
    WINDOW_CHARS (a longer turn stands alone, cut at LONG_TURN_CHARS). "message": each user
    message alone.
    """
    if unit not in UNITS:
        raise InvalidInput(f"unknown unit {unit!r}; expected one of {', '.join(UNITS)}")
    sessions = _read_sessions(sessions_dir)
    questions = _memaware_questions(questions_path, {s.sid for s in sessions})
    docs = [
        BenchDoc(key=s.sid, text=text, event_at=s.date, group=MEMAWARE_GROUP)
        for s in sessions
        for text in _unit_texts(s.turns, unit)
    ]
    return docs, questions


def load_memaware_haystack(sessions_dir: Path, unit: Unit = "session") -> list[BenchDoc]:
    """The haystack alone, cut into `unit`s (no questions: throughput benchmarks)."""
    return [
        BenchDoc(key=s.sid, text=text, event_at=s.date, group=MEMAWARE_GROUP)
        for s in _read_sessions(sessions_dir)
        for text in _unit_texts(s.turns, unit)
    ]


def _read_sessions(sessions_dir: Path) -> list[_Session]:
    if not sessions_dir.is_dir():
        raise _bad(sessions_dir, "no such directory")
    sessions: list[_Session] = []
    seen: dict[str, Path] = {}
    for path in sorted(sessions_dir.glob("*.md")):
        for session in _parse_day_file(path):
            if session.sid in seen:
                raise _bad(path, f"session {session.sid!r} already appeared in {seen[session.sid]}")
            seen[session.sid] = path
            sessions.append(session)
    if not sessions:
        raise _bad(sessions_dir, "no '## Session <id>' blocks in any .md file")
    return sessions


def _parse_day_file(path: Path) -> list[_Session]:
    """Split one day file into sessions; text before the first header must be a '# ' title."""
    blocks: list[tuple[str, int, list[str]]] = []
    for lineno, line in enumerate(_read_text(path).splitlines(), start=1):
        if header := _HEADER.fullmatch(line):
            blocks.append((header[1], lineno, []))
        elif blocks:
            blocks[-1][2].append(line)
        elif line.strip() and not line.startswith("# "):
            raise _bad(path, f"line {lineno}: text before the first '## Session <id>' header")
    return [_parse_session(path, sid, lineno, lines) for sid, lineno, lines in blocks]


def _parse_session(path: Path, sid: str, lineno: int, lines: list[str]) -> _Session:
    date: str | None = None
    turns: list[tuple[str, list[str]]] = []
    for offset, line in enumerate(lines, start=1):
        role = _ROLE.fullmatch(line)
        if role:
            turns.append((role[1], [role[2] or ""]))
        elif turns:
            turns[-1][1].append(line)  # a message may span lines
        elif date is None and (found := _DATE.fullmatch(line)):
            date = found[1]
        elif line.strip():
            raise _bad(path, f"line {lineno + offset}: text before the first User:/Assistant: line")
    if not turns:
        raise _bad(path, f"line {lineno}: session {sid!r} has no User:/Assistant: lines")
    return _Session(sid, date, tuple(_Turn(r, "\n".join(body).strip()) for r, body in turns))


def _unit_texts(turns: tuple[_Turn, ...], unit: Unit) -> list[str]:
    if unit == "session":
        return ["\n".join(t.render() for t in turns)]
    if unit == "message":
        return [t.text for t in turns if t.role == "User" and t.text]
    return list(_windows(turns))


def _windows(turns: tuple[_Turn, ...]) -> Iterator[str]:
    """Greedy runs of whole rendered turns, each at most WINDOW_CHARS including newlines."""
    window: list[str] = []
    size = 0
    for turn in turns:
        line = turn.render()
        if len(line) > WINDOW_CHARS:
            if window:
                yield "\n".join(window)
                window, size = [], 0
            yield line[:LONG_TURN_CHARS]
        elif window and size + 1 + len(line) > WINDOW_CHARS:
            yield "\n".join(window)
            window, size = [line], len(line)
        else:
            size += len(line) + (1 if window else 0)
            window.append(line)
    if window:
        yield "\n".join(window)


def _memaware_questions(path: Path, session_ids: set[str]) -> list[BenchQuestion]:
    data = _read_json(path)
    if not isinstance(data, list):
        raise _bad(path, "expected a list of questions")
    return [
        _memaware_question(path, f"question {i}", item, session_ids) for i, item in enumerate(data)
    ]


def _memaware_question(path: Path, where: str, item: Any, session_ids: set[str]) -> BenchQuestion:
    qid = _field(path, item, "question_id", str, where)
    text = _field(path, item, "question", str, where)
    tier = _field(path, item, "difficulty", str, where)
    gold = _field(path, item, "answer_session_ids", list, where)
    if tier not in MEMAWARE_TIERS:
        raise _bad(path, f"{where}: difficulty {tier!r} is not one of {', '.join(MEMAWARE_TIERS)}")
    if not gold or not all(isinstance(g, str) for g in gold):
        raise _bad(path, f"{where}: 'answer_session_ids' must be a non-empty list of strings")
    # Unlike LoCoMo's stray evidence, a gold session missing from the haystack means the two
    # inputs do not belong together, and scoring them would measure nothing.
    missing = sorted(set(gold) - session_ids)
    if missing:
        raise _bad(
            path, f"{where} ({qid}): gold sessions not in the haystack: {', '.join(missing)}"
        )
    return BenchQuestion(qid, text, MEMAWARE_GROUP, tier, frozenset(gold))


# --- long queries ------------------------------------------------------------------------------

LONG_QUERY_TURNS = 10


def with_dialogue(
    docs: list[BenchDoc], questions: list[BenchQuestion], turns: int = LONG_QUERY_TURNS
) -> list[BenchQuestion]:
    """Each question preceded by the `turns` dialogue turns before its first gold turn, one per
    line: an agent's prompt holds the conversation so far with the question last. Gold and ids
    are unchanged; the quoted turns are skipped when scoring."""
    order: dict[tuple[str, str], int] = {}
    by_group: dict[str, list[BenchDoc]] = {}
    for doc in docs:
        group_docs = by_group.setdefault(doc.group, [])
        order.setdefault((doc.group, doc.key), len(group_docs))
        group_docs.append(doc)
    out = []
    for q in questions:
        positions = [order[(q.group, k)] for k in q.gold if (q.group, k) in order]
        if not positions:
            out.append(q)
            continue
        first = min(positions)
        before = by_group[q.group][max(first - turns, 0) : first]
        text = "\n".join([*(d.text for d in before), q.text])
        quoted = frozenset(d.key for d in before)
        out.append(BenchQuestion(q.qid, text, q.group, q.category, q.gold, quoted))
    return out
