"""Who may use which MCP method at /mcp: the table mcp_guard.py checks, default deny.

A `Rule` per method (and per tool, prompt or resource name) gives the permission it needs and
whether it spans every project (refused to scoped tokens). Anything missing is open only to an
unscoped admin token, so whatever the SDK or a later change adds stays closed until written here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from signet.daemon.tokens import PERMISSIONS, Principal
from signet.workspace import IDENTITY_FILES

__all__ = ["METHODS", "PROMPTS", "RESOURCES", "TOOLS", "Rule", "refusal", "visible"]


@dataclass(frozen=True, slots=True)
class Rule:
    """What one method or name needs: a permission (None: any valid token), and whether it
    reads across projects (then only an unscoped token may use it)."""

    permission: str | None = None
    spans_projects: bool = False

    def refusal(self, principal: Principal, name: str) -> str | None:
        if self.permission is not None and not principal.allows(self.permission):
            return f"forbidden: this token lacks the {self.permission} permission ({name})"
        if self.spans_projects and principal.scoped:
            return f"forbidden: {name} spans every project; a scoped token cannot use it"
        return None


ANY = Rule()

# The methods that carry no memory themselves: the handshake, keep-alive, and the lists (each
# answered with the entries of its table the caller may use).
METHODS: dict[str, Rule] = {
    "initialize": ANY, "ping": ANY, "server/discover": ANY,
    "notifications/initialized": ANY, "notifications/cancelled": ANY,
    "tools/list": ANY, "prompts/list": ANY, "resources/list": ANY,
    "resources/templates/list": ANY,
}
TOOLS: dict[str, Rule] = {
    "memory_search": Rule("recall"),
    "memory_get": Rule("recall"),
    "memory_list": Rule("recall"),
    "session_search": Rule("recall"),
    "memory_store": Rule("remember"),
    "memory_feedback": Rule("remember"),
    "memory_modify": Rule("modify"),
    "memory_forget": Rule("forget"),
    # The session-start context: pinned and important memories of every project.
    "memory_context": Rule("recall", spans_projects=True),
}
PROMPTS: dict[str, Rule] = {
    "signet_context": Rule("recall", spans_projects=True),  # the same context as a prompt
}
RESOURCES: dict[str, Rule] = {
    # MEMORY.md is rendered from every project's memories (GET /api/identity refuses it too).
    f"signet://identity/{name}": Rule("recall", spans_projects=name == "MEMORY.md")
    for name in IDENTITY_FILES
}
TEMPLATES: dict[str, Rule] = {}

# The methods that name what they act on: (the parameter naming it, its table).
NAMED: dict[str, tuple[str, dict[str, Rule]]] = {
    "tools/call": ("name", TOOLS),
    "prompts/get": ("name", PROMPTS),
    "resources/read": ("uri", RESOURCES),
}
# The list methods: (the result's list, each entry's name field, the table it is filtered by).
LISTS: dict[str, tuple[str, str, dict[str, Rule]]] = {
    "tools/list": ("tools", "name", TOOLS),
    "prompts/list": ("prompts", "name", PROMPTS),
    "resources/list": ("resources", "uri", RESOURCES),
    "resources/templates/list": ("resourceTemplates", "uriTemplate", TEMPLATES),
}


def refusal(principal: Principal, method: str, params: Mapping[str, Any] | None) -> str | None:
    """Why `principal` may not send `method` with `params`, or None when it may."""
    if _owner(principal):
        return None
    if method in NAMED:
        key, table = NAMED[method]
        name = str((params or {}).get(key, ""))
        rule = table.get(name)
        if rule is None:
            return f"forbidden: {name or method} is open only to an unscoped admin token"
        return rule.refusal(principal, name)
    rule = METHODS.get(method)
    if rule is None:
        return f"forbidden: {method} is open only to an unscoped admin token"
    return rule.refusal(principal, method)


def visible(principal: Principal, method: str, result: Any) -> Any:
    """A list method's result with only the entries `principal` may use; any other result
    as it is."""
    if method not in LISTS or _owner(principal) or not isinstance(result, dict):
        return result
    field, key, table = LISTS[method]
    entries = result.get(field) or []
    kept = [e for e in entries if isinstance(e, dict) and _usable(principal, table, e.get(key))]
    return {**result, field: kept}


def _usable(principal: Principal, table: dict[str, Rule], name: Any) -> bool:
    rule = table.get(str(name))
    return rule is not None and rule.refusal(principal, str(name)) is None


def _owner(principal: Principal) -> bool:
    """An unscoped admin token (the install token): every method, as every route."""
    return principal.allows("admin") and not principal.scoped


def _check_permissions() -> None:
    """A typo in the table must not leave a method open or closed by accident."""
    tables = (METHODS, TOOLS, PROMPTS, RESOURCES, TEMPLATES)
    unknown = {r.permission for t in tables for r in t.values()} - {None, *PERMISSIONS}
    if unknown:
        raise ValueError(f"unknown permissions in the MCP table: {sorted(map(str, unknown))}")


_check_permissions()
