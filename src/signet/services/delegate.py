"""`Delegate`: an attribute of the composition root (app.py) that is a service's own operation.

The app exposes every operation the adapters call, but holds none of their logic: each is a line
`name = Delegate("service", Service.method)`, so `app.name(...)` is `app.service.method(...)`
with the method's own signature and docstring (mypy checks the calls through it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, Generic, ParamSpec, TypeVar

__all__ = ["Delegate"]

S = TypeVar("S")
P = ParamSpec("P")
R = TypeVar("R")


class Delegate(Generic[S, P, R]):
    """An app attribute that is a service's operation, with its signature: a function whose
    first argument is the service, bound to the app's. `remember = Delegate("memory",
    MemoryService.remember)` makes `app.remember(...)` be `app.memory.remember(...)`, and
    `fts_check = Delegate("memory", maintenance.fts_check)` makes `app.fts_check()` be
    `maintenance.fts_check(app.memory)`."""

    def __init__(self, service: str, function: Callable[Concatenate[S, P], R]) -> None:
        self.service = service
        self.function = function
        self.__doc__ = function.__doc__

    def __get__(self, app: object | None, owner: type | None = None) -> Callable[P, R]:
        if app is None:  # looked up on the class: the service's own function
            return self.function  # type: ignore[return-value]
        return functools.partial(self.function, getattr(app, self.service))
