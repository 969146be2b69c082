"""Chunking on paragraph and sentence boundaries, with overlap."""

from __future__ import annotations

from signet.documents.chunking import chunk_text


def test_short_paragraphs_pack_into_one_chunk() -> None:
    assert chunk_text("One.\n\nTwo.\n\n\nThree.", 100, 10) == ["One.\n\nTwo.\n\nThree."]


def test_chunks_break_between_paragraphs_and_carry_whole_sentences_over() -> None:
    paras = [f"Paragraph {i} says a thing. It ends here." for i in range(6)]
    chunks = chunk_text("\n\n".join(paras), 100, 30)
    assert all(len(c) <= 100 for c in chunks) and len(chunks) >= 3
    for previous, chunk in zip(chunks, chunks[1:], strict=False):
        # The overlap is the previous chunk's last sentence, whole.
        assert chunk.startswith("It ends here.") and previous.endswith("It ends here.")
    joined = " ".join(chunks)
    assert all(p.split(".")[0] in joined for p in paras)


def test_a_long_paragraph_is_cut_between_sentences() -> None:
    text = " ".join(f"Sentence number {i} is here." for i in range(40))
    chunks = chunk_text(text, 120, 0)
    assert all(len(c) <= 120 for c in chunks)
    assert all(c.startswith("Sentence") and c.endswith("here.") for c in chunks)
    assert " ".join(chunks) == text


def test_a_sentence_longer_than_a_chunk_is_cut_between_words() -> None:
    text = " ".join(["word"] * 100)
    chunks = chunk_text(text, 50, 0)
    assert all(len(c) <= 50 and not c.startswith(" ") for c in chunks)
    assert " ".join(chunks).split() == text.split()


def test_empty_text_has_no_chunks() -> None:
    assert chunk_text("  \n\n ", 100, 10) == []
