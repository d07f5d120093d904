"""Where `expert serve` and `expert mcp` over HTTP listen, and which Host
headers they answer (docs/mcp.md, "Over HTTP"; docs/web.md): on the loopback, the
loopback's names with any port; beyond it only with ``allow_remote``, and
only the names given with ``allowed_hosts`` (a page that answers any Host
can be read by another site through DNS rebinding).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK = ("127.0.0.1", "localhost", "::1")
LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
_NAME = re.compile(r"[A-Za-z0-9.\-]+(:(\d{1,5}|\*))?|\[[0-9A-Fa-f:.]+\](:(\d{1,5}|\*))?")


def allowed(host: str, port: int, allow_remote: bool = False, allowed_hosts: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The Host headers a server on ``host``:``port`` answers (``name:*`` for any port); ValueError, saying
    what to do, when ``host`` is beyond the loopback without ``allow_remote`` and names."""
    names = [name for name in allowed_hosts if name]
    if host not in LOOPBACK:
        if not allow_remote:
            raise ValueError(f"--host {host}: listening beyond this machine needs --allow-remote, and --allowed-host "
                             f"with each name clients use to reach it (the Host header is checked).")
        if not names:
            raise ValueError(f"--allow-remote: give --allowed-host with each name clients use to reach {host} "
                             f"(for example --allowed-host gpu.example.org); no other Host header is accepted.")
    for name in names:
        if not _NAME.fullmatch(name):
            raise ValueError(f"--allowed-host: '{name[:60]}' is not a host name (with an optional :port).")
    hosts = list(LOOPBACK_HOSTS) if host in LOOPBACK else []
    for name in names:
        hosts += [name] if re.search(r":(\d+|\*)$", name) else [name, f"{name}:{port}"]
    return tuple(hosts)


def accepts(header: str, hosts: tuple[str, ...]) -> bool:
    """Whether a Host header is one of ``hosts`` (as :func:`allowed` writes them)."""
    header = header.strip().lower()
    name, _, port = header.rpartition(":") if re.search(r":\d+$", header) else (header, "", "")
    for entry in hosts:
        entry = entry.lower()
        if entry.endswith(":*"):
            if name == entry[:-2] or (not port and header == entry[:-2]):
                return True
        elif header == entry:
            return True
    return False


class HostCheck:
    """Answers 400 to a request whose Host header is not one of ``hosts``."""

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...]) -> None:
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = next((value.decode("latin-1") for key, value in scope["headers"] if key == b"host"), "")
            if not accepts(header, self.hosts):
                from starlette.responses import PlainTextResponse

                await PlainTextResponse("Invalid Host header", 400)(scope, receive, send)
                return
        await self.app(scope, receive, send)
