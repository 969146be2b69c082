"""The OpenAPI document is built from the running configuration, so it states the bounds the
handlers enforce.

Some limits are settings (`search.max_limit`, `memory.max_content_chars`, `memory.max_tags`): a
static schema cannot know them. A request model marks such a field with
`schemas.config_bound(name)`; `install(api, config)` wraps `api.openapi` so that, when the
document is first built, every marker is replaced by the keywords `BOUNDS[name]` computes
from this daemon's configuration (a maximum, a maxLength, a pattern). The document and the
validation then come from the same numbers: what /openapi.json allows, the handler accepts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from signet.config import Config
from signet.daemon.schemas import CONFIG_BOUND

__all__ = ["BOUNDS", "install"]


def _tags_text(config: Config) -> dict[str, Any]:
    # One comma-separated string of at most max_tags items (blank ones count, as in the app).
    most = config.memory.max_tags
    if most == 0:
        return {"maxLength": 0}
    return {"pattern": f"^[^,]*(,[^,]*){{0,{most - 1}}}(?!\\n)$"}


BOUNDS: dict[str, Callable[[Config], dict[str, Any]]] = {
    "recall_limit": lambda c: {"maximum": c.search.max_limit},
    "content": lambda c: {"maxLength": c.memory.max_content_chars},
    "tags_list": lambda c: {"maxItems": c.memory.max_tags},
    "tags_text": _tags_text,
}


def install(api: FastAPI, config: Config) -> None:
    build = api.openapi

    def openapi() -> dict[str, Any]:
        if api.openapi_schema is not None:
            return api.openapi_schema
        schema = build()
        _resolve(schema, config)
        _drop_null_defaults(schema)
        api.openapi_schema = schema
        return schema

    api.openapi = openapi  # type: ignore[method-assign]


def _drop_null_defaults(schema: dict[str, Any]) -> None:
    """A field that may be left out but never be null (schemas.optional) has the default None
    in Python only: the document must not announce `"default": null` for a type without null."""
    for model in schema.get("components", {}).get("schemas", {}).values():
        for prop in model.get("properties", {}).values():
            if "default" in prop and prop["default"] is None and not _nullable(prop):
                del prop["default"]


def _nullable(prop: dict[str, Any]) -> bool:
    return prop.get("type") == "null" or any(
        branch.get("type") == "null" for branch in prop.get("anyOf", ())
    )


def _resolve(node: Any, config: Config) -> None:
    """Replace every config-bound marker under `node` (in place) by its configured keywords."""
    if isinstance(node, dict):
        name = node.pop(CONFIG_BOUND, None)
        if name is not None:
            node.update(BOUNDS[name](config))
        for value in node.values():
            _resolve(value, config)
    elif isinstance(node, list):
        for item in node:
            _resolve(item, config)
