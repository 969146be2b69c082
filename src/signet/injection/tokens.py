"""Token counts with the bundled tokenizer (all-MiniLM-L6-v2's `tokenizer.json`), loaded once
without the embedder's padding and truncation, so a budget is counted the same way every time.
`cut` shortens a text at a token boundary.
"""

from __future__ import annotations

import threading
from importlib import resources
from typing import Any

__all__ = ["count", "cut"]

TOKENIZER_RESOURCE = "minilm-tokenizer.json"

_lock = threading.Lock()
_tokenizer: Any = None


def _load() -> Any:
    global _tokenizer
    with _lock:
        if _tokenizer is None:
            from tokenizers import Tokenizer

            source = resources.files("signet.resources").joinpath(TOKENIZER_RESOURCE)
            with resources.as_file(source) as path:
                tokenizer = Tokenizer.from_file(str(path))
            tokenizer.no_padding()
            tokenizer.no_truncation()
            _tokenizer = tokenizer
    return _tokenizer


def count(text: str) -> int:
    """Tokens in `text` (no special tokens)."""
    if not text:
        return 0
    return len(_load().encode(text, add_special_tokens=False).ids)


def cut(text: str, max_tokens: int) -> tuple[str, bool]:
    """`text` cut to at most `max_tokens` tokens, and whether anything was cut."""
    if max_tokens <= 0:
        return "", bool(text)
    encoding = _load().encode(text, add_special_tokens=False)
    if len(encoding.ids) <= max_tokens:
        return text, False
    end = encoding.offsets[max_tokens - 1][1]
    return text[:end].rstrip(), True
