"""parse_llm_json: what small models really send, and what must still be refused."""

from __future__ import annotations

from typing import Any

import pytest

from fakes.scripted_llm import ScriptedLLM
from signet.errors import BadResponse
from signet.pipeline.llm_json import complete_json, parse_llm_json, reply_confidence

RECOVERABLE: list[tuple[str, str, Any]] = [
    ("clean object", '{"a": 1}', {"a": 1}),
    ("clean array", "[1, 2]", [1, 2]),
    ("json fence", '```json\n{"a": 1}\n```', {"a": 1}),
    ("bare fence", '```\n[{"a": "b"}]\n```', [{"a": "b"}]),
    ("fence with prose", 'Here you go:\n```json\n{"a": 1}\n```\nEnjoy!', {"a": 1}),
    ("unclosed fence", '```json\n{"a": 1}', {"a": 1}),
    ("think block", '<think>The user wants {x}. Fine.</think>\n{"a": 1}', {"a": 1}),
    ("two think blocks", '<think>a</think><think>b [1]</think>{"a": 2}', {"a": 2}),
    ("closing think only", 'reasoning {"draft": 1} ...</think>{"a": 3}', {"a": 3}),
    ("unclosed think", '<think>I could say {"a": 0} but\n{"a": 1, "b": [2]}', {"a": 1, "b": [2]}),
    ("think then fence", '<think>hm</think>```json\n{"a": 1}\n```', {"a": 1}),
    ("prose around", 'Sure! The result is {"a": [1, 2]} as requested.', {"a": [1, 2]}),
    ("bracket in prose first", 'See note [1]. {"facts": [{"c": "x"}]}', {"facts": [{"c": "x"}]}),
    ("trailing comma object", '{"a": 1, "b": 2,}', {"a": 1, "b": 2}),
    ("trailing comma array", '{"a": [1, 2, ], }', {"a": [1, 2]}),
    ("single quotes", "{'a': 'b', 'c': ['d']}", {"a": "b", "c": ["d"]}),
    ("apostrophe inside", "{'fact': 'The user's dog is Rex'}", {"fact": "The user's dog is Rex"}),
    ("double quote inside single", "{'a': 'say \"hi\"'}", {"a": 'say "hi"'}),
    ("python literals", '{"a": True, "b": False, "c": None}', {"a": True, "b": False, "c": None}),
    ("missing final brace", '{"facts": [{"a": 1}]', {"facts": [{"a": 1}]}),
    ("missing two closers", '{"facts": [{"a": 1}, ', {"facts": [{"a": 1}]}),
    ("smart quotes", "{\u201ca\u201d: \u201cb c\u201d}", {"a": "b c"}),
    (
        "smart quote inside string",
        '{"a": "he said \u201chi\u201d"}',
        {"a": "he said \u201chi\u201d"},
    ),
    ("bare keys", "{facts: [], entities: []}", {"facts": [], "entities": []}),
    ("windows path", '{"p": "C:\\Users\\me"}', {"p": "C:\\Users\\me"}),
    ("raw newline in string", '{"a": "line\nbreak"}', {"a": "line\nbreak"}),
    ("numbers", '{"a": -1.5e2, "b": 0.75}', {"a": -150.0, "b": 0.75}),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in RECOVERABLE], ids=[c[0] for c in RECOVERABLE]
)
def test_recovers_json_from_a_model_reply(text: str, expected: Any) -> None:
    assert parse_llm_json(text) == expected


HOPELESS: list[tuple[str, str, str]] = [
    ("empty", "", "empty"),
    ("whitespace", "   \n", "empty"),
    ("only thinking", "<think>nothing to say</think>", "empty"),
    ("prose", "I could not find any facts in this text.", "no JSON"),
    ("truncated inside a string", '{"facts": [{"content": "The user li', "inside a string"),
    ("too many open values", '{"a": [{"b": [{"c": 1', "still open"),
    ("ends after a key", '{"a": 1, "b":', "after a key"),
    ("bare word value", '{"a": maybe}', "bare word"),
    ("mismatched closer", '{"a": [1, 2}', "unbalanced"),
    ("scalar only", '"just a string"', "no JSON"),
]


@pytest.mark.parametrize(
    ("text", "reason"), [c[1:] for c in HOPELESS], ids=[c[0] for c in HOPELESS]
)
def test_hopeless_replies_raise_bad_response_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(BadResponse, match=reason):
        parse_llm_json(text)


def test_longest_value_wins_over_a_draft() -> None:
    text = 'Draft: {"a": 1}. Final answer: {"a": 1, "b": 2, "c": 3}'
    assert parse_llm_json(text) == {"a": 1, "b": 2, "c": 3}


def test_complete_json_asks_in_json_mode_and_parses() -> None:
    llm = ScriptedLLM('<think>x</think>{"ok": true}')
    assert complete_json(llm, "question", system="sys") == {"ok": True}
    assert llm.calls == [("question", "sys", True)]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(0.7, 0.7), (1, 1.0), (" 0.25 ", 0.25), (1.7, 1.0), (-1, 0.0), ("high", 0.5),
     (True, 0.5), (None, 0.5), (float("nan"), 0.5), (float("inf"), 0.5), ("-inf", 0.5)],
)
def test_a_reply_confidence_is_a_clamped_finite_number_or_the_default(
    raw: object, expected: float
) -> None:
    assert reply_confidence(raw) == expected
