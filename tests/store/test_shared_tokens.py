"""The daemon's token authority over a PostgreSQL store, in separate processes as two daemons
would hold it: a token issued by one is accepted by the other (the signing key is a row of the
shared database, not a file of one workspace), a revocation in one holds in the other at once,
and a login code works once across them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from signet.daemon.tokens import TokenAuthority
from signet.errors import Unauthorized
from signet.store.postgres.core import PostgresCore

_OTHER_DAEMON = """
import json, sys
from signet.daemon.tokens import TokenAuthority
from signet.errors import Unauthorized
from signet.store.postgres.core import PostgresCore
core = PostgresCore.open(sys.argv[1], max_size=1)
authority = TokenAuthority.for_core(core)
out = {}
if sys.argv[2] == "issue":
    out["token"] = authority.issue(role="agent", name="from-a", project="team").token
    out["code"] = authority.login_code()
else:
    try:
        out["principal"] = authority.verify(sys.argv[3]).name
    except Unauthorized as exc:
        out["refused"] = str(exc)
core.close()
print(json.dumps(out))
"""


@pytest.fixture
def other_daemon(tmp_path: Path, pg_url: str) -> Iterator[object]:
    script = tmp_path / "other.py"
    script.write_text(_OTHER_DAEMON)

    def run(*args: str) -> dict[str, str]:
        done = subprocess.run([sys.executable, str(script), pg_url, *args], capture_output=True,
                              text=True, timeout=60, check=True)
        return json.loads(done.stdout)

    yield run


def test_tokens_issued_by_one_daemon_are_accepted_by_another(
    other_daemon: object, pg_url: str
) -> None:
    run = other_daemon
    issued = run("issue")  # type: ignore[operator]
    core = PostgresCore.open(pg_url)
    try:
        here = TokenAuthority.for_core(core)
        principal = here.verify(issued["token"])
        assert principal.name == "from-a" and principal.scope_project == "team"
        assert run("verify", issued["token"]) == {"principal": "from-a"}  # type: ignore[operator]
        here.revoke(principal.token_id)
        assert run("verify", issued["token"]) == {"refused": "token revoked"}  # type: ignore[operator]
        exchanged = here.exchange(issued["code"])
        assert here.verify(exchanged.token).role == "admin"
        with pytest.raises(Unauthorized, match="invalid or expired login code"):
            here.exchange(issued["code"])
    finally:
        core.close()


def test_a_token_signed_with_another_key_is_refused(pg_url: str, tmp_path: Path) -> None:
    core = PostgresCore.open(pg_url)
    try:
        foreign = TokenAuthority(core, b"x" * 32).issue(role="agent").token
        with pytest.raises(Unauthorized, match="invalid token"):
            TokenAuthority.for_core(core).verify(foreign)
    finally:
        core.close()
