"""Hostile round five, item 3: no client starves the others, on `expert serve`
and on `expert mcp --transport streamable-http`. Round four
(test_serving.py) held idle sockets and a head that stops; here: a head
sent one byte at a time (the deadline runs from the connection's opening,
not from its last byte), many connections opened and left at once, a body
that never ends (MCP: the SDK waits for it with no deadline of its own),
and clients that do not read their answers. Each time another client is
answered, waited for on a socket with a timeout; nothing is asserted on our
speed. The guard's deadline for delivering an answer is driven as ASGI,
with a send that never returns, counting what it released."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette")

from conftest import expert_serving  # noqa: E402
from expert.interfaces import guard  # noqa: E402

# The served processes' deadlines, shorter than a deployment's (guard.LIMITS: 5 s for a head, 10 s for a
# body) so that the tests wait 2 s rather than 5; set before the command reads them.
SECONDS = 2.0
SHORTER = ("import dataclasses\nfrom expert.interfaces import guard\n"
           f"guard.LIMITS = dataclasses.replace(guard.LIMITS, head_seconds={SECONDS}, body_seconds={SECONDS})")
# The largest answers of the page's API: an explanation of 405B on 8 owned cards with a WHAT IF of
# every field (2.4 MB on 2026-12-07).
LARGE = ("/api/explain?model-size=405&method=full&detail=full&vram=8x+RTX+3090"
         + "".join(f"&what-if={change}" for change in ("method=lora", "budget=high", "deadline=72", "epochs=3",
                                                       "stack=tuned", "provider=aws", "purpose=production")))


@contextlib.contextmanager
def serving(command: tuple[str, ...], *args: str) -> Iterator[int]:
    with expert_serving(command, *args, before=SHORTER) as port:
        yield port


def answered(port: int, method: str = "GET", path: str = "/api/estimate?model-size=8", body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """Another client's request, waited for at most 60 s (a loaded machine)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


class Trickle(threading.Thread):
    """A client that sends ``data`` one byte every ``every`` seconds, and notes when the server closes."""

    def __init__(self, port: int, data: bytes, every: float = 0.25, first: bytes = b"") -> None:
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(first)
        self.data, self.every = data, every
        self.sent = 0
        self.closed = threading.Event()

    def run(self) -> None:
        try:
            for byte in self.data:
                self.sock.sendall(bytes([byte]))
                self.sent += 1
                time.sleep(self.every)
        except OSError:
            pass
        self.closed.set()

    def wait_closed(self) -> bool:
        """Whether the server closed the socket (the end of the stream, or a reset) within 30 s."""
        self.sock.settimeout(30)
        try:
            while self.sock.recv(65536):
                pass
        except OSError:
            pass
        return True


def non_reading(port: int, path: str, count: int) -> list[socket.socket]:
    """``count`` clients that ask for ``path`` and never read the answer (a small receive buffer)."""
    held = []
    for _ in range(count):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", port))
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        held.append(sock)
    return held


def churn(port: int, count: int) -> None:
    """``count`` connections opened and left at once, some after half a request line."""
    for i in range(count):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            if i % 2:
                sock.sendall(b"GET /api/est")


# --- expert serve ----------------------------------------------------------------------------------

def test_serve_answers_beside_tricklers_churn_and_clients_that_do_not_read() -> None:
    with serving(("serve",), "--workers", "1") as port:
        assert answered(port)[0] == 200                                     # the worker is up
        head = Trickle(port, b"GET /api/estimate?model-size=8 HTTP/1.1\r\n" + b"X-Slow: 1\r\n" * 40)
        head.start()
        churn(port, 200)
        readers = non_reading(port, LARGE, 4)
        try:
            status, body = answered(port)
            assert status == 200 and json.loads(body)["setup"]["method"] == "lora"
            # one byte every 0.25 s is not a request: the head's deadline runs from the opening
            assert head.wait_closed() and head.sent < len(head.data)
            # the clients that did not read still hold their sockets, and others are answered
            assert answered(port, path="/api/advise?model-size=8")[0] == 200
        finally:
            for sock in (head.sock, *readers):
                sock.close()


def test_a_body_sent_a_byte_at_a_time_is_cut_off_with_a_408_and_the_others_answered() -> None:
    with serving(("serve",), "--workers", "1") as port:
        assert answered(port)[0] == 200
        body = Trickle(port, b"x" * 200,                # the head at once, then a byte of body every 0.25 s
                       first=b"POST /api/advise HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 200\r\n\r\n")
        body.start()
        status, _ = answered(port)
        assert status == 200
        body.sock.settimeout(30)
        head = body.sock.recv(4096).decode("latin-1")
        assert head.startswith("HTTP/1.1 408") and body.sent < 200
        # cut off at this test's deadline, which the worker process was given too, not a deployment's 10 s
        # (about 8 bytes at 4 a second; 40 at the deployment's deadline)
        assert body.sent < SECONDS * 4 * 3
        body.sock.close()


# --- the guard's deadline for delivering an answer (ASGI, a send that never returns) ------------------

def test_an_answer_not_taken_within_its_deadline_frees_its_place_for_others() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"x" * 1000})

    gate = guard.Guard(app, lambda scope, status, figure: (b"busy", b"text/plain"),
                       guard.Limits(queue=2, per_address=2, send_seconds=0.2))
    sent: list[int] = []

    async def never_taken(message: Any) -> None:
        if message["type"] == "http.response.body":
            await asyncio.Event().wait()              # the client's window stays shut

    async def taken(message: Any) -> None:
        sent.append(message.get("status", 0))

    def body() -> Any:
        """A request without a body, from a client that stays connected."""
        messages = [{"type": "http.request", "body": b"", "more_body": False}]

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop()
            await asyncio.Event().wait()
            return {}
        return receive

    scope = {"type": "http", "client": ("10.0.0.9", 1), "path": "/", "headers": []}

    async def scenario() -> None:
        stuck = [asyncio.create_task(gate(scope, body(), never_taken)) for _ in range(2)]
        await asyncio.sleep(0.05)
        assert gate.admitted == 2                     # the queue is full of answers nobody reads
        await asyncio.wait_for(asyncio.gather(*stuck), timeout=30)
        await gate(scope, body(), taken)

    asyncio.run(scenario())
    assert gate.admitted == 0 and gate.undelivered == 2
    assert sent == [200, 0]                            # the next client is answered in full


# --- expert mcp over streamable HTTP ----------------------------------------------------------------

INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode()
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def test_mcp_over_http_answers_beside_idle_trickling_and_unfinished_bodies() -> None:
    with serving(("mcp", "--transport", "streamable-http")) as port:
        assert answered(port, "POST", "/mcp", INITIALIZE, MCP_HEADERS)[0] == 200
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
        head = Trickle(port, b"POST /mcp HTTP/1.1\r\n" + b"X-Slow: 1\r\n" * 40)
        head.start()
        unfinished = socket.create_connection(("127.0.0.1", port))
        unfinished.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode() + b"Content-Type: application/json\r\n"
                           b"Accept: application/json, text/event-stream\r\nContent-Length: 500\r\n\r\n{\"json")
        churn(port, 100)
        try:
            assert answered(port, "POST", "/mcp", INITIALIZE, MCP_HEADERS)[0] == 200
            assert head.wait_closed() and head.sent < len(head.data)
            unfinished.settimeout(30)
            assert unfinished.recv(4096).decode("latin-1").startswith("HTTP/1.1 408")     # not held forever
        finally:
            for sock in (*idle, head.sock, unfinished):
                sock.close()
