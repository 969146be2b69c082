"""The bundled model in a child process of its own, for the embed worker.

In the daemon's process, tokenizing and pooling took the GIL its writes needed. The child loads
the model on its first `embed`; each call is one length-prefixed pickle each way over its stdin and
stdout. A child that dies or stays silent for `timeout_s` fails the call with ProviderError and is
restarted by the next; the parent's death ends it.
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from signet.errors import ProviderError

_HEADER = struct.Struct("!Q")
# The child: serve() on stdin/stdout, stdout kept for the frames alone.
_CHILD = "from signet.providers.embed_process import serve; serve()"


class ProcessEmbedder:
    """An `Embedder` running the local model (`make_embedder("local", ...)` with the same
    settings) in `processes` child processes; a call's texts are split between them."""

    name = "local"
    inline = False  # the embed worker's: nothing on the write path waits for it

    def __init__(
        self, *, model: str, dimensions: int, batch_size: int = 32, threads: int = 1,
        processes: int = 1, timeout_s: float = 300.0,
    ) -> None:
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.threads = threads
        self.timeout_s = timeout_s
        settings = f"{model}\t{dimensions}\t{batch_size}\t{threads}"
        self._children = [_Child(settings, lambda: self.timeout_s)
                          for _ in range(max(1, processes))]

    @property
    def pids(self) -> list[int]:
        """The running children's pids (none before the first embed)."""
        return [pid for child in self._children if (pid := child.pid) is not None]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.empty((0, self.dimensions), dtype=np.float32)
        # Each child takes a contiguous share, at least a batch's worth: a handful of texts
        # is not worth a second process's round trip.
        shares = max(1, min(len(self._children), len(texts) // self.batch_size))
        bounds = [round(i * len(texts) / shares) for i in range(shares + 1)]
        parts = [list(texts[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
        results: list[np.ndarray | BaseException | None] = [None] * shares

        def one(i: int) -> None:
            try:
                results[i] = self._children[i].embed(parts[i])
            except BaseException as exc:  # raised below, in the caller's thread
                results[i] = exc

        helpers = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(1, shares)]
        for helper in helpers:
            helper.start()
        one(0)
        for helper in helpers:
            helper.join()
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return np.concatenate([r for r in results if isinstance(r, np.ndarray)])

    def close(self) -> None:
        for child in self._children:
            child.close()


class _Child:
    """One child process serving the model, started on its first call."""

    def __init__(self, settings: str, timeout_s: Callable[[], float]) -> None:
        self.settings = settings
        self.timeout_s = timeout_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            if self._closed:
                raise ProviderError("the embedding process is closed")
            proc = self._running()
            watchdog = threading.Timer(self.timeout_s(), _kill, args=(proc,))
            watchdog.daemon = True
            watchdog.start()
            try:
                assert proc.stdin is not None and proc.stdout is not None
                _send(proc.stdin, texts)
                status, value = _receive(proc.stdout)
            except (OSError, EOFError, pickle.UnpicklingError) as exc:
                self._reap(proc)
                raise ProviderError(f"the embedding process stopped (exit code"
                                    f" {proc.returncode}): {exc or 'no reply'}") from exc
            finally:
                watchdog.cancel()
        if status != "ok":
            raise ProviderError(str(value))
        vectors: np.ndarray = value
        return vectors

    def close(self) -> None:
        with self._lock:
            self._closed = True
            proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()  # EOF: the child's loop ends
            proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            _kill(proc)
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    def _running(self) -> subprocess.Popen[bytes]:
        proc = self._proc
        if proc is not None and proc.poll() is None:
            return proc
        if proc is not None:
            self._reap(proc)
        env = {**os.environ, "SIGNET_EMBED_CHILD": self.settings}
        # The same interpreter finds an installed package by itself; a checkout this process
        # imported through its own path (a PYTHONPATH, a test run) is named to the child.
        # Never a site-packages folder: ahead of the standard library it could shadow it.
        package_root = str(Path(__file__).resolve().parents[2])
        if package_root not in _site_folders():
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env=env, close_fds=True,
        )
        return self._proc

    def _reap(self, proc: subprocess.Popen[bytes]) -> None:
        _kill(proc)
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
        if self._proc is proc:
            self._proc = None


def _site_folders() -> set[str]:
    import site

    folders = [*site.getsitepackages(), site.getusersitepackages()]
    return {str(Path(f).resolve()) for f in folders}


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        try:
            proc.kill()
        except OSError:
            pass


def _send(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    header = _read(stream, _HEADER.size)
    return pickle.loads(_read(stream, _HEADER.unpack(header)[0]))  # our own child


def _read(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if data is None or len(data) < size:
        raise EOFError("the embedding process closed its pipe")
    return data


def serve() -> None:
    """The child's loop: texts in, ("ok", vectors) or ("error", message) out, until EOF."""
    import signal

    from signet.providers.embedder import make_embedder

    # Ctrl-C in a foreground daemon's terminal reaches the whole process group: the daemon
    # shuts down and closes our stdin, which ends this loop; the signal itself is not ours.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    model, dimensions, batch_size, threads = os.environ["SIGNET_EMBED_CHILD"].split("\t")
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # anything printed goes to the log, never into the frames
    embedder = make_embedder("local", model=model, dimensions=int(dimensions),
                             batch_size=int(batch_size), threads=int(threads))
    assert embedder is not None
    while True:
        try:
            texts = _receive(stdin)
        except EOFError:
            return
        try:
            reply: tuple[str, Any] = ("ok", embedder.embed(texts))
        except Exception as exc:  # reported to the parent as the call's error
            reply = ("error", f"{type(exc).__name__}: {exc}")
        _send(stdout, reply)
