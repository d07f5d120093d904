"""The cards people own (``rules/owned.toml``), and finding one by the name
a person writes: with or without the vendor's brand, an article, spaces or
hyphens (the file's ``ignore`` words and aliases say how), its form factor
counted where a card is named with one (the file's ``form_factors``).

Each ``[[card]]`` table is checked like a catalog card (file and line of
every problem); :data:`OWNED_KEYS` is the one place that says which keys a
card has, so a new figure (a speed) is one more entry there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .catalog import ALIAS_MAX, ALIASES_MAX, NAME_MAX, SEPARATORS, TEXT_MAX, CardChecker, normalize
from .records import Card, OwnedCard, UnsupportedDevice
from .source import Problems, line_at, shown

# The keys of an owned card and the values each accepts (see catalog._CARD_KEYS).
OWNED_KEYS: dict[str, tuple[Any, ...]] = {
    "id": ("id",), "name": ("text", NAME_MAX), "vram_gb": ("number", 1, 1024), "source": ("text", TEXT_MAX),
    "bf16_tflops": ("number", 1, 100_000), "memory_bandwidth_gbs": ("number", 1, 1_000_000),
    "hardware_source": ("text", TEXT_MAX), "bf16": ("bool",),
}
IGNORE_MAX = 64


class Reader:
    """How names are compared: the words that never count (``ignore``) and
    those that count only where a card is named with one (``forms``, the
    form factors)."""

    def __init__(self, ignore: frozenset[str] = frozenset(), forms: frozenset[str] = frozenset()) -> None:
        self.ignore = ignore
        self.forms = forms
        self._bare = ignore | forms

    def matching(self, text: str, named: list[tuple[Any, tuple[str, ...]]]) -> list[Any]:
        """The items of ``named`` (each with its names) that ``text`` names:
        those named so with the form factor words kept; when none is, those
        named so without them, by a name of theirs that carries none."""
        key = normalize(text, self.ignore)
        if not key:
            return []
        found = [item for item, names in named if any(normalize(name, self.ignore) == key for name in names)]
        bare = normalize(text, self._bare)
        if found or not bare:
            return found
        return [item for item, names in named
                if any(normalize(name, self._bare) == bare and not self.has_form(name) for name in names)]

    def has_form(self, name: str) -> bool:
        return any(word in self.forms for word in SEPARATORS.split(name.strip().lower()))


def _words(doc: dict[str, Any], key: str, path: Path, text: str, problems: Problems) -> frozenset[str]:
    listed = doc.get(key, [])
    if not isinstance(listed, list) or len(listed) > IGNORE_MAX or not all(
            isinstance(w, str) and w and not SEPARATORS.search(w) and len(w) <= ALIAS_MAX for w in listed):
        problems.add(str(path), line_at(text, key), "'%(key)s' must list at most %(max)s single words",
                     key=key, max=IGNORE_MAX)
        return frozenset()
    return frozenset(w.lower() for w in listed)


def owned_cards(path: Path, doc: dict[str, Any], text: str, catalog: tuple[Card, ...],
           problems: Problems) -> tuple[Reader, tuple[str, ...], tuple[OwnedCard, ...]]:
    """How names are read (the words to ignore, the form factors), the names
    messages give as examples and the owned cards, checked."""
    ignore = _words(doc, "ignore", path, text, problems)
    reader = Reader(ignore, _words(doc, "form_factors", path, text, problems) - ignore)
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
        card.names("aliases", aliases)
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
    catalog_ids = {c.id for c in catalog}
    for owned in cards:
        if owned.id in catalog_ids:
            problems.add(str(path), owned.line, "card '%(id)s' is a card of the catalog: give the names people "
                         "write for it as that card's aliases there", id=owned.id)
    known = [(card.id, card.names) for card in cards] + [(card.id, card.names) for card in catalog]
    for example in examples if not problems.items else ():    # (a broken card would name no card)
        if not reader.matching(example, known):
            problems.add(str(path), line_at(text, "examples"), "the example '%(name)s' names no card",
                         name=shown(example))
    return reader, tuple(examples), tuple(cards)


# The keys of a device people name that no recipe here can run on ([[unsupported]]).
UNSUPPORTED_KEYS: dict[str, tuple[Any, ...]] = {
    "id": ("id",), "name": ("text", NAME_MAX), "reason": ("text", 4 * TEXT_MAX), "source": ("text", 4 * TEXT_MAX),
}


def unsupported_devices(path: Path, doc: dict[str, Any], text: str,
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
    found = Reader(kb.owned_ignore, kb.owned_forms).matching(text, [(device, device.names) for device in kb.unsupported])
    return found[0] if found else None


def find_cards(kb: Any, text: str) -> list[tuple[str, str, float]]:
    """The cards ``text`` names, as (id, name, VRAM of one device), among the
    owned cards and every catalog's, weighed or not (``kb.known_cards``: the
    market's under ``--catalog guide`` too), each by its id, name, short name
    and aliases. Several when the name is ambiguous ("V100"), none
    when it names no card. A name that names none but ends in a digit and
    an "s" is read as a plural ("3090s"): a card whose name ends in an "S"
    is that card first."""
    found = _named(kb, text)
    plural = text.strip()
    if not found and re.search(r"\ds\Z", plural, re.IGNORECASE):
        found = _named(kb, plural[:-1])
    return found


def _named(kb: Any, text: str) -> list[tuple[str, str, float]]:
    reader = Reader(kb.owned_ignore, kb.owned_forms)
    # The owned cards and the catalogs' (each card once: a shipped catalog's
    # card gives its names there, rules/catalogs), as one list: the name read
    # with its form factor first, over both (a catalog's PCIe card before an
    # owned card of the same chip whose names carry no form factor). The
    # shipped cards not weighed (the market's, under --catalog guide) are
    # named too: one's own card is the card it is whatever catalog is
    # weighed, with the one set of figures its catalog gives it.
    named = [((card.id, card.name, card.vram_gb), card.names) for card in kb.owned]
    named += [((gpu.id, gpu.name, gpu.vram_gb / gpu.devices), gpu.names) for gpu in kb.known_cards()]
    chosen: dict[str, tuple[str, str, float]] = {}
    for card_id, name, vram in reader.matching(text, named):
        chosen.setdefault(card_id, (card_id, name, vram))
    return list(chosen.values())
