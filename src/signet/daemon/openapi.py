"""The OpenAPI document states the bounds the handlers enforce, from the running configuration.

A request field bounded by a setting (`search.max_limit`, `memory.max_content_chars`,
`memory.max_tags`) carries a `schemas.config_bound(name)` marker; `install(api, config)` replaces
each marker with `BOUNDS[name]` from this daemon's configuration when the document is first built,
so /openapi.json and validation use the same numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from signet.config import Config
from signet.daemon.schemas import CONFIG_BOUND

__all__ = ["BOUNDS", "amend_openapi", "install"]


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
    def amend(schema: dict[str, Any]) -> None:
        _resolve(schema, config)
        _drop_null_defaults(schema)
        _nul_free(schema)

    amend_openapi(api, amend)


def amend_openapi(api: FastAPI, amend: Callable[[dict[str, Any]], None]) -> None:
    """Have `amend` change the OpenAPI document FastAPI builds, once: the amended document is
    the one cached and served."""
    build = api.openapi

    def openapi() -> dict[str, Any]:
        if api.openapi_schema is not None:
            return api.openapi_schema
        schema = build()
        amend(schema)
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


NUL = "\\u0000"  # the regex escape of U+0000 (Python's re and ECMA-262 alike)


def _nul_free(schema: dict[str, Any]) -> None:
    """Every request string gets a pattern excluding U+0000, folded into any pattern it has, since
    schemas._Body refuses a NUL (PostgreSQL text cannot store one)."""
    models = schema.get("components", {}).get("schemas", {})
    todo = [ref for ref in _refs(schema.get("paths", {}), request_bodies=True)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name not in models:
            continue
        seen.add(name)
        todo.extend(_refs(models[name]))
        _strings_nul_free(models[name])


def _refs(node: Any, *, request_bodies: bool = False) -> list[str]:
    """The component names `node` refers to ($ref), only under requestBody when asked."""
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and not request_bodies:
                found.append(value.rsplit("/", 1)[-1])
            elif request_bodies and key == "requestBody":
                found.extend(_refs(value))
            else:
                found.extend(_refs(value, request_bodies=request_bodies))
    elif isinstance(node, list):
        for item in node:
            found.extend(_refs(item, request_bodies=request_bodies))
    return found


def _strings_nul_free(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "string" and not {"enum", "const", "format"} & node.keys():
            node["pattern"] = _without_nul(node.get("pattern"))
        for value in node.values():
            _strings_nul_free(value)
    elif isinstance(node, list):
        for item in node:
            _strings_nul_free(item)


def _without_nul(pattern: str | None) -> str:
    if pattern is None:
        return f"^[^{NUL}]*$"
    if pattern.startswith("^"):  # anchored (tags text, paths): no class may match a NUL
        return pattern.replace("[^", f"[^{NUL}").replace("\\S", f"[^\\s{NUL}]")
    if pattern.startswith("[^") and pattern.endswith("]") and pattern.count("[") == 1:
        return f"^[^{NUL}]*{pattern.replace('[^', f'[^{NUL}', 1)}[^{NUL}]*$"
    raise ValueError(f"cannot fold NUL out of the pattern {pattern!r}")


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
