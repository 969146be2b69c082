"""The composition root's deferred operations resolve to the functions they name."""

from __future__ import annotations

from signet.app import SignetApp
from signet.services.delegate import Deferred, Delegate


def test_every_deferred_delegate_resolves_to_the_function_it_names() -> None:
    deferred = {name: attr.function for name, attr in vars(SignetApp).items()
                if isinstance(attr, Delegate) and isinstance(attr.function, Deferred)}
    assert "resolve_review" in deferred  # a target named like a Deferred's own method
    for name, target in deferred.items():
        function = target._resolve()
        assert callable(function), name
        assert function.__name__ == repr(target)[:-1].rpartition(".")[2], name
