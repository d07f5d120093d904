"""`expert mcp` against hostile clients (issue 48, item 4; docs/mcp.md, "Limits").

- Over stdio every request gets an answer: :func:`screen` reads each line
  before the SDK does. A number of more than :data:`MAX_DIGITS` digits
  (which the SDK's JSON reader cannot take: it dropped the line, and the
  client waited forever) or a line longer than :data:`MAX_LINE` characters
  becomes a request of the method :data:`REFUSED`, with the same id, which
  :func:`refuse` (an SDK middleware) answers with an error that says why.
- No error echoes unbounded input: a method or a tool name longer than
  :data:`MAX_NAME` characters is refused with the name cut short.
- Over HTTP, :class:`SessionBound` keeps at most :data:`PER_CLIENT`
  sessions of one client address alive; a session unused for
  :data:`IDLE_SECONDS` is forgotten (and the SDK ends it); :class:`BodyDeadline`
  reads a request's body within the web guard's deadline before the SDK does.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Awaitable, Callable
from typing import IO, TYPE_CHECKING, Any

from ...errors import InputError
from ...escape import quoted
from ...i18n import Lang, Localizer, accepted_language, resolve_lang

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_DIGITS = 100              # of a number (a profile's largest is 10 digits; the SDK's reader fails at 4,300)
MAX_LINE = 1024 * 1024        # characters of one message (the largest tool call is under 10 KB)
MAX_NAME = 100                # characters of a method or tool name quoted back (the longest is 19)
PER_CLIENT = 16               # HTTP sessions one client address keeps alive at once
IDLE_SECONDS = 600            # a session unused this long is ended (the SDK's default was 30 minutes)
REFUSED = "expert/refused"    # the method a refused line becomes (answered by refuse())
INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32600, -32601, -32602   # JSON-RPC 2.0's codes
_ID = re.compile(r'"id"\s*:\s*("(?:[^"\\]|\\.){0,100}"|-?\d{1,18})')


class _TooLong(int):
    """A number of more than MAX_DIGITS digits, read as a marker (never converted)."""


def _number(text: str) -> int:
    return _TooLong(len(text)) if len(text.lstrip("-")) > MAX_DIGITS else int(text)


def _has_too_long(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _TooLong):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def screen(line: str) -> str:
    """``line`` as the SDK should read it: itself, or a request of :data:`REFUSED` with the line's id and
    why it was refused (a number too long for any field, a line too long). A line that is not JSON, or
    has no id, is left to the SDK (it answers what it can parse)."""
    if len(line) > MAX_LINE:     # its id, if it comes early, is all that is read of it
        found = _ID.search(line[:65536])
        return _refusal(json.loads(found.group(1)), f"the message is longer than {MAX_LINE:,} characters") \
            if found else ""
    if len(line) <= MAX_DIGITS or not re.search(r"\d{%d}" % (MAX_DIGITS + 1), line):
        return line      # no number can be too long
    try:
        message = json.loads(line, parse_int=_number)
    except ValueError:
        return line
    if not isinstance(message, dict) or not _has_too_long(message.get("params")):
        return line
    if "id" not in message or isinstance(message["id"], _TooLong):
        return ""        # a notification: nothing to answer, nothing to run
    return _refusal(message["id"], f"a number has more than {MAX_DIGITS} digits; no field takes one")


def pump(source: IO[str], sink: IO[str]) -> None:
    """Copies ``source``'s lines to ``sink`` as :func:`screen` has them, reading at most :data:`MAX_LINE`
    characters at a time (a longer line is refused by its start, the rest read and dropped); closes
    ``sink`` at the end of ``source`` (the SDK then ends)."""
    with sink:
        while line := source.readline(MAX_LINE + 1):
            if len(line) > MAX_LINE and not line.endswith("\n"):
                rest = line
                while rest and not rest.endswith("\n"):
                    rest = source.readline(MAX_LINE)
            screened = screen(line)
            if screened:
                sink.write(screened if screened.endswith("\n") else screened + "\n")
                sink.flush()


def screened_stdin() -> threading.Thread:
    """Puts :func:`pump` between the process's standard input and whoever reads file descriptor 0
    next (the SDK's stdio transport): fd 0 becomes a pipe that a daemon thread fills."""
    import os

    original = os.dup(0)
    reader, writer = os.pipe()
    os.dup2(reader, 0)
    os.close(reader)
    source = open(original, encoding="utf-8", errors="replace", newline="")       # noqa: SIM115 - pump closes
    sink = open(writer, "w", encoding="utf-8", newline="")                        # noqa: SIM115 - pump closes
    thread = threading.Thread(target=pump, args=(source, sink), name="expert-mcp-stdin", daemon=True)
    thread.start()
    return thread


def _refusal(request_id: Any, reason: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": REFUSED, "params": {"reason": reason}}) + "\n"


def short(name: Any) -> str:
    """A name as an error may quote it: at most :data:`MAX_NAME` characters, made safe (escape.quoted)."""
    return quoted(str(name)[:MAX_NAME] + ("…" if len(str(name)) > MAX_NAME else ""))


async def refuse(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """The SDK middleware: answers :data:`REFUSED` with its reason; a method or tool name too long to quote
    is refused without being echoed whole."""
    from mcp.shared.exceptions import MCPError

    method = ctx.method
    if method == REFUSED and ctx.request_id is not None:
        reason = (ctx.params or {}).get("reason", "")
        raise MCPError(INVALID_PARAMS if "number" in reason else INVALID_REQUEST, f"Invalid request: {reason}.")
    if len(method) > MAX_NAME:
        raise MCPError(METHOD_NOT_FOUND, f"Method not found: {short(method)}")
    if method == "tools/call":
        name = (ctx.params or {}).get("name")
        if isinstance(name, str) and len(name) > MAX_NAME:
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {short(name)}")
    return await call_next(ctx)


def language(scope: Scope) -> Lang:
    """The language of a refusal over HTTP, given before any tool's ``lang`` can be read: the request's
    Accept-Language where it names one of ours, else the server's (``EXPERT_LANG``, then the locale;
    English when that is not one of ours)."""
    header = next((value.decode("latin-1") for name, value in scope.get("headers", [])
                   if name.lower() == b"accept-language"), "")
    try:
        return accepted_language(header) or resolve_lang()
    except InputError:          # an EXPERT_LANG we do not speak: each tool call says so; a refusal is in English
        return "en"


def refusal(scope: Scope, status: int, words: str, extra: list[tuple[bytes, bytes]]) -> tuple[Message, Message]:
    """A JSON-RPC error as an HTTP response of ``status``, in :func:`language`'s language (Content-Language)."""
    data = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": words}},
                      ensure_ascii=False).encode()
    return ({"type": "http.response.start", "status": status, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                (b"content-language", language(scope).encode()), *extra]},
            {"type": "http.response.body", "body": data})


class SessionBound:
    """ASGI middleware before the SDK's streamable HTTP app: a client address may keep at most
    ``per_client`` sessions alive; a new one beyond is refused (HTTP 429, Retry-After) until one ends
    (DELETE) or stays unused for ``idle_seconds``."""

    def __init__(self, app: ASGIApp, per_client: int = PER_CLIENT, idle_seconds: float = IDLE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.app, self.per_client, self.idle_seconds, self.clock = app, per_client, idle_seconds, clock
        self.sessions: dict[str, dict[str, float]] = {}     # address -> session id -> last used

    def live(self, address: str) -> dict[str, float]:
        now = self.clock()
        sessions = {sid: used for sid, used in self.sessions.get(address, {}).items()
                    if now - used < self.idle_seconds}
        if sessions:
            self.sessions[address] = sessions
        else:
            self.sessions.pop(address, None)
        return sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        address = str((scope.get("client") or ("unknown",))[0])
        session = next((value.decode("latin-1")[:200] for name, value in scope["headers"]
                        if name == b"mcp-session-id"), None)
        live = self.live(address)
        if session is None and scope["method"] == "POST":        # an initialize: a new session
            if len(live) >= self.per_client:
                oldest = min(live.values())
                wait = max(1, int(self.idle_seconds - (self.clock() - oldest)) + 1)
                tr = Localizer(language(scope))
                words = tr.gettext("Too many sessions from this address (%(most)s): end one (DELETE) or wait "
                                   "%(seconds)s s.") % {"most": self.per_client, "seconds": wait}
                for message in refusal(scope, 429, words, [(b"retry-after", str(wait).encode())]):
                    await send(message)
                return

            async def noting(message: Message) -> None:
                if message["type"] == "http.response.start":
                    for name, value in message.get("headers", []):
                        if name.lower() == b"mcp-session-id":
                            self.sessions.setdefault(address, {})[value.decode("latin-1")[:200]] = self.clock()
                await send(message)

            await self.app(scope, receive, noting)
            return
        if session is not None and session in live:
            if scope["method"] == "DELETE":
                del self.sessions[address][session]
            else:
                self.sessions[address][session] = self.clock()
        await self.app(scope, receive, send)


class BodyDeadline:
    """ASGI middleware before :class:`SessionBound`: a request's body is read whole, at most
    :data:`MAX_LINE` bytes within ``seconds`` of its head (the web guard's body_seconds, 10 s), before the
    SDK reads it; beyond, 413 or 408 and the connection closed. The SDK waits for a body with no deadline
    of its own, and the server's (hypercorn's) runs only until the head is read: a client that announced
    a body and sent part of it held its connection for ever (round five)."""

    def __init__(self, app: ASGIApp, seconds: float | None = None) -> None:
        from ..guard import LIMITS

        self.app, self.seconds = app, LIMITS.body_seconds if seconds is None else seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from ..guard import read_body

        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = await read_body(receive, MAX_LINE, self.seconds)
        if body is None:
            return
        if isinstance(body, int):
            tr = Localizer(language(scope))
            words = (tr.gettext("The request's body did not arrive within %(seconds)s s.")
                     % {"seconds": tr.number(self.seconds, 1)} if body == 408 else
                     tr.gettext("The request's body is longer than %(most)s bytes.") % {"most": tr.number(MAX_LINE, 0)})
            for message in refusal(scope, body, words, [(b"connection", b"close")]):
                await send(message)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
