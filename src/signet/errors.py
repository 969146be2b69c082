"""The exception tree, kept small on purpose.

Expected outcomes (a duplicate memory, an empty queue) are values, not exceptions. Adapters
translate these classes to HTTP status codes, CLI exit codes and MCP errors from one table
(`HTTP_STATUS` below), so a new error class needs one line here and nowhere else.
"""

from __future__ import annotations

from typing import Any


class SignetError(Exception):
    """Base of every error Signet raises on purpose. `code` is the stable machine name."""

    code = "error"

    def __init__(
        self, message: str, *, code: str | None = None, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        if code:
            self.code = code
        # Extra fields for the error's JSON (next to "error" and "code"), e.g. both texts of
        # a conflict, so a caller can decide without a second request.
        self.details: dict[str, Any] = dict(details or {})

    @property
    def message(self) -> str:
        return str(self)


class InvalidInput(SignetError):
    code = "invalid_input"


class Unprocessable(InvalidInput):
    """Well-formed input whose content cannot be used (a transcript holding no conversation):
    what no schema can say in advance. HTTP 422."""

    code = "unprocessable"


class NotFound(SignetError):
    code = "not_found"


class Conflict(SignetError):
    """A version check failed, or an operation needs `force` (a pinned memory)."""

    code = "conflict"


class Unauthorized(SignetError):
    code = "unauthorized"


class Forbidden(SignetError):
    code = "forbidden"


class RateLimited(SignetError):
    """Too many calls; `retry_after` is how many seconds until the next one is allowed
    (HTTP's Retry-After)."""

    code = "rate_limited"

    def __init__(self, message: str, *, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


MUTATIONS_FROZEN = "mutations are frozen (memory.pipelineV2.mutationsFrozen)"


class Frozen(SignetError):
    """Mutations are frozen (`memory.pipelineV2.mutationsFrozen`); the message says so, once."""

    code = "mutations_frozen"

    def __init__(self, message: str = MUTATIONS_FROZEN, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)


class ConfigError(SignetError):
    """agent.yaml is malformed or a value has the wrong type; the message names file, line, key."""

    code = "config_error"


class StoreError(SignetError):
    code = "store_error"


class MigrationTampered(StoreError):
    """An applied migration's text changed after it landed."""

    code = "migration_tampered"


class SchemaTooNew(StoreError):
    code = "schema_too_new"


class NotOnBackend(StoreError):
    """A feature asked of a store backend that does not have it (backup of a PostgreSQL
    store, say): 501 naming it, never a silent partial answer."""

    code = "not_on_backend"

    def __init__(self, feature: str, backend: str, *, message: str | None = None) -> None:
        super().__init__(
            message or f"{feature} is not available on the {backend} store backend yet"
            " (docs/deploy.md, \"PostgreSQL\", lists what is)",
            details={"feature": feature, "backend": backend},
        )


class ProviderError(SignetError):
    """An outside service (LLM, embedder) failed."""

    code = "provider_error"


class ProviderTimeout(ProviderError):
    code = "provider_timeout"


class BadResponse(ProviderError):
    """The service answered, but not in the shape we need."""

    code = "bad_response"


HTTP_STATUS: dict[type[SignetError], int] = {
    InvalidInput: 400,
    Unprocessable: 422,
    Unauthorized: 401,
    Forbidden: 403,
    NotFound: 404,
    Conflict: 409,
    ConfigError: 422,
    RateLimited: 429,
    Frozen: 503,
    NotOnBackend: 501,
    StoreError: 503,
    ProviderError: 502,
}


def http_status(err: SignetError) -> int:
    """The status code for an error: the nearest class in `HTTP_STATUS`, else 500."""
    for cls in type(err).__mro__:
        if cls in HTTP_STATUS:
            return HTTP_STATUS[cls]
    return 500
