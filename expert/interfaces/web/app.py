"""The web page and its API as an ASGI app (Starlette).

- ``/``: the form and, once something is asked, the whole consultation
  (explain(): the options with their pictures, HOW, WHY NOT, WHAT IF,
  advice and warnings); the query string is the profile.
- ``/api/advise``, ``/api/explain``, ``/api/estimate``: the library's JSON,
  as ``--format json`` prints it; an error is HTTP 400 with
  ``{"error": {"field", "message"}}``.
- ``/launch.zip``: an option's launch files, made in memory.
- ``/static/``: the page's own CSS and script.

Stateless: nothing a request brings is kept. Every response, an error
included, carries a strict Content-Security-Policy (no inline script or
style), nosniff, a referrer policy and frame-ancestors 'none'; the Host
header is checked. In front of the routes, :class:`..guard.Guard` bounds
the requests a process holds and drops those whose client has gone.
"""

from __future__ import annotations

import json
import time
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ...errors import InputError
from ...escape import quoted
from ...i18n import WAY_IN, Localizer, accepted_language
from ...knowledge.bases import shipped_catalogs
from .. import guard
from ..hosts import LOOPBACK_HOSTS, HostCheck
from . import consult
from . import form as reader

if TYPE_CHECKING:
    import jinja2
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

HERE = Path(__file__).resolve().parent
THREADS = 1          # consultations computed at once, per process (the GIL runs one at a time anyway)
COMPUTED: ContextVar[float] = ContextVar("computed", default=0.0)    # seconds a request spent in the library
LANGS = ("en", "es")
HEADERS = [
    (b"content-security-policy", b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
                                 b"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class Timing:
    """Adds the request's Server-Timing; refuses a query string longer than :data:`form.MAX_QUERY`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        started = time.perf_counter()
        COMPUTED.set(0.0)

        async def with_timing(message: Message) -> None:
            if message["type"] == "http.response.start":
                # the server's time for the request (compute: in the library and the template; app: with the
                # wait for a thread), for bench/web_load.py and a browser's network panel
                took = (f"compute;dur={COMPUTED.get() * 1000:.1f}, "
                        f"app;dur={(time.perf_counter() - started) * 1000:.1f}").encode()
                message["headers"] = [*message.get("headers", []), (b"server-timing", took)]
            await send(message)

        if len(scope.get("query_string", b"")) > reader.MAX_QUERY:
            lang = language(Request(scope))
            text = Localizer(lang).gettext("The address is too long: at most %(most)s characters after the "
                                           "question mark.") % {"most": reader.MAX_QUERY}
            response: Response = (JSONResponse({"error": {"field": reader.FORM_ERROR, "message": text}}, 414)
                                  if scope["path"].startswith("/api/") else Response(text, 414, media_type="text/plain"))
            await response(scope, receive, with_timing)
            return
        await self.app(scope, receive, with_timing)


def refusal(scope: Scope, status: int, figure: float = 0) -> tuple[bytes, bytes]:
    """The text of a response the app gives before any route reads the request (:mod:`..guard`): 503 the
    queue is full, 429 one address holds its share of it (``figure``: the seconds to wait), 413 a body
    too large (the most bytes), 408 a body too slow (its seconds), 500 an error of ours; JSON
    ``{"error": {"field": null, "message"}}`` on the API, else plain text, in the request's language."""
    tr = Localizer(language(Request(scope)))
    _ = tr.gettext
    seconds = tr.number(figure, 0)
    texts = {
        503: _("The server is busy: every place in its queue is taken. Try again in %(seconds)s s.")
        % {"seconds": seconds},
        429: _("Too many requests from your address are waiting at once. Try again in %(seconds)s s.")
        % {"seconds": seconds},
        413: _("The request carries a body larger than %(most)s bytes; this server reads the address only.")
        % {"most": seconds},
        408: _("The request's body did not arrive within %(seconds)s s.") % {"seconds": tr.number(figure, 1)},
    }
    text = texts.get(status, _("Internal error; please report it."))
    if str(scope.get("path", "")).startswith("/api/"):
        return json.dumps({"error": {"field": None, "message": text}}).encode(), b"application/json"
    return text.encode(), b"text/plain; charset=utf-8"


def internal_error(request: Request, error: Exception) -> Response:
    """A 500 as the other errors look (Starlette's handler for any exception; the guard logs it)."""
    body, kind = refusal(request.scope, 500)
    return Response(body, 500, media_type=kind.decode())


_LIMITER: list[Any] = []     # one CapacityLimiter, made in the event loop on the first request


async def run_in_threadpool(function: Any, *args: Any) -> Any:
    """``function(*args)`` in a worker thread, at most :data:`THREADS` at once: the library keeps an engine per
    thread, so a bounded pool keeps memory flat however many visitors come (CPU-bound work gains nothing from
    more threads under the GIL; more processes scale it: docs/web.md). The time it computed is added to the
    response's Server-Timing (``compute``)."""
    import anyio

    if not _LIMITER:
        _LIMITER.append(anyio.CapacityLimiter(THREADS))

    def timed() -> tuple[Any, float]:
        started = time.perf_counter()
        way_in = WAY_IN.set("web")      # an answer names the page's fields, never a flag (labels.toml [how_web])
        try:
            return function(*args), time.perf_counter() - started
        finally:
            WAY_IN.reset(way_in)

    value, took = await anyio.to_thread.run_sync(timed, limiter=_LIMITER[0])
    COMPUTED.set(COMPUTED.get() + took)
    return value


def language(request: Request) -> str:
    """The page's language: ``lang`` in the query when it is one we speak, else Accept-Language's first, else English."""
    asked = request.query_params.get("lang", "").strip().lower()[:2]
    if asked in LANGS:
        return asked
    return accepted_language(request.headers.get("accept-language", "")) or "en"


@cache
def templates(lang: str) -> jinja2.Environment:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True,
                             undefined=jinja2.StrictUndefined, extensions=["jinja2.ext.i18n"],
                             trim_blocks=True, lstrip_blocks=True)
    # the i18n extension adds the method at run time; jinja2's types do not declare it
    env.install_gettext_translations(Localizer(lang).translations, newstyle=True)  # type: ignore[attr-defined]
    env.filters["query"] = lambda pairs: "?" + urlencode(pairs)
    return env


def _read(request: Request, lang: str, others: tuple[str, ...] = reader.PAGE_KEYS) -> reader.Form:
    return reader.read(request.query_params.multi_items(), lang, shipped_catalogs(), others)


async def page(request: Request) -> Response:
    pairs = request.query_params.multi_items()
    kept = reader.given(pairs)
    if len(kept) < len(pairs):      # the plain form sends its empty fields too: the address without them
        return RedirectResponse("/" + ("?" + urlencode(kept) if kept else ""), 303)
    lang = language(request)
    form = _read(request, lang)
    if "lang" in form.values and form.values["lang"].strip().lower()[:2] not in LANGS:
        tr = Localizer(lang)
        form.errors.setdefault("lang", tr.gettext("%(field)s: '%(value)s' is not accepted; %(accepted)s.") % {
            "field": "lang", "value": quoted(form.values["lang"]),
            "accepted": tr.gettext("choose %(accepted)s") % {"accepted": tr.list(LANGS, style="or")}})
    form.values.pop("lang", None)

    def answer() -> tuple[str, int]:
        result = None
        if form.asked and not form.errors:
            try:
                result = consult.page(form)
            except InputError as error:
                form.errors[reader.key_of(error.field)] = str(error)
        return render_page(form, result, lang), 400 if form.errors else 200

    text, status = await run_in_threadpool(answer)
    return HTMLResponse(text, status)


def render_page(form: reader.Form, result: consult.Page | None, lang: str) -> str:
    from ..api import knowledge_base
    from .fields import fields, suggestions

    kb = knowledge_base()
    shown = reader.Form(lang, result.values) if result is not None else form     # a WHAT IF's change applied
    drawn = fields(kb, Localizer(lang), shown.values, form.errors)
    # an error of a key the form has no field for (why-not, what-if, lang) stands beside the whole form
    beside_form = [message for key, message in form.errors.items() if key not in {f.key for f in drawn}]
    other = "es" if lang == "en" else "en"
    return str(templates(lang).get_template("page.html.j2").render(
        lang=lang, other_lang=other, values=shown.values, errors=form.errors, page=result, fields=drawn,
        suggestions=suggestions(), query=shown.query() if result is not None else form.query(),
        link=lambda changes: [*shown.query(**changes), ("lang", lang)],
        with_change=lambda change: reader.with_change(shown, change), form_error=" ".join(beside_form)))


def _api(run: Any, key_of: Any = reader.key_of) -> Any:
    """An endpoint of the API: ``run(request, lang)``'s JSON, or 400 with the error and the key it names
    (``key_of``: the key of the address for the library's field)."""
    async def endpoint(request: Request) -> Response:
        lang = language(request)
        try:
            text = await run_in_threadpool(run, request, lang)
        except InputError as error:
            return JSONResponse({"error": {"field": key_of(error.field), "message": str(error)}}, 400)
        return Response(text, media_type="application/json")

    return endpoint


def _profile_json(call: Any, others: tuple[str, ...]) -> Any:
    def run(request: Request, lang: str) -> str:
        form = _read(request, lang, others)
        form.values.pop("lang", None)
        if form.errors:
            key, message = next(iter(form.errors.items()))
            raise InputError(key, message)
        return str(call(form))

    return run


def _estimate(request: Request, lang: str) -> str:
    return consult.estimate_json(request.query_params.multi_items(), lang)


async def launch_zip(request: Request) -> Response:
    lang = language(request)
    form = _read(request, lang, reader.LAUNCH_KEYS)
    form.values.pop("lang", None)
    if form.errors:
        return Response(next(iter(form.errors.values())), 400, media_type="text/plain; charset=utf-8")
    try:
        name, data = await run_in_threadpool(consult.launch_zip, form)
    except InputError as error:
        return Response(str(error), 400, media_type="text/plain; charset=utf-8")
    return Response(data, media_type="application/zip",
                    headers={"content-disposition": f'attachment; filename="{name}"'})


def create_app(allowed_hosts: tuple[str, ...] = LOOPBACK_HOSTS, headers: bool = True,
               limits: guard.Limits = guard.LIMITS) -> ASGIApp:
    """The app; ``allowed_hosts``: the Host headers it answers (the loopback's by default); ``headers``:
    whether the app adds :data:`HEADERS` (False where the server adds them to every answer: `expert serve`);
    ``limits``: what it admits at once (:class:`..guard.Limits`)."""
    routes = [
        Route("/", page),
        Route("/api/advise", _api(_profile_json(consult.advise_json, reader.ADVISE_KEYS))),
        Route("/api/explain", _api(_profile_json(consult.explain_json, reader.EXPLAIN_KEYS))),
        Route("/api/estimate", _api(_estimate, consult.estimate_key)),
        Route("/launch.zip", launch_zip),
        Route("/favicon.ico", lambda request: Response(status_code=204)),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    middleware = [Middleware(Timing), Middleware(HostCheck, hosts=tuple(allowed_hosts))]
    app = Starlette(routes=routes, middleware=middleware, exception_handlers={Exception: internal_error})
    return guard.SecurityHeaders(guard.Guard(app, refusal, limits), HEADERS if headers else [],
                                 lambda scope: refusal(scope, 500))


def served(allowed_hosts: tuple[str, ...], **limits: Any) -> ASGIApp:
    """The app as `expert serve`'s workers build it (:func:`..web.application_path`): the server adds
    the headers (:mod:`..serving`); ``limits``: the serving process's :class:`..guard.Limits`."""
    return create_app(allowed_hosts, headers=False, limits=guard.Limits(**limits))
