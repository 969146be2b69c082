"""The dashboard: a local web app, served by the daemon, for seeing and fixing what agents
remember (docs/dashboard.md).

It is plain HTML, CSS and JavaScript modules in `static/`, shipped inside the package: the
browser loads them as they are (ES modules, no bundler, no build step, nothing from a CDN), and
every piece of data comes from the daemon's own JSON API (`/api/...`), authenticated by the
session cookie the login link sets (daemon/routes_dashboard.py) and checked by the same token
and permission guards as any other client. So this package holds no data access at all: it
serves the page shell (`pages.py`), and the pages call the API.

`install(api)` adds its routes to the daemon's FastAPI app.
"""

from __future__ import annotations

from fastapi import FastAPI

from signet.dashboard.pages import router

__all__ = ["install"]


def install(api: FastAPI) -> None:
    api.include_router(router)
