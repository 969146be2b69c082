"""The LLM seam: one method, `complete(prompt) -> Completion`, behind every provider.

`llm.provider` picks the server (`none`, the default, means no LLM work); `make_llm` looks it up in
`LLM_PROVIDERS`, where the built-ins register as a plugin would. `BaseLLM` holds the token-bucket
rate limit, the empty-reply check and the usage report. Errors name the provider and URL or command,
never the prompt, which is user memory.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar, NamedTuple, Protocol, runtime_checkable

from signet.errors import BadResponse, InvalidInput, RateLimited

__all__ = [
    "JSON_INSTRUCTION",
    "LLM",
    "BaseLLM",
    "CompletingLLM",
    "Completion",
    "LLMSettings",
    "RateLimiter",
    "RawCompletion",
    "UsageSink",
]

log = logging.getLogger(__name__)

# Appended to the system prompt by providers whose API has no JSON switch (anthropic, command).
JSON_INSTRUCTION = "Reply with a single JSON object and nothing else."


@dataclass(frozen=True, slots=True)
class Completion:
    """One model reply and what it cost. Token counts are None when the provider cannot tell."""

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: float
    model: str
    provider: str


UsageSink = Callable[[Completion], None]


class CompletingLLM(Protocol):
    """The one method the pipeline calls: a prompt in, a `Completion` out. Declared once here;
    `pipeline/llm_json.py` re-exports it, and a test's scripted stand-in needs only this."""

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        json_mode: bool = False,
        max_tokens: int | None = None,
    ) -> Completion: ...


@runtime_checkable
class LLM(CompletingLLM, Protocol):
    """A configured provider: `complete`, plus the names its usage is reported under (read
    only: a provider's name is its class's, its model an instance's)."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...


class RateLimiter:
    """A token bucket: `burst` calls at once, refilled at `max_per_hour` calls per hour.

    Thread-safe, because several workers may share one provider. The clock is injectable so
    tests can move time instead of sleeping.
    """

    def __init__(
        self, max_per_hour: int, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if max_per_hour < 1 or burst < 1:
            raise InvalidInput("llm max_calls_per_hour and burst must be at least 1")
        self.max_per_hour = max_per_hour
        self.burst = burst
        self._rate_per_s = max_per_hour / 3600.0
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()
        self._lock = threading.Lock()

    def try_acquire(self) -> bool:
        """Take one call from the bucket; False (and nothing taken) when it is empty."""
        with self._lock:
            self._refill()
            if self._tokens < 1.0:
                return False
            self._tokens -= 1.0
            return True

    def seconds_until_available(self) -> float:
        """How long until `try_acquire` would succeed; 0 when it would now."""
        with self._lock:
            self._refill()
            return max(0.0, (1.0 - self._tokens) / self._rate_per_s)

    def _refill(self) -> None:
        now = self._clock()
        elapsed = max(0.0, now - self._last)  # a clock that steps back must not drain the bucket
        self._tokens = min(float(self.burst), self._tokens + elapsed * self._rate_per_s)
        self._last = now


class RawCompletion(NamedTuple):
    """What a provider's wire call yields before `BaseLLM` times, checks and reports it."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class BaseLLM(ABC):
    """Shared plumbing; a provider implements `_model` (which model its settings name),
    `_complete` (one call on the wire) and `target`, and keeps what else it needs in `_setup`."""

    name: ClassVar[str]

    def __init__(
        self,
        settings: LLMSettings,
        *,
        limiter: RateLimiter | None = None,
        usage_sink: UsageSink | None = None,
    ) -> None:
        self.model = self._model(settings)
        self.max_tokens = settings.max_tokens
        self._limiter = limiter
        self._usage_sink = usage_sink
        # For `signet status`: the newest failure and success of this provider, in this process.
        self._last_error: tuple[str, str] | None = None
        self._last_success: str | None = None
        self._setup(settings)

    @abstractmethod
    def _model(self, settings: LLMSettings) -> str:
        """The model calls name: the configured one or the provider's default; InvalidInput
        when the settings lack what the provider cannot run without."""

    def _setup(self, settings: LLMSettings) -> None:
        """Keep what else the provider needs of `settings` (a client, a command)."""
        return  # most providers need nothing more

    def close(self) -> None:
        """Release connections or other resources; the provider is not used afterwards."""
        return  # most providers hold nothing between calls

    @property
    @abstractmethod
    def target(self) -> str:
        """Where calls go (a URL or a command), for error messages."""

    @abstractmethod
    def _complete(
        self, prompt: str, *, system: str | None, json_mode: bool, max_tokens: int
    ) -> RawCompletion: ...

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        json_mode: bool = False,
        max_tokens: int | None = None,
    ) -> Completion:
        self._take_rate_token()
        started = time.perf_counter()
        try:
            raw = self._complete(
                prompt, system=system, json_mode=json_mode,
                max_tokens=max_tokens or self.max_tokens,
            )
            if not raw.text.strip():
                raise BadResponse(f"{self.name}: empty reply from {self.target}")
        except Exception as exc:
            self._last_error = (_now(), str(exc))
            raise
        self._last_success = _now()
        latency_ms = (time.perf_counter() - started) * 1000.0
        completion = Completion(
            text=raw.text,
            prompt_tokens=raw.prompt_tokens,
            completion_tokens=raw.completion_tokens,
            latency_ms=latency_ms,
            model=self.model,
            provider=self.name,
        )
        self._report(completion)
        return completion

    def health(self) -> dict[str, str | None]:
        """The newest error (and when) and the newest success of this provider's calls."""
        at, error = self._last_error or (None, None)
        return {"last_error": error, "last_error_at": at, "last_success_at": self._last_success}

    def _take_rate_token(self) -> None:
        if self._limiter is None or self._limiter.try_acquire():
            return
        wait_s = self._limiter.seconds_until_available()
        raise RateLimited(
            f"{self.name}: more than {self._limiter.max_per_hour} LLM calls per hour "
            f"(burst {self._limiter.burst}); next call possible in {wait_s:.0f} s"
        )

    def _report(self, completion: Completion) -> None:
        log.debug(
            "llm call provider=%s model=%s latency_ms=%.0f prompt_tokens=%s completion_tokens=%s",
            completion.provider,
            completion.model,
            completion.latency_ms,
            completion.prompt_tokens,
            completion.completion_tokens,
        )
        if self._usage_sink is None:
            return
        try:
            self._usage_sink(completion)
        except Exception:
            # Telemetry must never turn a good answer into a failed pipeline job.
            log.exception("llm usage sink failed; the completion is returned anyway")


@dataclass(frozen=True, slots=True)
class LLMSettings:
    """Everything a provider factory may need; each factory reads the fields it understands."""

    model: str = ""
    base_url: str = ""
    timeout_ms: int = 60_000
    api_key: str = ""
    command: tuple[str, ...] = ()
    max_tokens: int = 1024
    concurrency: int = 1


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
