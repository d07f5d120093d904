"""`expert catalogs`: the cards the knowledge base knows — the guide's, the
catalogs that ship with the package (``--catalog NAME``) and the cards a
person may name as their own (``--vram NAME``) — in the reader's language.
"""

from __future__ import annotations

import json
from typing import Any

from ... import paths
from ...errors import InputError, nearest
from ...i18n import Localizer
from ...knowledge import KnowledgeBase, with_catalogs


def describe(kb: KnowledgeBase, shipped: dict[str, Any]) -> dict[str, Any]:
    """The cards as data: ``guide``, ``shipped`` ({name: {file, cards}}) and ``owned``."""
    def card(c: Any) -> dict[str, Any]:
        return {"id": c.id, "name": c.name, "vram_gb": c.vram_gb}

    catalogs = {}
    for name, path in shipped.items():
        extra = with_catalogs(kb, [path]).catalog[len(kb.catalog):]
        catalogs[name] = {"file": path.relative_to(paths.RULES.parent).as_posix() if path.is_relative_to(
            paths.RULES.parent) else path.as_posix(), "cards": [card(c) for c in extra]}
    return {"guide": [card(c) for c in kb.catalog], "shipped": catalogs,
            "owned": [{**card(c), "aliases": list(c.aliases)} for c in kb.owned]}


def render(data: dict[str, Any], fmt: str, tr: Localizer) -> str:
    if fmt == "json":
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if fmt != "text":
        close = nearest(fmt, ["text", "json"])
        raise InputError("format", tr.gettext("format: '%(value)s' is not accepted; choose %(accepted)s.") % {
            "value": str(fmt)[:40], "accepted": tr.list(["text", "json"], style="or")} + tr.did_you_mean(close), close)
    _ = tr.gettext

    def rows(cards: list[dict[str, Any]], extra: Any = None) -> list[str]:
        width = max((len(c["id"]) for c in cards), default=0)
        return [f"  {c['id']:<{width}}  {c['name']} ({tr.gb(c['vram_gb'])})" + (extra(c) if extra else "")
                for c in cards]

    lines = [_("The guide's cards (always considered):")] + rows(data["guide"])
    for name, catalog in data["shipped"].items():
        lines += ["", _("Shipped catalog '%(name)s' (--catalog %(name)s):") % {"name": name}] + rows(catalog["cards"])
    lines += ["", _("Cards you can name as your own GPU (--vram NAME), with the names people write:")]
    lines += rows(data["owned"], lambda c: ": " + ", ".join(c["aliases"]))
    return "\n".join(lines) + "\n"
