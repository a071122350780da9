"""A proxy on 127.0.0.1 in front of the test server that does to chosen
requests what networks and gateways do: drops the connection before or
after the server has the request, answers 502/503/504 itself, or answers
late. Every request it saw is kept, so a test checks what was sent again."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

import httpx

HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "content-encoding"}


@dataclass
class Seen:
    method: str
    path: str
    idempotency_key: str | None


@dataclass
class Plan:
    """Faults for the requests `matches` selects, used in order: `forward`,
    `drop-before` (closed unread by the server), `drop-after` (the server
    answered; the client gets no answer), `status:<code>`, `late:<seconds>`
    (forwarded, answered after that long)."""

    matches: Callable[[str, str], bool]
    faults: list[str]
    seen: list[Seen] = field(default_factory=list)


class FaultProxy:
    def __init__(self, upstream: str):
        self.upstream = httpx.Client(base_url=upstream, timeout=60)
        self.plans: list[Plan] = []
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_):
                pass

            def _any(self):
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                fault = proxy._next(self.command, self.path, self.headers.get("idempotency-key"))
                if fault == "drop-before":
                    return self._drop()
                if fault.startswith("status:"):
                    code = int(fault.split(":")[1])
                    text = b'{"detail":"gateway fault"}'
                    self.send_response(code)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(text)))
                    self.end_headers()
                    self.wfile.write(text)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
                answer = proxy.upstream.request(self.command, self.path, headers=headers, content=body)
                if fault == "drop-after":
                    return self._drop()
                if fault.startswith("late:"):
                    time.sleep(float(fault.split(":")[1]))
                self.send_response(answer.status_code)
                for k, v in answer.headers.items():
                    if k.lower() not in HOP:
                        self.send_header(k, v)
                self.send_header("content-length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            def _drop(self):
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            do_GET = do_POST = do_DELETE = do_PUT = _any

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # a client that gave up on a late answer

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def plan(self, matches: Callable[[str, str], bool], *faults: str) -> Plan:
        p = Plan(matches, list(faults))
        with self.lock:
            self.plans.append(p)
        return p

    def _next(self, method: str, path: str, key: str | None) -> str:
        with self.lock:
            for p in self.plans:
                if p.matches(method, path):
                    p.seen.append(Seen(method, path, key))
                    return p.faults.pop(0) if p.faults else "forward"
        return "forward"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.upstream.close()
