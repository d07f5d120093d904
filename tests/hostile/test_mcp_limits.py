"""Hostile round four (issue 48), item 4: `expert mcp` answers every request
over stdio (an oversized number is an error, not a dropped line), echoes
no unbounded input, and over HTTP keeps a bounded number of sessions per
client address, forgotten after minutes unused."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
from typing import Any

import pytest

pytest.importorskip("mcp")

from expert.interfaces.mcp import limits  # noqa: E402

CALL = '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"advise","arguments":{"model_size_b":%s}}}'


def test_a_number_too_long_for_any_field_becomes_a_refusal_with_its_id() -> None:
    refused = json.loads(limits.screen(CALL % (7, "9" * 5000)))
    assert refused["id"] == 7 and refused["method"] == limits.REFUSED
    assert "more than 100 digits" in refused["params"]["reason"]
    assert limits.screen(CALL % ('"x"', "-" + "1" * 101)).startswith('{"jsonrpc": "2.0", "id": "x"')


@pytest.mark.parametrize("line", [CALL % (1, 8), CALL % (2, "9" * 100), CALL % (3, "1e400"), "not json " + "9" * 200,
                                  '{"jsonrpc":"2.0","id":4,"method":"ping","params":{"note":"' + "9" * 300 + '"}}'])
def test_every_other_line_is_left_to_the_sdk(line: str) -> None:
    assert limits.screen(line) == line


def test_a_notification_with_a_number_too_long_is_dropped_and_a_long_line_refused_by_its_id() -> None:
    assert limits.screen('{"jsonrpc":"2.0","method":"notifications/x","params":{"n":' + "9" * 500 + "}}") == ""
    long_line = '{"jsonrpc":"2.0","id":12,"method":"' + "x" * (limits.MAX_LINE + 10) + '"}'
    refused = json.loads(limits.screen(long_line))
    assert refused["id"] == 12 and "longer than" in refused["params"]["reason"]


def test_the_pump_reads_a_long_line_a_bounded_piece_at_a_time() -> None:
    class Counting(io.StringIO):
        most = 0

        def readline(self, size: int | None = -1) -> str:      # type: ignore[override]
            line = super().readline(size)
            Counting.most = max(Counting.most, len(line))
            return line

    long_line = '{"jsonrpc":"2.0","id":3,"method":"' + "x" * (3 * limits.MAX_LINE) + '"}\n'
    source = Counting(long_line + CALL % (4, 8) + "\n")
    sink = io.StringIO()
    sink.close = lambda: None        # type: ignore[method-assign]  # read it after the pump ends
    limits.pump(source, sink)
    first, second = sink.getvalue().splitlines()
    assert json.loads(first)["id"] == 3 and json.loads(first)["method"] == limits.REFUSED
    assert second == CALL % (4, 8)
    assert Counting.most <= limits.MAX_LINE + 1


def test_over_stdio_every_request_is_answered_and_nothing_long_is_echoed() -> None:
    server = subprocess.Popen([sys.executable, "-m", "expert", "mcp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert server.stdin is not None and server.stdout is not None

    def ask(line: str) -> dict[str, Any]:
        server.stdin.write(line.encode() + b"\n")       # type: ignore[union-attr]
        server.stdin.flush()                            # type: ignore[union-attr]
        answer = server.stdout.readline()               # type: ignore[union-attr]
        assert len(answer) < 20_000
        return dict(json.loads(answer))

    try:
        ask(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}))
        server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        big = ask(CALL % (2, "9" * 5000))
        assert big["id"] == 2 and big["error"]["code"] == limits.INVALID_PARAMS
        method = ask(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "m" * 2_000_000}))
        assert method["id"] == 3 and "m" * 200 not in json.dumps(method)
        name = ask(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "z" * 5000}))
        assert name["error"]["code"] == limits.METHOD_NOT_FOUND and len(name["error"]["message"]) < 200
        tool = ask(json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                               "params": {"name": "t" * 5000, "arguments": {}}}))
        assert tool["id"] == 5 and len(json.dumps(tool)) < 400
        after = ask(CALL % (6, 8))          # and the server goes on answering
        assert after["id"] == 6 and not after["result"].get("isError")
    finally:
        server.stdin.close()
        server.wait(timeout=30)
        server.stdout.close()


class FakeSDK:
    """An app that gives each POST without a session id a new one, as the SDK's initialize does."""

    def __init__(self) -> None:
        self.made = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"application/json")]
        if scope["method"] == "POST" and not any(name == b"mcp-session-id" for name, _ in scope["headers"]):
            self.made += 1
            headers.append((b"mcp-session-id", b"s%d" % self.made))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}"})


def request(app: Any, address: str, method: str = "POST", session: str | None = None) -> tuple[int, dict[bytes, bytes]]:
    scope = {"type": "http", "method": method, "path": "/mcp", "client": (address, 1),
             "headers": [(b"mcp-session-id", session.encode())] if session else []}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], dict(sent[0]["headers"])


def test_one_address_keeps_a_bounded_number_of_sessions_forgotten_once_idle() -> None:
    now = [0.0]
    sdk = FakeSDK()
    app = limits.SessionBound(sdk, per_client=3, idle_seconds=600, clock=lambda: now[0])
    assert [request(app, "10.0.0.1")[0] for _ in range(3)] == [200, 200, 200]
    status, headers = request(app, "10.0.0.1")
    assert status == 429 and int(headers[b"retry-after"]) > 0
    assert request(app, "10.0.0.2")[0] == 200                  # another client is not locked out
    assert request(app, "10.0.0.1", "DELETE", "s1")[0] == 200   # a session ended frees its place
    assert request(app, "10.0.0.1")[0] == 200
    now[0] = 300.0
    assert request(app, "10.0.0.1", "POST", "s2")[0] == 200     # used: kept
    now[0] = 700.0                                              # s3 and s5 unused for 700 s: forgotten
    assert len(app.live("10.0.0.1")) == 1
    assert [request(app, "10.0.0.1")[0] for _ in range(3)] == [200, 200, 429]
    assert sdk.made == 7


# --- refusals before any tool's lang is read: the client's language (docs/mcp.md, "Limits") -------------

def refused(app: Any, accept: str | None, receive: Any) -> tuple[int, dict[bytes, bytes], str]:
    scope = {"type": "http", "method": "POST", "path": "/mcp", "client": ("10.0.0.3", 1),
             "headers": [(b"accept-language", accept.encode())] if accept else []}
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], dict(sent[0]["headers"]), json.loads(sent[1]["body"]).get("error", {}).get("message")


async def too_large() -> dict[str, Any]:
    return {"type": "http.request", "body": b"x" * (limits.MAX_LINE + 1), "more_body": True}


async def never_sent() -> dict[str, Any]:
    await asyncio.Event().wait()
    return {}


@pytest.mark.parametrize("accept, server, lang", [
    ("es-ES,es;q=0.9,en;q=0.8", "en", "es"), ("fr, en;q=0.5", "es", "en"),
    (None, "es", "es"), ("fr", "en", "en"), (None, "fr", "en"),       # EXPERT_LANG we do not speak: English
])
def test_the_body_refusals_speak_the_clients_language(accept: str | None, server: str, lang: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Accept-Language when it names a language of ours, else the server's (EXPERT_LANG): the body is
    # unread, so no tool's lang can say it. Until 2026-12-07 the 408 and 413 were English only.
    monkeypatch.setenv("EXPERT_LANG", server)
    app = limits.BodyDeadline(FakeSDK(), seconds=0.2)
    large = refused(app, accept, too_large)
    slow = refused(app, accept, never_sent)
    assert (large[0], slow[0]) == (413, 408)
    assert large[1][b"content-language"] == slow[1][b"content-language"] == lang.encode()
    assert large[1][b"connection"] == b"close"
    assert (large[2], slow[2]) == {
        "en": ("The request's body is longer than 1,048,576 bytes.",
               "The request's body did not arrive within 0.2 s."),
        "es": ("El cuerpo de la petición ocupa más de 1.048.576 bytes.",
               "El cuerpo de la petición no llegó en 0,2 s.")}[lang]


def test_too_many_sessions_is_said_in_the_clients_language_too() -> None:
    app = limits.SessionBound(FakeSDK(), per_client=1)
    refused(app, None, never_sent)        # (answered by the SDK: the one session this address may keep)
    status, headers, words = refused(app, "es", never_sent)
    assert status == 429 and headers[b"content-language"] == b"es"
    assert words.startswith("Demasiadas sesiones desde esta dirección (1): termina una (DELETE) o espera ")
