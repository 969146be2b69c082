"""The dashboard: a local web app, served by the daemon, for seeing and fixing what agents remember
(docs/dashboard.md). Plain HTML, CSS and ES modules in `static/`, with no build step and nothing
from a CDN; every piece of data comes from the daemon's JSON API behind the same guards as any
client, so this package holds no data access. `install(api)` adds its routes.
"""

from __future__ import annotations

from fastapi import FastAPI

from signet.dashboard.pages import router

__all__ = ["install"]


def install(api: FastAPI) -> None:
    api.include_router(router)
