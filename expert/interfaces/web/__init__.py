"""`expert serve`: the consultation as a web page, with pictures and the
reasoning by click, and its JSON API (docs/web.md). Needs the web extra:
``pip install 'expert[web]'`` (Starlette and uvicorn).

- :mod:`.app`: the ASGI app (routes, headers, the language);
- :mod:`.form`: the form reader (the query string into the library's arguments);
- :mod:`.fields`: the form's fields as the template draws them;
- :mod:`.consult`: the calls to the library (advise, explain, estimate, launch);
- :mod:`.pictures`: the numbers of the SVG pictures;
- :mod:`.hosts`: where it listens and which Host headers it answers;
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
          allowed_hosts: tuple[str, ...] = ()) -> None:
    """Serve the page with uvicorn (ValueError when ``host`` is beyond the loopback without
    ``allow_remote`` and ``allowed_hosts``)."""
    import uvicorn

    from ..hosts import allowed

    hosts = allowed(host, port, allow_remote, allowed_hosts)
    uvicorn.run(create_app(hosts), host=host, port=port, log_level="warning", access_log=False,
                server_header=False, limit_concurrency=200, timeout_keep_alive=5, h11_max_incomplete_event_size=16384)
