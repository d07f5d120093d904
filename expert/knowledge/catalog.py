"""GPU catalogs: the guide's ``rules/catalog.toml`` and the user catalogs
that add cards to it or replace cards of the same id.

Every value of a card is checked for its type and range before a card is
built, so a catalog that is not what it should be is a
:class:`~expert.errors.KnowledgeBaseError` naming the file and line, never
another exception: a user catalog may come from anyone.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from .. import paths as rules_paths
from ..errors import KnowledgeBaseError
from .prices import priced
from .records import COSTS, H_RE, ID_RE, METHODS, SEGMENTS, VENDORS, Card, KnowledgeBase
from .source import MAX_SIZE, Problems, line_at, read_toml, shown

# The keys of a card: what each holds and the values it accepts.
#   ("id",)                 kebab-case, at most ID_MAX characters, not "own"
#   ("text", n)             1 to n printable characters
#   ("choice", codes)       one of codes
#   ("number", low, high)   a finite number from low to high
#   ("whole", low, high)    a whole number from low to high
#   ("bool",)               true or false
#   ("list", kind)          a list of METHODS ("methods") or H-ids ("hids")
ID_MAX = 40
NAME_MAX = 80
# A card's short name, the one every answer shows (the options table, the
# chart, the "Not recommended" line): "1 × " and 16 characters fit the
# table's first column at 80 columns beside the memory, time, cost and price
# columns of a priced option (docs/knowledge-base.md).
SHORT_MAX = 16
# The names people write for a card (``aliases``: its number alone, nvidia-smi's name), read
# as owned.Reader reads names: at most so many, each so long.
ALIASES_MAX = 16
ALIAS_MAX = 40
# An alias that reads as a VRAM figure ("24", "16 GB") would hide that figure.
_FIGURE = re.compile(r"^(\d+(?:[.,]\d+)?)(?:gb|gib|g)?$")
SEPARATORS = re.compile(r"[\s_\-]+")
TEXT_MAX = 300
MAX_SIZE_B = 20_000        # the profile's largest model size (rules/profile.toml)
INTERCONNECTS = {"nvlink": True, "infinity-fabric": True, "infiniband": True, "pcie": False}
_CARD_KEYS: dict[str, tuple[Any, ...]] = {
    "id": ("id",), "name": ("text", NAME_MAX), "short": ("text", SHORT_MAX), "vendor": ("choice", VENDORS),
    "vram_gb": ("number", 1, 1024),
    "devices": ("whole", 1, 64), "cost": ("choice", COSTS), "segment": ("choice", SEGMENTS),
    "interconnect": ("choice", tuple(INTERCONNECTS)), "link_gbs": ("number", 1, 100_000),
    "per_node": ("whole", 1, 64), "bf16_tflops": ("number", 1, 100_000),
    "memory_bandwidth_gbs": ("number", 1, 1_000_000), "hardware_source": ("text", TEXT_MAX),
    "price_on_demand": ("number", 0.01, 1000), "price_spot": ("number", 0.01, 1000),
    "price_source": ("text", TEXT_MAX), "bf16": ("bool",), "chip": ("text", NAME_MAX),
    "public_price": ("bool",), "memory_mib": ("number", 1, 1024 * 1024), "memory_source": ("text", TEXT_MAX),
    "ideal_methods": ("list", "methods"), "ideal_min_b": ("number", 0, MAX_SIZE_B),
    "ideal_max_b": ("number", 0, MAX_SIZE_B), "heuristics": ("list", "hids"), "aliases": ("names",),
}
# The fields of Card a [[gpu]] table gives under the same name, each made
# its Card type; the other fields of Card (DERIVED) are worked out below.
_AS_TYPE: dict[str, Any] = {"float": float, "int": int, "str": str, "bool": bool, "tuple[str, ...]": tuple}
COPIED = tuple((field.name, _AS_TYPE[str(field.type)]) for field in fields(Card) if field.name in _CARD_KEYS)
DERIVED = ("fast_interconnect", "source", "origin", "speed_assumed", "price_assumed", "priced", "spot_market",
           "price_provider", "price_date", "spot_provider", "spot_date", "spot_source", "price_basis",
           "price_age_days", "spot_age_days", "speed_of")     # "" for a catalog's card; one's own GPU is timed as the card named (requirement.py)
# The guide's catalog gives every key but the prices (rules/prices gives those).
GUIDE_REQUIRED = tuple(key for key in _CARD_KEYS if key not in ("aliases", "price_on_demand", "price_spot", "price_source",
                                                              "bf16", "chip", "public_price"))
# A user catalog needs only these (a card without a short name goes by its name); the rest take the defaults below, and a
# card without bf16_tflops or prices is marked (a rule warns when it is picked).
# A card without memory_mib has 0 there: its driver's figure is not known.
USER_REQUIRED = ("id", "name", "vendor", "vram_gb", "cost")
# A catalog that ships with the package (rules/catalogs) gives its cards'
# datasheet figures and the memory their drivers report, each with its source.
SHIPPED_REQUIRED = (*USER_REQUIRED, "short", "segment", "interconnect", "link_gbs", "per_node", "bf16_tflops",
                    "memory_bandwidth_gbs", "hardware_source", "memory_mib", "memory_source")
# The memory a driver reports is what the card is sold with (vram_gb, in GiB)
# less what ECC and the driver keep: ECC on GDDR memory takes 6.25 % of it,
# and no driver reports more than the card has. A figure outside these
# shares of vram_gb x 1,024 MiB is not a driver's reading of that card.
MEMORY_SHARE = (0.9, 1.0)
USER_OPTIONAL: dict[str, tuple[Any, ...]] = {"source": ("text", TEXT_MAX), "fast_interconnect": ("bool",)}
USER_DEFAULTS: dict[str, Any] = {
    "devices": 1, "segment": "datacenter", "interconnect": "pcie", "link_gbs": 32, "per_node": 8,
    "memory_bandwidth_gbs": 1000, "hardware_source": "not given", "price_source": "not given",
    "ideal_methods": [], "ideal_min_b": 0, "ideal_max_b": 0, "heuristics": [],
}
# The user catalogs given together: at most so many files and cards. An
# advice costs time in proportion to the cards (a configuration carries its
# card, so nothing is paired), about 2-5 ms of CPU and 0.1 MB a card, and an
# explanation several times that: 2,000 cards, the most, take 4.0 s and
# 271 MB to advise on a quiet machine (bench/scaling.py, 2026-12-06); 10,000
# took 42.6 s and 1.29 GB (issue 48), beyond its 15 s and 600 MB, so a
# catalog that large is refused before any consultation (docs/performance.md).
MAX_CATALOGS = 16
# The guide's catalog: given as a catalog, it means the guide's cards alone.
GUIDE_CATALOG = rules_paths.RULES / "catalog.toml"
MAX_USER_CARDS = 2_000
# Characters a name or text may not hold: controls (Cc), formatting and
# bidirectional controls (Cf), line and paragraph separators, unassigned and
# private-use code points.
_UNPRINTABLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def _bad_character(text: str) -> str | None:
    """The first character of ``text`` a name may not hold (as U+XXXX), or None."""
    if text.isprintable():      # false for every character of _UNPRINTABLE (and for a few others, looked at below)
        return None
    for char in text:
        if unicodedata.category(char) in _UNPRINTABLE:
            return f"U+{ord(char):04X}"
    return None


def _is_number(value: Any, low: float, high: float) -> bool:
    """A number (not a boolean) from ``low`` to ``high``: never NaN or infinite."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high


class CardChecker:
    """The problems of one [[gpu]] table, at the line of the key they are about."""

    def __init__(self, path: Path, text: str, index: int, entry: dict[str, Any], problems: Problems,
                 table: str = "gpu") -> None:
        self.path, self.text, self.index, self.problems = path, text, index, problems
        self.where = f"{table}[{index + 1}]"
        self.ok = True
        card_id = entry.get("id")
        # how messages name it: its id if it has a sound one, else its number
        self.sound_id = isinstance(card_id, str) and len(card_id) <= ID_MAX and bool(ID_RE.match(card_id)) \
            and card_id != "own"
        self.name: str = card_id if isinstance(card_id, str) and self.sound_id else f"#{index + 1}"

    def line(self, at: str | None = None) -> int:
        return line_at(self.text, f"{self.where}.{at}" if at else self.where)

    def bad(self, at: str | None, template: str, **params: Any) -> None:
        """A problem at the line of the key ``at`` (of the card's table if None)."""
        self.problems.add(str(self.path), self.line(at), template, index=self.index + 1, **params)
        self.ok = False

    def choice(self, key: str, known: tuple[str, ...]) -> None:
        if key == "vendor":
            self.bad(key, "card '%(id)s': vendor must be one of %(known)s", id=self.name, known=", ".join(known))
        elif key == "cost":
            self.bad(key, "card '%(id)s': cost must be one of %(known)s", id=self.name, known=", ".join(known))
        elif key == "segment":
            self.bad(key, "card '%(id)s': segment must be one of %(known)s", id=self.name, known=", ".join(known))
        else:
            self.bad(key, "card %(index)s: '%(key)s' must be one of %(known)s", key=key, known=", ".join(known))

    def value(self, key: str, value: Any, spec: tuple[Any, ...]) -> None:
        """Check one value against its spec."""
        kind = spec[0]
        if kind == "id":
            if not isinstance(value, str) or len(value) > ID_MAX or not ID_RE.match(value):
                self.bad(key, "card %(index)s: 'id' must be kebab-case (a-z, 0-9, single hyphens), at most "
                              "%(max)s characters", max=ID_MAX)
            elif value == "own":
                self.bad(key, "card %(index)s: the id 'own' is reserved for your own GPU")
        elif kind == "text":
            if not isinstance(value, str):
                self.bad(key, "card %(index)s: '%(key)s' must be text", key=key)
            elif not value.strip() or len(value) > spec[1]:
                self.bad(key, "card %(index)s: '%(key)s' must be 1 to %(max)s characters long, not blank", key=key,
                         max=spec[1])
            elif (char := _bad_character(value)) is not None:
                self.bad(key, "card %(index)s: '%(key)s' holds a control or formatting character (%(char)s)",
                         key=key, char=char)
        elif kind == "choice":
            if not isinstance(value, str) or value not in spec[1]:
                self.choice(key, spec[1])
        elif kind == "number":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (
                    value == 0 and spec[1] > 0):
                self.bad(key, "card %(index)s: '%(key)s' must be a positive number", key=key)
            elif not _is_number(value, spec[1], spec[2]):      # too small or large, infinite or NaN
                self.bad(key, "card %(index)s: '%(key)s' must be a number from %(min)s to %(max)s", key=key,
                         min=spec[1], max=spec[2])
        elif kind == "whole":
            if isinstance(value, bool) or not isinstance(value, int) or not spec[1] <= value <= spec[2]:
                self.bad(key, "card %(index)s: '%(key)s' must be a whole number from 1 to 64", key=key)
        elif kind == "bool":
            if not isinstance(value, bool):
                self.bad(key, "card %(index)s: '%(key)s' must be true or false", key=key)
        elif kind == "names":
            self.names(key, value)
        elif spec[1] == "methods":
            if (not isinstance(value, list) or len(value) > len(METHODS)
                    or not all(isinstance(m, str) and m in METHODS for m in value)):
                self.bad(key, "card %(index)s: '%(key)s' must list methods of %(known)s", key=key,
                         known=", ".join(METHODS))
        elif (not isinstance(value, list) or len(value) > 39        # H1 to H39
              or not all(isinstance(h, str) and H_RE.match(h) for h in value)):
            self.bad(key, "card %(index)s: '%(key)s' must list H-ids from H1 to H39", key=key)

    def names(self, key: str, value: Any) -> None:
        """The names people write for the card (``aliases``): a list of short
        texts, none of which reads as a VRAM figure."""
        if (not isinstance(value, list) or len(value) > ALIASES_MAX
                or not all(isinstance(a, str) and a.strip() and len(a) <= ALIAS_MAX and _bad_character(a) is None
                           for a in value)):
            self.bad(key, "card %(index)s: 'aliases' must list at most %(max)s names of 1 to %(most)s "
                          "characters", max=ALIASES_MAX, most=ALIAS_MAX)
            return
        for alias in value:
            figure = _FIGURE.match(normalize(alias))
            if figure and float(figure.group(1).replace(",", ".")) <= _CARD_KEYS["vram_gb"][2]:
                self.bad(key, "card %(index)s: the alias '%(alias)s' reads as a VRAM figure", alias=shown(alias))


def normalize(text: str, ignore: frozenset[str] = frozenset()) -> str:
    """A name as it is compared: lower case, without spaces, hyphens,
    underscores or the words of ``ignore``."""
    words = [word for word in SEPARATORS.split(text.strip().lower()) if word and word not in ignore]
    return "".join(words)


def catalog_cards(path: Path, doc: dict[str, Any], text: str, problems: Problems, user: bool = False,
             seen: dict[str, tuple[str, int]] | None = None, room: int | None = None,
             default_tflops: float = 0.0, class_prices: dict[str, float] | None = None,
             shipped: bool = False) -> tuple[Card, ...]:
    """The cards of one catalog file; each problem goes to ``problems``.

    ``user`` for a catalog of user cards, with defaults; ``shipped`` for one
    of them that ships with the package (rules/catalogs), which gives more.

    ``seen`` maps the ids of the user catalogs read before to their file and
    line (an id may be defined once in all of them); ``room`` is how many
    cards may still be added. A user card without ``bf16_tflops`` takes
    ``default_tflops``, one without prices the price of its cost class."""
    cards: list[Card] = []
    seen = {} if seen is None else seen
    here: dict[str, int] = {}
    for key in doc:
        if key != "gpu":
            problems.add(str(path), line_at(text, key), "unknown key '%(key)s' (known: %(known)s)", key=shown(key),
                         known="gpu")
    entries = doc.get("gpu")
    if entries is not None and not isinstance(entries, list):
        problems.add(str(path), line_at(text, "gpu"), "'gpu' must be an array of [[gpu]] tables")
        return ()
    if not entries:
        problems.add(str(path), line_at(text, "gpu"), "no [[gpu]] tables")
        return ()
    if room is not None and len(entries) > room:
        problems.add(str(path), line_at(text, f"gpu[{room + 1}]"),
                     "too many cards: the user catalogs given together may have at most %(max)s", max=MAX_USER_CARDS)
        return ()
    specs = {**_CARD_KEYS, **(USER_OPTIONAL if user else {})}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            problems.add(str(path), line_at(text, f"gpu[{index + 1}]"),
                         "card %(index)s must be a [[gpu]] table of keys and values", index=index + 1)
            continue
        card = CardChecker(path, text, index, entry, problems)
        for key in entry:
            if key not in specs:
                card.bad(key, "unknown key '%(key)s' (known: %(known)s)", key=shown(key), known=", ".join(specs))
        for key in ((SHIPPED_REQUIRED if shipped else USER_REQUIRED) if user else GUIDE_REQUIRED):
            if key not in entry:
                card.bad(None, "card %(index)s: '%(key)s' is missing", key=key)
        for key, spec in specs.items():
            if key in entry:
                card.value(key, entry[key], spec)
        card_id = card.name
        if not card.sound_id:
            pass
        elif card_id in here:
            card.bad("id", "card id '%(id)s' must be unique: it is already used at line %(first)s", id=card_id,
                     first=here[card_id])
        elif card_id in seen:
            other, other_line = seen[card_id]
            other = "%s:%s" % (other, other_line) if other_line else other
            card.bad("id", "card id '%(id)s' must be unique: it is already used in %(other)s", id=card_id, other=other)
        else:
            here[card_id] = card.line("id")
        if not card.ok:
            continue
        if user:
            entry = {**USER_DEFAULTS, **{k: v for k, v in entry.items() if k in specs}}
        if entry["ideal_min_b"] > entry["ideal_max_b"]:
            card.bad("ideal_min_b", "card %(index)s: 'ideal_min_b' must not be above 'ideal_max_b'")
            continue
        low, high = (round(share * entry["vram_gb"] * 1024) for share in MEMORY_SHARE)
        if "memory_mib" in entry and not low <= entry["memory_mib"] <= high:
            card.bad("memory_mib", "card %(index)s: 'memory_mib' must be the memory its driver reports, in MiB: "
                     "from %(min)s to %(max)s for a card of %(vram)s GB", min=low, max=high, vram=entry["vram_gb"])
            continue
        speed_assumed, price_assumed = "bf16_tflops" not in entry, "price_on_demand" not in entry
        # The shipped catalogs give no prices: the price bases (rules/prices)
        # do, where a provider rents the card, and a card none rents has
        # none; public_price = false says the same of a user catalog's card
        # (no price, rather than its class's).
        unpriced = entry.get("public_price") is False or ((not user or shipped) and price_assumed)
        if unpriced and not price_assumed:
            card.bad("public_price", "card %(index)s: a card with public_price = false gives no prices")
            continue
        # A spot price above the on-demand one is `expert check`'s to report.
        on_demand: float = entry.get("price_on_demand", class_prices[entry["cost"]] if class_prices else 0.0)
        # A catalog that says fast_interconnect = true without naming the link gets NVLink.
        fast = entry.get("fast_interconnect", INTERCONNECTS[entry["interconnect"]])
        interconnect = entry["interconnect"] if fast == INTERCONNECTS[entry["interconnect"]] else (
            "nvlink" if fast else "pcie")
        cards.append(Card(**{
            **{name: kind(entry[name]) for name, kind in COPIED if name in entry},
            "id": card_id, "short": str(entry.get("short", "")), "fast_interconnect": fast, "interconnect": interconnect,
            "price_source": str(entry.get("price_source", "")),
            "bf16_tflops": float(entry.get("bf16_tflops", default_tflops)),
            "price_on_demand": float(on_demand), "price_spot": float(entry.get("price_spot", on_demand)),
            "source": str(path), "origin": path.name if user else "guide", "speed_assumed": speed_assumed,
            # public_price = false: no public rental price (the card is not
            # priced, and a rule says so); otherwise a card without prices
            # takes its cost class's, marked assumed.
            "price_assumed": price_assumed and unpriced is False, "priced": not unpriced,
            "spot_market": "price_spot" in entry}))
    seen.update({card_id: (str(path), line) for card_id, line in here.items()})
    return tuple(cards)


def market_cards(folder: Path, guide: tuple[Card, ...], timing: dict[str, Any], ranking: dict[str, Any],
                 problems: Problems) -> tuple[Card, ...]:
    """The cards of the catalogs that ship with the package (``rules/catalogs``,
    file by file in name order): today's market, weighed beside the guide's
    cards unless a person asks for the guide alone (``--catalog guide``). Each
    card gives its datasheet figures and the memory its driver reports; an
    id of the guide's catalog or of another shipped catalog is refused."""
    cards: list[Card] = []
    seen = {card.id: (str(folder.parent / "catalog.toml"), 0) for card in guide}
    # an answer names a card by its short name alone: no two cards the package ships share one
    shorts = {card.short.casefold(): card.id for card in guide}
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else ():
        before = len(problems.items)
        if not path.exists() and not path.is_symlink():     # "file is missing" named no catalog, nor what is
            problems.add(str(path), 0, "no such catalog: neither a shipped one (%(names)s) nor a file that "
                         "exists", names=", ".join(shipped_names()))
            continue
        doc, text = read_toml(path, problems)
        if len(problems.items) == before:
            found = catalog_cards(path, doc, text, problems, user=True, seen=seen, shipped=True,
                                  default_tflops=timing["unknown_card"]["bf16_tflops"],
                                  class_prices=ranking["class_price"])
            for index, card in enumerate(found):
                other = shorts.setdefault(card.short.casefold(), card.id)
                if other != card.id:
                    problems.add(str(path), line_at(text, f"gpu[{index + 1}].short"),
                                 "card '%(id)s': its short name '%(short)s' is already that of card '%(other)s'",
                                 id=card.id, short=card.short, other=other)
            cards += found
    return tuple(cards)


def _same(path: Path, other: Path) -> bool:
    """``path`` and ``other`` are the same file."""
    try:
        return path.resolve() == other.resolve()
    except (OSError, RuntimeError, ValueError):
        return False


@functools.lru_cache(maxsize=1024)
def shipped_card(source: str, root: Path) -> bool:
    """A card read from a catalog that ships with the package (``rules/catalogs``
    of the knowledge base at ``root``), rather than from a person's own.

    Answered once per file and knowledge base: every text names cards by
    it, and resolving both paths (a system call per part) was a twentieth of
    an advise() with today's market (23 cards; bench/bench.py, 2026-12-07)."""
    return _in(Path(source), root / "catalogs")


def shipped_names() -> list[str]:
    """The names a shipped catalog is given by (knowledge.bases.shipped_catalogs, which imports this module)."""
    return sorted(["guide", *(path.stem for path in (rules_paths.RULES / "catalogs").glob("*.toml"))])


def _in(path: Path, folder: Path) -> bool:
    """``path`` is a file of ``folder``."""
    try:
        return path.resolve().parent == folder.resolve()
    except (OSError, RuntimeError, ValueError):
        return False


def with_catalogs(kb: KnowledgeBase, catalogs: Iterable[Path | str]) -> KnowledgeBase:
    """``kb`` with the cards of user catalogs added, or replacing the card of the same id.

    Every file is checked whole first; on any problem nothing is merged. A
    catalog is a regular file named ``*.toml`` of at most 2 MB; the catalogs
    given together hold at most :data:`MAX_USER_CARDS` cards, and each id once
    (the same file given twice counts once). The guide's own catalog
    (``rules/catalog.toml``, the shipped name ``guide``) means the guide's
    cards alone, with those of the other catalogs given beside it; a shipped
    market catalog (``rules/catalogs``) is in ``kb`` already.
    """
    problems = Problems()
    alone = False
    added: list[Card] = []
    seen: dict[str, tuple[str, int]] = {}
    paths: dict[str, Path] = {}
    for name in catalogs:
        path = Path(name)
        try:
            key = str(path.resolve())
        except (OSError, RuntimeError, ValueError):
            key = str(path)
        paths.setdefault(key, path)
    loaded = {card.source for card in kb.catalog if card.origin != "guide"}
    named: set[str] = set()         # the shipped market catalogs given by name or path
    kept: dict[str, Path] = {}
    for key, path in paths.items():
        if _same(path, kb.root / "catalog.toml") or _same(path, GUIDE_CATALOG):
            alone = True
            continue
        same = {source for source in loaded if Path(source).name == path.name and _same(path, Path(source))}
        named |= same
        if not same:
            kept[key] = path
    paths = kept
    for n, path in enumerate(paths.values()):
        if n == MAX_CATALOGS:
            problems.add(str(path), 0, "too many catalogs: at most %(max)s may be given together", max=MAX_CATALOGS)
            break
        if path.suffix.lower() != ".toml":
            problems.add(str(path), 0, "is not a catalog: a catalog is a shipped one by name (%(names)s) or a file "
                         "named *.toml of at most %(limit)s", names=", ".join(shipped_names()), limit=MAX_SIZE)
            continue
        before = len(problems.items)
        if not path.exists() and not path.is_symlink():     # "file is missing" named no catalog, nor what is
            problems.add(str(path), 0, "no such catalog: neither a shipped one (%(names)s) nor a file that "
                         "exists", names=", ".join(shipped_names()))
            continue
        doc, text = read_toml(path, problems)
        if len(problems.items) == before:
            added += catalog_cards(path, doc, text, problems, user=True, seen=seen, room=MAX_USER_CARDS - len(added),
                              default_tflops=kb.timing["unknown_card"]["bf16_tflops"],
                              class_prices=kb.ranking["class_price"], shipped=_in(path, kb.root / "catalogs"))
    if problems.items:
        raise KnowledgeBaseError(problems.items)
    merged = {card.id: card for card in kb.catalog if not alone or card.origin == "guide" or card.source in named}
    for card in added:
        merged[card.id] = card
    # A card of a shipped catalog (rules/catalogs) takes the price bases' prices (rules/prices).
    return replace(kb, catalog=priced(tuple(merged.values()), kb.prices, shipped=kb.root / "catalogs"))
