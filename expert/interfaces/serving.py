"""The server of `expert serve` (issue 48; docs/web.md, "Limits a deployer
can rely on"): hypercorn, with a deadline for a request's head (its
keep-alive timeout runs from a connection's opening until the head is read,
and between requests), a bound on a head's size,
no bound on the number of connections (so idle ones cannot lock others
out: they are closed once their deadline passes), ``workers`` processes,
and the security headers on the server's own answers too (a malformed
request's 400). What each process admits is :mod:`.guard`'s.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from hypercorn.config import Config
from hypercorn.run import run as hypercorn_run

from .guard import LIMITS, Limits


class ServerConfig(Config):
    """hypercorn's configuration, which adds ``extra_headers`` to the server's own answers (a malformed
    request's 400) as well as to the app's. Module-level: the workers receive it pickled."""

    def __init__(self, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
        super().__init__()
        self.extra_headers = list(headers)

    def response_headers(self, protocol: str) -> list[tuple[bytes, bytes]]:
        return [*super().response_headers(protocol), *self.extra_headers]


def cores() -> int:
    """The default number of worker processes: the cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def config(application_path: str, host: str, port: int, workers: int,
           headers: Sequence[tuple[bytes, bytes]] = (), limits: Limits = LIMITS) -> ServerConfig:
    """The configuration for ``application_path`` (``module:call()``, imported by each worker process)."""
    settings = ServerConfig(headers)
    settings.application_path = application_path
    settings.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    settings.workers = workers
    settings.keep_alive_timeout = limits.head_seconds
    # no read_timeout: hypercorn's runs while the app computes too, and would close a connection whose
    # request waits in the queue (a body's time is the guard's body_seconds)
    settings.read_timeout = None
    settings.h11_max_incomplete_size = limits.head_bytes
    settings.include_server_header = False
    settings.accesslog = None
    settings.errorlog = "-"
    settings.loglevel = "WARNING"
    settings.backlog = 1024
    settings.graceful_timeout = 5.0
    return settings


def run(settings: ServerConfig) -> None:
    """Serve until interrupted (SIGINT, SIGTERM), with ``settings.workers`` processes (0: in this one)."""
    hypercorn_run(settings)
