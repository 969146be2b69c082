"""Cutting a document into overlapping chunks on paragraph and sentence boundaries.

Paragraphs are packed into chunks of at most `size` characters, a longer paragraph cut between
sentences, a longer sentence between words. Each chunk after the first begins with whole sentences
of the one before, at most `overlap` characters, so a fact straddling a boundary is in both.
"""

from __future__ import annotations

import re

_PARAGRAPHS = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])[\"')\]]*\s+")


def chunk_text(text: str, size: int, overlap: int) -> list[str]:
    """The chunks of `text`; empty text gives none. `overlap` is capped at size // 2."""
    if size < 1:
        raise ValueError("chunk size must be at least 1")
    overlap = max(0, min(overlap, size // 2))
    pieces = [p for para in _paragraphs(text) for p in _fit(para, size)]
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        joiner = "\n\n" if current else ""
        if current and len(current) + len(joiner) + len(piece) > size:
            chunks.append(current)
            tail = _tail(current, overlap)
            current = f"{tail} {piece}" if tail and len(tail) + 1 + len(piece) <= size else piece
        else:
            current = f"{current}{joiner}{piece}"
    if current:
        chunks.append(current)
    return chunks


def _paragraphs(text: str) -> list[str]:
    out = []
    for para in _PARAGRAPHS.split(text.replace("\r\n", "\n")):
        cleaned = "\n".join(line.rstrip() for line in para.strip().splitlines())
        if cleaned:
            out.append(cleaned)
    return out


def _fit(paragraph: str, size: int) -> list[str]:
    """The paragraph whole, or cut into runs of sentences (then words) of at most `size`."""
    if len(paragraph) <= size:
        return [paragraph]
    parts: list[str] = []
    for sentence in sentences(paragraph):
        parts.extend([sentence] if len(sentence) <= size else _words(sentence, size))
    return _pack(parts, size, " ")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _words(sentence: str, size: int) -> list[str]:
    words: list[str] = []
    for word in sentence.split():
        words.extend(word[i : i + size] for i in range(0, len(word), size))
    return _pack(words, size, " ")


def _pack(parts: list[str], size: int, joiner: str) -> list[str]:
    packed: list[str] = []
    current = ""
    for part in parts:
        if current and len(current) + len(joiner) + len(part) > size:
            packed.append(current)
            current = part
        else:
            current = f"{current}{joiner}{part}" if current else part
    if current:
        packed.append(current)
    return packed


def _tail(chunk: str, overlap: int) -> str:
    if overlap <= 0:
        return ""
    tail = ""
    for sentence in reversed(sentences(chunk.replace("\n\n", " "))):
        candidate = f"{sentence} {tail}".strip()
        if len(candidate) > overlap:
            break
        tail = candidate
    if tail:
        return tail
    cut = chunk[-overlap:]
    space = cut.find(" ")
    return cut[space + 1 :] if 0 <= space < len(cut) - 1 else cut
