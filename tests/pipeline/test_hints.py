"""Prospective hints: reply shapes, clean-up, and the one LLM call."""

from __future__ import annotations

import pytest

from fakes.scripted_llm import ScriptedLLM
from signet.errors import BadResponse
from signet.pipeline.hints import MAX_HINTS, build_hints_prompt, generate_hints, parse_hints

Q = ["Where can I get discounts?", "Which stores have my loyalty cards?", "Shopping tips?"]


@pytest.mark.parametrize(
    "reply",
    [
        '{"hints": ["Where can I get discounts?", "Which stores have my loyalty cards?", '
        '"Shopping tips?"]}',
        '{"questions": ["Where can I get discounts?", "Which stores have my loyalty cards?", '
        '"Shopping tips?"], "note": "ignored"}',
        '["Where can I get discounts?", "Which stores have my loyalty cards?", "Shopping tips?"]',
        '<think>cards</think>```json\n{"hints": [{"question": "Where can I get discounts?"}, '
        '{"hint": "Which stores have my loyalty cards?"}, "Shopping tips?",]}\n```',
        "Here are some:\n1. Where can I get discounts?\n- Which stores have my loyalty cards?\n"
        "* Shopping tips?\nHope this helps.",
    ],
    ids=["hints key", "questions key", "bare list", "objects in fences", "numbered lines"],
)
def test_reply_shapes(reply: str) -> None:
    assert parse_hints(reply) == Q


def test_duplicates_empties_and_junk_are_dropped() -> None:
    reply = (
        '{"hints": ["Where can I get discounts?", "  ", "where can I get  discounts", 7, null,'
        ' {"other": "x"}, "Which stores\\nhave my cards?"]}'
    )
    assert parse_hints(reply) == ["Where can I get discounts?", "Which stores have my cards?"]


def test_at_most_five_hints_are_kept() -> None:
    reply = '{"hints": [' + ", ".join(f'"question {i}?"' for i in range(9)) + "]}"
    assert parse_hints(reply) == [f"question {i}?" for i in range(MAX_HINTS)]


def test_an_empty_list_is_a_valid_answer() -> None:
    assert parse_hints('{"hints": []}') == []


@pytest.mark.parametrize(
    "reply", ['{"answer": "none"}', "I cannot think of any.", '{"hints": "where?"}']
)
def test_replies_without_hints_raise_bad_response(reply: str) -> None:
    with pytest.raises(BadResponse):
        parse_hints(reply)


def test_prompt_asks_for_three_to_five_hints_as_json() -> None:
    prompt = build_hints_prompt("The user has a Target loyalty card")
    assert '{"hints": [' in prompt and "Write 3 to 5 different" in prompt
    assert prompt.endswith("The user has a Target loyalty card")


def test_prompt_asks_for_the_configured_number_of_hints() -> None:
    # memory.pipelineV2.hints.min and .max
    assert "Write 2 to 4 different" in build_hints_prompt("fact", 2, 4)
    assert "Write 4 different" in build_hints_prompt("fact", 4, 4)
    assert "Write up to 2 different" in build_hints_prompt("fact", 0, 2)


def test_generate_hints_keeps_at_most_the_most_asked_for() -> None:
    llm = ScriptedLLM('{"hints": ["a?", "b?", "c?"]}')
    assert generate_hints(llm, "The user has a Target loyalty card", 1, 2) == ["a?", "b?"]
    assert "Write up to 2 different" in llm.prompts[0]
    assert generate_hints(llm, "The user has a Target loyalty card", 0, 0) == []
    assert len(llm.prompts) == 1  # none asked for: no call


def test_generate_hints_makes_one_call() -> None:
    llm = ScriptedLLM('{"hints": ["Where can I get discounts?"]}')
    assert generate_hints(llm, "The user has a Target loyalty card") == [Q[0]]
    assert len(llm.prompts) == 1
    assert generate_hints(llm, "  ") == [] and len(llm.prompts) == 1
