"""`expert catalogs`: the cards the knowledge base knows — the guide's, the
catalogs that ship with the package (today's market, weighed by default)
and the cards a person may name as their own (``--vram NAME``) — each rented
card with its providers' prices and the dates they were read, in the
reader's language.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ... import paths
from ...errors import InputError, nearest
from ...i18n import Localizer
from ...inference.estimate import device_memory_gib
from ...knowledge import KnowledgeBase
from ...knowledge.bases import GUIDE


def _same(a: str | Path, b: Path) -> bool:
    try:
        return Path(a).resolve() == b.resolve()
    except (OSError, RuntimeError, ValueError):
        return False


def describe(kb: KnowledgeBase, shipped: dict[str, Any]) -> dict[str, Any]:
    """The cards as data: ``guide``, ``shipped`` ({name: {file, cards}}),
    ``owned``, and ``rentable`` (how many cards a provider rents, and the
    providers). Each catalog card has its driver's memory (``memory_mib``)
    and its ``prices``: per provider of rules/prices that rents it, on
    demand and spot (USD per card-hour) with the dates they were read; none
    for a card nobody rents."""
    def prices(card_id: str) -> list[dict[str, Any]]:
        rows = []
        for basis in kb.prices:
            price = basis.price(card_id)
            if price is not None:
                rows.append({"provider": basis.name, "on_demand": price.on_demand, "date": price.date,
                             **({"spot": price.spot, "spot_date": price.spot_date} if price.spot is not None else {})})
        return sorted(rows, key=lambda row: (row["on_demand"], row["provider"]))

    def card(c: Any) -> dict[str, Any]:
        return {"id": c.id, "name": c.name, "vram_gb": c.vram_gb, "memory_mib": c.memory_mib, "prices": prices(c.id),
                "aliases": list(c.aliases)}

    catalogs = {}
    for name, path in shipped.items():
        if name == GUIDE:
            continue
        catalogs[name] = {"file": path.relative_to(paths.RULES.parent).as_posix() if path.is_relative_to(
            paths.RULES.parent) else path.as_posix(), "cards": [card(c) for c in kb.catalog
                                                                  if c.origin != "guide" and _same(c.source, path)]}
    guide = [card(c) for c in kb.catalog if c.origin == "guide"]
    every = guide + [c for catalog in catalogs.values() for c in catalog["cards"]]
    rented = [c for c in every if c["prices"]]
    providers = sorted({row["provider"] for c in rented for row in c["prices"]}, key=str.casefold)
    return {"guide": guide, "shipped": catalogs,
            "owned": [{"id": c.id, "name": c.name, "vram_gb": c.vram_gb, "aliases": list(c.aliases)}
                      for c in kb.owned],
            "rentable": {"cards": len(rented), "providers": providers}}


def render(data: dict[str, Any], fmt: str, tr: Localizer) -> str:
    if fmt == "json":
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    if fmt != "text":
        close = nearest(fmt, ["text", "json"])
        raise InputError("format", tr.gettext("format: '%(value)s' is not accepted; choose %(accepted)s.") % {
            "value": str(fmt)[:40], "accepted": tr.list(["text", "json"], style="or")} + tr.did_you_mean(close), close)
    _ = tr.gettext

    def rented(c: dict[str, Any]) -> str:
        if not c["prices"]:
            return ": " + _("no provider rents it")
        return ": " + ", ".join(f"{row['provider']} {tr.money(row['on_demand'])} ({row['date']})"
                                for row in c["prices"])

    def memory(c: dict[str, Any]) -> str:
        # the memory its driver reports, as every answer counts it ("80 of 140.4 GiB"): an H200 was "(141 GiB)"
        # here, its 141 GB read as GiB; a card with no driver figure (one's own, by name) by its nominal size
        return tr.gib(device_memory_gib(c["vram_gb"], c.get("memory_mib", 0.0), 1))

    def rows(cards: list[dict[str, Any]], extra: Any = None) -> list[str]:
        width = max((len(c["id"]) for c in cards), default=0)
        return [f"  {c['id']:<{width}}  {c['name']} ({memory(c)})" + (extra(c) if extra else "")
                for c in cards]

    lines = [_("The guide's cards, weighed by default (--catalog guide weighs them alone), with the price "
               "per card-hour on demand of each provider that rents them and the date it was read:")]
    lines += rows(data["guide"], rented)
    for name, catalog in data["shipped"].items():
        lines += ["", _("Today's market, shipped catalog '%(name)s', weighed by default:") % {"name": name}]
        lines += rows(catalog["cards"], rented)
    lines += ["", _("%(cards)s cards are rented by %(count)s providers: %(providers)s.") % {
        "cards": data["rentable"]["cards"], "count": len(data["rentable"]["providers"]),
        "providers": tr.list(data["rentable"]["providers"])}]
    # the cards above are one's own by name too, whatever --catalog weighs (kb.shipped, owned.find_cards)
    named = [c for c in [*data["guide"], *(c for catalog in data["shipped"].values() for c in catalog["cards"])]
             if c.get("aliases")]
    if named:
        width = max(len(c["id"]) for c in named)
        lines += ["", _("The names people write for the cards above, besides their ids and names (--vram NAME):")]
        lines += [f"  {c['id']:<{width}}  {', '.join(c['aliases'])}" for c in named]
    lines += ["", _("Cards you can name as your own GPU (--vram NAME) besides every card above, whatever "
                    "--catalog weighs, with the names people write:")]
    lines += rows(data["owned"], lambda c: ": " + ", ".join(c["aliases"]))
    return "\n".join(lines) + "\n"
