"""Damaged skill archives through a real daemon (conftest.serve): a zip or tarball whose headers
lie about sizes is a 400 naming the archive, never a 500, and installs nothing."""

from __future__ import annotations

import io
import struct
import tarfile
import zipfile
from pathlib import Path

SKILL = "---\nname: liar\ndescription: says it is small\n---\n" + "Step one, then two.\n" * 300


def lying_zip(path: Path, declared: int, method: int) -> Path:
    """A zip whose SKILL.md claims `declared` bytes uncompressed (local and central headers)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        archive.writestr("SKILL.md", SKILL)
    data = bytearray(buffer.getvalue())
    struct.pack_into("<I", data, data.find(b"PK\x03\x04") + 22, declared)
    struct.pack_into("<I", data, data.find(b"PK\x01\x02") + 24, declared)
    path.write_bytes(bytes(data))
    return path


def lying_tar(path: Path) -> Path:
    """A tarball whose SKILL.md header claims more bytes than the archive holds."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("SKILL.md")
        info.size = len(SKILL)
        archive.addfile(info, io.BytesIO(SKILL.encode()))
    data = bytearray(buffer.getvalue())
    header = tarfile.TarInfo("SKILL.md")
    header.size = 64 * 1024
    data[:512] = header.tobuf(tarfile.USTAR_FORMAT)[:512]
    path.write_bytes(bytes(data[: 512 + 1024]))
    return path


def test_an_archive_with_false_size_headers_is_a_400_naming_it(serve, tmp_path: Path) -> None:
    s = serve()
    archives = [
        lying_zip(tmp_path / "small-deflated.zip", 10, zipfile.ZIP_DEFLATED),
        lying_zip(tmp_path / "small-stored.zip", 10, zipfile.ZIP_STORED),
        lying_tar(tmp_path / "short.tar"),
    ]
    for archive in archives:
        reply = s.client.post("/api/skills", json={"path": str(archive)})
        assert reply.status_code == 400, (archive.name, reply.text)
        assert reply.json()["code"] == "invalid_input"
        assert str(archive) in reply.json()["error"], reply.text
    assert s.client.get("/api/skills").json()["skills"] == []
    assert not [p for p in (s.cfg.workspace / "skills").iterdir() if p.name.startswith(".install")]
