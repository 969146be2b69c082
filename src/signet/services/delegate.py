"""`Delegate`: an attribute of the composition root that is a service's own operation.

`name = Delegate("service", Service.method)` makes `app.name(...)` be `app.service.method(...)`,
with the method's signature and docstring, so the app holds no logic and mypy checks calls through
it. `Deferred("signet.maintenance")` names a module imported only on its first call, so opening the
app for a read does not pay for modules other operations use; the root imports the real module under
`TYPE_CHECKING` for mypy.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

__all__ = ["Deferred", "Delegate", "deferred_names"]

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
        # A Deferred target's docstring is its module's to give once imported.
        self.__doc__ = None if isinstance(function, Deferred) else function.__doc__

    def __get__(self, app: object | None, owner: type | None = None) -> Callable[P, R]:
        if app is None:  # looked up on the class: the service's own function
            return self.function  # type: ignore[return-value]
        return functools.partial(self.function, getattr(app, self.service))


class Deferred:
    """A module (or an attribute path inside it) imported when first called."""

    def __init__(self, module: str, path: tuple[str, ...] = ()) -> None:
        self._module = module
        self._path = path

    def __getattr__(self, name: str) -> Deferred:
        if name.startswith("_"):
            raise AttributeError(name)
        return Deferred(self._module, (*self._path, name))

    def _resolve(self) -> Any:
        # Underscored, as every attribute of its own: `__getattr__` only sees names a Deferred
        # does not have, so a public method here would shadow a function of that name.
        found: Any = importlib.import_module(self._module)
        for name in self._path:
            found = getattr(found, name)
        return found

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Deferred({'.'.join((self._module, *self._path))})"


def deferred_names(*specs: str) -> dict[str, Deferred]:
    """{name: Deferred} for "package.module" (named by its last part) or "module:Name"."""
    found: dict[str, Deferred] = {}
    for spec in specs:
        module, _, name = spec.partition(":")
        found[name or module.rpartition(".")[2]] = (
            Deferred(module, (name,)) if name else Deferred(module))
    return found
