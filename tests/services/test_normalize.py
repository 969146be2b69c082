"""The normalisation table of seed 000: storage form, normalised form, hash and its fallback."""

import hashlib

import pytest

from signet.normalize import normalize_content


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize(
    ("raw", "storage", "normalized"),
    [
        ("  hello   world  ", "hello world", "hello world"),
        ("line one\n\n\tline two", "line one line two", "line one line two"),
        ("User Prefers Dark Mode", "User Prefers Dark Mode", "user prefers dark mode"),
        ("Ends with a stop.", "Ends with a stop.", "ends with a stop"),
        ("Many marks?!...", "Many marks?!...", "many marks"),
        ("Keeps inner, punctuation; here", "Keeps inner, punctuation; here", "keeps inner, punctuation; here"),
        ("Über Café ÉTÉ!", "Über Café ÉTÉ!", "über café été"),
        ("日本語のテキスト。", "日本語のテキスト。", "日本語のテキスト"),
        ("trailing space and dot .  ", "trailing space and dot .", "trailing space and dot"),
    ],
)
def test_storage_and_normalized_forms(raw: str, storage: str, normalized: str) -> None:
    result = normalize_content(raw)
    assert result.storage == storage
    assert result.normalized == normalized
    assert result.content_hash == sha(normalized)


def test_case_and_trailing_punctuation_share_a_hash() -> None:
    assert normalize_content("The API uses REST.").content_hash == normalize_content(
        "the api   uses rest"
    ).content_hash


def test_text_that_normalizes_to_nothing_falls_back_to_lowercased_storage() -> None:
    result = normalize_content("  ?!  ")
    assert result.storage == "?!"
    assert result.normalized == ""
    assert result.content_hash == sha("?!")
    assert result.content_hash != normalize_content("...").content_hash


def test_different_words_differ() -> None:
    assert normalize_content("uses REST").content_hash != normalize_content("uses GraphQL").content_hash
