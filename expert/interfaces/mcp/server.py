"""`expert mcp`: the library's tools over the Model Context Protocol.

Built on the ``mcp`` SDK (``pip install 'expert[mcp]'``). The tools and their
parameter schemas are those of :func:`expert.interfaces.schema.tool_specs` (the same as
``expert schema --what tools``); each tool calls the library. A bad value is a
tool error (``is_error``) whose text names the field, in the language of the
call's ``lang``. A consultation's state stays in this process, in a bounded
store keyed by an opaque id; the client keeps only the id.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent

from ...application import explain
from ...errors import InputError, KnowledgeBaseError
from ...escape import markdown
from ...explanation.render import render_models
from ...i18n import SUPPORTED, WAY_IN, CatalogMissing, Localizer, resolve_lang
from ...input.arguments import check_bounds
from ...input.profile import shown
from ...input.settings import NAMES as SETTINGS
from ...knowledge import PROFILE_FIELDS
from ...knowledge.bases import knowledge_base
from ...version import __version__
from ..api import advise, estimate
from ..consultation import Consultation
from ..hosts import allowed
from ..schema import check_arguments, tool_specs
from . import limits

INSTRUCTIONS = (
    "expert recommends GPUs for fine-tuning a large language model and explains why, citing a practical "
    "guide. Call advise with what the person told you (every field is optional; the answer lists what was "
    "assumed), or hold a consultation (consultation_start, then consultation_answer with the person's own "
    "words) that asks only the questions that matter. explain says how, why not a card, and what if.")


# Who a tool call came from (set by each tool for the length of the call):
# consultations are kept per caller. See _caller_of.
_CALLER: ContextVar[str | None] = ContextVar("expert_mcp_caller", default=None)
# Over HTTP: at most so many client sessions at once (ended after
# limits.IDLE_SECONDS unused; limits.PER_CLIENT of one address) and callers
# remembered, each with at most PER_SESSION consultations.
MAX_SESSIONS = 1000
PER_SESSION = 50


class ConsultationStore:
    """Consultations by opaque id, kept per caller (a client session over
    HTTP): at most ``size`` for each caller, its least recently used
    forgotten first, so that one client can neither evict another's nor read
    them; at most ``callers`` callers, the least recently active forgotten
    first. Each holds the consultation's saved state (a few hundred bytes,
    checked again when it is read back). Calls from no particular caller
    (stdio, where the process serves one client; the library) share one
    store of ``size``."""

    def __init__(self, size: int = PER_SESSION, callers: int = MAX_SESSIONS) -> None:
        self.size, self.callers = size, callers
        self._callers: OrderedDict[str, OrderedDict[str, dict[str, Any]]] = OrderedDict()
        self._local: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def _states(self) -> OrderedDict[str, dict[str, Any]]:
        caller = _CALLER.get()
        if caller is None:
            return self._local
        states = self._callers.get(caller)
        if states is None:
            states = self._callers[caller] = OrderedDict()
            while len(self._callers) > self.callers:
                self._callers.popitem(last=False)
        self._callers.move_to_end(caller)
        return states

    def put(self, consultation: Consultation, key: str | None = None) -> str:
        key = key or secrets.token_urlsafe(16)
        with self._lock:
            states = self._states()
            states[key] = consultation.to_dict()
            states.move_to_end(key)
            while len(states) > self.size:
                states.popitem(last=False)
        return key

    def get(self, key: Any, lang: str | None) -> Consultation:
        with self._lock:
            states = self._states()
            state = states.get(key) if isinstance(key, str) else None
            if state is not None:
                states.move_to_end(key)
        if state is None:
            tr = Localizer(resolve_lang(lang))
            raise InputError("consultation_id", tr.gettext(
                "consultation_id: '%(value)s' is not a consultation of this server (it may have been "
                "forgotten); start one with consultation_start.") % {"value": shown(key)})
        return Consultation.from_dict(state)

    def __len__(self) -> int:
        """The consultations kept for the current caller."""
        with self._lock:
            return len(self._states())


def _question(consultation: Consultation, key: str, told: Any = None) -> tuple[dict[str, Any], str]:
    question = consultation.next_question()
    data = {"consultation_id": key, "done": question is None,
            "question": question.to_dict() if question is not None else None,
            "answered": {name: consultation.answers[name] for name in consultation.history}}
    lines = []
    if told is not None:
        data["understood"] = told.to_dict()
        lines.append(markdown(told.text))
    tr = Localizer(consultation.lang)
    if question is None:
        lines.append(tr.gettext("The consultation is complete: consultation_result gives the recommendation."))
    else:
        lines.append(f"**{markdown(question.text)}**" + (f" {markdown(question.hint)}" if question.hint else ""))
        if question.choices:
            lines.append(" · ".join(markdown(str(choice["label"])) for choice in question.choices))
    return data, "\n\n".join(lines) + "\n"


def _profile(arguments: dict[str, Any]) -> dict[str, Any]:
    return {name: arguments[name] for name in PROFILE_FIELDS if arguments.get(name) is not None}


def _settings(arguments: dict[str, Any]) -> dict[str, Any]:
    """The settings the person fixed (seq_len, batch, lora_rank, checkpointing), for advise() and explain()."""
    return {name: arguments[name] for name in SETTINGS if arguments.get(name) is not None}


Work = Callable[[dict[str, Any]], tuple[dict[str, Any], str]]
_LAUNCH_ARGUMENTS = {"launch_option": "option", "launch_model": "model"}


def handlers(store: ConsultationStore) -> dict[str, Work]:
    """Each tool's work, from its checked arguments (named as in its schema):
    the structured content (JSON) and the text content (a markdown summary)."""

    def do_advise(a: dict[str, Any]) -> tuple[dict[str, Any], str]:
        detail = a.get("detail") or "summary"
        result = advise(lang=a.get("lang"), prices=a.get("prices"), **_profile(a), **_settings(a))
        return result.to_dict(detail), result.render("markdown", detail="summary")

    def do_explain(a: dict[str, Any]) -> tuple[dict[str, Any], str]:
        explanation = explain(why_not=a.get("why_not"), what_if=a.get("what_if"), lang=a.get("lang"),
                              prices=a.get("prices"), detail=a.get("detail") or "summary", **_profile(a),
                              **_settings(a))
        data = explanation.to_dict()
        data.pop("trace", None)     # the steps of `how` already cite the rules; the trace is for programs
        summary = explanation if explanation.detail == "summary" else replace(explanation, detail="summary")
        return data, summary.render("markdown")

    def do_launch(a: dict[str, Any]) -> tuple[dict[str, Any], str]:
        # The files' contents only: a tool that wrote on the server's disk would let a
        # client choose paths there.
        from ..launch.make import launch

        result = advise(lang=a.get("lang"), prices=a.get("prices"), **_profile(a), **_settings(a))
        try:
            files = launch(result, 1 if a.get("option") is None else a["option"], model=a.get("model"))
        except InputError as error:      # the library's launch_option and launch_model are this tool's option, model
            raise InputError(_LAUNCH_ARGUMENTS.get(error.field or "", error.field), str(error)) from None
        data = files.to_dict()
        # markdown: the file names, then the command in a fence (no fence inside it)
        fence = "`" * 3
        text = "\n".join([*(f"- {markdown(name)}" for name in files.files), "", fence + "sh",
                          files.command.replace(fence, "'" * 3), fence])
        return data, text

    def do_estimate(a: dict[str, Any]) -> tuple[dict[str, Any], str]:
        from ...explanation.render import render_estimate

        result = estimate(**{k: v for k, v in a.items() if v is not None})
        text = render_estimate(knowledge_base(), result, "text", a.get("lang") or "en")
        return result.to_dict(), "```\n" + text.replace("`", "'") + "\n```\n"

    def do_models(a: dict[str, Any]) -> tuple[dict[str, Any], str]:
        names = a.get("names") or []
        return (json.loads(render_models(knowledge_base(), "json", "en", names=names)),
                render_models(knowledge_base(), "markdown", "en", names=names))

    def do_start(a: dict[str, Any]) -> tuple[dict[str, Any], str]:
        consultation = Consultation(lang=a.get("lang"), **_profile(a))
        told = consultation.tell(a["text"]) if a.get("text") is not None else None
        return _question(consultation, store.put(consultation), told)

    def do_tell(a: dict[str, Any]) -> tuple[dict[str, Any], str]:
        key = a["consultation_id"]
        consultation = store.get(key, a.get("lang"))
        told = consultation.tell(a["text"])
        store.put(consultation, key)
        return _question(consultation, key, told)

    def do_answer(a: dict[str, Any]) -> tuple[dict[str, Any], str]:
        key = a["consultation_id"]
        consultation = store.get(key, a.get("lang"))
        question = consultation.next_question()
        if question is not None:
            try:
                consultation.answer(question.id, a["answer"])
            except InputError as error:
                raise InputError(error.field, f"{error} {question.text}") from None
            store.put(consultation, key)
        return _question(consultation, key)

    def do_back(a: dict[str, Any]) -> tuple[dict[str, Any], str]:
        key = a["consultation_id"]
        consultation = store.get(key, a.get("lang"))
        consultation.back()
        store.put(consultation, key)
        return _question(consultation, key)

    def do_result(a: dict[str, Any]) -> tuple[dict[str, Any], str]:
        consultation = store.get(a["consultation_id"], a.get("lang"))
        result = consultation.result()
        return result.to_dict(a.get("detail") or "summary"), result.render("markdown", detail="summary")

    def checked(work: Work) -> Work:
        def run(a: dict[str, Any]) -> tuple[dict[str, Any], str]:
            # what no reader takes (10**5000, data nested deep) is refused before any reads it
            check_bounds(a, Localizer(resolve_lang(a.get("lang"))))
            return work(a)
        return run

    return {name: checked(work) for name, work in (
        ("advise", do_advise), ("explain", do_explain), ("estimate", do_estimate), ("models", do_models),
        ("consultation_start", do_start), ("consultation_tell", do_tell), ("consultation_answer", do_answer),
        ("consultation_back", do_back), ("consultation_result", do_result), ("launch", do_launch))}


def _error(field: str | None, message: str) -> CallToolResult:
    """A tool error as the library words it (no English prefix of the SDK's),
    with the field it is about in ``structured_content["error"]``; the text
    content is markdown, as every tool's is, so what it quotes is escaped."""
    text = "\n".join(markdown(line) for line in message.splitlines())     # a knowledge base's problems: a line each
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True,
                          structured_content={"error": {"field": field, "message": message}})


class _RawTool(Tool):
    """A tool that receives its arguments as the client sent them (the SDK's
    own validation would drop an unknown or misnamed one silently): they are
    checked against the tool's schema by :func:`expert.interfaces.schema.check_arguments`."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        return await super().run({"arguments": arguments}, context, convert_result)


def _tool(spec: dict[str, Any], work: Work) -> Tool:
    """An SDK tool whose advertised schema is ours. Its arguments are checked
    strictly (unknown, missing or mistyped: an error naming the argument,
    listing the accepted ones, in the call's language; declared aliases
    renamed), then the library reads the values. The text content is a
    markdown summary; the JSON goes only in the structured content."""

    def call(arguments: Any = None, ctx: Context | None = None) -> Any:
        lang = arguments.get("lang") if isinstance(arguments, dict) else None
        try:
            tr = Localizer(resolve_lang(lang if lang in SUPPORTED else None))
        except CatalogMissing as error:    # a damaged install: said as it is, not the SDK's "Error executing tool"
            return _error(None, str(error))
        caller = _CALLER.set(_caller_of(ctx))
        way_in = WAY_IN.set("tools")        # answers and refusals name the tool's arguments, never a flag
        try:
            checked = check_arguments(spec, arguments, knowledge_base(), tr)
            data, text = work(checked)
            return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)
        except InputError as error:
            return _error(error.field, str(error))
        except KnowledgeBaseError as error:
            return _error(None, error.render(str))
        except Exception as error:
            return _error(None, tr.gettext("Internal error (%(kind)s); please report it.")
                          % {"kind": type(error).__name__})
        finally:
            WAY_IN.reset(way_in)
            _CALLER.reset(caller)

    call.__name__ = spec["name"]
    tool = _RawTool.from_function(call, name=spec["name"], description=spec["description"], structured_output=False,
                                  context_kwarg="ctx")
    return tool.model_copy(update={"parameters": spec["parameters"]})


def _caller_of(ctx: Any) -> str | None:
    """Who a tool call came from: over HTTP, its MCP session (the
    Mcp-Session-Id header the server gave it), else the client's address;
    None over stdio and in-process (one client)."""
    try:
        request = ctx.request_context.request
    except (AttributeError, ValueError):       # no request context: a call from outside a session
        return None
    headers = getattr(request, "headers", None)
    if headers is None:
        return None
    session = headers.get("mcp-session-id")
    if session:
        return "session " + str(session)[:200]
    client = getattr(request, "client", None)
    return "address " + str(client.host) if client is not None else None


def build_server(store: ConsultationStore | None = None) -> MCPServer:
    """The MCP server with expert's tools."""
    work = handlers(store or ConsultationStore())
    tools = [_tool(spec, work[spec["name"]]) for spec in tool_specs(knowledge_base())]
    server = MCPServer("expert", instructions=INSTRUCTIONS, version=__version__, tools=tools, log_level="WARNING")
    server.middleware.append(limits.refuse)       # refused lines answered, long names not echoed whole
    return server


def transport_security(host: str, port: int, allow_remote: bool = False,
                       allowed_hosts: tuple[str, ...] = ()) -> TransportSecuritySettings:
    """The Host and Origin checks of streamable HTTP (DNS rebinding
    protection), always on, for the Host headers :func:`expert.interfaces.hosts.allowed`
    gives (the loopback's names with any port; beyond it, only with
    ``allow_remote`` and the names in ``allowed_hosts``); ValueError
    otherwise, with what to do."""
    hosts = list(allowed(host, port, allow_remote, allowed_hosts))
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins)


def http_app(host: str = "127.0.0.1", port: int = 8000, allow_remote: bool = False,
             allowed_hosts: tuple[str, ...] = ()) -> Any:
    """The streamable HTTP app: the SDK's, its sessions ended after limits.IDLE_SECONDS unused, at most
    MAX_SESSIONS in all, limits.PER_CLIENT of one client address (limits.SessionBound); a request's body
    whole within 10 s (limits.BodyDeadline)."""
    security = transport_security(host, port, allow_remote, allowed_hosts)
    app = build_server().streamable_http_app(transport_security=security, max_sessions=MAX_SESSIONS,
                                             session_idle_timeout=limits.IDLE_SECONDS,
                                             max_request_body_size=limits.MAX_LINE, host=host)
    return limits.BodyDeadline(limits.SessionBound(app))


def serve(transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000, allow_remote: bool = False,
          allowed_hosts: tuple[str, ...] = ()) -> None:
    """Serve the tools over stdio (each line screened first: limits.screen), or over streamable HTTP with
    hypercorn in this process (the sessions live in it; a request's head within 5 s, as `expert serve`)."""
    if transport == "stdio":
        limits.screened_stdin()
        build_server().run()
    else:
        from ..serving import config, run

        transport_security(host, port, allow_remote, allowed_hosts)     # ValueError before any process starts
        call = f"http_app({host!r}, {port!r}, {allow_remote!r}, {tuple(allowed_hosts)!r})"
        run(config(f"expert.interfaces.mcp.server:{call}", host, port, 0))     # 0: in this process, no worker
