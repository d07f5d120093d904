"""How `expert serve` stands up to many clients and to hostile ones (issue
48; docs/web.md, "Limits a deployer can rely on"), in the app:

- :class:`Guard`, an ASGI middleware in front of the app: a bounded queue
  of requests per process (answered 503 with ``Retry-After`` when full), a
  bound on one client address's requests in it (429 with ``Retry-After``),
  a request's body read whole before the app runs, within a size and a time
  (413, 408), and the work of a client that has gone dropped (the app is
  cancelled when the client disconnects: a request still waiting for the
  consultation thread is never computed).
- :class:`SecurityHeaders`: the headers on every response, a 500 included.

The server in front of it is :mod:`.serving` (hypercorn's settings).

Nothing here knows the consultation: the app and its messages are given.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOG = logging.getLogger("expert.serve")


@dataclass(frozen=True)
class Limits:
    """What one server process admits (docs/web.md states them; tests/hostile/test_serving.py holds them).

    The figures: a consultation takes 0.1-0.4 s of one core (p50 0.31 s under load, bench/web_load.py,
    docs/performance.md), so a full queue of 100 is served in about 10-40 s per worker; one address
    may hold three quarters of it, so that others always have room, and the 50 clients of the bench
    (all on the loopback's one address, as the clients behind a proxy are) fit even if every
    connection lands on one worker."""

    queue: int = 100              # requests in a process at once: computing, or waiting for the thread
    per_address: int = 75         # of those, from one client address
    body_bytes: int = 16 * 1024   # a request's body (the page and the API read none)
    body_seconds: float = 10.0    # to send that body, once the head is read
    head_seconds: float = 5.0     # from a connection's opening (or its last answer) to a request's whole head
    head_bytes: int = 16 * 1024   # a request's head (its line and headers)
    # to deliver an answer once it starts: the largest (an explanation with a WHAT IF of every field,
    # 2.4 MB) in 30 s is 80 kB/s; a client that takes longer, or reads nothing, gives its place back
    send_seconds: float = 30.0


LIMITS = Limits()


def address_of(scope: Scope) -> str:
    """The client's address of a request."""
    return str((scope.get("client") or ("unknown",))[0])


class Guard:
    """The ASGI middleware of the module's docstring. ``refuse(scope, status, figure)`` words a refusal for
    the app, as ``(body, content type)``: 503 busy and 429 one address (``figure``: the seconds to wait),
    413 too large (the most bytes), 408 too slow (the seconds a body may take)."""

    def __init__(self, app: ASGIApp, refuse: Callable[[Scope, int, float], tuple[bytes, bytes]],
                 limits: Limits = LIMITS) -> None:
        self.app, self.refuse, self.limits = app, refuse, limits
        self.admitted = 0
        self.by_address: Counter[str] = Counter()
        self.answered: deque[float] = deque(maxlen=32)   # when the last answers went, for Retry-After
        self.dropped = 0                             # requests cancelled because their client had gone
        self.undelivered = 0                         # answers not taken within limits.send_seconds

    def retry_after(self) -> int:
        """Seconds until the queue has room: the requests in it over the rate of the last answers
        (1 s, 60 s at the most)."""
        rate = ((len(self.answered) - 1) / (self.answered[-1] - self.answered[0])
                if len(self.answered) > 1 and self.answered[-1] > self.answered[0] else 1.0)
        return max(1, min(60, math.ceil(self.admitted / rate)))

    async def answer(self, scope: Scope, send: Send, status: int, figure: float) -> None:
        body, kind = self.refuse(scope, status, figure)
        headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
        if status in (429, 503):
            headers.append((b"retry-after", str(int(figure)).encode()))
        if status in (408, 413):
            headers.append((b"connection", b"close"))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        address = address_of(scope)
        if self.admitted >= self.limits.queue:
            await self.answer(scope, send, 503, self.retry_after())
            return
        if self.by_address[address] >= self.limits.per_address:
            await self.answer(scope, send, 429, self.retry_after())
            return
        self.admitted += 1
        self.by_address[address] += 1
        try:
            await self.admitted_call(scope, receive, send)
        finally:
            self.admitted -= 1
            self.by_address[address] -= 1
            if not self.by_address[address]:
                del self.by_address[address]
            self.answered.append(time.monotonic())

    async def admitted_call(self, scope: Scope, receive: Receive, send: Send) -> None:
        import anyio

        body = await self.read_body(scope, receive, send)
        if body is None:
            return
        gone = anyio.Event()
        replayed = False
        deadline: float | None = None

        async def timed(message: Message) -> None:
            # The answer is delivered within send_seconds of its start, or its place in the queue is
            # given back: a client that does not read cannot hold a place once the socket's buffers fill
            nonlocal deadline
            if deadline is None:
                deadline = anyio.current_time() + self.limits.send_seconds
            with anyio.fail_after(max(0.0, deadline - anyio.current_time())):
                await send(message)

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        async with anyio.create_task_group() as group:
            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                gone.set()
                self.dropped += 1
                group.cancel_scope.cancel()      # the app's work for this client stops where it waits

            group.start_soon(watch)
            try:
                await self.app(scope, replay, timed)
            except TimeoutError:
                self.undelivered += 1
                LOG.warning("an answer to %s was not taken within %s s", address_of(scope), self.limits.send_seconds)
            group.cancel_scope.cancel()

    async def read_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The request's body, whole, or None once 413 (too large) or 408 (too slow) is answered."""
        body = await read_body(receive, self.limits.body_bytes, self.limits.body_seconds)
        if isinstance(body, bytes):
            return body
        if body is None:
            self.dropped += 1
        else:
            await self.answer(scope, send, body, self.limits.body_bytes if body == 413 else self.limits.body_seconds)
        return None


async def read_body(receive: Receive, most: int, seconds: float) -> bytes | int | None:
    """A request's body read whole, at most ``most`` bytes within ``seconds`` of its head: the body, or
    413 (too large), 408 (too slow), None (the client went). Used by the Guard and by `expert mcp` over
    HTTP (mcp/limits.py BodyDeadline), whose SDK waits for a body with no deadline of its own."""
    import anyio

    chunks: list[bytes] = []
    size = 0
    with anyio.move_on_after(seconds) as deadline:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > most:
                return 413
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
    if deadline.cancelled_caught:
        return 408
    return b"".join(chunks)


class SecurityHeaders:
    """Adds ``headers`` to every response of ``app``; an exception the app lets out becomes a 500 that
    carries them too (Starlette's own 500 page would go out before any middleware of the app's)."""

    def __init__(self, app: ASGIApp, headers: Sequence[tuple[bytes, bytes]],
                 failed: Callable[[Scope], tuple[bytes, bytes]]) -> None:
        self.app, self.headers, self.failed = app, list(headers), failed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = [*message.get("headers", []), *self.headers]
            await send(message)

        try:
            await self.app(scope, receive, with_headers)
        except Exception:       # logged, and answered 500 without a traceback
            LOG.exception("error while answering %s", scope.get("path", "")[:200])
            if not started:
                body, kind = self.failed(scope)
                await with_headers({"type": "http.response.start", "status": 500,
                                    "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
