"""The workspace's encrypted secret store (`.secrets/`), for config values such as `llm.api_key:
secret:OPENAI`, resolved once at start.

Each value is sealed with AES-256-GCM under one random key in `.secrets/secrets.key` (0600), the
name as associated data so an entry copied under another name fails. A key file rather than the OS
keyring, as the daemon runs headless. `rotate_key` writes the new key beside the old, re-seals and
renames; an interrupted rotation finishes on the next open.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signet.errors import ConfigError, InvalidInput, NotFound

__all__ = ["SECRET_PREFIX", "SecretInfo", "SecretStore", "is_reference", "reference_name"]

SECRET_PREFIX = "secret:"
KEY_BYTES = 32
NONCE_BYTES = 12
MAX_VALUE_BYTES = 64 * 1024
# A name, as the API's schema states it ((?!\n)$: the end, not before a final newline).
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}(?!\n)$"
_NAME = re.compile(NAME_PATTERN)


@dataclass(frozen=True, slots=True)
class SecretInfo:
    """What may be shown about a secret: never its value."""

    name: str
    created_at: str
    updated_at: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "created_at": self.created_at, "updated_at": self.updated_at}


def is_reference(value: str) -> bool:
    return value.startswith(SECRET_PREFIX)


def reference_name(value: str) -> str:
    """NAME of a `secret:NAME` reference; InvalidInput when NAME is not a valid name."""
    return check_name(value[len(SECRET_PREFIX):])


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidInput(
            f"invalid secret name {name!r}: use letters, digits, '_', '.' or '-' (at most 128,"
            " starting with a letter or '_')"
        )
    return name


class SecretStore:
    """The secrets of one workspace. Cheap to build; reads the files on every call, so a
    change made by `signet secret set` is seen by the next call of any process."""

    @classmethod
    def of(cls, config: Any) -> SecretStore:
        """The secrets of `config`'s workspace (values resolved into providers only at open)."""
        return cls(config.workspace)

    def __init__(self, workspace: Path) -> None:
        self.dir = Path(workspace) / ".secrets"
        self.key_path = self.dir / "secrets.key"
        self.next_key_path = self.dir / "secrets.key.next"
        self.store_path = self.dir / "secrets.json"

    # -- reading ----------------------------------------------------------------------------------

    def names(self) -> list[SecretInfo]:
        entries = self._entries()
        return [
            SecretInfo(name, e["created_at"], e["updated_at"]) for name, e in sorted(entries.items())
        ]

    def get(self, name: str) -> str:
        """The plaintext value; NotFound when there is no such secret, ConfigError when the
        key file is missing or is not the key the value was sealed with."""
        check_name(name)
        entries = self._entries()
        if name not in entries:
            raise NotFound(f"no secret named {name!r} (set it with `signet secret set {name}`)")
        key, key_id = self._key(create=False)
        return _open(key, key_id, name, entries[name], self.key_path)

    def resolve(self, value: str, where: str) -> str:
        """`value` itself, or the secret it names when written `secret:NAME`; `where` names the
        config key in errors (never the value)."""
        if not is_reference(value):
            return value
        name = reference_name(value)
        try:
            return self.get(name)
        except NotFound:
            raise ConfigError(
                f"{where}: secret {name!r} is not in the secret store {self.store_path}"
                f" (set it with `signet secret set {name}`)"
            ) from None

    # -- writing ----------------------------------------------------------------------------------

    def set(self, name: str, value: str, now: str) -> SecretInfo:
        check_name(name)
        if not isinstance(value, str) or value == "":
            raise InvalidInput("a secret value must be a non-empty string")
        if len(value.encode("utf-8")) > MAX_VALUE_BYTES:
            raise InvalidInput(f"a secret value may hold at most {MAX_VALUE_BYTES} bytes")
        entries = self._entries()
        key, key_id = self._key(create=True)
        for other, entry in entries.items():  # a store sealed under another key stays readable
            _open(key, key_id, other, entry, self.key_path)
        created = entries.get(name, {}).get("created_at", now)
        entries[name] = {**_seal(key, key_id, name, value), "created_at": created, "updated_at": now}
        self._write_entries(entries)
        return SecretInfo(name, created, now)

    def delete(self, name: str) -> bool:
        """Whether the secret existed."""
        check_name(name)
        entries = self._entries()
        if entries.pop(name, None) is None:
            return False
        self._write_entries(entries)
        return True

    def rotate_key(self) -> int:
        """A new random key; every secret re-encrypted under it. Returns how many."""
        entries = self._entries()
        old, old_id = self._key(create=True)
        plain = {name: _open(old, old_id, name, e, self.key_path) for name, e in entries.items()}
        new = secrets.token_bytes(KEY_BYTES)
        new_id = _key_id(new)
        _write_private(self.next_key_path, new)
        sealed = {
            name: {**_seal(new, new_id, name, value), "created_at": entries[name]["created_at"],
                   "updated_at": entries[name]["updated_at"]}
            for name, value in plain.items()
        }
        self._write_entries(sealed)
        os.replace(self.next_key_path, self.key_path)
        _fsync_dir(self.dir)
        return len(sealed)

    # -- files ------------------------------------------------------------------------------------

    def _entries(self) -> dict[str, dict[str, Any]]:
        try:
            text = self.store_path.read_text("utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{self.store_path}: cannot read the secret store: {exc}") from exc
        try:
            data = json.loads(text)
            entries = data["secrets"]
            if not isinstance(entries, dict) or not all(
                isinstance(e, dict) and {"key_id", "nonce", "ciphertext", "created_at",
                                         "updated_at"} <= set(e) for e in entries.values()
            ):
                raise ValueError("malformed entries")
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"{self.store_path}: the secret store is corrupt ({exc}); restore it from a"
                " backup or delete it and set the secrets again"
            ) from exc
        self._finish_rotation(entries)
        return entries

    def _finish_rotation(self, entries: dict[str, dict[str, Any]]) -> None:
        """A rotation killed between writing the store and renaming the key left the store
        sealed under `secrets.key.next`: complete it."""
        if not entries or not self.next_key_path.exists():
            return
        if any(e["key_id"] == _key_id(_read_key(self.next_key_path)) for e in entries.values()):
            os.replace(self.next_key_path, self.key_path)
            _fsync_dir(self.dir)

    def _write_entries(self, entries: dict[str, dict[str, Any]]) -> None:
        text = json.dumps({"version": 1, "secrets": entries}, indent=1, sort_keys=True)
        _write_private(self.store_path, text.encode("utf-8"))

    def _key(self, *, create: bool) -> tuple[bytes, str]:
        if not self.key_path.exists():
            if not create:
                raise ConfigError(
                    f"{self.key_path}: the secret store's key file is missing, so no secret can"
                    " be decrypted; restore it from a backup or delete the store and set the"
                    " secrets again"
                )
            _write_private(self.key_path, secrets.token_bytes(KEY_BYTES), exclusive=True)
        key = _read_key(self.key_path)
        return key, _key_id(key)


def _read_key(path: Path) -> bytes:
    if os.name == "posix" and path.stat().st_mode & 0o077:
        raise ConfigError(
            f"{path}: the key file is readable by other users; run `chmod 600 {path}` (and"
            " consider rotating the key with `signet secret rotate-key`)"
        )
    key = path.read_bytes()
    if len(key) != KEY_BYTES:
        raise ConfigError(f"{path}: the key file is damaged (expected {KEY_BYTES} bytes)")
    return key


def _key_id(key: bytes) -> str:
    # Names the key without revealing it: a truncated hash of a 256-bit random value.
    return hashlib.sha256(b"signet-secret-key-id" + key).hexdigest()[:16]


def _seal(key: bytes, key_id: str, name: str, value: str) -> dict[str, str]:
    # Imported here: every app open reads agent.yaml through this module, few seal or open.
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = secrets.token_bytes(NONCE_BYTES)
    sealed = AESGCM(key).encrypt(nonce, value.encode("utf-8"), name.encode("utf-8"))
    return {"key_id": key_id, "nonce": _b64(nonce), "ciphertext": _b64(sealed)}


def _open(key: bytes, key_id: str, name: str, entry: dict[str, Any], key_path: Path) -> str:
    if entry["key_id"] != key_id:
        raise ConfigError(
            f"{key_path}: secret {name!r} was encrypted with another key (key id"
            f" {entry['key_id']}, the key file holds {key_id}); restore the matching key file"
        )
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        plain = AESGCM(key).decrypt(
            base64.b64decode(entry["nonce"]), base64.b64decode(entry["ciphertext"]),
            name.encode("utf-8"),
        )
    except (InvalidTag, ValueError) as exc:
        raise ConfigError(
            f"secret {name!r} cannot be decrypted with {key_path}: the stored value was altered"
            " or belongs to another name"
        ) from exc
    return plain.decode("utf-8")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _write_private(path: Path, data: bytes, *, exclusive: bool = False) -> None:
    """Write a 0600 file atomically: a temporary file, fsynced, renamed over `path`."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if exclusive:
            os.link(tmp, path)  # fails if another process made the key meanwhile: keep theirs
        else:
            os.replace(tmp, path)
    except FileExistsError:
        pass
    finally:
        if tmp.exists():
            tmp.unlink()
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

