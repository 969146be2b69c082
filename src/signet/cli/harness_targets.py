"""What `signet connect <harness>` writes, harness by harness (docs/harnesses.md): the hooks and MCP
entry of claude-code, codex (whose Stop hook imports the transcript so far, as Codex has no
session end), opencode (a plugin runs the hooks) and cursor (its hooks cannot add context, so it
reads memory through MCP). Every command carries `--workspace`; entries are recognised as
Signet's by their command.
"""

from __future__ import annotations

import copy
import json
import shlex
import shutil
import sys
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from signet.cli.harness_files import Edit
from signet.errors import ConfigError

__all__ = ["CLAUDE_EVENTS", "CODEX_EVENTS", "CURSOR_EVENTS", "HARNESSES", "edits_for", "installed_harnesses", "signet_argv", "travelling_port"]

HARNESSES = ("claude-code", "codex", "opencode", "cursor")
HOOK_TIMEOUT_S = 10  # the harness's own limit; our hooks give up at their budget (1-2 s) first
CLAUDE_EVENTS = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt-submit",
                 "PreCompact": "pre-compaction", "SessionEnd": "session-end"}
# Codex has no session-end event; its Stop runs at the end of every turn, with the rollout's
# transcript_path: the transcript so far is imported and the session left open (our
# pre-compaction), the idle sweep closes it.
CODEX_EVENTS = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt-submit",
                "PreCompact": "pre-compaction", "Stop": "pre-compaction"}
# Cursor: a prompt hook that cannot inject (it captures "remember that ..."), and stop, the end
# of each agent loop, with the transcript's path: imported so far, the session left open.
CURSOR_EVENTS = {"beforeSubmitPrompt": "user-prompt-submit", "stop": "pre-compaction"}
TOML_BEGIN = "# >>> signet: added by `signet connect codex`; `--uninstall` removes it"
TOML_END = "# <<< signet"

JSON = dict[str, Any]


def signet_argv(workspace: Path, port: int | None = None) -> list[str]:
    """How the harness starts signet: the `signet` next to this Python, else on PATH, else
    `python -m signet`; always with this workspace, and with `port` when given (a port that
    came from the environment, which a harness started from another shell would not have)."""
    beside = Path(sys.executable).parent / "signet"
    found = str(beside) if beside.exists() else shutil.which("signet")
    base = [found] if found else [sys.executable, "-m", "signet"]
    return [*base, "--workspace", str(workspace), *(["--port", str(port)] if port else [])]


def travelling_port(port: int, env: Mapping[str, str]) -> int | None:
    """The port to write into a harness's command line: the configured one when SIGNET_PORT
    (or `--port`) set it, else None, and agent.yaml, which every command reads, says it."""
    return port if env.get("SIGNET_PORT") else None


def edits_for(
    harness: str, argv: list[str], *, project: Path | None, env: Mapping[str, str],
    allow_tools: bool = False,
) -> list[Edit]:
    """`allow_tools`: claude-code's settings also allow the signet MCP tools (on uninstall,
    the rule is taken out if it is there)."""
    home = Path(env.get("HOME") or Path.home())
    if harness == "claude-code":
        edits = _claude(argv, project, env, home)
        return [*edits, _allow_rule(edits[0].path)] if allow_tools else edits
    if harness == "codex":
        return _codex(argv, project, env, home)
    if harness == "opencode":
        return _opencode(argv, project, env, home)
    if harness == "cursor":
        root = project / ".cursor" if project else home / ".cursor"
        return [_cursor_hooks_json(root / "hooks.json", argv),
                _mcp_json(root / "mcp.json", {"command": argv[0], "args": [*argv[1:], "mcp"]})]
    raise ConfigError(f"unknown harness {harness!r} (one of {', '.join(HARNESSES)})")


# --- claude code --------------------------------------------------------------------------------


def _claude(argv: list[str], project: Path | None, env: Mapping[str, str], home: Path) -> list[Edit]:
    config_dir = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    settings = project / ".claude" / "settings.json" if project else config_dir / "settings.json"
    if project:
        mcp = project / ".mcp.json"
    else:
        mcp = Path(env["CLAUDE_CONFIG_DIR"]) / ".claude.json" if env.get("CLAUDE_CONFIG_DIR") else home / ".claude.json"
    server = {"type": "stdio", "command": argv[0], "args": [*argv[1:], "mcp"], "env": {}}
    return [_hooks_json(settings, argv, "claude-code", CLAUDE_EVENTS), _mcp_json(mcp, server)]


# Claude Code's permission rule for every tool of the MCP server `signet`: `claude -p` runs no
# tool that needs a permission it was not given, and asks for nothing.
ALLOW_RULE = "mcp__signet"


def _allow_rule(settings: Path) -> Edit:
    def add(data: JSON) -> JSON:
        permissions = _object(data.setdefault("permissions", {}), "permissions")
        allow = permissions.setdefault("allow", [])
        if not isinstance(allow, list):
            raise ConfigError(f"{settings}: permissions.allow is not a list")
        if ALLOW_RULE not in allow:
            allow.append(ALLOW_RULE)
        return data

    def remove(data: JSON) -> JSON:
        permissions = data.get("permissions")
        if isinstance(permissions, dict) and isinstance(permissions.get("allow"), list):
            permissions["allow"] = [r for r in permissions["allow"] if r != ALLOW_RULE]
            if not permissions["allow"]:
                del permissions["allow"]
            if not permissions:
                del data["permissions"]
        return data

    return _json_edit(settings, f"permission rule {ALLOW_RULE}", add, remove)


def installed_harnesses(env: Mapping[str, str]) -> list[str]:
    """The harnesses this machine has: the command on PATH or the harness's config folder."""
    home = Path(env.get("HOME") or Path.home())
    xdg = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    marks = {
        "claude-code": ("claude", [Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"]),
        "codex": ("codex", [Path(env.get("CODEX_HOME") or home / ".codex")]),
        "opencode": ("opencode", [xdg / "opencode"]),
        "cursor": ("cursor", [home / ".cursor"]),
    }
    path = env.get("PATH")
    return [name for name, (command, folders) in marks.items()
            if shutil.which(command, path=path) or any(f.is_dir() for f in folders)]


# --- codex --------------------------------------------------------------------------------------


def _codex(argv: list[str], project: Path | None, env: Mapping[str, str], home: Path) -> list[Edit]:
    root = project / ".codex" if project else Path(env.get("CODEX_HOME") or home / ".codex")
    block = "\n".join([
        TOML_BEGIN, "[mcp_servers.signet]", f"command = {json.dumps(argv[0])}",
        f"args = [{', '.join(json.dumps(a) for a in [*argv[1:], 'mcp'])}]", TOML_END,
    ]) + "\n"
    toml = Edit(root / "config.toml", "MCP server signet", lambda old: _toml_add(old, block), _toml_remove)
    return [_hooks_json(root / "hooks.json", argv, "codex", CODEX_EVENTS), toml]


def _toml_add(old: str | None, block: str) -> str:
    text = old or ""
    if TOML_BEGIN in text:
        if block in text:
            return text
        text = _toml_remove(text) or ""
    elif "signet" in _toml(text).get("mcp_servers", {}):
        raise ConfigError("config.toml already has an [mcp_servers.signet] table of its own; remove it first")
    if text and not text.endswith("\n"):
        text += "\n"
    new = text + ("\n" if text else "") + block
    _toml(new)  # what we write must parse
    return new


def _toml_remove(text: str) -> str | None:
    start = text.find(TOML_BEGIN)
    if start < 0:
        return text
    end = text.find(TOML_END, start)
    end = len(text) if end < 0 else end + len(TOML_END) + (1 if text[end + len(TOML_END):].startswith("\n") else 0)
    head = text[:start]
    if head.endswith("\n\n"):
        head = head[:-1]
    rest = head + text[end:]
    return rest if rest.strip() else None


def _toml(text: str) -> JSON:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config.toml does not parse ({exc}); fix it first") from exc


# --- opencode -----------------------------------------------------------------------------------


def _opencode(argv: list[str], project: Path | None, env: Mapping[str, str], home: Path) -> list[Edit]:
    if project:
        config, plugins = project / "opencode.json", project / ".opencode" / "plugins"
    else:
        root = Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "opencode"
        config, plugins = root / "opencode.json", root / "plugins"
    if not config.exists() and config.with_suffix(".jsonc").exists():
        raise ConfigError(f"{config.with_suffix('.jsonc')}: JSONC is not edited; add the MCP server by hand (docs/harnesses.md)")
    server = {"type": "local", "command": [*argv, "mcp"], "enabled": True}
    plugin_text = OPENCODE_PLUGIN.replace("__SIGNET_ARGV__", json.dumps(argv))
    plugin = Edit(
        plugins / "signet.js", "plugin running the hooks",
        lambda old: _whole_file(old, plugin_text, plugins / "signet.js"),
        lambda old: None if PLUGIN_MARK in old else old,
    )
    return [_json_edit(config, "MCP server signet", _put("mcp", server), _drop("mcp")), plugin]


def _whole_file(old: str | None, text: str, path: Path) -> str:
    if old is not None and PLUGIN_MARK not in old:
        raise ConfigError(f"{path} exists and was not written by signet; move it aside first")
    return text


PLUGIN_MARK = "written by `signet connect opencode`"
OPENCODE_PLUGIN = """\
// Signet memory for OpenCode: written by `signet connect opencode`, removed by
// `signet connect opencode --uninstall`. On each user message it runs
// `signet hook session-start` (first message of a session) and `signet hook user-prompt-submit`
// with a JSON payload on stdin, and appends the context they print to the message; when a
// session goes idle it hands the transcript over (`signet hook pre-compaction`).
const SIGNET = __SIGNET_ARGV__;

async function signetHook($, event, payload) {
  try {
    const input = new Response(JSON.stringify(payload));
    const out = await $`${SIGNET} hook ${event} --harness opencode < ${input}`.quiet().nothrow().text();
    const data = out.trim() ? JSON.parse(out) : null;
    return data && typeof data.context === "string" ? data.context : "";
  } catch {
    return "";
  }
}

export const SignetMemory = async ({ $, client, directory }) => {
  const started = new Set();
  return {
    // When a session goes idle (a reply is done), its transcript so far goes to the session
    // layer (`hook pre-compaction`: imported, the session left open; imports are idempotent).
    event: async ({ event }) => {
      if (event.type !== "session.idle") return;
      const session_id = event.properties && event.properties.sessionID;
      if (!session_id) return;
      try {
        const found = await client.session.messages({ path: { id: session_id } });
        const messages = found && found.data ? found.data : found;
        if (!Array.isArray(messages) || messages.length === 0) return;
        const transcript = JSON.stringify({ info: { id: session_id }, messages });
        await signetHook($, "pre-compaction", { session_id, cwd: directory, transcript });
      } catch {
        // never break the session
      }
    },
    "chat.message": async (input, output) => {
      const session_id = input.sessionID;
      const text = output.parts.find((part) => part.type === "text");
      if (!text) return;
      const found = [];
      if (!started.has(session_id)) {
        started.add(session_id);
        found.push(await signetHook($, "session-start", { session_id, cwd: directory }));
      }
      found.push(await signetHook($, "user-prompt-submit", { session_id, cwd: directory, prompt: text.text }));
      const context = found.filter(Boolean).join("\\n\\n");
      if (context) text.text = `${text.text}\\n\\n<signet-memory>\\n${context}\\n</signet-memory>`;
    },
  };
};
"""


# --- shared JSON edits ----------------------------------------------------------------------------


def _mcp_json(path: Path, server: JSON) -> Edit:
    return _json_edit(path, "MCP server signet", _put("mcpServers", server), _drop("mcpServers"))


def _hooks_json(path: Path, argv: list[str], harness: str, events: Mapping[str, str]) -> Edit:
    """Claude Code's and Codex's hooks: `{"hooks": {event: [{"hooks": [{"command": ...}]}]}}`."""
    commands = {event: shlex.join([*argv, "hook", ours, "--harness", harness]) for event, ours in events.items()}

    def ours(groups: list[Any]) -> list[JSON]:
        return [h for g in groups if isinstance(g, dict) for h in g.get("hooks", [])
                if isinstance(h, dict) and _is_ours(h.get("command"), harness)]

    def new_group(command: str) -> JSON:
        return {"hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]}

    def strip(groups: list[Any]) -> list[Any]:
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                group["hooks"] = [h for h in group["hooks"] if not _is_ours(h.get("command") if isinstance(h, dict) else None, harness)]
        return [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]

    return _json_edit(path, f"hooks {', '.join(events)}",
                      lambda data: _add_hooks(path, data, commands, ours, new_group),
                      lambda data: _remove_hooks(data, strip))


def _cursor_hooks_json(path: Path, argv: list[str]) -> Edit:
    """Cursor's hooks.json: `{"version": 1, "hooks": {event: [{"command": ...}]}}`."""
    commands = {event: shlex.join([*argv, "hook", ours, "--harness", "cursor"])
                for event, ours in CURSOR_EVENTS.items()}

    def is_ours(entry: Any) -> bool:
        return isinstance(entry, dict) and _is_ours(entry.get("command"), "cursor")

    def add(data: JSON) -> JSON:
        data.setdefault("version", 1)
        return _add_hooks(path, data, commands, lambda entries: [e for e in entries if is_ours(e)],
                          lambda command: {"command": command})

    def remove(data: JSON) -> JSON:
        had_hooks = isinstance(data.get("hooks"), dict)
        _remove_hooks(data, lambda entries: [e for e in entries if not is_ours(e)])
        if had_hooks and "hooks" not in data and data == {"version": 1}:
            del data["version"]
        return data

    return _json_edit(path, f"hooks {', '.join(CURSOR_EVENTS)}", add, remove)


def _add_hooks(
    path: Path, data: JSON, commands: Mapping[str, str], ours: Callable[[list[Any]], list[JSON]],
    new: Callable[[str], JSON],
) -> JSON:
    """Point the hooks of ours (`ours` finds them in an event's list) at each event's command,
    or append a `new` entry to an event that has none: a second install changes nothing."""
    hooks = _object(data.setdefault("hooks", {}), "hooks")
    for event, command in commands.items():
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise ConfigError(f"{path}: hooks.{event} is not a list")
        mine = ours(entries)
        if mine:
            for hook in mine:
                hook["command"] = command
        else:
            entries.append(new(command))
    return data


def _remove_hooks(data: JSON, strip: Callable[[list[Any]], list[Any]]) -> JSON:
    """Take ours out of each event's list (`strip`), then drop the events and the "hooks"
    table left empty; the user's own hooks stay as they were."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data
    for event in list(hooks):
        if isinstance(hooks[event], list):
            hooks[event] = strip(hooks[event])
            if not hooks[event]:
                del hooks[event]
    if not hooks:
        del data["hooks"]
    return data


def _is_ours(command: Any, harness: str) -> bool:
    return isinstance(command, str) and " hook " in command and f"--harness {harness}" in command and "signet" in command


def _put(key: str, server: JSON) -> Callable[[JSON], JSON]:
    def add(data: JSON) -> JSON:
        _object(data.setdefault(key, {}), key)["signet"] = server
        return data
    return add


def _drop(key: str) -> Callable[[JSON], JSON]:
    def remove(data: JSON) -> JSON:
        table = data.get(key)
        if isinstance(table, dict) and "signet" in table:
            del table["signet"]
            if not table:
                del data[key]
        return data
    return remove


def _json_edit(path: Path, what: str, add: Callable[[JSON], JSON], remove: Callable[[JSON], JSON]) -> Edit:
    def on_add(old: str | None) -> str:
        before = _parse(path, old)
        after = add(copy.deepcopy(before))
        return old if old is not None and after == before else _dump(after)

    def on_remove(old: str) -> str | None:
        before = _parse(path, old)
        after = remove(copy.deepcopy(before))
        if after == before:
            return old
        return _dump(after) if after else None

    return Edit(path, what, on_add, on_remove)


def _parse(path: Path, text: str | None) -> JSON:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}); fix it first, nothing was changed") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level is not a JSON object; nothing was changed")
    return data


def _object(value: Any, name: str) -> JSON:
    if not isinstance(value, dict):
        raise ConfigError(f"{name} is not a JSON object; nothing was changed")
    return value


def _dump(data: JSON) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
