"""Hostile round four (issue 48), items 2, 3 and 5: `expert serve` under
many and hostile clients. The app's guard (expert/interfaces/guard.py) is
driven directly as ASGI, with small limits, counting the consultations it
computes; the server (hypercorn, expert/interfaces/serving.py) on the
loopback, with a few sockets beyond the per-address bound (the 1,000-socket
figure is bench/web_load.py --idle's, docs/performance.md)."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("starlette")

from conftest import expert_serving  # noqa: E402
from expert.interfaces import guard  # noqa: E402
from expert.interfaces.web import app as web_app  # noqa: E402
from expert.interfaces.web import consult  # noqa: E402

ADVISE = "/api/advise"
QUERY = b"model-size=8&method=lora"


class Request:
    """One request to an ASGI app, as a client that can leave: ``leave()`` makes its receive() say
    http.disconnect, as a server does once the client closes its socket."""

    def __init__(self, path: str = ADVISE, query: bytes = QUERY, address: str = "10.0.0.1",
                 body: list[bytes] | None = None, lang: str = "en") -> None:
        self.scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
                      "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": query,
                      "root_path": "", "server": ("127.0.0.1", 8000), "client": (address, 50000),
                      "headers": [(b"host", b"127.0.0.1:8000"), (b"accept-language", lang.encode())]}
        self.chunks = list(body or [b""])
        self.left = asyncio.Event()
        self.status: int | None = None
        self.headers: dict[bytes, list[bytes]] = {}
        self.body = b""

    def leave(self) -> None:
        self.left.set()

    async def receive(self) -> dict[str, Any]:
        if self.chunks:
            chunk = self.chunks.pop(0)
            if chunk is None:            # a client that stops sending its body
                await self.left.wait()
            return {"type": "http.request", "body": chunk, "more_body": bool(self.chunks)}
        await self.left.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            for name, value in message["headers"]:
                self.headers.setdefault(name, []).append(value)
        else:
            self.body += message.get("body", b"")

    async def run(self, app: Any) -> Request:
        await app(self.scope, self.receive, self.send)
        return self


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[threading.Event, list[str]]]:
    """advise_json counting its calls and holding the consultation thread until the event is set."""
    release, calls = threading.Event(), []

    def advise_json(form: Any) -> str:
        calls.append(form.values.get("model-size", ""))
        release.wait(30)
        return "{}"

    monkeypatch.setattr(consult, "advise_json", advise_json)
    monkeypatch.setattr(web_app, "_LIMITER", [])     # a limiter of this test's event loop
    yield release, calls
    release.set()


async def settle() -> None:
    """Lets the event loop run what is ready (the requests reach their queue)."""
    for _ in range(20):
        await asyncio.sleep(0.01)


def test_a_full_queue_answers_503_and_one_address_429_with_retry_after(held: Any) -> None:
    release, calls = held
    app = web_app.create_app(limits=guard.Limits(queue=3, per_address=2))

    async def scenario() -> list[Request]:
        first, second = Request(address="10.0.0.1"), Request(address="10.0.0.1")
        tasks = [asyncio.create_task(r.run(app)) for r in (first, second)]
        await settle()
        third_of_one = await Request(address="10.0.0.1", lang="es").run(app)       # its share is taken
        other = Request(address="10.0.0.2")
        tasks.append(asyncio.create_task(other.run(app)))
        await settle()
        beyond = await Request(address="10.0.0.3", path="/").run(app)              # the queue is full
        release.set()
        await asyncio.gather(*tasks)
        return [first, second, other, third_of_one, beyond]

    first, second, other, third_of_one, beyond = asyncio.run(scenario())
    assert [first.status, second.status, other.status] == [200, 200, 200]
    assert third_of_one.status == 429 and beyond.status == 503
    for refused in (third_of_one, beyond):
        assert int(refused.headers[b"retry-after"][0]) >= 1
        assert refused.headers[b"content-security-policy"] and refused.headers[b"x-content-type-options"]
    assert json.loads(third_of_one.body)["error"]["message"].startswith("Demasiadas peticiones")
    assert beyond.body.startswith(b"The server is busy") and beyond.headers[b"content-type"][0].startswith(b"text/plain")
    assert len(calls) == 3          # the refused were never computed


def test_work_for_a_client_that_has_gone_is_not_done(held: Any) -> None:
    release, calls = held
    app = web_app.create_app()

    async def scenario() -> list[Request]:
        computing = Request(query=b"model-size=70")
        gone = [Request(query=b"model-size=%d" % size) for size in (1, 2, 3, 4, 5)]
        tasks = [asyncio.create_task(r.run(app)) for r in (computing, *gone)]
        await settle()
        for request in gone:             # they close their sockets while waiting for the thread
            request.leave()
        await settle()
        release.set()
        await asyncio.gather(*tasks)
        return [computing, *gone]

    computing, *gone = asyncio.run(scenario())
    assert computing.status == 200
    assert [request.status for request in gone] == [None] * 5       # no answer to nobody
    assert calls == ["70"]                                          # and no consultation for them
    assert app.app.dropped == 5


def test_a_body_too_large_or_too_slow_is_refused_before_the_app_reads_it(held: Any) -> None:
    _release, calls = held
    app = web_app.create_app(limits=guard.Limits(body_bytes=100, body_seconds=0.2))

    async def scenario() -> list[Request]:
        large = await Request(body=[b"x" * 60, b"x" * 60]).run(app)
        slow = await Request(body=[b"x", None]).run(app)        # sends a byte, then nothing
        return [large, slow]

    large, slow = asyncio.run(scenario())
    assert large.status == 413 and slow.status == 408
    assert b"100" in json.loads(large.body)["error"]["message"].encode()
    assert large.headers[b"content-security-policy"] and slow.headers[b"connection"] == [b"close"]
    assert calls == []


def test_a_500_carries_the_headers_and_says_nothing_of_the_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(form: Any) -> str:
        raise RuntimeError("a secret path /etc/expert")

    monkeypatch.setattr(consult, "advise_json", broken)
    monkeypatch.setattr(web_app, "_LIMITER", [])
    app = web_app.create_app()
    for lang, words in (("en", "Internal error"), ("es", "Error interno")):
        answer = asyncio.run(Request(lang=lang).run(app))
        assert answer.status == 500
        assert json.loads(answer.body)["error"]["message"].startswith(words)
        assert b"secret" not in answer.body
        assert answer.headers[b"content-security-policy"] == [web_app.HEADERS[0][1]]
        assert answer.headers[b"x-frame-options"] == [b"DENY"]


@pytest.mark.parametrize("option", ["²", "7⁰", "①", "٣", "abc"])
def test_a_launch_option_that_is_no_rank_is_a_400_naming_it(option: str) -> None:
    from starlette.testclient import TestClient

    client = TestClient(web_app.create_app(), base_url="http://127.0.0.1:8000")
    answer = client.get("/launch.zip", params={"model-size": "8", "option": option})
    assert answer.status_code == 400 and "option" in answer.text and option in answer.text
    assert answer.headers["content-security-policy"] and answer.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("key, value", [("gpus", "x"), ("strategy", "zz"), ("offload", "maybe"), ("seq-len", "-1"),
                                        ("batch", "0"), ("base-bits", "3"), ("lora-rank", "x"), ("gpu", "zz"),
                                        ("dataset", "x"), ("tokens-per-example", "0"), ("epochs", "0"),
                                        ("model", "zz"), ("colour", "red")])
def test_the_estimate_api_names_its_own_keys(key: str, value: str) -> None:
    from starlette.testclient import TestClient

    client = TestClient(web_app.create_app(), base_url="http://127.0.0.1:8000")
    answer = client.get("/api/estimate", params={"model-size": "8", key: value} if key != "model" else {key: value})
    assert answer.status_code == 400
    assert answer.json()["error"]["field"] == ("model-size" if key == "model" else key)


# --- the server on the loopback -------------------------------------------------------------------

# The head's deadline of the served process, shorter than a deployment's 5 s (guard.LIMITS.head_seconds) so
# that the test waits 2 s, not 5, for the server to close the idle sockets; long enough that they are still
# held while the other client is answered (asserted). serving.config reads guard.LIMITS when imported, after.
HEAD_SECONDS = 2.0
SHORTER_HEAD = ("import dataclasses\nfrom expert.interfaces import guard\n"
                f"guard.LIMITS = dataclasses.replace(guard.LIMITS, head_seconds={HEAD_SECONDS})")


@contextlib.contextmanager
def serving(*args: str) -> Iterator[int]:
    """`expert serve` on a free port, its head's deadline HEAD_SECONDS, until the block ends."""
    with expert_serving(("serve",), *args, before=SHORTER_HEAD) as port:
        yield port


def still_open(held: socket.socket) -> bool:
    """Whether the server still holds ``held`` open (nothing to read yet, no end of stream)."""
    held.setblocking(False)
    try:
        return held.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    finally:
        held.setblocking(True)


def get(port: str | int, path: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
    connection.request("GET", path)
    answer = connection.getresponse()
    answer.read()
    connection.close()
    return answer


def test_idle_and_slow_sockets_leave_other_clients_answered() -> None:
    with serving("--workers", "1") as port:
        assert get(port, "/api/estimate?model-size=8").status == 200        # the worker is up
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(guard.LIMITS.per_address + 4)]
        trickling = socket.create_connection(("127.0.0.1", port))
        trickling.sendall(b"GET / HTTP/1.1\r\n")         # a head that never ends
        try:
            answer = get(port, "/api/estimate?model-size=8")          # more idle sockets than one address may
            assert answer.status == 200                                 # hold requests: still answered,
            assert still_open(idle[-1]) and still_open(trickling)      # while they are held
            # the server's own answer to a malformed request carries the headers, once; so does the app's
            with socket.create_connection(("127.0.0.1", port), timeout=30) as bad:
                bad.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n")
                head = bad.recv(4096).decode("latin-1").lower()
            assert head.startswith("http/1.1 400") and head.count("content-security-policy:") == 1
            assert answer.headers.get_all("content-security-policy") == [web_app.HEADERS[0][1].decode()]
            # the idle and the trickling are closed by the server once the head's deadline passes
            with contextlib.suppress(OSError):
                trickling.sendall(b"X-Slow: 1\r\n")
            for held in (idle[0], trickling):
                held.settimeout(HEAD_SECONDS * 6)
                assert held.recv(100) == b""
        finally:
            for held in (*idle, trickling):
                held.close()


def test_a_named_host_is_served_and_another_refused() -> None:
    """The documented `--host 0.0.0.0 --allow-remote --allowed-host gpu.example.org`: each worker builds its app from
    the host names, "gpu.example.org:PORT" among them, whose colon hypercorn read as a mode
    (ValueError in every worker, nothing served; 2026-12-07)."""
    with serving("--workers", "1", "--host", "0.0.0.0", "--allow-remote", "--allowed-host", "gpu.example.org") as port:
        for host, status in ((f"gpu.example.org:{port}", 200), ("gpu.example.org", 200), ("other.example.org", 400)):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            connection.request("GET", "/api/estimate?model-size=8", headers={"Host": host})
            assert connection.getresponse().status == status, host
            connection.close()
