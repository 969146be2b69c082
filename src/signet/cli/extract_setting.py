"""`signet connect <harness> --extract`: the harness's own CLI as the pipeline's LLM.

agent.yaml's `llm.provider` becomes the harness and `llm.command` its absolute path, since a user
service sees a shorter PATH than the shell. The edit is textual, keeping comments and layout, and
the result is parsed back and must say what was meant. An LLM the user chose is never replaced.
`--uninstall` restores the original bytes, or resets the two keys if they still hold what connect
wrote.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from signet.cli.harness_files import Edit
from signet.errors import ConfigError

__all__ = ["EXTRACT_HARNESSES", "extract_edit"]

# Harness -> its binary; the provider of the same name runs it (providers/llm_harness.py).
EXTRACT_HARNESSES = {"claude-code": "claude", "codex": "codex", "opencode": "opencode"}

_TOP_KEY = re.compile(r"^[^\s#-][^:]*:")


def extract_edit(config_file: Path, harness: str, env: Mapping[str, str]) -> Edit:
    """The agent.yaml edit that makes `harness` the pipeline's LLM."""
    if harness not in EXTRACT_HARNESSES:
        raise ConfigError(
            f"--extract: {harness} has no CLI to run as the LLM "
            f"(one of {', '.join(EXTRACT_HARNESSES)})")
    found = shutil.which(EXTRACT_HARNESSES[harness], path=env.get("PATH"))
    command = [str(Path(found).absolute())] if found else []

    def add(old: str | None) -> str:
        if old is None:
            raise ConfigError(f"{config_file}: no workspace here yet; run `signet init` first")
        current = _llm(old, config_file)
        provider = str(current.get("provider") or "none")
        if provider not in ("none", harness):
            raise ConfigError(
                f"{config_file}: llm.provider is {provider!r} already; --extract replaces "
                f"only none (set llm.provider: {harness} by hand to switch)")
        if provider == harness:
            return old  # chosen already (by hand or by an earlier connect): leave it as it is
        new = _set(old, "provider", json.dumps(harness))
        if command and not current.get("command"):
            new = _set(new, "command", json.dumps(command))
        _expect(new, config_file, harness, command or None)
        return new

    def remove(old: str) -> str:
        current = _llm(old, config_file)
        if current.get("provider") != harness:
            return old
        new = _set(old, "provider", json.dumps("none"))
        if _written_command(current.get("command"), EXTRACT_HARNESSES[harness]):
            new = _set(new, "command", "[]")
        return new

    return Edit(config_file, f"llm.provider {harness}", add, remove)


def _written_command(value: Any, binary: str) -> bool:
    """Whether llm.command is what `add` writes: the one absolute path of the harness binary
    (PATH may differ between connect and its uninstall, so it is not looked up again)."""
    return (isinstance(value, list) and len(value) == 1 and isinstance(value[0], str)
            and Path(value[0]).is_absolute() and Path(value[0]).name == binary)


def _llm(text: str, path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML; left alone ({exc})") from exc
    llm = data.get("llm") if isinstance(data, dict) else None
    return llm if isinstance(llm, dict) else {}


def _set(text: str, key: str, value: str) -> str:
    """`text` with `llm.<key>: value`: the key's line replaced (with any block value under it),
    or added as the section's first key, or a new `llm:` section at the end."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if re.match(r"^llm:\s*(#.*)?$", line.rstrip("\r\n"))), None)
    if start is None:
        if any(re.match(r"^llm\s*:", line) for line in lines):
            raise ConfigError("agent.yaml: llm is not a block section; set llm.provider by hand")
        tail = "" if not text or text.endswith("\n") else "\n"
        return f"{text}{tail}\nllm:\n  {key}: {value}\n"
    end = next((i for i in range(start + 1, len(lines)) if _TOP_KEY.match(lines[i])), len(lines))
    children = [i for i in range(start + 1, end)
                if lines[i].strip() and not lines[i].lstrip().startswith("#")]
    indent = (len(lines[children[0]]) - len(lines[children[0]].lstrip())) if children else 2
    pad = " " * indent
    newline = "\r\n" if lines[start].endswith("\r\n") else "\n"
    for i in children:
        if re.match(rf"^{pad}{re.escape(key)}:(\s|$)", lines[i]):
            stop = i + 1  # a block value (`- item` lines, deeper keys) goes with the key
            while stop < end and (not lines[stop].strip() or _deeper(lines[stop], indent)
                                  or lines[stop].startswith(f"{pad}- ")):
                stop += 1
            while stop > i + 1 and not lines[stop - 1].strip():
                stop -= 1  # blank lines before the next section stay
            return "".join([*lines[:i], f"{pad}{key}: {value}{newline}", *lines[stop:]])
    return "".join([*lines[:start + 1], f"{pad}{key}: {value}{newline}", *lines[start + 1:]])


def _deeper(line: str, indent: int) -> bool:
    return len(line) - len(line.lstrip()) > indent


def _expect(text: str, path: Path, provider: str, command: list[str] | None) -> None:
    llm = _llm(text, path)
    if llm.get("provider") != provider or (command and llm.get("command") != command):
        raise ConfigError(
            f"{path}: could not set llm.provider here (an unusual layout); nothing was "
            f"written: set `llm: {{provider: {provider}}}` by hand")
