"""A loopback stand-in for the daemon's hook routes: accepts connections, counts them, and
answers each request with a hook result holding CONTEXT (tests of what reaches the daemon)."""

from __future__ import annotations

import json
import socket
import threading

CONTEXT = "# Agent\nremembered line"


class AnsweringServer:
    """Accepts connections, counts them, answers each with a hook result holding CONTEXT."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                while len(body) < length:
                    body += conn.recv(65536)
                reply = json.dumps({"context": CONTEXT, "memories": []}).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: " + str(len(reply)).encode() + b"\r\n\r\n" + reply)
