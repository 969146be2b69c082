"""Errors at the HTTP edge: every failure becomes `{"error": ..., "code": ...}` with its status.

`SignetError` subclasses take their status from `signet.errors.http_status`; validation errors are
400 `invalid_input` naming the field (not FastAPI's 422); unknown paths 404 and wrong methods 405
with a full `Allow`; an integer past 64 bits 400; a SQLite error escaping the store 503
`store_error` (the request was fine, the storage was not). Anything else is a bug:
`middleware.AccessLog` logs it and answers 500 `internal`.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException

from signet.daemon.schemas import NOT_BLANK
from signet.errors import RateLimited, SignetError, http_status
from signet.store.connection import DatabaseError

log = logging.getLogger(__name__)

_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}
# The first part of a pydantic error location: where the value came from, not which value.
_SOURCES = {"body", "query", "path", "header"}


def error_response(
    status: int, message: str, code: str, details: dict[str, Any] | None = None
) -> JSONResponse:
    return JSONResponse({**(details or {}), "error": message, "code": code}, status_code=status)


def install(api: FastAPI) -> None:
    api.add_exception_handler(SignetError, _signet_error)
    api.add_exception_handler(RequestValidationError, _validation_error)
    # A request model a handler builds from query parameters (the memory filters) refuses
    # what its fields refuse (a NUL, say) as pydantic's own error: the same 400.
    api.add_exception_handler(ValidationError, _model_error)
    api.add_exception_handler(HTTPException, _http_error)
    api.add_exception_handler(DatabaseError, _database_error)
    api.add_exception_handler(OverflowError, _overflow_error)


async def _signet_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, SignetError)
    response = error_response(http_status(exc), str(exc), exc.code, exc.details)
    if isinstance(exc, RateLimited):
        response.headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
    return response


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(400, validation_message(exc.errors()), "invalid_input")


async def _model_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ValidationError)
    return error_response(400, validation_message(exc.errors()), "invalid_input")


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        message = f"no route {request.method} {request.url.path}"
    elif exc.status_code == 405:
        message = f"method {request.method} not allowed on {request.url.path}"
    else:
        message = str(exc.detail)
    code = _HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
    response = error_response(exc.status_code, message, code)
    for name, value in (exc.headers or {}).items():
        response.headers[name] = value
    if exc.status_code == 405:
        response.headers["Allow"] = allowed_methods(request, response.headers.get("Allow", ""))
    return response


def allowed_methods(request: Request, fallback: str) -> str:
    """The methods of the resource at the request's path, as /openapi.json documents them: those
    of the most specific path template that matches (a literal `/api/memory/feedback` over
    `/api/memory/{memory_id}`). `fallback` (the router's own Allow) for undocumented paths."""
    path = request.scope.get("path", "")
    paths: dict[str, dict[str, Any]] = request.app.openapi().get("paths", {})
    matching = [t for t in paths if _template(t).fullmatch(path)]
    if not matching:
        return fallback
    fewest = min(t.count("{") for t in matching)
    methods = {m.upper() for t in matching if t.count("{") == fewest for m in paths[t]
               if m.upper() in _METHOD_ORDER}
    return ", ".join(sorted(methods, key=_METHOD_ORDER.index)) or fallback


_METHOD_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _template(path: str) -> re.Pattern[str]:
    return re.compile("/".join(
        "[^/]+" if part.startswith("{") and part.endswith("}") else re.escape(part)
        for part in path.split("/")
    ))


async def _database_error(request: Request, exc: Exception) -> JSONResponse:
    log.error("database error on %s %s: %s", request.method, request.url.path, exc)
    return error_response(503, f"database error: {exc}", "store_error")


async def _overflow_error(_request: Request, exc: Exception) -> JSONResponse:
    # A well-formed integer too big for SQLite (an offset of 10**30): the caller's mistake.
    return error_response(400, f"a number in the request is out of range: {exc}", "invalid_input")


# A union member's tag in a pydantic error location: a class name, or a type like `list[str]`,
# `constrained-str`, `function-after[...]` (field names here are snake_case).
_UNION_TAG = re.compile(r"^[A-Z]|[\[\]-]|^(str|int|float|bool|list|dict|none)$")


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _plain(error: Any) -> str:
    """pydantic's message, said in the API's words where it would quote a pattern or miss
    that null was sent."""
    kind, ctx = error.get("type", ""), error.get("ctx") or {}
    if kind == "value_error":
        return str(error.get("msg", "invalid")).removeprefix("Value error, ")
    if kind.endswith("_type") and "input" in error and error["input"] is None:
        return "must not be null"
    if kind == "literal_error":  # as the app says it: the field and the accepted values
        field = str((error.get("loc") or ("value",))[-1])
        choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return f"invalid {field} (one of {', '.join(choices)})"
    if (kind == "string_too_short" and ctx.get("min_length") == 1) or (
        kind == "string_pattern_mismatch" and ctx.get("pattern") == NOT_BLANK
    ):
        return "is empty (or only whitespace)"
    return str(error.get("msg", "invalid"))


def validation_message(errors: Sequence[Any]) -> str:
    """One line naming each bad field (at most three), never echoing the value sent."""
    parts = []
    for error in list(errors)[:3]:
        if error.get("type") == "json_invalid":
            detail = (error.get("ctx") or {}).get("error", "")
            parts.append(f"malformed JSON body: {detail}".rstrip(": "))
            continue
        loc = [str(p) for p in error.get("loc", ())]
        if loc and loc[0] in _SOURCES:
            loc = loc[1:]
        loc = [p for p in loc if not _UNION_TAG.search(p)]  # which branch of a union was tried
        message = _plain(error)
        if error.get("type") == "value_error" and not loc:  # a rule over the whole body
            parts.append(message)
            continue
        if error.get("type") == "string_unicode" or not _encodable(".".join(loc)):
            message = "not valid Unicode text (holds a lone surrogate)"
            loc = [p if _encodable(p) else "(a field name)" for p in loc]
        if error.get("type") == "extra_forbidden":
            message = "unknown field (not in the request schema)"
        if loc:
            line = f"{'.'.join(loc)}: {message}"
            if line not in parts:
                parts.append(line)
        elif error.get("type") == "missing":
            parts.append("a JSON request body is required")
        else:
            parts.append("the request body must be a JSON object (Content-Type: application/json)")
    return "; ".join(parts) or "invalid request"
