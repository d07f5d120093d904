"""A consultation's saved state (``Consultation.to_dict()``), data from outside
(a chatbot's store): bounded, and every key checked (:func:`check_state`)
before anything is built from it; the other names of fields read as the
fields' own (:func:`with_field_names`).
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import InputError
from ..i18n import SUPPORTED, Localizer, resolve_lang
from ..input import profile as profile_module
from ..input.arguments import field_alias
from ..knowledge import PROFILE_FIELDS
from ..knowledge.bases import knowledge_base

STATE_VERSION = 2
# Saved state is data from outside (a chatbot's store): it is bounded and every
# key is checked before anything is built from it.
STATE_KEYS = ("version", "lang", "catalog", "known", "answers", "history")
# Present only while a "which card?" question is pending (its field).
OPTIONAL_STATE_KEYS = ("which", "guess")
MAX_STATE_BYTES = 8192
MAX_CATALOGS = 8


def with_field_names(state: Any) -> Any:
    """Saved state with the other names of fields ([aliases.arguments]: "model",
    "vram") as the fields' own, like every other entry point; anything else is
    left for check_state to refuse."""
    if not isinstance(state, dict):
        return state

    kb = knowledge_base()  # once for every name, not once a name

    def alias(name: str) -> str:
        return field_alias(name, PROFILE_FIELDS, kb)

    def renamed(key: str, value: Any) -> Any:
        if isinstance(value, dict) and len(value) <= len(PROFILE_FIELDS) * 2:
            fields: dict[Any, Any] = {}
            for name, field_value in value.items():
                field = alias(name) if isinstance(name, str) else name
                if field in fields:         # one field under two names: refused, not the last kept
                    tr = Localizer(resolve_lang(state["lang"] if state.get("lang") in SUPPORTED else None))
                    raise InputError("state", tr.gettext("state: '%(key)s' gives %(field)s twice; give it once.")
                                     % {"key": key, "field": profile_module.shown(field)})
                fields[field] = field_value
            return fields
        if isinstance(value, list) and len(value) <= len(PROFILE_FIELDS) * 2:
            return [alias(k) if isinstance(k, str) else k for k in value]
        return value

    return {**state, **{key: renamed(key, state[key]) for key in ("known", "answers", "history", "guess", "which")
                        if key in state and key != "which"},
            **({"which": alias(state["which"])} if isinstance(state.get("which"), str) else {})}


def check_state(state: Any) -> None:
    """Refuse a saved state that is not exactly what ``to_dict()`` writes."""
    tr = Localizer(resolve_lang(state.get("lang") if isinstance(state, dict) and state.get("lang") in SUPPORTED
                                else None))

    def refuse(key: str, accepted: str) -> InputError:
        return InputError("state", tr.gettext("state: '%(key)s' is not accepted; %(accepted)s.")
                          % {"key": key, "accepted": accepted})

    if not isinstance(state, dict):
        raise refuse("state", tr.gettext("a saved consultation is a dictionary written by to_dict()"))
    try:
        size = len(json.dumps(state, allow_nan=False))
    except (TypeError, ValueError, RecursionError):
        raise refuse("state", tr.gettext("it must be plain JSON data")) from None
    if size > MAX_STATE_BYTES:
        raise refuse("state", tr.gettext("at most %(most)s bytes") % {"most": MAX_STATE_BYTES})
    unknown = sorted(str(key) for key in state if key not in STATE_KEYS + OPTIONAL_STATE_KEYS)
    if unknown:
        raise refuse(profile_module.shown(unknown[0]), tr.gettext("the keys are %(keys)s") % {
            "keys": ", ".join(STATE_KEYS + OPTIONAL_STATE_KEYS)})
    missing = [key for key in STATE_KEYS if key not in state]
    if missing:
        raise refuse(missing[0], tr.gettext("it is missing"))
    if state["version"] != STATE_VERSION or isinstance(state["version"], bool):
        raise refuse("version", tr.gettext("this version reads state version %(version)s") % {"version": STATE_VERSION})
    if state["lang"] not in SUPPORTED:
        raise refuse("lang", tr.gettext("choose %(accepted)s") % {"accepted": tr.list(SUPPORTED, style="or")})
    catalogs = state["catalog"]
    if not (isinstance(catalogs, list) and len(catalogs) <= MAX_CATALOGS
            and all(isinstance(c, str) and len(c) <= 40 for c in catalogs)):
        raise refuse("catalog", tr.gettext("a list of at most %(most)s registered catalog ids") % {"most": MAX_CATALOGS})
    for key in ("known", "answers"):
        values = state[key]
        if not (isinstance(values, dict) and all(name in PROFILE_FIELDS for name in values)
                and all(isinstance(v, (str, int, float, bool)) or v is None for v in values.values())):
            raise refuse(key, tr.gettext("a dictionary of profile fields (%(fields)s) to plain values") % {
                "fields": ", ".join(PROFILE_FIELDS)})
    history = state["history"]
    if not (isinstance(history, list) and all(isinstance(h, str) and h in PROFILE_FIELDS for h in history)
            and len(history) == len(set(history))):
        raise refuse("history", tr.gettext("a list of answered profile fields, each once"))
    if "which" in state and state["which"] not in PROFILE_FIELDS:
        raise refuse("which", tr.gettext("a profile field that takes a card's name"))
    guess = state.get("guess", {})
    if not (isinstance(guess, dict) and all(name in PROFILE_FIELDS and isinstance(v, str) for name, v in guess.items())):
        raise refuse("guess", tr.gettext("a dictionary of profile fields to the value a message seemed to mean"))
