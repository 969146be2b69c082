"""`signet.Client` against a real daemon process on a loopback port: every typed method is one
request, answers are the contract's JSON, and error answers come back as the SignetError
subclass that owns their code."""

from __future__ import annotations

import asyncio
import inspect
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_process import DaemonProcess, free_port, make_workspace

import signet
from signet.client import Client
from signet.client.aio import AsyncClient
from signet.errors import Conflict, NotFound, SignetError


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    workspace = make_workspace(tmp_path_factory.mktemp("client") / "ws")
    process = DaemonProcess(workspace, free_port())
    process.wait_healthy(timeout_s=60)
    yield process
    process.kill()


@pytest.fixture
def client(daemon: DaemonProcess, monkeypatch: pytest.MonkeyPatch) -> Iterator[Client]:
    # The workspace's address comes from its config and environment, as the CLI resolves it.
    monkeypatch.setenv("SIGNET_PORT", str(daemon.port))
    monkeypatch.setenv("SIGNET_BIND", "127.0.0.1")
    with signet.Client.for_workspace(daemon.workspace, actor="script") as opened:
        yield opened


def test_the_package_exports_the_client_and_its_version() -> None:
    assert set(signet.__all__) == {"AsyncClient", "Client", "__version__"}
    assert signet.Client is Client and signet.AsyncClient is AsyncClient
    assert all(hasattr(signet, name) for name in signet.__all__)
    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = signet.no_such_thing  # type: ignore[attr-defined]


def test_importing_signet_does_not_import_the_client() -> None:
    # A harness hook imports `signet`; the client (and its HTTP stack) must wait for first use.
    code = "import sys, signet; print('signet.client' in sys.modules, 'http.client' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_a_memory_through_its_whole_life(client: Client) -> None:
    stored = client.remember(
        "The billing service deploys from the release branch on Fridays.",
        {"who": "ops"}, tags=["billing", "deploy"], importance=0.8, project="billing",
    )
    memory_id = stored["id"]
    assert stored["deduped"] is False
    assert stored["memory"]["tags"] == ["billing", "deploy"]
    assert stored["memory"]["who"] == "ops"

    got = client.get(memory_id)
    assert got["content"].startswith("The billing service deploys")
    assert got["importance"] == 0.8

    page = client.list(limit=10, filters={"project": "billing", "tags": ["deploy"]})
    assert [m["id"] for m in page["items"]] == [memory_id]
    assert page["total"] == 1

    found = client.recall("billing deploys Fridays", limit=5, mode="keyword")
    assert found["results"][0]["id"] == memory_id
    assert found["results"][0]["evidence"]["lexical"] is not None

    changed = client.modify(memory_id, {"importance": 0.3}, version=got["version"], reason="less")
    assert changed["importance"] == 0.3 and changed["version"] == got["version"] + 1
    with pytest.raises(Conflict):  # the version it was read at is stale now
        client.modify(memory_id, {"importance": 0.5}, version=got["version"])

    forgotten = client.forget(memory_id, reason="moved to the wiki")
    assert forgotten["is_deleted"] is True
    assert client.recall("billing deploys Fridays", mode="keyword")["results"] == []
    assert client.recover(memory_id)["is_deleted"] is False

    events = [e["event"] for e in client.history(memory_id)["history"]]
    assert events[0] == "created" and "updated" in events and "deleted" in events
    assert {e["changed_by"] for e in client.history(memory_id)["history"]} == {"script"}


def test_status_and_health_describe_the_daemon(client: Client, daemon: DaemonProcess) -> None:
    assert client.health()["pid"] == daemon.proc.pid
    status = client.status()
    assert status["daemon"]["pid"] == daemon.proc.pid


def test_explicit_url_and_token(daemon: DaemonProcess) -> None:
    token = (daemon.workspace / ".daemon" / "token").read_text("ascii").strip()
    with Client(daemon.url + "/", token) as direct:
        memory_id = direct.remember("Explicit addresses work too.")["id"]
        assert direct.get(memory_id)["content"] == "Explicit addresses work too."


def test_errors_arrive_as_their_own_exceptions(client: Client) -> None:
    with pytest.raises(NotFound) as missing:
        client.get("mem_does_not_exist")
    assert missing.value.code == "not_found"
    with pytest.raises(SignetError) as bad:
        client.recall("x", limit=0)
    assert bad.value.code == "invalid_input"


def test_a_daemon_that_is_not_there_is_named(tmp_path: Path) -> None:
    with Client(f"http://127.0.0.1:{free_port()}", timeout_s=2) as absent:
        with pytest.raises(SignetError, match="did not answer") as error:
            absent.status()
    assert error.value.code == "daemon_unreachable"


# --- signet.AsyncClient ------------------------------------------------------------------------

NOT_REQUESTS = {"close", "for_workspace"}


def test_every_request_method_has_its_awaitable_twin_with_the_same_signature() -> None:
    methods = {name for name, _ in inspect.getmembers(Client, inspect.isfunction)
               if not name.startswith("_")} - NOT_REQUESTS
    assert methods <= set(vars(AsyncClient)), methods - set(vars(AsyncClient))
    for name in methods:
        twin = getattr(AsyncClient, name)
        assert inspect.iscoroutinefunction(twin), name
        assert inspect.signature(twin) == inspect.signature(getattr(Client, name)), name


def test_the_async_client_against_a_real_daemon(daemon: DaemonProcess, client: Client) -> None:
    token = (daemon.workspace / ".daemon" / "token").read_text("ascii").strip()

    async def scenario() -> None:
        async with AsyncClient(daemon.url, token, actor="async-script") as aclient:
            stored = await asyncio.gather(*(
                aclient.remember(f"The async canary number {i} sings at dawn.", tags=["canary"])
                for i in range(4)
            ))
            ids = {s["id"] for s in stored}
            assert len(ids) == 4
            page = await aclient.list(limit=10, filters={"tags": ["canary"]})
            assert {m["id"] for m in page["items"]} == ids
            found = await aclient.recall("async canary dawn", limit=10, mode="keyword")
            assert {r["id"] for r in found["results"]} == ids
            first = stored[0]["id"]
            got = await aclient.get(first)
            with pytest.raises(Conflict):
                await aclient.modify(first, {"importance": 0.2}, version=got["version"] + 5)
            assert (await aclient.forget(first, reason="async"))["is_deleted"] is True
            history = (await aclient.history(first))["history"]
            assert {e["changed_by"] for e in history} == {"async-script"}
            with pytest.raises(NotFound):
                await aclient.get("mem_does_not_exist")
            assert (await aclient.health())["pid"] == daemon.proc.pid

    asyncio.run(scenario())
    # The sync client sees what the async one wrote: one daemon, one store.
    assert client.list(limit=10, filters={"tags": ["canary"]})["total"] == 3


def test_an_absent_daemon_is_named_by_the_async_client_too() -> None:
    async def scenario() -> None:
        async with AsyncClient(f"http://127.0.0.1:{free_port()}", timeout_s=2) as absent:
            await absent.status()

    with pytest.raises(SignetError, match="did not answer") as error:
        asyncio.run(scenario())
    assert error.value.code == "daemon_unreachable"
