"""The BM25 reference: the plain baseline the benchmark numbers are checked against."""

from __future__ import annotations

from signet.bench.bm25_reference import BM25, rank, tokenize
from signet.bench.datasets import BenchDoc, BenchQuestion


def test_tokens_are_lowercase_words_without_stop_words() -> None:
    assert tokenize("The Dog didn't bark at ME, twice!") == ["dog", "bark", "twice"]


def test_the_document_with_the_rarer_query_word_ranks_first() -> None:
    index = BM25(["red kite flying", "red car", "red bus", "blue kite"])
    # "kite" is in 2 of 4 docs, "red" in 3: the doc holding both wins, then the other kite.
    assert index.search("red kite")[:2] == [0, 3]


def test_shorter_documents_win_on_equal_term_counts() -> None:
    index = BM25(["puppy " + "filler " * 20, "puppy here", "nothing"])
    assert index.search("puppy") == [1, 0]


def test_a_query_of_only_stop_words_returns_nothing() -> None:
    assert BM25(["the cat", "a dog"]).search("the a of") == []


def test_each_question_searches_only_its_own_group() -> None:
    docs = [
        BenchDoc("A1", "Ann: puppy", None, "conv-a"),
        BenchDoc("B1", "Bob: puppy puppy", None, "conv-b"),
        BenchDoc("B2", "Bob: kite", None, "conv-b"),
    ]
    questions = [
        BenchQuestion("qa", "puppy", "conv-a", "single-hop", frozenset({"A1"})),
        BenchQuestion("qb", "kite", "conv-b", "single-hop", frozenset({"B2"})),
        BenchQuestion("qc", "puppy", "conv-c", "single-hop", frozenset({"C1"})),
    ]
    ranked, latency = rank(docs, questions)
    assert ranked == {"qa": ["A1"], "qb": ["B2"], "qc": []}
    assert len(latency) == 3 and all(ms >= 0 for ms in latency)
