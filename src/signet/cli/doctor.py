"""`signet doctor`: is the memory on for this workspace, and if not, what to run.

Each check (workspace, daemon, hooks and MCP entry per harness, spool, hook failures) gives `ok`,
`warn`, `fail` or `info`, a line of detail and the fix. Checks read what is really there: the
daemon's pid, the files `signet connect` wrote, the MCP entry spawned as a harness would. Nothing
is changed; the exit code is 1 when a check fails.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import shlex
import shutil
import subprocess
import threading
import time
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import click

from signet.cli.harness_targets import (
    CLAUDE_EVENTS,
    CODEX_EVENTS,
    CURSOR_EVENTS,
    HARNESSES,
    PLUGIN_MARK,
    edits_for,
    installed_harnesses,
    signet_argv,
    travelling_port,
)
from signet.cli.hook_health import hook_health
from signet.cli.state import CliState, json_and_state
from signet.config import Config, resolve_workspace
from signet.version import __version__

__all__ = ["Check", "diagnose", "doctor", "summary"]

HTTP_TIMEOUT_S = 3.0
MCP_TIMEOUT_S = 20.0  # the in-process server (no daemon) takes seconds on a loaded machine
MCP_SLOW_MS = 2000.0  # Claude Code waits about 2.5 s for `initialize`, then starts without tools
# What each harness's hooks must wire: the harness's event -> our hook event.
EXPECTED_EVENTS: dict[str, dict[str, str]] = {
    "claude-code": CLAUDE_EVENTS, "codex": CODEX_EVENTS, "cursor": CURSOR_EVENTS,
}
OPENCODE_EVENTS = {"chat.message": "user-prompt-submit", "session.idle": "pre-compaction"}


@dataclass
class Check:
    name: str
    status: str  # ok | warn | fail | info
    detail: str
    fix: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


@click.command()
@click.option("--no-mcp", is_flag=True, help="Skip spawning the MCP server (the slowest check).")
@click.option("--project", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Check the harness files `signet connect --project DIR` writes instead of the user's.")
@json_and_state
def doctor(state: CliState, no_mcp: bool, project: Path | None) -> None:
    """Check that the memory is on: daemon, version, port, hooks per harness, MCP, model, spool
    and recent hook failures; each problem with the command that fixes it. Exit 1 on a failure."""
    checks = diagnose(state.config(), mcp=not no_mcp, project=project.absolute() if project else None)
    failed = any(c.status == "fail" for c in checks)
    if state.json:
        click.echo(json.dumps({"ok": not failed, "workspace": str(state.config().workspace),
                               "checks": [asdict(c) for c in checks]}, indent=2))
    else:
        marks = {"ok": "ok  ", "warn": "warn", "fail": "FAIL", "info": "--  "}
        for check in checks:
            click.echo(f"[{marks.get(check.status, check.status)}] {check.name}: {check.detail}")
            if check.fix and check.status != "ok":
                click.echo(f"       fix: {check.fix}")
        click.echo(summary(checks))
    if failed:
        raise SystemExit(1)


def summary(checks: list[Check]) -> str:
    """The last line: failures and warnings counted, so that a warning printed above is never
    followed by "no problems found"."""
    problems = sum(c.status == "fail" for c in checks)
    warnings = sum(c.status == "warn" for c in checks)
    head = f"{problems} problem(s) found" if problems else "no problems found"
    return f"{head}, {warnings} warning(s)" if warnings else head


def diagnose(
    cfg: Config, *, mcp: bool = True, env: dict[str, str] | None = None, project: Path | None = None,
) -> list[Check]:
    env = dict(os.environ if env is None else env)
    fixer = _Fixer(cfg, env)
    checks = [_workspace(cfg, fixer)]
    if checks[0].status == "fail":
        return checks
    daemon, up = _daemon(cfg, env, fixer)
    checks.extend(daemon)
    harness_checks, mcp_argv = _harnesses(cfg, env, fixer, project)
    checks.extend(harness_checks)
    if mcp:
        checks.append(_mcp(mcp_argv or [*signet_argv(cfg.workspace, fixer.port), "mcp"], env, up, fixer))
    checks.extend(_spool_and_failures(cfg, up, fixer))
    return checks


class _Fixer:
    """Commands to copy: `signet` with the global options this workspace needs."""

    def __init__(self, cfg: Config, env: dict[str, str]) -> None:
        self.port = travelling_port(cfg.port, env)
        default = resolve_workspace(None, {k: v for k, v in env.items() if k != "SIGNET_WORKSPACE"})
        self.options = [] if cfg.workspace == default else ["--workspace", str(cfg.workspace)]
        if self.port:
            self.options += ["--port", str(self.port)]

    def __call__(self, *args: str) -> str:
        return shlex.join(["signet", *self.options, *args])


# --- workspace and daemon ------------------------------------------------------------------------


def _workspace(cfg: Config, fix: _Fixer) -> Check:
    if not (cfg.workspace / "agent.yaml").exists():
        return Check("workspace", "fail", f"{cfg.workspace} is not a Signet workspace (no agent.yaml)",
                     f"{fix('setup')} (or {fix('init')})")
    return Check("workspace", "ok", str(cfg.workspace))


def _get(host: str, port: int, path: str, token: str | None = None) -> tuple[int, Any]:
    conn = http.client.HTTPConnection(host, port, timeout=HTTP_TIMEOUT_S)
    try:
        conn.request("GET", path, headers={"authorization": f"Bearer {token}"} if token else {})
        reply = conn.getresponse()
        raw = reply.read()
    finally:
        conn.close()
    try:
        return reply.status, json.loads(raw)
    except ValueError:
        return reply.status, None


def _daemon(cfg: Config, env: dict[str, str], fix: _Fixer) -> tuple[list[Check], bool]:
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(cfg.bind, cfg.bind)
    source = "SIGNET_PORT" if env.get("SIGNET_PORT") else "agent.yaml or the default"
    port_check = Check("port", "info", f"{host}:{cfg.port} (from {source})",
                       data={"host": host, "port": cfg.port, "source": source})
    try:
        expected: int | None = int(cfg.pid_path.read_text("ascii").strip())
    except (OSError, ValueError):
        expected = None
    start = f"{fix('daemon', 'start')}; to start it at login: {fix('daemon', 'install')}"
    try:
        status, health = _get(host, cfg.port, "/health")
    except (OSError, http.client.HTTPException):
        autostart = env.get("SIGNET_AUTOSTART", "").lower() in {"0", "false", "no", "off"}
        detail = f"no daemon answers at {host}:{cfg.port}"
        if autostart:
            detail += " (SIGNET_AUTOSTART=0: the hooks will not start one)"
        else:
            detail += " (the next hook starts one; until then prompts get no memory)"
        return [Check("daemon", "fail", detail, start, {"running": False}), port_check], False
    if status != 200 or not isinstance(health, dict) or health.get("status") != "ok":
        return [Check("daemon", "fail", f"something else answers at {host}:{cfg.port} (HTTP {status})",
                      f"give this workspace another port (`port:` in {cfg.workspace / 'agent.yaml'}), then {start}",
                      {"running": False}), port_check], False
    pid = health.get("pid")
    if pid != expected:
        return [Check("daemon", "fail",
                      f"the daemon at {host}:{cfg.port} (pid {pid}) is not this workspace's "
                      f"(its pid file says {expected})",
                      f"give this workspace another port (`port:` in {cfg.workspace / 'agent.yaml'}), then {start}",
                      {"running": False, "pid": pid}), port_check], False
    checks = [Check("daemon", "ok", f"pid {pid} at {host}:{cfg.port}", data={"running": True, "pid": pid})]
    version = str(health.get("version"))
    checks.append(
        Check("version", "ok", version, data={"daemon": version, "cli": __version__})
        if version == __version__ else
        Check("version", "warn", f"the daemon runs {version}, this CLI is {__version__}",
              f"{fix('daemon', 'stop')} && {fix('daemon', 'start')}",
              {"daemon": version, "cli": __version__}))
    checks.append(port_check)
    checks.append(_model(host, cfg, fix))
    return checks, True


def _model(host: str, cfg: Config, fix: _Fixer) -> Check:
    try:
        token = cfg.token_path.read_text("utf-8").strip() or None
    except OSError:
        token = None
    try:
        status, body = _get(host, cfg.port, "/api/status", token)
    except (OSError, http.client.HTTPException) as exc:
        return Check("model", "warn", f"/api/status did not answer: {exc}")
    if status != 200 or not isinstance(body, dict):
        return Check("model", "warn", f"/api/status answered HTTP {status} (the token in "
                     f"{cfg.token_path} is refused?)", fix("init"))
    embedder = body.get("embedder")
    data = {"memories": body.get("memories"), "embedder": embedder}
    if not embedder:
        return Check("model", "info", f"no embedder (keyword recall only); {body.get('memories')} memories", data=data)
    name = f"{embedder.get('provider')} {embedder.get('model')}"
    if "embedder" in (body.get("degraded") or []):
        health = embedder.get("health") or {}
        return Check("model", "fail", f"{name}: failing ({health.get('last_error')}); recall runs "
                     "without the semantic channel", f"see {fix('daemon', 'logs')}", data)
    if embedder.get("loaded") is False:
        return Check("model", "info", f"{name}: not loaded yet (the next session start loads it); "
                     f"{body.get('memories')} memories", data=data)
    return Check("model", "ok", f"{name}{' loaded' if embedder.get('loaded') else ''}; "
                 f"{body.get('memories')} memories", data=data)


# --- harnesses -----------------------------------------------------------------------------------


@dataclass
class _Found:
    hooks: dict[str, list[str]] = field(default_factory=dict)  # harness event -> argv
    mcp: list[str] | None = None  # the MCP entry's argv
    files: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _harnesses(
    cfg: Config, env: dict[str, str], fix: _Fixer, project: Path | None,
) -> tuple[list[Check], list[str] | None]:
    present = set(installed_harnesses(env)) if project is None else set()
    checks, mcp_argv = [], None
    for harness in HARNESSES:
        found = _read_harness(harness, env, project)
        checks.append(_judge(harness, found, harness in present, cfg, fix, project))
        if mcp_argv is None and found.mcp and _workspace_of(found.mcp) == cfg.workspace:
            mcp_argv = found.mcp
    return checks, mcp_argv


def _read_harness(harness: str, env: dict[str, str], project: Path | None = None) -> _Found:
    found = _Found()
    for edit in edits_for(harness, ["signet"], project=project, env=env):
        path = edit.path
        try:
            text = path.read_text("utf-8")
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:
            found.errors.append(f"{path}: {exc}")
            continue
        found.files.append(str(path))
        try:
            if path.suffix == ".json":
                data = json.loads(text) if text.strip() else {}
                _hooks_of(data.get("hooks") if isinstance(data, dict) else None, found)
                _mcp_of(data, found)
            elif path.suffix == ".toml":
                server = tomllib.loads(text).get("mcp_servers", {}).get("signet")
                if isinstance(server, dict) and isinstance(server.get("command"), str):
                    found.mcp = [server["command"], *map(str, server.get("args") or [])]
            elif path.suffix == ".js" and PLUGIN_MARK in text:
                line = next((ln for ln in text.splitlines() if ln.startswith("const SIGNET = ")), "")
                argv = json.loads(line.removeprefix("const SIGNET = ").rstrip(";"))
                found.hooks.update({event: [*argv, "hook", ours] for event, ours in OPENCODE_EVENTS.items()})
        except (ValueError, tomllib.TOMLDecodeError) as exc:
            found.errors.append(f"{path}: does not parse ({exc})")
    return found


def _hooks_of(hooks: Any, found: _Found) -> None:
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        for entry in _entries(groups):
            command = entry.get("command")
            if isinstance(command, str) and " hook " in command and "signet" in command:
                try:
                    found.hooks[event] = shlex.split(command)
                except ValueError:
                    found.errors.append(f"hook {event}: command does not parse: {command}")


def _entries(groups: Any) -> list[dict[str, Any]]:
    """Claude Code's and Codex's `[{"hooks": [{command}]}]` and Cursor's `[{command}]`."""
    out: list[dict[str, Any]] = []
    for group in groups if isinstance(groups, list) else []:
        if isinstance(group, dict):
            out.append(group)
            out.extend(h for h in group.get("hooks") or [] if isinstance(h, dict))
    return out


def _mcp_of(data: Any, found: _Found) -> None:
    if not isinstance(data, dict):
        return
    for key in ("mcpServers", "mcp"):
        server = (data.get(key) or {}).get("signet") if isinstance(data.get(key), dict) else None
        if not isinstance(server, dict):
            continue
        command = server.get("command")
        if isinstance(command, list):
            found.mcp = [str(c) for c in command]
        elif isinstance(command, str):
            found.mcp = [command, *map(str, server.get("args") or [])]


def _option(argv: list[str], name: str) -> str | None:
    for i, arg in enumerate(argv[:-1]):
        if arg == name:
            return argv[i + 1]
    return None


def _workspace_of(argv: list[str]) -> Path | None:
    value = _option(argv, "--workspace")
    return Path(value).absolute() if value else None


def _judge(
    harness: str, found: _Found, present: bool, cfg: Config, fix: _Fixer, project: Path | None,
) -> Check:
    name = f"hooks {harness}"
    connect = fix("connect", harness, *(["--project", str(project)] if project else []))
    data: dict[str, Any] = {"files": found.files, "events": sorted(found.hooks),
                            "mcp": found.mcp is not None, "installed": present}
    if found.errors:
        return Check(name, "fail", "; ".join(found.errors), f"fix the file, then {connect}", data)
    if not found.hooks and found.mcp is None:
        if present:
            return Check(name, "warn", f"{harness} is on this machine but not connected: its "
                         "sessions are not captured", connect, data)
        where = f"in {project}" if project else "(harness not found on this machine)"
        return Check(name, "info", f"not connected {where}", data=data)
    problems: dict[str, list[str]] = {}  # the problem -> what has it (events, "MCP")
    expected = EXPECTED_EVENTS.get(harness, OPENCODE_EVENTS)
    missing = [e for e in expected if e not in found.hooks]
    if missing:
        problems["no hook"] = missing
    if found.mcp is None:
        problems["no MCP entry"] = []
    for what, argv in [*found.hooks.items(), *([("MCP", found.mcp)] if found.mcp else [])]:
        workspace = _workspace_of(argv)
        if workspace is None:
            problems.setdefault("name no --workspace (they reach whatever SIGNET_WORKSPACE "
                                "says)", []).append(what)
        elif workspace != cfg.workspace:
            problems.setdefault(f"point at another workspace, {workspace}", []).append(what)
        port = _option(argv, "--port")
        if port is not None and port != str(cfg.port):
            problems.setdefault(f"ask port {port}, the daemon's is {cfg.port}", []).append(what)
        elif port is None and fix.port is not None:
            problems.setdefault(f"have no --port {cfg.port} (set only in this shell's "
                                "environment)", []).append(what)
        exe = argv[0] if argv else ""
        if not (Path(exe).is_file() if os.sep in exe else shutil.which(exe)):
            problems.setdefault(f"run {exe}, which does not exist", []).append(what)
    if problems:
        lines = [f"{problem}: {', '.join(whats)}" if problem in ("no hook",) else
                 problem if not whats else f"{', '.join(whats)} {problem}"
                 for problem, whats in problems.items()]
        data["problems"] = lines
        return Check(name, "fail", "; ".join(lines), connect, data)
    return Check(name, "ok", f"{len(found.hooks)} hooks and the MCP server, pointing at this "
                 f"workspace ({', '.join(found.files)})", data=data)


# --- mcp, spool, hook failures ---------------------------------------------------------------------


def _mcp(argv: list[str], env: dict[str, str], up: bool, fix: _Fixer) -> Check:
    """Spawn the MCP server as a harness does; time `initialize` and `tools/list`."""
    started = time.perf_counter()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env)
    except OSError as exc:
        return Check("mcp", "fail", f"{shlex.join(argv)} does not start: {exc}", fix("setup"))
    lines: queue.Queue[bytes] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(b"")

    threading.Thread(target=read, daemon=True).start()

    def ask(message: dict[str, Any]) -> dict[str, Any] | None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
        deadline = time.monotonic() + MCP_TIMEOUT_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                raw = lines.get(timeout=left)
            except queue.Empty:
                return None
            if not raw:
                return None
            try:
                answer = json.loads(raw)
            except ValueError:
                continue
            if isinstance(answer, dict) and answer.get("id") == message.get("id"):
                return answer
        return None

    try:
        init = ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "signet-doctor", "version": __version__}}})
        init_ms = (time.perf_counter() - started) * 1000
        tools: dict[str, Any] | None = None
        if init is not None and "result" in init:
            assert proc.stdin is not None
            proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
            tools = ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        tools_ms = (time.perf_counter() - started) * 1000
    except OSError as exc:
        init, tools, init_ms, tools_ms = {"error": str(exc)}, None, 0.0, 0.0
    finally:
        _stop(proc)
    command = shlex.join(argv)
    if init is None or "result" not in init:
        why = "no answer" if init is None else json.dumps(init.get("error"))[:200]
        return Check("mcp", "fail", f"`{command}` gave {why} to initialize within "
                     f"{MCP_TIMEOUT_S:.0f} s", f"run `{command}` by hand to see why; {fix('setup')}",
                     {"command": argv})
    names = [t.get("name") for t in ((tools or {}).get("result") or {}).get("tools") or []]
    data = {"command": argv, "initialize_ms": round(init_ms, 1), "tools_list_ms": round(tools_ms, 1),
            "tools": len(names), "relay": up}
    detail = (f"initialize in {init_ms:.0f} ms, {len(names)} tools in {tools_ms:.0f} ms "
              f"({'relayed to the daemon' if up else 'served in-process: no daemon'})")
    if not names:
        return Check("mcp", "fail", detail + "; no tools listed", f"run `{command}` by hand to see why", data)
    if init_ms > MCP_SLOW_MS:
        return Check("mcp", "warn", detail + f"; a harness waits about {MCP_SLOW_MS / 1000 + 0.5:.1f} s",
                     fix("daemon", "start") + " (the relay answers in milliseconds)", data)
    return Check("mcp", "ok", detail, data=data)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()


def _spool_and_failures(cfg: Config, up: bool, fix: _Fixer) -> list[Check]:
    health = hook_health(cfg.workspace)
    checks = []
    backlog, failed = health["spool_backlog"], health["spool_failed"]
    spool = cfg.workspace / "memory" / "spool"
    if failed:
        checks.append(Check("spool", "warn", f"{failed} capture(s) set aside as unimportable in {spool / 'failed'}"
                            + (f"; {backlog} waiting" if backlog else ""),
                            f"read the .reason file beside each in {spool / 'failed'}; delete them once handled",
                            {"backlog": backlog, "failed": failed}))
    elif backlog:
        # Waiting captures are a consequence of a stopped daemon, which already fails its own
        # check: one problem is counted once.
        checks.append(Check("spool", "warn",
                            f"{backlog} capture(s) waiting for the daemon in {spool}"
                            + (" (imported within 10 s)" if up else " (imported when it starts)"),
                            None if up else fix("daemon", "start"), {"backlog": backlog, "failed": 0}))
    else:
        checks.append(Check("spool", "ok", "nothing waiting", data={"backlog": 0, "failed": 0}))
    count, last = health["failures_24h"], health["last_failure"]
    log = cfg.log_dir / "hooks.log"
    if not count:
        checks.append(Check("hook failures", "ok", "none in the last 24 h", data={"failures_24h": 0}))
    else:
        refused = "refused" in str(last).lower() or "no daemon" in str(last).lower()
        hint = (fix("daemon", "start") if refused and not up else f"read {log}")
        checks.append(Check("hook failures", "warn", f"{count} in the last 24 h; last: {str(last)[:240]}",
                            hint, {"failures_24h": count, "last_failure": last}))
    return checks
