"""A persistent on-disk cache in front of an embedder (for the benchmark commands).

One append-only file per model and dimension count, records of sha256(text) + float32 vector +
crc32. New vectors are appended in one write under an exclusive lock; a record failing its CRC is
skipped and a partial tail cut, so a crash loses at most one batch.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from signet.errors import InvalidInput
from signet.providers.embedder import Embedder

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_KEY = 32


class CachedEmbedder:
    """An `Embedder` that answers from `folder` when it can and asks `inner` otherwise."""

    def __init__(self, inner: Embedder, folder: Path) -> None:
        self.inner = inner
        self.name = inner.name
        self.inline = inner.inline
        self.model = inner.model
        self.dimensions = inner.dimensions
        folder.mkdir(parents=True, exist_ok=True)
        slug = _UNSAFE.sub("_", f"{inner.model}-{inner.dimensions}")
        self.path = folder / f"{slug}.vec"
        self._record = _KEY + 4 * self.dimensions + 4
        self._lock = threading.Lock()
        self._vectors: dict[bytes, np.ndarray] | None = None
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._loaded())

    def __bool__(self) -> bool:
        # An embedder whatever its cache holds: without this, `__len__` made an empty cache
        # falsy, and `VectorSearch(...) if embedder else None` opened an app without vector
        # search (a bench's first run on a fresh cache was keyword-only, silently).
        return True

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode("utf-8")).digest() for t in texts]
        with self._lock:
            known = self._loaded()
            todo = list(dict.fromkeys(k for k in keys if k not in known))
            self.hits += len(keys) - sum(1 for k in keys if k not in known)
        if todo:
            index = {k: i for i, k in enumerate(keys)}
            fresh = self.inner.embed([texts[index[k]] for k in todo])
            with self._lock:
                self._append(todo, np.asarray(fresh, dtype=np.float32))
                self.misses += len(todo)
        with self._lock:
            known = self._loaded()
            if not keys:
                return np.zeros((0, self.dimensions), dtype=np.float32)
            return np.stack([known[k] for k in keys]).astype(np.float32)

    def _loaded(self) -> dict[bytes, np.ndarray]:
        if self._vectors is None:
            self._vectors = self._read()
        return self._vectors

    def _read(self) -> dict[bytes, np.ndarray]:
        if not self.path.exists():
            return {}
        fd = os.open(self.path, os.O_RDWR)
        try:
            _lock(fd)  # not while another process appends
            with os.fdopen(os.dup(fd), "rb") as f:
                data = f.read()
            whole = len(data) - len(data) % self._record
            if whole != len(data):
                # A partial record from an interrupted append: cut so appends stay aligned.
                os.ftruncate(fd, whole)
        finally:
            os.close(fd)
        out: dict[bytes, np.ndarray] = {}
        body = self._record - 4
        for start in range(0, whole, self._record):
            record = data[start : start + self._record]
            if zlib.crc32(record[:body]).to_bytes(4, "little") != record[body:]:
                continue  # torn or foreign: embedded again when asked for
            key = record[:_KEY]
            out[key] = np.frombuffer(record, dtype="<f4", count=self.dimensions, offset=_KEY)
        return out

    def _append(self, keys: list[bytes], matrix: np.ndarray) -> None:
        if matrix.shape != (len(keys), self.dimensions):
            raise InvalidInput(
                f"embedder returned shape {matrix.shape}, expected {(len(keys), self.dimensions)}"
            )
        known = self._loaded()
        chunks = []
        for key, row in zip(keys, matrix, strict=True):
            body = key + row.astype("<f4").tobytes()
            chunks.append(body + zlib.crc32(body).to_bytes(4, "little"))
            known[key] = row.copy()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            _lock(fd)
            data = memoryview(b"".join(chunks))
            while data:
                data = data[os.write(fd, data) :]
        finally:
            os.close(fd)  # closing releases the lock


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # Windows: one benchmark process at a time
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
