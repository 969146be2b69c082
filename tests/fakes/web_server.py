"""A real HTTP server on 127.0.0.1 serving scripted pages, for document fetch tests.

`WebServer(routes)` maps a path to (status, headers, body); a body of bytes is sent as is.
Every request path is recorded in `server.hits`, so a test can prove that a refused redirect
was never followed.

    with WebServer({"/a.html": (200, {"Content-Type": "text/html"}, b"<p>hi</p>")}) as web:
        httpx.get(web.url + "/a.html")
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Route = tuple[int, dict[str, str], bytes]

__all__ = ["WebServer"]


class WebServer:
    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self.hits: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # the stdlib's name
                server.hits.append(self.path)
                status, headers, body = server.routes.get(self.path, (404, {}, b"not found"))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value.replace("{port}", str(server.port)))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.httpd.server_address[1])
        self.url = f"http://localhost:{self.port}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> WebServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
