"""The encrypted secret store on real files: values sealed with AES-GCM under a 0600 key file,
clear errors for every way the files can be wrong, and key rotation that survives a kill."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from signet.errors import ConfigError, InvalidInput, NotFound
from signet.secret_store import SecretStore

NOW = "2026-12-01T12:00:00.000Z"
VALUE = "sk-test-0123456789abcdefXYZ"


def every_byte_under(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())


def test_a_value_set_is_read_back_and_is_nowhere_in_plaintext(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    info = store.set("OPENAI", VALUE, NOW)
    assert (info.name, info.created_at) == ("OPENAI", NOW)
    assert SecretStore(tmp_path).get("OPENAI") == VALUE
    assert VALUE.encode() not in every_byte_under(tmp_path)
    assert [i.to_dict() for i in store.names()] == [
        {"name": "OPENAI", "created_at": NOW, "updated_at": NOW}
    ]


def test_key_and_store_are_private_files(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("A", VALUE, NOW)
    assert store.key_path.stat().st_mode & 0o777 == 0o600
    assert store.store_path.stat().st_mode & 0o777 == 0o600
    assert store.dir.stat().st_mode & 0o777 == 0o700
    assert len(store.key_path.read_bytes()) == 32


def test_overwrite_keeps_created_at_and_delete_removes(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("A", "one", NOW)
    info = store.set("A", "two", "2026-12-02T00:00:00.000Z")
    assert info.created_at == NOW and store.get("A") == "two"
    assert store.delete("A") is True and store.delete("A") is False
    with pytest.raises(NotFound, match="no secret named 'A'"):
        store.get("A")


def test_an_entry_copied_under_another_name_does_not_decrypt(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("A", VALUE, NOW)
    store.set("B", "other", NOW)
    data = json.loads(store.store_path.read_text())
    data["secrets"]["B"] = data["secrets"]["A"]
    store.store_path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="secret 'B' cannot be decrypted"):
        store.get("B")
    assert store.get("A") == VALUE


def test_a_replaced_key_file_is_named_as_the_wrong_key(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("A", VALUE, NOW)
    store.key_path.write_bytes(os.urandom(32))
    with pytest.raises(ConfigError, match="encrypted with another key"):
        store.get("A")
    with pytest.raises(ConfigError, match="encrypted with another key"):
        store.set("B", "x", NOW)  # nothing written under a key that cannot read the rest


def test_a_missing_key_file_is_a_clear_error(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("A", VALUE, NOW)
    store.key_path.unlink()
    with pytest.raises(ConfigError, match="key file is missing"):
        store.get("A")


def test_a_world_readable_key_file_is_refused(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("A", VALUE, NOW)
    store.key_path.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        store.get("A")


@pytest.mark.parametrize("text", ["{not json", '{"secrets": [1]}', '{"secrets": {"A": {}}}'])
def test_a_corrupt_store_is_a_clear_error(tmp_path: Path, text: str) -> None:
    store = SecretStore(tmp_path)
    store.dir.mkdir(mode=0o700)
    store.store_path.write_text(text)
    with pytest.raises(ConfigError, match="secret store is corrupt"):
        store.names()


@pytest.mark.parametrize("name", ["", "has space", "../x", "1abc", "a" * 129, 7])
def test_bad_names_are_refused(tmp_path: Path, name: object) -> None:
    with pytest.raises(InvalidInput, match="invalid secret name"):
        SecretStore(tmp_path).set(name, "v", NOW)  # type: ignore[arg-type]


def test_empty_and_oversized_values_are_refused(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    with pytest.raises(InvalidInput, match="non-empty"):
        store.set("A", "", NOW)
    with pytest.raises(InvalidInput, match="at most"):
        store.set("A", "x" * 70_000, NOW)


def test_rotate_key_reencrypts_every_secret_under_a_new_key(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("A", VALUE, NOW)
    store.set("B", "bee", NOW)
    old_key, old_text = store.key_path.read_bytes(), store.store_path.read_text()
    assert store.rotate_key() == 2
    assert store.key_path.read_bytes() != old_key
    assert store.store_path.read_text() != old_text
    assert (store.get("A"), store.get("B")) == (VALUE, "bee")
    assert not store.next_key_path.exists()
    assert VALUE.encode() not in every_byte_under(tmp_path)


def test_a_rotation_killed_before_the_key_rename_is_finished_on_the_next_read(
    tmp_path: Path,
) -> None:
    store = SecretStore(tmp_path)
    store.set("A", VALUE, NOW)
    old_key = store.key_path.read_bytes()
    store.rotate_key()
    # Put the old key back as if the final rename had never happened.
    os.replace(store.key_path, store.next_key_path)
    store.key_path.write_bytes(old_key)
    store.key_path.chmod(0o600)
    assert SecretStore(tmp_path).get("A") == VALUE
    assert not store.next_key_path.exists()


def test_resolve_passes_plain_values_and_names_the_key_for_a_missing_secret(tmp_path: Path) -> None:
    store = SecretStore(tmp_path)
    store.set("K", VALUE, NOW)
    assert store.resolve("secret:K", "llm.api_key") == VALUE
    assert store.resolve("plain", "llm.base_url") == "plain"
    with pytest.raises(ConfigError, match=r"llm.api_key: secret 'NOPE' is not in the secret store"):
        store.resolve("secret:NOPE", "llm.api_key")
