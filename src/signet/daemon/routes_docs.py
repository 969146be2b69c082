"""`GET /docs`: the HTTP API as a plain HTML page rendered from the OpenAPI document, since
FastAPI's Swagger page loads scripts from a CDN and Signet never does. It needs a known caller,
like `/openapi.json`.
"""

from __future__ import annotations

from html import escape
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from signet.daemon.auth import require

__all__ = ["router"]

router = APIRouter()

METHODS = ("get", "post", "put", "patch", "delete")
STYLE = ("body{font:14px system-ui,sans-serif;margin:2em;max-width:80em}"
         "td,th{border-bottom:1px solid #ddd;padding:.3em .6em;text-align:left;vertical-align:top}"
         "table{border-collapse:collapse}code{font-size:13px}")


# Any token that may read memories may read the API's reference (every role holds recall).
@router.get("/docs", include_in_schema=False, dependencies=[Depends(require("recall"))])
def docs(request: Request) -> HTMLResponse:
    spec: dict[str, Any] = request.app.openapi()
    rows = [_row(method, path, op) for path, item in sorted(spec.get("paths", {}).items())
            for method in METHODS if (op := item.get(method))]
    info = spec.get("info", {})
    page = (
        f"<!doctype html><meta charset=utf-8><title>{escape(info.get('title', 'API'))} API</title>"
        f"<style>{STYLE}</style><h1>{escape(info.get('title', ''))} HTTP API "
        f"{escape(str(info.get('version', '')))}</h1><p>{escape(info.get('description', ''))} "
        "The machine-readable document: <a href=/openapi.json>/openapi.json</a>.</p>"
        "<table><tr><th>method</th><th>path</th><th>what it does</th><th>parameters</th>"
        f"<th>body</th><th>answers</th></tr>{''.join(rows)}</table>"
    )
    return HTMLResponse(page, headers={"Cache-Control": "no-store"})


def _row(method: str, path: str, op: dict[str, Any]) -> str:
    params = ", ".join(
        f"{p['name']} ({p.get('in', '')}{', required' if p.get('required') else ''})"
        for p in op.get("parameters", [])
    )
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
    schema = body.get("schema", {}).get("$ref", "").rsplit("/", 1)[-1]
    answers = " ".join(sorted(op.get("responses", {})))
    what = op.get("summary") or op.get("description", "").split("\n", 1)[0]
    cells = (method.upper(), f"<code>{escape(path)}</code>", escape(what), escape(params),
             escape(schema), escape(answers))
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"
