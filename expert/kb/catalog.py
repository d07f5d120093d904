"""GPU catalogs: the guide's ``rules/catalog.toml`` and the user catalogs
that add cards to it or replace cards of the same id."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable

from ..errors import KnowledgeBaseError
from .model import COSTS, ID_RE, SEGMENTS, VENDORS, Card, KnowledgeBase
from .source import _is_number, _line, _Problems, _read


_CARD_KEYS: dict[str, Any] = {
    "id": str, "name": str, "vendor": str, "vram_gb": "number", "devices": int, "cost": str, "segment": str,
    "fast_interconnect": bool, "speed": "number", "speed_source": str, "ideal_methods": list,
    "ideal_min_b": "number", "ideal_max_b": "number", "heuristics": list,
}
# A user catalog needs only these; the rest take the defaults below.
USER_REQUIRED = ("id", "name", "vendor", "vram_gb", "cost")
USER_OPTIONAL: dict[str, Any] = {"interconnect": str, "source": str}
INTERCONNECTS = {"nvlink": True, "infinity-fabric": True, "infiniband": True, "pcie": False}
USER_DEFAULTS: dict[str, Any] = {
    "devices": 1, "segment": "datacenter", "fast_interconnect": False, "speed": 1.0,
    "speed_source": "not given: taken as the reference card's (1.0)", "ideal_methods": [], "ideal_min_b": 0,
    "ideal_max_b": 0, "heuristics": [],
}


def _catalog(path: Path, doc: dict[str, Any], text: str, problems: _Problems, user: bool = False) -> tuple[Card, ...]:
    cards: list[Card] = []
    seen: set[str] = set()
    entries = doc.get("gpu", [])
    known_keys = {**_CARD_KEYS, **(USER_OPTIONAL if user else {})}
    if not entries or not isinstance(entries, list):
        problems.add(str(path), _line(text, "gpu"), "no [[gpu]] tables")
        entries = []
    for index, entry in enumerate(entries):
        card = f"gpu[{index + 1}]"      # where this card's problems are: its table, or one of its keys
        line = _line(text, card)
        bad = False
        for key in entry:
            if key not in known_keys:
                problems.add(str(path), _line(text, f"{card}.{key}"), "unknown key '%(key)s' (known: %(known)s)",
                             key=key, known=", ".join(known_keys))
                bad = True
        if user:
            interconnect = entry.get("interconnect")
            if interconnect is not None and interconnect not in INTERCONNECTS:
                problems.add(str(path), _line(text, f"{card}.interconnect"),
                             "card %(index)s: 'interconnect' must be one of %(known)s", index=index + 1,
                             known=", ".join(INTERCONNECTS))
                bad = True
            defaults = dict(USER_DEFAULTS, fast_interconnect=INTERCONNECTS.get(interconnect, False))
            entry = {**defaults, **{k: v for k, v in entry.items() if k in _CARD_KEYS}}
            for key in USER_REQUIRED:
                if key not in entry:
                    problems.add(str(path), line, "card %(index)s: '%(key)s' is missing", index=index + 1, key=key)
                    bad = True
        for key, kind in _CARD_KEYS.items():
            value = entry.get(key)
            if value is None and user and key in USER_REQUIRED:
                continue
            if key in ("ideal_min_b", "ideal_max_b") and _is_number(value) and value >= 0:
                continue
            ok = _is_number(value) and value > 0 if kind == "number" else (
                isinstance(value, kind) and not (kind is int and (isinstance(value, bool) or not 0 < value <= 64)))
            if not ok:
                at = _line(text, f"{card}.{key}")
                name = "number" if kind == "number" else kind.__name__
                if name == "number":
                    problems.add(str(path), at, "card %(index)s: '%(key)s' must be a positive number", index=index + 1, key=key)
                elif name == "str":
                    problems.add(str(path), at, "card %(index)s: '%(key)s' must be text", index=index + 1, key=key)
                elif name == "int":
                    problems.add(str(path), at, "card %(index)s: '%(key)s' must be a whole number from 1 to 64",
                                 index=index + 1, key=key)
                elif name == "bool":
                    problems.add(str(path), at, "card %(index)s: '%(key)s' must be true or false", index=index + 1, key=key)
                else:
                    problems.add(str(path), at, "card %(index)s: '%(key)s' must be a list", index=index + 1, key=key)
                bad = True
        if bad:
            continue
        if not ID_RE.match(entry["id"]) or entry["id"] in seen or entry["id"] == "own":
            problems.add(str(path), _line(text, f"{card}.id"), "card id '%(id)s' must be unique kebab-case", id=entry["id"])
        if entry["vendor"] not in VENDORS:
            problems.add(str(path), _line(text, f"{card}.vendor"), "card '%(id)s': vendor must be one of %(known)s",
                         id=entry["id"], known=", ".join(VENDORS))
        if entry["cost"] not in COSTS:
            problems.add(str(path), _line(text, f"{card}.cost"), "card '%(id)s': cost must be one of %(known)s",
                         id=entry["id"], known=", ".join(COSTS))
        if entry["segment"] not in SEGMENTS:
            problems.add(str(path), _line(text, f"{card}.segment"), "card '%(id)s': segment must be one of %(known)s",
                         id=entry["id"], known=", ".join(SEGMENTS))
        seen.add(entry["id"])
        cards.append(Card(
            entry["id"], entry["name"], entry["vendor"], float(entry["vram_gb"]), entry["devices"], entry["cost"],
            entry["segment"], entry["fast_interconnect"], float(entry["speed"]), entry["speed_source"],
            tuple(entry["ideal_methods"]), float(entry["ideal_min_b"]), float(entry["ideal_max_b"]),
            tuple(entry["heuristics"]), str(path), path.name if user else "guide"))
    return tuple(cards)


def with_catalogs(kb: KnowledgeBase, catalogs: Iterable[Path | str]) -> KnowledgeBase:
    """``kb`` with the cards of user catalogs added, or replacing the card of the same id.

    Every file is checked whole first; on any problem nothing is merged.
    """
    problems = _Problems()
    added: list[Card] = []
    for name in catalogs:
        path = Path(name)
        doc, text = _read(path, problems)
        if doc:
            added += _catalog(path, doc, text, problems, user=True)
    if problems.items:
        raise KnowledgeBaseError(problems.items)
    merged = {card.id: card for card in kb.catalog}
    for card in added:
        merged[card.id] = card
    return replace(kb, catalog=tuple(merged.values()))
