"""The effective configuration as JSON, for `GET /api/config`: every resolved value, no secret.

The config itself holds no secret (API keys come from environment variables it only names), but
two values may carry one by accident: a `command` LLM's argv (a key passed as a flag) and a
base URL with credentials in it (`https://user:key@host`). Both are redacted here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from signet.config import Config

__all__ = ["effective_config"]

REDACTED = "[redacted]"


def effective_config(cfg: Config) -> dict[str, Any]:
    data = _plain(dataclasses.asdict(cfg))
    data.pop("warnings", None)
    command = data["llm"]["command"]
    data["llm"]["command"] = command[:1] + [REDACTED] * (len(command) > 1)
    for section in ("llm", "embedding"):
        data[section]["base_url"] = _without_credentials(data[section]["base_url"])
    data["warnings"] = list(cfg.warnings)
    return data


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def _without_credentials(url: str) -> str:
    parts = urlsplit(url)
    if not parts.username and not parts.password:
        return url
    host = parts.hostname or ""
    netloc = f"{REDACTED}@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
