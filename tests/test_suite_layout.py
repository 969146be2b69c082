"""The test tree itself: pytest's default import mode (no `__init__.py` in the test folders)
imports each test module by its basename, so two test files with the same name in different
folders make collection fail for the whole suite. This catches it before CI does."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_two_test_modules_share_a_basename() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert not [n for n, count in names.items() if count > 1], names.most_common(3)
