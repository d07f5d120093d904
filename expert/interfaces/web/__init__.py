"""`expert serve`: the consultation as a web page, with pictures and the
reasoning by click, and its JSON API (docs/web.md). Needs the web extra:
``pip install 'expert[web]'`` (Starlette and hypercorn).

- :mod:`.app`: the ASGI app (routes, headers, the language);
- :mod:`.form`: the form reader (the query string into the library's arguments);
- :mod:`.fields`: the form's fields as the template draws them;
- :mod:`.consult`: the calls to the library (advise, explain, estimate, launch);
- :mod:`.pictures`: the numbers of the SVG pictures;
- :mod:`..hosts`: where it listens and which Host headers it answers;
- :mod:`..guard`, :mod:`..serving`: what a process admits, and the server;
- ``templates/``, ``static/``: the page, its CSS and its script.
"""

from __future__ import annotations

from typing import Any


def create_app(allowed_hosts: tuple[str, ...] | None = None) -> Any:
    """The ASGI app (Starlette); ``allowed_hosts``: the Host headers it answers (default: the loopback's)."""
    from ..hosts import LOOPBACK_HOSTS
    from .app import create_app as create

    return create(allowed_hosts if allowed_hosts is not None else LOOPBACK_HOSTS)


def serve(host: str = "127.0.0.1", port: int = 8000, allow_remote: bool = False,
          allowed_hosts: tuple[str, ...] = (), workers: int | None = None) -> None:
    """Serve the page with hypercorn and ``workers`` processes (default: the machine's cores), until
    interrupted (ValueError when ``host`` is beyond the loopback without ``allow_remote`` and
    ``allowed_hosts``). The limits are those of :mod:`..guard` and :mod:`..serving` (docs/web.md)."""
    from .. import guard
    from ..hosts import allowed
    from ..serving import config, cores, run
    from .app import HEADERS

    hosts = allowed(host, port, allow_remote, allowed_hosts)
    limits = guard.LIMITS    # read now, not at import: a test or a deployer may have set shorter ones
    run(config(application_path(hosts, limits), host, port, workers or cores(), HEADERS, limits))


def application_path(hosts: tuple[str, ...], limits: Any) -> str:
    """What each worker process evaluates to build its app: ``served()`` with the checked host names
    and every figure of ``limits`` (:class:`..guard.Limits`), written as Python literals. hypercorn
    splits the path at its colons (exactly two read as ``mode:module:call``), so a colon inside a host
    name ("gpu.example.org:8000", "[::1]:*") is written ``\\x3a``: the same string once evaluated."""
    import dataclasses

    figures = "".join(f", {name}={value!r}" for name, value in dataclasses.asdict(limits).items())
    return "expert.interfaces.web.app:served(" + repr(hosts).replace(":", "\\x3a") + figures + ")"
