"""A deadline and a circuit breaker around a provider call a caller waits on.

`ProviderGuard.wait` waits at most `budget_s` and then raises `ProviderTimeout` while the hung call
finishes on its own thread. After `failures` consecutive failures calls fail at once for
`cooldown_s`. With `unbounded_until_ready` calls before the first success wait in full, as an in-
process model's first load is not a hung provider.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Literal, TypeVar

from signet.config import SearchConfig
from signet.errors import ProviderError, ProviderTimeout

__all__ = ["ProviderGuard", "query_guard"]

T = TypeVar("T")
State = Literal["closed", "open", "half_open"]

class ProviderGuard:
    def __init__(
        self, name: str, *, budget_s: float, failures: int, cooldown_s: float,
        clock: Callable[[], float] = time.monotonic, unbounded_until_ready: bool = False,
    ) -> None:
        self.name = name
        self.budget_s = budget_s
        self._ready = not unbounded_until_ready
        self.failures = failures
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._lock = threading.Lock()
        self._state: State = "closed"
        self._consecutive = 0
        self._opened_at = 0.0
        self._last_error: str | None = None

    def wait(self, start: Callable[[], Future[T]]) -> T:
        """The result of the work `start()` begins, within the budget. `start()` is asked for
        its future only when the breaker admits the call; ProviderError when it is open,
        ProviderTimeout past the budget, or the work's own ProviderError."""
        self._admit()
        future = start()
        try:
            result = future.result(timeout=self.budget_s if self._ready else None)
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
            self._state, self._consecutive, self._ready = "closed", 0, True

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


def query_guard(search: SearchConfig, *, inline: bool) -> ProviderGuard:
    """Recall's guard around the query embedding, from the `search` settings; an in-process
    model's (`inline`) first call, its load, is waited for in full."""
    return ProviderGuard(
        "query embedding", budget_s=search.query_embed_timeout_ms / 1000,
        failures=search.embed_breaker_failures,
        cooldown_s=search.embed_breaker_cooldown_ms / 1000,
        unbounded_until_ready=inline,
    )
