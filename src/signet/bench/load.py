"""`signet bench load`: concurrent clients against a real daemon: throughput, latency, errors, lost
writes and peak memory.

Clients send half remembers, half recalls, in a closed loop (capacity) or an open Poisson loop at
`rate` (latency from the scheduled arrival, so no coordinated omission). After a SIGTERM stop every
acknowledged write must be in the database. `writer` reports the one SQLite writer per lane from
the daemon's /metrics.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from signet.bench.metrics import percentile
from signet.bench.perf import synthetic_corpus, synthetic_queries
from signet.store import jobs
from signet.store.db import Store

__all__ = ["Daemon", "drive", "run_load", "summarise"]

REMEMBER = "/api/memory/remember"
RECALL = "/api/memory/recall"
START_TIMEOUT_S = 60.0
REQUEST_TIMEOUT_S = 30.0
EMBEDDERS = ("none", "local")
FAULTS = ("none", "hang")
MEMORIES = "/api/memories"
NO_RATE_LIMIT = 100_000_000


@dataclass
class _ClientLog:
    latencies: dict[str, list[float]] = field(
        default_factory=lambda: {"remember": [], "recall": [], "list": []}
    )
    errors: list[str] = field(default_factory=list)
    acked: dict[str, str] = field(default_factory=dict)
    # Answers received before the run's end: the throughput. Requests still answered after
    # it (an open loop that fell behind works off its arrivals) count for latency only.
    in_window: int = 0


def run_load(
    clients: Sequence[int] = (10, 50),
    seconds: float = 20.0,
    *,
    embedder: str = "none",
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    fault: str = "none",
    write_path: str = "deferred",
    rate: float | None = None,
    daemons: int = 1,
    store_url: str | None = None,
) -> dict[str, Any]:
    """One run per client count (two with `fault="hang"`); returns {"runs": [...]}. `write_path` is
    the daemon's `embedding.write_path`; `rate` makes the loop open at that many requests per
    second."""
    if embedder not in EMBEDDERS:
        raise ValueError(f"embedder must be one of {', '.join(EMBEDDERS)}")
    if fault not in FAULTS:
        raise ValueError(f"fault must be one of {', '.join(FAULTS)}")
    if rate is not None and rate <= 0:
        raise ValueError("rate must be positive")
    if daemons > 1 and not store_url:
        raise ValueError("several daemons share one database: give a PostgreSQL store URL")
    runs = []
    with tempfile.TemporaryDirectory(prefix="signet-load-", dir=workdir) as tmp:
        for n in clients:
            if store_url:
                if progress:
                    progress(f"load: {n} clients over {daemons} daemon(s) on one PostgreSQL"
                             f" database for {seconds:g} s ({embedder} embeddings)")
                runs.append(_shared_run(Path(tmp) / f"ws-{n}", n, seconds, embedder, daemons,
                                        store_url, f"  write_path: {write_path}\n", rate))
                continue
            if fault == "none":
                if progress:
                    offered = f", {rate:g} req/s offered" if rate else ""
                    progress(f"load: {n} clients for {seconds:g} s ({embedder} embeddings{offered})")
                runs.append(_one_run(Path(tmp) / f"ws-{n}", n, seconds, embedder,
                                     embedding_extra=f"  write_path: {write_path}\n", rate=rate))
                continue
            runs.extend(_fault_pair(Path(tmp), n, seconds, progress))
    return {"embedder": embedder, "write_path": write_path, "seconds": seconds, "fault": fault,
            "rate": rate, "daemons": daemons,
            "backend": "postgres" if store_url else "sqlite", "runs": runs}


def _fault_pair(
    tmp: Path, clients: int, seconds: float, progress: Callable[[str], None] | None
) -> list[dict[str, Any]]:
    """The same load without a provider, then with one that never answers; the second run
    carries the p95 ratio of the routes that need no embedding."""
    if progress:
        progress(f"load: {clients} clients for {seconds:g} s, no provider (baseline)")
    base = _one_run(tmp / f"ws-{clients}-base", clients, seconds, "none", lists=True)
    with HangingServer() as hung:
        if progress:
            progress(f"load: {clients} clients for {seconds:g} s, embedding provider hung")
        extra = f"  model: hung\n  dimensions: 384\n  base_url: {hung.url}\n"
        faulty = _one_run(tmp / f"ws-{clients}-hang", clients, seconds, "ollama", lists=True,
                          embedding_extra=extra)
    base["fault"], faulty["fault"] = "none", "hang"
    faulty["p95_ratio"] = {
        op: round(faulty["operations"][op]["p95_ms"] / base["operations"][op]["p95_ms"], 2)
        for op in ("remember", "list")
        if faulty["operations"][op]["p95_ms"] and base["operations"][op]["p95_ms"]
    }
    return [base, faulty]


def _one_run(
    workspace: Path, clients: int, seconds: float, embedder: str, *, lists: bool = False,
    embedding_extra: str = "", rate: float | None = None,
) -> dict[str, Any]:
    workspace.mkdir(parents=True)
    # One token serves every client here, so its rate limit (meant per agent) is lifted: the
    # bench measures what the daemon can serve, not the limiter.
    (workspace / "agent.yaml").write_text(
        f"embedding:\n  provider: {embedder}\n{embedding_extra}"
        f"auth:\n  rate_limit_per_minute: {NO_RATE_LIMIT}\n"
    )
    daemon = Daemon(workspace)
    try:
        headers = daemon.wait_ready()
        cpu, client_cpu = daemon.cpu_seconds(), time.process_time()
        writes = _write_counters(daemon, headers)
        logs = drive(daemon.url, headers, clients, seconds, lists, rate=rate)
        cpu, client_cpu = daemon.cpu_seconds() - cpu, time.process_time() - client_cpu
        writer = _writer_report(writes, _write_counters(daemon, headers), seconds)
        drained = _drain(daemon, headers) if embedder in ("local", "hash") else None
        peak_rss_mb = daemon.peak_rss_mb()
    finally:
        daemon.stop()
    acked = {k: v for log in logs for k, v in log.acked.items()}
    lost, backlog = _after(workspace, acked)
    report = _report(clients, seconds, logs, lost, peak_rss_mb)
    report["embed_backlog"] = backlog
    report["writer"] = writer
    if drained is not None:
        report.update(drained)
    if rate is not None:
        report["offered_rps"] = rate
    # The daemon's own CPU (every thread: requests, workers, the model) per request served:
    # what a loaded machine's wall figures hide; and the clients' (this process), which runs
    # on the same cores and so takes CPU the daemon could have had.
    if report["requests"]:
        report["daemon_cpu_ms_per_request"] = round(cpu * 1000 / report["requests"], 2)
        report["client_cpu_ms_per_request"] = round(client_cpu * 1000 / report["requests"], 2)
    return report


# How long the bench waits after the traffic for the last vectors to be stored.
DRAIN_LIMIT_S = 60.0
WRITE_METRICS = {"signet_write_turns_total": "turns", "signet_write_wait_seconds_total": "wait_s",
                 "signet_write_hold_seconds_total": "hold_s"}


def _write_counters(daemon: Daemon, headers: dict[str, str]) -> dict[tuple[str, str], float]:
    """The daemon's writer-queue counters from /metrics: (lane, turns|wait_s|hold_s) -> value."""
    reply = httpx.get(f"{daemon.url}/metrics", headers=headers, timeout=30)
    reply.raise_for_status()
    counters = {}
    for line in reply.text.splitlines():
        name, _, rest = line.partition('{lane="')
        if name in WRITE_METRICS:
            lane, _, value = rest.partition('"} ')
            counters[(lane, WRITE_METRICS[name])] = float(value)
    return counters


def _writer_report(
    before: dict[tuple[str, str], float], after: dict[tuple[str, str], float], seconds: float
) -> dict[str, dict[str, float]]:
    """Per lane during the run: write transactions, their mean wait for the one writer and
    mean hold of it (ms), and the share of the run the lane held it."""
    report = {}
    for lane in sorted({lane for lane, _ in after}):
        turns, wait_s, hold_s = (after[(lane, k)] - before.get((lane, k), 0.0)
                                 for k in ("turns", "wait_s", "hold_s"))
        report[lane] = {
            "turns": int(turns),
            "wait_mean_ms": round(wait_s * 1000 / turns, 2) if turns else 0.0,
            "hold_mean_ms": round(hold_s * 1000 / turns, 2) if turns else 0.0,
            "busy_share": round(hold_s / seconds, 3),
        }
    return report


class HangingServer:
    """A loopback TCP server that accepts every connection, reads, and never answers."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(512)
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self._held.append(conn)  # kept open, never read from or written to

    def __enter__(self) -> HangingServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._sock.close()
        for conn in self._held:
            conn.close()


def drive(
    url: str | Sequence[str], headers: dict[str, str], clients: int, seconds: float,
    lists: bool = False, *, rate: float | None = None,
) -> list[_ClientLog]:
    """`clients` threads of traffic for `seconds`: a closed loop, or with `rate` an open loop
    of Poisson arrivals at that rate (at most `clients` in flight). Several `url`s: client i
    talks to url i mod n (a balancer's round robin)."""
    urls = [url] if isinstance(url, str) else list(url)
    corpus = synthetic_corpus(2000, seed=clients)
    queries = synthetic_queries(corpus, 500)
    logs = [_ClientLog() for _ in range(clients)]
    start = threading.Barrier(clients + 1)
    plan = _Plan(seconds, rate)
    threads = [
        threading.Thread(target=_client, args=(urls[i % len(urls)], headers, i, logs[i], corpus,
                                               queries, start, plan, lists), daemon=True)
        for i in range(clients)
    ]
    for thread in threads:
        thread.start()
    plan.begin()
    start.wait()
    for thread in threads:
        thread.join(seconds + REQUEST_TIMEOUT_S + 10)
    return logs


class _Plan:
    """When each request is sent: in a closed loop as soon as the client is free; in an open loop at
    the next arrival of a seeded Poisson process, taken by whichever client is free."""

    def __init__(self, seconds: float, rate: float | None) -> None:
        self.seconds, self.rate = seconds, rate
        self.deadline = self._next_at = 0.0
        self._rng = random.Random(1729)
        self._lock = threading.Lock()

    def begin(self) -> None:
        self._next_at = time.monotonic()
        self.deadline = self._next_at + self.seconds

    def next_send(self) -> float | None:
        """The time the next request is due (it is timed from then); None when the run is over."""
        if self.rate is None:
            now = time.monotonic()
            return now if now < self.deadline else None
        with self._lock:
            due = self._next_at
            self._next_at += self._rng.expovariate(self.rate)
        if due >= self.deadline:
            return None
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        return due


class _Http:
    """One keep-alive HTTP/1.1 connection, reopened after a transport error."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port
        self.headers = {**headers, "Content-Type": "application/json"}
        self._conn: http.client.HTTPConnection | None = None

    def request(self, path: str, body: dict[str, Any] | None) -> tuple[int, bytes]:
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=REQUEST_TIMEOUT_S)
        try:
            if body is None:
                self._conn.request("GET", path, headers=self.headers)
            else:
                # bytes: headers and body go out in one send (no Nagle/delayed-ACK stall).
                self._conn.request("POST", path, body=json.dumps(body).encode(), headers=self.headers)
            reply = self._conn.getresponse()
            return reply.status, reply.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _client(
    url: str, headers: dict[str, str], index: int, log: _ClientLog, corpus: Sequence[str],
    queries: Sequence[str], start: threading.Barrier, plan: _Plan, lists: bool,
) -> None:
    rng = random.Random(index)
    conn = _Http(url, headers)
    try:
        start.wait()
        n = 0
        while (due := plan.next_send()) is not None:
            n += 1
            draw = rng.random()
            if lists and draw < 0.2:
                _call(conn, log, "list", f"{MEMORIES}?limit=10", None, due, plan.deadline)
            elif draw < (0.6 if lists else 0.5):
                content = f"client {index} write {n}: {rng.choice(corpus)}"
                _call(conn, log, "remember", REMEMBER, {"content": content}, due, plan.deadline,
                      content)
            else:
                body = {"query": rng.choice(queries), "limit": 10}
                _call(conn, log, "recall", RECALL, body, due, plan.deadline)
    finally:
        conn.close()


def _call(
    conn: _Http, log: _ClientLog, op: str, path: str, body: dict[str, Any] | None,
    due: float, deadline: float, content: str | None = None,
) -> None:
    try:
        status, data = conn.request(path, body)
    except (OSError, http.client.HTTPException) as exc:
        log.errors.append(f"{op}: {type(exc).__name__}")
        return
    done = time.monotonic()
    log.latencies[op].append((done - due) * 1000)
    log.in_window += done <= deadline
    if status != 200:
        log.errors.append(f"{op}: HTTP {status} {data[:120].decode(errors='replace')}")
    elif content is not None:
        log.acked[json.loads(data)["id"]] = content


def _shared_run(
    workspace: Path, clients: int, seconds: float, embedder: str, daemons: int, url: str,
    embedding_extra: str, rate: float | None,
) -> dict[str, Any]:
    """`daemons` daemon processes, each with its own workspace and port, on one PostgreSQL
    database; the clients spread over them. After a graceful stop of all: acknowledged writes
    checked in the database, and the embed jobs: each leased once, none left waiting."""
    from signet.store.postgres.core import PostgresCore

    started: list[Daemon] = []
    try:
        for i in range(daemons):
            folder = workspace / f"daemon-{i}"
            folder.mkdir(parents=True)
            (folder / "agent.yaml").write_text(
                f"store:\n  backend: postgres\n  url: {json.dumps(url)}\n"
                f"embedding:\n  provider: {embedder}\n{embedding_extra}"
                f"auth:\n  rate_limit_per_minute: {NO_RATE_LIMIT}\n"
            )
            started.append(Daemon(folder))
        headers = [d.wait_ready() for d in started][0]  # one database: any daemon's token
        cpu, client_cpu = sum(d.cpu_seconds() for d in started), time.process_time()
        logs = drive([d.url for d in started], headers, clients, seconds, rate=rate)
        cpu = sum(d.cpu_seconds() for d in started) - cpu
        client_cpu = time.process_time() - client_cpu
        peak_rss_mb = max(d.peak_rss_mb() for d in started)
    finally:
        for daemon in started:
            daemon.stop()
    acked = {k: v for log in logs for k, v in log.acked.items()}
    core = PostgresCore.open(url)
    try:
        stored = core.get_memories(list(acked))
        jobs_seen = core.job_summary("embed")
        extract_seen = core.job_summary("extract")  # the extraction workers share the queue
    finally:
        core.close()
    lost = sum(1 for memory_id, content in acked.items()
               if memory_id not in stored or stored[memory_id].content != content)
    report = _report(clients, seconds, logs, lost, peak_rss_mb)
    report.update(daemons=daemons, embed_jobs=jobs_seen, extract_jobs=extract_seen,
                  embed_backlog=jobs_seen.get("pending", 0) + jobs_seen.get("leased", 0))
    if report["requests"]:
        report["daemon_cpu_ms_per_request"] = round(cpu * 1000 / report["requests"], 2)
        report["client_cpu_ms_per_request"] = round(client_cpu * 1000 / report["requests"], 2)
    if rate is not None:
        report["offered_rps"] = rate
    return report


def _drain(daemon: Daemon, headers: dict[str, str], limit_s: float = DRAIN_LIMIT_S) -> dict[str, Any]:
    """Once the traffic stops: the memories still without a vector, and the seconds (and the
    daemon's CPU) until every one has it (None when not within `limit_s`)."""
    def missing() -> int:
        reply = httpx.get(f"{daemon.url}/api/status", headers=headers, timeout=30)
        reply.raise_for_status()
        return int((reply.json().get("embeddings") or {}).get("missing", 0))

    started, cpu = time.perf_counter(), daemon.cpu_seconds()
    at_end = left = missing()
    while left and time.perf_counter() - started < limit_s:
        time.sleep(0.1)
        left = missing()
    return {"unembedded_at_end": at_end,
            "embed_drain_s": round(time.perf_counter() - started, 2) if not left else None,
            "embed_drain_cpu_s": round(daemon.cpu_seconds() - cpu, 2)}


def _after(workspace: Path, acked: dict[str, str]) -> tuple[int, int]:
    """Acknowledged writes missing or changed in the database, and embed jobs not done."""
    store = Store.open(workspace / "memory" / "memories.db")
    try:
        rows = dict(store.reader().execute("SELECT id, content FROM memories").fetchall())
        waiting = jobs.depths(store.reader()).get("embed", {})
    finally:
        store.close()
    lost = sum(1 for memory_id, content in acked.items() if rows.get(memory_id) != content)
    return lost, waiting.get("pending", 0) + waiting.get("leased", 0)


def _report(
    clients: int, seconds: float, logs: list[_ClientLog], lost: int, peak_rss_mb: float
) -> dict[str, Any]:
    return {**summarise(clients, seconds, logs), "lost_writes": lost,
            "peak_rss_mb": round(peak_rss_mb, 1)}


def summarise(clients: int, seconds: float, logs: list[_ClientLog]) -> dict[str, Any]:
    """Throughput, p50/p95 per operation, errors and acknowledged writes of one run."""
    per_op: dict[str, Any] = {}
    total = 0
    for op in ("remember", "recall", "list"):
        values = [ms for log in logs for ms in log.latencies[op]]
        if op == "list" and not values:
            continue
        total += len(values)
        per_op[op] = {
            "count": len(values),
            "p50_ms": round(percentile(values, 50), 2) if values else None,
            "p95_ms": round(percentile(values, 95), 2) if values else None,
        }
    errors = [e for log in logs for e in log.errors]
    return {
        "clients": clients, "seconds": seconds, "requests": total,
        "throughput_rps": round(sum(log.in_window for log in logs) / seconds, 1),
        "operations": per_op,
        "errors": len(errors), "error_samples": sorted(set(errors))[:5],
        "acknowledged_writes": sum(len(log.acked) for log in logs),
    }


def tree_cpu_seconds(pid: int) -> float:
    """User + system CPU of process `pid` and of its children still running (0 without /proc)."""
    total = 0.0
    for one in (pid, *_children(pid)):
        try:
            fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


class Daemon:
    """The daemon subprocess of one run."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "SIGNET_PORT": str(self.port),
               "SIGNET_BIND": "127.0.0.1", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
        self.output = workspace / "daemon-output.log"
        with open(self.output, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "signet", "daemon", "start", "--foreground"], env=env,
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            )

    def wait_ready(self) -> dict[str, str]:
        """Wait for /health from our pid without `starting` (daemon/startup.py builds the API
        after /health answers): a timed run starts on a daemon that serves. Returns the
        headers to call it with (the install token)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.output.read_text(errors="replace")
                raise RuntimeError(f"the daemon exited {self.proc.returncode}: {err[-500:]}")
            try:
                reply = httpx.get(f"{self.url}/health", timeout=0.5)
                body = reply.json()
                if (reply.status_code == 200 and body.get("pid") == self.proc.pid
                        and not body.get("starting")):
                    return self._headers()
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError("the daemon did not answer /health in time")

    def _headers(self) -> dict[str, str]:
        try:
            token = (self.workspace / ".daemon" / "token").read_text().strip()
        except OSError:
            return {}
        return {"Authorization": f"Bearer {token}"} if token else {}

    def peak_rss_mb(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status")
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    def cpu_seconds(self) -> float:
        """User + system CPU the daemon process and its running children (the embedding
        process) have used so far (0 where there is no /proc)."""
        return tree_cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def format_load(result: dict[str, Any]) -> str:
    """A small table: one row per client count."""
    lines = [f"{'clients':>7} {'fault':>5} {'offered':>7} {'req/s':>8} {'remember p50/p95 ms':>20}"
             f" {'recall p50/p95 ms':>18} {'list p50/p95 ms':>16} {'errors':>6} {'lost':>5}"
             f" {'peak RSS MB':>11} {'CPU ms/req':>10} {'client CPU':>10} {'embed backlog':>13}"]
    for run in result["runs"]:
        ops = run["operations"]
        cells = [f"{ops[op]['p50_ms']} / {ops[op]['p95_ms']}" if op in ops else "-"
                 for op in ("remember", "recall", "list")]
        lines.append(
            f"{run['clients']:>7} {run.get('fault', '-'):>5} {run.get('offered_rps', '-'):>7}"
            f" {run['throughput_rps']:>8} {cells[0]:>20} {cells[1]:>18} {cells[2]:>16}"
            f" {run['errors']:>6} {run['lost_writes']:>5} {run['peak_rss_mb']:>11}"
            f" {run.get('daemon_cpu_ms_per_request', '-'):>10}"
            f" {run.get('client_cpu_ms_per_request', '-'):>10} {run.get('embed_backlog', '-'):>13}"
        )
        if "embed_jobs" in run:
            lines.append(f"        {run['daemons']} daemons, one database; embed jobs:"
                         f" {run['embed_jobs']}; extract jobs: {run.get('extract_jobs')}")
        if "unembedded_at_end" in run:
            drain = run["embed_drain_s"]
            lines.append(f"        at the end {run['unembedded_at_end']} memories without a vector;"
                         + (f" all stored {drain} s later" if drain is not None
                            else " not all stored within a minute")
                         + f" (daemon CPU {run['embed_drain_cpu_s']} s)")
        if run.get("writer"):
            lines.append("        writer: " + "; ".join(
                f"{lane} {w['turns']} turns, wait {w['wait_mean_ms']} ms, hold"
                f" {w['hold_mean_ms']} ms, busy {w['busy_share']:.0%}"
                for lane, w in run["writer"].items()))
        if "p95_ratio" in run:
            ratios = ", ".join(f"{op} {ratio}x" for op, ratio in run["p95_ratio"].items())
            lines.append(f"        p95 with the provider hung / without: {ratios}")
    return "\n".join(lines)
