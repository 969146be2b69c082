"""A session summary: the LLM's when one is configured, else extractive and deterministic, so a
retried job rewrites the same artifact. Extractive: the user's sentences sorted into decisions,
constraints and preferences by wording, facts and entities from the rule extractor, and the open
questions near the end; the gist is the first substantive sentence plus the first decision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from signet.lineage.formats import Message
from signet.lineage.sections import add_once
from signet.pipeline.llm_json import CompletingLLM
from signet.pipeline.rule_extractor import extract_without_llm
from signet.pipeline.tokens import content_tokens

__all__ = ["SECTIONS", "Summary", "answered", "extractive", "with_llm"]

SECTIONS = ("Decisions", "Constraints", "Preferences", "Facts", "Entities", "Open questions")
LIMITS = {"Decisions": 10, "Constraints": 10, "Preferences": 8, "Facts": 10, "Entities": 15,
          "Open questions": 5}
MAX_SENTENCE = 300
OPEN_WINDOW = 4
MAX_LLM_CHARS = 12_000

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_DECISION = re.compile(
    r"\b(decided|decide to|decision|let's (use|go with|do)|we'll (use|go with)|we will (use|go with)"
    r"|going with|settled on|chose|choose to|from now on|switch(ed)? to|instead of)\b", re.I)
_CONSTRAINT = re.compile(
    r"\b(must|never|always|can't|cannot|can not|required|requires?|requirement|deadline|"
    r"at most|at least|no later than|not allowed|forbidden|only ever)\b", re.I)
_PREFERENCE = re.compile(
    r"\b(i prefer|prefer|i like|i love|i hate|i don't like|i dislike|my favou?rite|i'd rather"
    r"|i enjoy)\b", re.I)

SUMMARY_PROMPT = """Summarise this conversation between a user and an AI assistant for the \
user's long-term memory. Write markdown: a first line of one sentence saying what the session \
was about and what came of it, then these sections as "## " headings, each a bullet list, \
omitting empty ones: Decisions, Constraints, Preferences, Facts, Entities, Open questions. Keep \
the user's constraints, decisions and changes of direction; drop small talk and tool noise.

Conversation:
{transcript}"""


@dataclass(frozen=True, slots=True)
class Summary:
    gist: str
    sections: dict[str, list[str]] = field(default_factory=dict)
    method: str = "extractive"
    body: str = ""

    def markdown(self) -> str:
        """The artifact's body: the gist, then each non-empty section."""
        if self.body:
            return self.body.strip() + "\n"
        out = [self.gist, ""]
        for name in SECTIONS:
            items = self.sections.get(name) or []
            if items:
                out.append(f"## {name}")
                out.extend(f"- {item}" for item in items)
                out.append("")
        return "\n".join(out).rstrip() + "\n"


def extractive(messages: list[Message]) -> Summary:
    user = [m for m in messages if m.role == "user"]
    sentences = [s for m in user for s in _sentences(m.text)]
    sections: dict[str, list[str]] = {name: [] for name in SECTIONS}
    seen: set[str] = set()
    for sentence in sentences:
        kind = _kind(sentence)
        if kind is not None:
            add_once(sections, LIMITS, kind, sentence, seen)
    extraction = extract_without_llm("\n".join(f"User: {m.text}" for m in user))
    for fact in extraction.facts:
        add_once(sections, LIMITS, "Facts", fact.content, seen)
    for entity in extraction.entities:
        add_once(sections, LIMITS, "Entities", entity.target, seen)
    window = len(sentences) - sum(len(_sentences(m.text)) for m in user[-OPEN_WINDOW:])
    for index in range(max(window, 0), len(sentences)):
        question = sentences[index]
        if question.endswith("?") and not answered(question, sentences[index + 1:]):
            add_once(sections, LIMITS, "Open questions", question, seen)
    return Summary(_gist(sentences, sections), {k: v for k, v in sections.items() if v})


def with_llm(llm: CompletingLLM, messages: list[Message]) -> Summary:
    transcript = "\n".join(
        f"{'User' if m.role == 'user' else 'Assistant'}: {m.text}" for m in messages
    )[-MAX_LLM_CHARS:]
    reply = llm.complete(SUMMARY_PROMPT.format(transcript=transcript), max_tokens=1024).text
    reply = re.sub(r"<think>.*?</think>", "", reply, flags=re.S).strip()
    if not reply:
        from signet.errors import BadResponse

        raise BadResponse("the LLM returned an empty summary")
    gist = next((line.strip("# ").strip() for line in reply.splitlines() if line.strip()), "")
    return Summary(gist[:MAX_SENTENCE], method="llm", body=reply)


def _sentences(text: str) -> list[str]:
    out = []
    for piece in _SENTENCE.split(text):
        piece = piece.strip(" -*\t")
        if len(piece.split()) >= 3:
            out.append(piece[:MAX_SENTENCE])
    return out


def _kind(sentence: str) -> str | None:
    if sentence.endswith("?"):  # a question decides nothing, even "should we switch to X?"
        return None
    if _PREFERENCE.search(sentence):
        return "Preferences"
    if _DECISION.search(sentence):
        return "Decisions"
    if _CONSTRAINT.search(sentence):
        return "Constraints"
    return None


def answered(question: str, later: list[str]) -> bool:
    """Whether a later sentence settles `question`: a decision or constraint sharing a content
    word with it, or any statement sharing two."""
    asked = _topic_words(question)
    for sentence in later:
        if sentence.endswith("?"):
            continue
        shared = len(asked & _topic_words(sentence))
        if shared >= 2 or (shared and _kind(sentence) in ("Decisions", "Constraints")):
            return True
    return False


_GENERIC = frozenset("before after from with only some need needs want wants like make sure "
                     "that this what which there their about yes".split())


def _topic_words(text: str) -> set[str]:
    """The content words that name a topic: stemmed, four letters or more, not generic."""
    return {w for w in content_tokens(text) if len(w) >= 4 and w not in _GENERIC}


def _gist(sentences: list[str], sections: dict[str, list[str]]) -> str:
    first = next((s for s in sentences if len(s.split()) >= 4), sentences[0] if sentences else "")
    gist = f"Session: {first}" if first else "Session with no substantive user turns."
    if sections["Decisions"]:
        gist += f" Decided: {sections['Decisions'][0]}"
    return gist[: MAX_SENTENCE * 2]
