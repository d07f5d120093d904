"""The cards people own (``rules/owned.toml``), and finding one by the name
a person writes: with or without the vendor's brand, an article, spaces or
hyphens (the file's ``ignore`` words and aliases say how).

Each ``[[card]]`` table is checked like a catalog card (file and line of
every problem); :data:`OWNED_KEYS` is the one place that says which keys a
card has, so a new figure (a speed) is one more entry there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .catalog import NAME_MAX, TEXT_MAX, CardChecker
from .records import Card, OwnedCard, UnsupportedDevice
from .source import Problems, line_at, shown

# The keys of an owned card and the values each accepts (see catalog._CARD_KEYS).
OWNED_KEYS: dict[str, tuple[Any, ...]] = {
    "id": ("id",), "name": ("text", NAME_MAX), "vram_gb": ("number", 1, 1024), "source": ("text", TEXT_MAX),
    "bf16_tflops": ("number", 1, 100_000), "memory_bandwidth_gbs": ("number", 1, 1_000_000),
    "hardware_source": ("text", TEXT_MAX), "bf16": ("bool",),
}
ALIASES_MAX = 16
ALIAS_MAX = 40
IGNORE_MAX = 64
# An alias that reads as a VRAM figure ("24", "16 GB") would hide that figure.
_FIGURE = re.compile(r"^(\d+(?:[.,]\d+)?)(?:gb|gib|g)?$")
_SEPARATORS = re.compile(r"[\s_\-]+")


def normalize(text: str, ignore: frozenset[str] = frozenset()) -> str:
    """A name as it is compared: lower case, without spaces, hyphens,
    underscores or the words of ``ignore``."""
    words = [word for word in _SEPARATORS.split(text.strip().lower()) if word and word not in ignore]
    return "".join(words)


def owned_cards(path: Path, doc: dict[str, Any], text: str, catalog: tuple[Card, ...],
           problems: Problems) -> tuple[frozenset[str], tuple[str, ...], tuple[OwnedCard, ...]]:
    """The words to ignore in a name, the names messages give as examples and the owned cards, checked."""
    ignore_list = doc.get("ignore", [])
    if len(ignore_list) > IGNORE_MAX or not all(isinstance(w, str) and w and not _SEPARATORS.search(w)
                                                and len(w) <= ALIAS_MAX for w in ignore_list):
        problems.add(str(path), line_at(text, "ignore"), "'ignore' must list at most %(max)s single words",
                     max=IGNORE_MAX)
        ignore_list = []
    ignore = frozenset(w.lower() for w in ignore_list)
    examples = doc.get("examples", [])
    if not (isinstance(examples, list) and 1 <= len(examples) <= 5
            and all(isinstance(e, str) and e.strip() and len(e) <= ALIAS_MAX for e in examples)):
        problems.add(str(path), line_at(text, "examples"), "'examples' must list 1 to 5 card names")
        examples = []
    cards: list[OwnedCard] = []
    names: dict[str, str] = {}        # a card's own names (id, name), normalized -> its id
    for index, entry in enumerate(doc.get("card", [])):
        card = CardChecker(path, text, index, entry, problems, table="card")
        for key in entry:
            if key not in OWNED_KEYS and key != "aliases":
                dotted = "card[%d].%s" % (index + 1, shown(key))
                card.bad(key, "unknown key '%(key)s' (known: %(known)s)", key=dotted,
                         known=", ".join(sorted([*OWNED_KEYS, "aliases"])))
        for key, spec in OWNED_KEYS.items():
            if key not in entry:
                if key != "bf16":  # bf16 is optional: true unless the card says false
                    card.bad(None, "card %(index)s: '%(key)s' is missing", key=key)
            else:
                card.value(key, entry[key], spec)
        aliases = entry.get("aliases", [])
        if (not isinstance(aliases, list) or len(aliases) > ALIASES_MAX
                or not all(isinstance(a, str) and a.strip() and len(a) <= ALIAS_MAX for a in aliases)):
            card.bad("aliases", "card %(index)s: 'aliases' must list at most %(max)s names of 1 to %(most)s "
                                "characters", max=ALIASES_MAX, most=ALIAS_MAX)
            aliases = []
        for alias in aliases:
            figure = _FIGURE.match(normalize(alias))
            if figure and float(figure.group(1).replace(",", ".")) <= OWNED_KEYS["vram_gb"][2]:
                card.bad("aliases", "card %(index)s: the alias '%(alias)s' reads as a VRAM figure",
                         alias=shown(alias))
        if not card.ok:
            continue
        own = {normalize(entry["id"], ignore), normalize(entry["name"], ignore)}
        for other in own:
            if other in names:
                card.bad("id", "card %(index)s: '%(name)s' names card '%(other)s' too", name=shown(entry["id"]),
                         other=names[other])
            names[other] = entry["id"]
        cards.append(OwnedCard(id=entry["id"], name=entry["name"], vram_gb=float(entry["vram_gb"]),
                               aliases=tuple(aliases), source=entry["source"], line=card.line(),
                               bf16_tflops=float(entry["bf16_tflops"]),
                               memory_bandwidth_gbs=float(entry["memory_bandwidth_gbs"]),
                               hardware_source=entry["hardware_source"], bf16=bool(entry.get("bf16", True))))
    catalog_ids = {c.id: c for c in catalog}
    for owned in cards:
        same = catalog_ids.get(owned.id)
        if same is not None and same.vram_gb / same.devices != owned.vram_gb:
            problems.add(str(path), owned.line, "card '%(id)s': its VRAM differs from the catalog card of the same id",
                         id=owned.id)
    for example in examples if not problems.items else ():    # (a broken card would name no card)
        if not find_cards_in(cards, ignore, example):
            problems.add(str(path), line_at(text, "examples"), "the example '%(name)s' names no card",
                         name=shown(example))
    return ignore, tuple(examples), tuple(cards)


# The keys of a device people name that no recipe here can run on ([[unsupported]]).
UNSUPPORTED_KEYS: dict[str, tuple[Any, ...]] = {
    "id": ("id",), "name": ("text", NAME_MAX), "reason": ("text", 4 * TEXT_MAX), "source": ("text", 4 * TEXT_MAX),
}


def unsupported_devices(path: Path, doc: dict[str, Any], text: str, ignore: frozenset[str],
                 problems: Problems) -> tuple[UnsupportedDevice, ...]:
    """The devices named in ``[[unsupported]]``, checked: each says why no recipe runs on it."""
    devices = []
    for index, entry in enumerate(doc.get("unsupported", [])):
        device = CardChecker(path, text, index, entry, problems, table="unsupported")
        for key in entry:
            if key not in UNSUPPORTED_KEYS and key != "aliases":
                device.bad(key, "unknown key '%(key)s' (known: %(known)s)", key="unsupported[%d].%s" % (
                    index + 1, shown(key)), known=", ".join(sorted([*UNSUPPORTED_KEYS, "aliases"])))
        for key, spec in UNSUPPORTED_KEYS.items():
            if key not in entry:
                device.bad(None, "card %(index)s: '%(key)s' is missing", key=key)
            else:
                device.value(key, entry[key], spec)
        aliases = entry.get("aliases", [])
        if (not isinstance(aliases, list) or len(aliases) > 4 * ALIASES_MAX
                or not all(isinstance(a, str) and a.strip() and len(a) <= ALIAS_MAX for a in aliases)):
            device.bad("aliases", "card %(index)s: 'aliases' must list at most %(max)s names of 1 to %(most)s "
                                  "characters", max=4 * ALIASES_MAX, most=ALIAS_MAX)
            aliases = []
        if device.ok:
            devices.append(UnsupportedDevice(entry["id"], entry["name"], tuple(aliases), entry["reason"],
                                             entry["source"], device.line()))
    return tuple(devices)


def find_unsupported(kb: Any, text: str) -> UnsupportedDevice | None:
    """The device of ``[[unsupported]]`` that ``text`` names (by id, name or alias), if any."""
    key = normalize(text, kb.owned_ignore)
    return next((device for device in kb.unsupported if key and any(
        normalize(name, kb.owned_ignore) == key for name in (device.id, device.name, *device.aliases))), None)


def find_cards(kb: Any, text: str) -> list[tuple[str, str, float]]:
    """The cards ``text`` names, as (id, name, VRAM of one device): the owned
    cards first; the catalog's (by id, name or short name) when no owned
    card has that name. Several when the name is ambiguous ("V100"), none
    when it names no card. A name that names none but ends in a digit and
    an "s" is read as a plural ("3090s"): a card whose name ends in an "S"
    is that card first."""
    found = _named(kb, text)
    plural = text.strip()
    if not found and re.search(r"\ds\Z", plural, re.IGNORECASE):
        found = _named(kb, plural[:-1])
    return found


def _named(kb: Any, text: str) -> list[tuple[str, str, float]]:
    key = normalize(text, kb.owned_ignore)
    if not key:
        return []
    found = {card.id: (card.id, card.name, card.vram_gb) for card in find_cards_in(kb.owned, kb.owned_ignore, text)}
    if not found:
        for gpu in kb.catalog:
            if key in (normalize(gpu.id, kb.owned_ignore), normalize(gpu.name, kb.owned_ignore),
                       normalize(gpu.short, kb.owned_ignore) if gpu.short else None):
                found[gpu.id] = (gpu.id, gpu.name, gpu.vram_gb / gpu.devices)
    return list(found.values())


def find_cards_in(cards: Any, ignore: frozenset[str], text: str) -> list[OwnedCard]:
    """The owned cards of ``cards`` that ``text`` names (by id, name or alias)."""
    key = normalize(text, ignore)
    return [card for card in cards
            if key and any(normalize(name, ignore) == key for name in (card.id, card.name, *card.aliases))]
