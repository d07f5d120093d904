"""`expert mcp`: the library's tools over the Model Context Protocol.

Built on the ``mcp`` SDK (``pip install 'expert[mcp]'``). The tools and their
parameter schemas are those of :func:`expert.schema.tool_specs` (the same as
``expert schema --what tools``); each tool calls the library. A bad value is a
tool error (``is_error``) whose text names the field, in the language of the
call's ``lang``. A consultation's state stays in this process, in a bounded
store keyed by an opaque id; the client keeps only the id.
"""

from __future__ import annotations

import inspect
import json
import secrets
import threading
from collections import OrderedDict
from typing import Any, Callable

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from mcp.server.mcpserver.tools import Tool

from . import __version__
from .api import advise, estimate, knowledge_base
from .consultation import Consultation
from .errors import InputError, KnowledgeBaseError
from .explanation import explain
from .i18n import Localizer, resolve_lang
from .kb import PROFILE_FIELDS
from .profile import shown
from .render import render_models
from .schema import tool_specs

INSTRUCTIONS = (
    "expert recommends GPUs for fine-tuning a large language model and explains why, citing a practical "
    "guide. Call advise with what the person told you (every field is optional; the answer lists what was "
    "assumed), or hold a consultation (consultation_start, then consultation_answer with the person's own "
    "words) that asks only the questions that matter. explain says how, why not a card, and what if.")


class ConsultationStore:
    """Consultations by opaque id, at most ``size`` of them: the least recently
    used is forgotten first. Each holds the consultation's saved state (a few
    hundred bytes, checked again when it is read back)."""

    def __init__(self, size: int = 1000) -> None:
        self.size = size
        self._states: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, consultation: Consultation, key: str | None = None) -> str:
        key = key or secrets.token_urlsafe(16)
        with self._lock:
            self._states[key] = consultation.to_dict()
            self._states.move_to_end(key)
            while len(self._states) > self.size:
                self._states.popitem(last=False)
        return key

    def get(self, key: Any, lang: str | None) -> Consultation:
        with self._lock:
            state = self._states.get(key) if isinstance(key, str) else None
            if state is not None:
                self._states.move_to_end(key)
        if state is None:
            tr = Localizer(resolve_lang(lang))
            raise InputError("consultation_id", tr.gettext(
                "consultation_id: '%(value)s' is not a consultation of this server (it may have been "
                "forgotten); start one with consultation_start.") % {"value": shown(key)})
        return Consultation.from_dict(state)

    def __len__(self) -> int:
        return len(self._states)


def _question(consultation: Consultation, key: str, told: Any = None) -> dict[str, Any]:
    question = consultation.next_question()
    data = {"consultation_id": key, "done": question is None,
            "question": question.to_dict() if question is not None else None,
            "answered": {name: consultation.answers[name] for name in consultation.history}}
    if told is not None:
        data["understood"] = told.to_dict()
    return data


def _profile(arguments: dict[str, Any]) -> dict[str, Any]:
    return {name: arguments[name] for name in PROFILE_FIELDS if arguments.get(name) is not None}


def _names(value: Any) -> list[str]:
    """The names a models call filters by: a list of short strings (anything else names none)."""
    if not isinstance(value, list):
        return []
    return [str(name)[:100] for name in value[:10] if isinstance(name, str)]


def handlers(store: ConsultationStore) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
    """Each tool's work, from its arguments (already named as in its schema)."""

    def do_advise(a: dict[str, Any]) -> dict[str, Any]:
        return advise(lang=a.get("lang"), prices=a.get("prices"), **_profile(a)).to_dict(a.get("detail") or "summary")

    def do_explain(a: dict[str, Any]) -> dict[str, Any]:
        explanation = explain(why_not=a.get("why_not"), what_if=a.get("what_if"), lang=a.get("lang"),
                              prices=a.get("prices"), **_profile(a))
        data = explanation.to_dict()
        data.pop("trace", None)     # the steps of `how` already cite the rules; the trace is for programs
        return data

    def do_launch(a: dict[str, Any]) -> dict[str, Any]:
        # The files' contents only: a tool that wrote on the server's disk would let a
        # client choose paths there.
        from .launch import launch

        result = advise(lang=a.get("lang"), prices=a.get("prices"), **_profile(a))
        return launch(result, 1 if a.get("option") is None else a["option"], model=a.get("model")).to_dict()

    def do_estimate(a: dict[str, Any]) -> dict[str, Any]:
        return estimate(**{k: v for k, v in a.items() if v is not None}).to_dict()

    def do_models(a: dict[str, Any]) -> dict[str, Any]:
        return json.loads(render_models(knowledge_base(), "json", "en", names=_names(a.get("names"))))

    def do_start(a: dict[str, Any]) -> dict[str, Any]:
        consultation = Consultation(lang=a.get("lang"), **_profile(a))
        told = consultation.tell(a["text"]) if a.get("text") is not None else None
        return _question(consultation, store.put(consultation), told)

    def do_tell(a: dict[str, Any]) -> dict[str, Any]:
        key = a.get("consultation_id")
        consultation = store.get(key, a.get("lang"))
        told = consultation.tell(a.get("text"))  # type: ignore[arg-type]
        store.put(consultation, key)
        return _question(consultation, key, told)

    def do_answer(a: dict[str, Any]) -> dict[str, Any]:
        key = a.get("consultation_id")
        consultation = store.get(key, a.get("lang"))
        question = consultation.next_question()
        if question is not None:
            try:
                consultation.answer(question.id, a.get("answer"))
            except InputError as error:
                raise InputError(error.field, f"{error} {question.text}") from None
            store.put(consultation, key)
        return _question(consultation, key)

    def do_back(a: dict[str, Any]) -> dict[str, Any]:
        key = a.get("consultation_id")
        consultation = store.get(key, a.get("lang"))
        consultation.back()
        store.put(consultation, key)
        return _question(consultation, key)

    def do_result(a: dict[str, Any]) -> dict[str, Any]:
        consultation = store.get(a.get("consultation_id"), a.get("lang"))
        return consultation.result().to_dict(a.get("detail") or "summary")

    return {"advise": do_advise, "explain": do_explain, "estimate": do_estimate, "models": do_models,
            "consultation_start": do_start, "consultation_tell": do_tell, "consultation_answer": do_answer,
            "consultation_back": do_back, "consultation_result": do_result, "launch": do_launch}


def _error(field: str | None, message: str) -> CallToolResult:
    """A tool error as the library words it (no English prefix of the SDK's),
    with the field it is about in ``structured_content["error"]``."""
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True,
                          structured_content={"error": {"field": field, "message": message}})


def _tool(spec: dict[str, Any], work: Callable[[dict[str, Any]], dict[str, Any]]) -> Tool:
    """An SDK tool whose advertised schema is ours; the SDK passes the values
    through as they came (typed Any), and the library checks them, so that a
    bad one is reported in the caller's language, naming the field."""
    names = list(spec["parameters"]["properties"])

    def call(**arguments: Any) -> Any:
        try:
            return work(arguments)
        except InputError as error:
            return _error(error.field, str(error))
        except KnowledgeBaseError as error:
            return _error(None, error.render(str))
        except Exception as error:  # noqa: BLE001 - a tool error, never a traceback to the client
            return _error(None, f"Internal error ({type(error).__name__}); please report it.")

    call.__name__ = spec["name"]
    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Any) for name in names],
        return_annotation=dict[str, Any])
    tool = Tool.from_function(call, name=spec["name"], description=spec["description"], structured_output=True)
    return tool.model_copy(update={"parameters": spec["parameters"]})


def build_server(store: ConsultationStore | None = None) -> MCPServer:
    """The MCP server with expert's tools."""
    work = handlers(store or ConsultationStore())
    tools = [_tool(spec, work[spec["name"]]) for spec in tool_specs(knowledge_base())]
    return MCPServer("expert", instructions=INSTRUCTIONS, version=__version__, tools=tools, log_level="WARNING")


def serve(transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000) -> None:
    server = build_server()
    if transport == "stdio":
        server.run()
    else:
        server.run("streamable-http", host=host, port=port)
