"""A deadline and a circuit breaker around a provider call made while a caller waits.

An embedding server that accepts a connection and never answers used to hold every recall for
the provider's whole timeout (30 s), and with it a request thread that unrelated routes needed.
`ProviderGuard.call(fn)`:

- runs `fn` on the guard's own small pool of threads, never the caller's: the caller waits at
  most `budget_s` and then gets `ProviderTimeout` (recall degrades to its other channels), while
  a hung call finishes, or fails at the provider's own timeout, on the guard's thread;
- counts consecutive failures and timeouts; after `failures` of them the breaker opens and calls
  fail at once, without reaching the provider, for `cooldown_s`; then one call is let through
  (half-open): a success closes the breaker, a failure opens it for another cooldown;
- reports its state (`snapshot`), which /api/status shows as the provider's health.

`wait(start)` is the same deadline and breaker for work that already runs on a thread of its own
(recall's query micro-batcher, providers/query_embeddings.py): `start()` hands over a future.

The clock is injectable so tests can step through a cooldown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Literal, TypeVar

from signet.errors import ProviderError, ProviderTimeout

__all__ = ["ProviderGuard"]

T = TypeVar("T")
State = Literal["closed", "open", "half_open"]
POOL_THREADS = 4  # calls that may hang at once before new ones queue behind them


class ProviderGuard:
    def __init__(
        self, name: str, *, budget_s: float, failures: int, cooldown_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.budget_s = budget_s
        self.failures = failures
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._lock = threading.Lock()
        self._state: State = "closed"
        self._consecutive = 0
        self._opened_at = 0.0
        self._last_error: str | None = None
        self._pool = ThreadPoolExecutor(POOL_THREADS, thread_name_prefix=f"signet-{name}")

    def call(self, fn: Callable[[], T]) -> T:
        """`fn()` within the budget; ProviderError when the breaker is open, ProviderTimeout
        past the budget, or `fn`'s own ProviderError."""
        return self.wait(lambda: self._pool.submit(fn))

    def wait(self, start: Callable[[], Future[T]]) -> T:
        """Like `call`, for work that runs on a thread of its own (the query micro-batcher):
        `start()` is asked for its future only when the breaker admits the call, and the
        caller waits on it at most the budget."""
        self._admit()
        future = start()
        try:
            result = future.result(timeout=self.budget_s)
        except FutureTimeout:
            self._failed(f"no answer within {self.budget_s:g}s")
            raise ProviderTimeout(
                f"{self.name}: no answer within {self.budget_s:g}s; answering without it"
            ) from None
        except ProviderError as exc:
            self._failed(str(exc))
            raise
        self._succeeded()
        return result

    def _admit(self) -> None:
        with self._lock:
            if self._state == "closed":
                return
            if self._state == "open" and self._clock() - self._opened_at >= self.cooldown_s:
                self._state = "half_open"  # this call is the one trial
                return
            raise ProviderError(
                f"{self.name}: skipped after {self._consecutive} failures in a row"
                f" (retried {self._retry_in():.0f}s from now): {self._last_error}",
                code="provider_unavailable",
            )

    def _failed(self, error: str) -> None:
        with self._lock:
            self._consecutive += 1
            self._last_error = error
            if self._state == "half_open" or self._consecutive >= self.failures:
                self._state = "open"
                self._opened_at = self._clock()

    def _succeeded(self) -> None:
        with self._lock:
            self._state, self._consecutive = "closed", 0

    def _retry_in(self) -> float:
        return max(0.0, self.cooldown_s - (self._clock() - self._opened_at))

    @property
    def degraded(self) -> bool:
        with self._lock:
            return self._state != "closed"

    def snapshot(self) -> dict[str, Any]:
        """The breaker as /api/status shows it."""
        with self._lock:
            return {
                "state": self._state,
                "consecutive_failures": self._consecutive,
                "last_error": self._last_error,
                "retry_in_s": round(self._retry_in(), 1) if self._state == "open" else None,
                "budget_ms": round(self.budget_s * 1000),
            }

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
