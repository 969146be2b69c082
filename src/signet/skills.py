"""Skills as procedural memory: the `skills/` folder (the source of truth) and `skill_meta`. A skill
is `skills/<name>/SKILL.md` with YAML front matter; `reconcile` gives it a row and one
`procedural` memory so recall surfaces it, updates that when the file changes, forgets it when
the folder goes, and reports a file that does not parse. Importance is `decay_rate ** days` since
last use: decay only reorders. Installing takes a local folder or archive only.
"""

from __future__ import annotations

import gzip
import logging
import lzma
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import yaml

from signet.errors import MUTATIONS_FROZEN, Conflict, InvalidInput, NotFound
from signet.normalize import normalize_content
from signet.paths import leads_out, lookup, shown
from signet.store import skills as skills_sql
from signet.types import Actor, format_ts, parse_ts

if TYPE_CHECKING:
    from signet.services.memory import MemoryService

__all__ = [
    "Skill", "changed", "install", "list_skills", "parse_skill", "reconcile", "remove", "show",
]

log = logging.getLogger(__name__)

SKILL_FILE = "SKILL.md"
AGENT_ID = "default"
ACTOR = Actor(name="skills", type="daemon")
MAX_SKILL_BYTES = 256 * 1024
MIN_IMPORTANCE = 0.01
MAX_ARCHIVE_BYTES = 10 * 1024 * 1024
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
# What reading a damaged archive raises: bad checksums and headers, truncated or corrupt
# compressed streams, unsupported methods or encryption (zip), a member whose data runs out.
_DAMAGED = (
    zipfile.BadZipFile, zipfile.LargeZipFile, tarfile.TarError, EOFError, zlib.error,
    lzma.LZMAError, gzip.BadGzipFile, NotImplementedError, RuntimeError, ValueError,
)


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    role: str | None
    instructions: str
    folder: Path

    def memory_text(self, limit: int) -> str:
        head = f"Skill {self.name}: {self.description}"
        return f"{head}\n{self.instructions}"[:limit]


def parse_skill(folder: Path) -> Skill:
    """The skill in `folder`; InvalidInput naming the file and the problem otherwise."""
    path = folder / SKILL_FILE
    if not path.is_file():
        raise InvalidInput(f"{folder}: no {SKILL_FILE} in the skill folder")
    if path.stat().st_size > MAX_SKILL_BYTES:
        raise InvalidInput(f"{path}: larger than {MAX_SKILL_BYTES} bytes")
    try:
        text = path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text") from exc
    match = re.match(r"^---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", text, re.S)
    if not match:
        raise InvalidInput(f"{path}: must start with YAML frontmatter between '---' lines")
    try:
        front = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{path}: invalid frontmatter YAML: {exc}") from exc
    if not isinstance(front, dict):
        raise InvalidInput(f"{path}: the frontmatter must be a mapping of keys")
    return Skill(
        name=_field(front, "name", path, pattern=_NAME),
        description=_field(front, "description", path),
        role=_field(front, "role", path, required=False),
        instructions=text[match.end():].strip(),
        folder=folder,
    )


def _field(
    front: dict[str, Any], key: str, path: Path, *, required: bool = True,
    pattern: re.Pattern[str] | None = None,
) -> Any:
    value = front.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{path}: frontmatter '{key}' must be a non-empty string")
    if pattern is not None and not pattern.match(value):
        raise InvalidInput(
            f"{path}: frontmatter '{key}' {value!r} must be letters, digits, '.', '_' or '-'"
        )
    return value.strip()[:1000]


# --- reconciling ------------------------------------------------------------------------------


def skills_dir(service: MemoryService) -> Path:
    return service.config.workspace / "skills"


def scan(root: Path) -> tuple[dict[str, Skill], dict[str, str]]:
    """The valid skills under `root` by name, and per folder that is not one, why."""
    found: dict[str, Skill] = {}
    errors: dict[str, str] = {}
    if not root.is_dir():
        return found, errors
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        try:
            skill = parse_skill(folder)
        except InvalidInput as exc:
            errors[str(folder)] = exc.message
            continue
        if skill.name in found:
            errors[str(folder)] = (f"{folder}: skill name {skill.name!r} is already used by"
                                   f" {found[skill.name].folder}")
            continue
        found[skill.name] = skill
    return found, errors


def reconcile(service: MemoryService, now: datetime | None = None) -> dict[str, Any]:
    """Bring `skill_meta` and the skill memories in step with the folders; apply decay.
    `now` defaults to the service's clock."""
    now = now or service.clock.now()
    if service.config.pipeline.mutations_frozen:  # reads only: the folders wait until thawed
        return {"added": [], "changed": [], "removed": [], "decayed": 0,
                "errors": [f"skills not reconciled: {MUTATIONS_FROZEN}"]}
    found, errors = scan(skills_dir(service))
    known = {m.skill_name: m for m in service.core.skill_metas(AGENT_ID)}
    report: dict[str, Any] = {"added": [], "changed": [], "removed": [],
                              "errors": list(errors.values())}
    for name, skill in found.items():
        outcome = _index(service, skill, now)
        if outcome:
            report[outcome].append(name)
    for name, meta in known.items():
        # A folder whose SKILL.md no longer parses keeps its skill until it is fixed or removed.
        if name not in found and meta.filesystem_path not in errors:
            _unindex(service, name)
            report["removed"].append(name)
    report["decayed"] = _decay(service, now)
    if report["added"] or report["changed"] or report["removed"] or errors:
        log.info("skills reconciled: %s", {k: v for k, v in report.items() if v})
    return report


def changed(report: dict[str, Any]) -> bool:
    """Whether a reconcile wrote anything (the scheduled worker's "did work")."""
    return bool(report["added"] or report["changed"] or report["removed"] or report["decayed"])


def _index(service: MemoryService, skill: Skill, now: datetime) -> str | None:
    text = skill.memory_text(service.config.memory.max_content_chars)
    existing = service.core.skill_memory(skill.name, AGENT_ID)
    tags = ["skill", skill.name] + ([skill.role] if skill.role else [])
    outcome = None
    if existing is None:
        service.remember(
            text, actor=ACTOR, type="procedural", source_type=skills_sql.SOURCE_TYPE,
            source_id=skills_sql.source_id(skill.name), tags=tuple(tags), importance=1.0,
        )
        outcome = "added"
    elif existing.content != normalize_content(text).storage:
        service.modify(existing.id, {"content": text, "tags": tags}, actor=ACTOR,
                   reason=f"{skill.folder / SKILL_FILE} changed")
        outcome = "changed"
    service.core.upsert_skill_meta(
        name=skill.name, agent_id=AGENT_ID, path=str(skill.folder), role=skill.role,
        decay_rate=service.config.skills.decay_rate, now=format_ts(now),
    )
    return outcome


def _unindex(service: MemoryService, name: str) -> None:
    memory = service.core.skill_memory(name, AGENT_ID)
    if memory is not None:
        service.forget(memory.id, actor=ACTOR, force=True, reason=f"skill {name} removed")
    service.core.delete_skill_meta(name, AGENT_ID)


def _decay(service: MemoryService, now: datetime) -> int:
    """Set each skill memory's importance from its idle days; returns how many moved."""
    moves = []
    for meta in service.core.skill_metas(AGENT_ID):
        memory = service.core.skill_memory(meta.skill_name, AGENT_ID)
        if memory is None:
            continue
        wanted = round(_importance(meta, now), 4)
        if abs(wanted - memory.importance) >= 0.0001:
            moves.append((memory.id, wanted))
    if moves:
        service.core.set_importances(moves)
    return len(moves)


def _importance(meta: skills_sql.SkillMeta, now: datetime) -> float:
    since = parse_ts(meta.last_used_at or meta.created_at)
    days = max((now - since).total_seconds() / 86400.0, 0.0)
    # A floor, not zero: a long-idle skill sinks to the bottom of its band but stays findable.
    return max(MIN_IMPORTANCE, float(meta.decay_rate) ** days)


# --- the commands' operations -----------------------------------------------------------------


def list_skills(service: MemoryService) -> list[dict[str, Any]]:
    out = []
    for meta in service.core.skill_metas(AGENT_ID):
        memory = service.core.skill_memory(meta.skill_name, AGENT_ID)
        out.append({
            "name": meta.skill_name, "role": meta.role_classification,
            "path": meta.filesystem_path, "use_count": meta.use_count,
            "last_used_at": meta.last_used_at, "decay_rate": meta.decay_rate,
            "importance": memory.importance if memory else None,
            "memory_id": memory.id if memory else None, "installed_at": meta.created_at,
        })
    return out


def show(service: MemoryService, name: str) -> dict[str, Any]:
    entry = next((s for s in list_skills(service) if s["name"] == name), None)
    if entry is None:
        raise NotFound(f"no skill named {name!r}")
    skill = parse_skill(Path(entry["path"]))
    return {**entry, "description": skill.description, "instructions": skill.instructions}


def install(
    service: MemoryService, source: Path | str, now: datetime | None = None, *, force: bool = False
) -> dict[str, Any]:
    """Copy a skill folder, or unpack a local archive, into skills/<name>/; then reconcile.
    `now` defaults to the service's clock."""
    source, now = Path(source), now or service.clock.now()
    root = skills_dir(service)
    root.mkdir(parents=True, exist_ok=True)
    links_out: list[str] = []
    with tempfile.TemporaryDirectory(dir=root, prefix=".install-") as tmp:
        staged = _stage(Path(source), Path(tmp), links_out)
        skill = parse_skill(staged)
        target = root / skill.name
        if target.exists():
            if not force:
                raise Conflict(f"skill {skill.name!r} is already installed at {target};"
                               " pass --force to replace it")
            shutil.rmtree(target)
        staged.rename(target)
    report = reconcile(service, now)
    return {"installed": skill.name, "path": str(target), "reconcile": report,
            "links_skipped": sorted(links_out)}


def remove(service: MemoryService, name: str, now: datetime | None = None) -> dict[str, Any]:
    now = now or service.clock.now()
    found, _errors = scan(skills_dir(service))
    if name not in found:
        raise NotFound(f"no skill named {name!r} under {skills_dir(service)}")
    shutil.rmtree(found[name].folder)
    return {"removed": name, "reconcile": reconcile(service, now)}


def _stage(source: Path, tmp: Path, links_out: list[str]) -> Path:
    """The skill folder of `source` (a folder or an archive) inside `tmp`; a folder's links
    that lead out of it are left behind and named in `links_out`."""
    found = lookup(source)
    if found is None:
        raise NotFound(f"{shown(source)}: no such folder or archive")
    if stat.S_ISDIR(found.st_mode):
        staged = tmp / "skill"
        shutil.copytree(source, staged, symlinks=False, ignore=_links_out(source, links_out))
        return staged
    if not stat.S_ISREG(found.st_mode):
        raise InvalidInput(f"{source}: not a folder, .zip or .tar(.gz) archive")
    unpacked = tmp / "unpacked"
    unpacked.mkdir()
    try:
        if zipfile.is_zipfile(source):
            _unzip(source, unpacked)
        elif tarfile.is_tarfile(source):
            _untar(source, unpacked)
        else:
            raise InvalidInput(f"{source}: not a folder, .zip or .tar(.gz) archive")
    except _DAMAGED as exc:
        # Headers that lie (sizes, checksums, offsets) surface as these once a member is read.
        raise InvalidInput(f"{source}: damaged archive ({exc})") from exc
    if (unpacked / SKILL_FILE).is_file():
        return unpacked
    folders = [p for p in unpacked.iterdir() if p.is_dir()]
    if len(folders) == 1 and (folders[0] / SKILL_FILE).is_file():
        return folders[0]
    raise InvalidInput(f"{source}: the archive holds no {SKILL_FILE} at its top or in one folder")


def _links_out(root: Path, found: list[str]) -> Callable[[str, list[str]], set[str]]:
    """A copytree `ignore` that skips symlinks resolving outside `root` (or into a cycle),
    recording their paths relative to `root`: links inside the folder are followed, but a
    link must not copy ~/.ssh into a skill that recall then puts in front of an agent."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        skipped = set()
        for name in names:
            path = Path(folder) / name
            if path.is_symlink() and leads_out(path, root):
                skipped.add(name)
                found.append(path.relative_to(root).as_posix())
        return skipped

    return ignore


def _safe_member(name: str, source: Path) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        raise InvalidInput(f"{source}: archive member {name!r} points outside the skill folder")
    return path


def _unzip(source: Path, into: Path) -> None:
    with zipfile.ZipFile(source) as archive:
        members = archive.infolist()
        _unpack(source, into, sum(m.file_size for m in members),
                ((m.filename, _zip_kind(m), partial(archive.read, m)) for m in members))


def _zip_kind(member: zipfile.ZipInfo) -> str:
    if (member.external_attr >> 16) & 0o170000 == 0o120000:
        return "a symlink"
    return "dir" if member.is_dir() else "file"


def _untar(source: Path, into: Path) -> None:
    with tarfile.open(source) as archive:
        members = archive.getmembers()
        _unpack(source, into, sum(m.size for m in members),
                ((m.name, _tar_kind(m), partial(_tar_read, archive, m)) for m in members))


def _tar_kind(member: tarfile.TarInfo) -> str:
    return "dir" if member.isdir() else "file" if member.isfile() else "not a plain file"


def _tar_read(archive: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    handle = archive.extractfile(member)
    assert handle is not None
    return handle.read()


def _unpack(
    source: Path, into: Path, size: int, members: Iterable[tuple[str, str, Callable[[], bytes]]]
) -> None:
    """Write an archive's members into `into`, each given as (name, kind, read): kind is "dir",
    "file", or why the member is refused. The checks are the same whatever the archive format:
    the unpacked size, names that stay inside the folder, plain files and folders only."""
    if size > MAX_ARCHIVE_BYTES:
        raise InvalidInput(f"{source}: unpacks to more than {MAX_ARCHIVE_BYTES} bytes")
    for name, kind, read in members:
        path = _safe_member(name, source)
        if kind == "dir":
            (into / path).mkdir(parents=True, exist_ok=True)
            continue
        if kind != "file":
            raise InvalidInput(f"{source}: archive member {name!r} is {kind}")
        (into / path).parent.mkdir(parents=True, exist_ok=True)
        (into / path).write_bytes(read())
