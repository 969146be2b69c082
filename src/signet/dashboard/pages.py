"""The dashboard's page shell and static files. Every page path answers the same `index.html`, whose
script draws the page from the API. Files are read once at import with an ETag and a gzip copy.
The routes are public, holding no data (the Host guard still applies), and every answer carries a
strict Content-Security-Policy: same origin only, no inline script, no framing, no referrer.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
from dataclasses import dataclass
from importlib import resources

from fastapi import APIRouter, Request, Response

__all__ = ["PAGES", "SECURITY_HEADERS", "router"]

# The first path segment of every page the app draws (static/js/main.js routes them).
PAGES = frozenset({"memories", "review", "graph", "map", "sessions", "pipeline", "welcome"})
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
        " connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".html": "text/html; charset=utf-8", ".svg": "image/svg+xml"}


@dataclass(frozen=True, slots=True)
class Asset:
    body: bytes
    gzipped: bytes
    media_type: str
    etag: str


def _load_assets() -> dict[str, Asset]:
    root = resources.files("signet.dashboard") / "static"
    found: dict[str, Asset] = {}
    pending = [(root, "")]
    while pending:
        folder, prefix = pending.pop()
        for entry in folder.iterdir():
            name = f"{prefix}{entry.name}"
            if entry.is_dir():
                pending.append((entry, f"{name}/"))
                continue
            body = entry.read_bytes()
            suffix = "." + entry.name.rsplit(".", 1)[-1]
            media = TYPES.get(suffix) or mimetypes.guess_type(entry.name)[0] or "application/octet-stream"
            etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
            found[name] = Asset(body, gzip.compress(body, 9, mtime=0), media, etag)
    return found


ASSETS = _load_assets()
router = APIRouter(include_in_schema=False)


def _send(request: Request, asset: Asset) -> Response:
    headers = {**SECURITY_HEADERS, "ETag": asset.etag, "Vary": "Accept-Encoding"}
    if request.headers.get("if-none-match") == asset.etag:
        return Response(status_code=304, headers=headers)
    if "gzip" in request.headers.get("accept-encoding", ""):
        headers["Content-Encoding"] = "gzip"
        return Response(asset.gzipped, media_type=asset.media_type, headers=headers)
    return Response(asset.body, media_type=asset.media_type, headers=headers)


@router.get("/")
def home(request: Request) -> Response:
    return _send(request, ASSETS["index.html"])


@router.get("/app/static/{name:path}")
def static(request: Request, name: str) -> Response:
    asset = ASSETS.get(name)
    if asset is None:
        return Response(status_code=404, headers=SECURITY_HEADERS)
    return _send(request, asset)


@router.get("/app/{page:path}")
def page(request: Request, page: str) -> Response:
    if page.split("/", 1)[0] not in PAGES:
        return Response("no such dashboard page", status_code=404, media_type="text/plain",
                        headers=SECURITY_HEADERS)
    return _send(request, ASSETS["index.html"])
