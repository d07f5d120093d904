"""The price bases: ``rules/prices/*.toml``, one file per provider that rents
GPUs by the hour (its id, name and offer, and per card the USD per card-hour
on demand and on spot, each with the date it was read and where), and how
the cards of a knowledge base are priced from them.

A card is priced by one provider (``--provider``), or by default from the
cheapest basis of each card: its cheapest on-demand price, and its cheapest
spot price where that is below it. A price a person gives (``--price``) or
a user catalog gives stands; a card no basis prices keeps none (the rule
no-rental-price says so, naming the bases searched).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .records import ID_RE, Card, KnowledgeBase
from .source import N_, Problems, line_at, read_toml, shown

# The provider choice that is no provider: each card's cheapest basis.
CHEAPEST = "cheapest"
# A date as the files give it: a day, or a month where the source gives no day.
DATE_RE = re.compile(r"^20\d\d-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$")
TEXT_MAX = 400
MAX_PRICE = 1000.0
_PROVIDER_KEYS = ("id", "name", "offer", "url")
_PRICE_KEYS = {"card": True, "on_demand": True, "date": True, "source": True, "spot": False, "spot_date": False,
               "spot_source": False}


@dataclass(frozen=True)
class Price:
    """One card's price on one basis: USD per card-hour."""

    card: str
    on_demand: float
    date: str
    source: str
    spot: float | None = None
    spot_date: str = ""
    spot_source: str = ""
    line: int = 0


@dataclass(frozen=True)
class Basis:
    """One provider's prices (a file of ``rules/prices``)."""

    id: str
    name: str
    offer: str
    url: str
    prices: tuple[Price, ...]
    path: str = ""

    def price(self, card: str) -> Price | None:
        return next((price for price in self.prices if price.card == card), None)


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip()) and len(value) <= TEXT_MAX and value.isprintable()


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0.01 <= value <= MAX_PRICE


def checked_bases(folder: Path, problems: Problems) -> tuple[Basis, ...]:
    """The price bases of ``folder`` (``rules/prices``), in file-name order;
    each problem goes to ``problems`` at its file and line."""
    bases: list[Basis] = []
    seen: dict[str, str] = {}
    for path in sorted(folder.glob("*.toml")) if folder.is_dir() else ():
        doc, text = read_toml(path, problems)
        if not doc:
            continue
        where = str(path)
        _unknown_keys(doc, ("provider", "price"), "", where, text, problems)
        provider = doc.get("provider")
        if not isinstance(provider, dict):
            problems.add(where, 0, "[provider] is missing: id, name, offer and url")
            continue
        bad = False
        for key in _PROVIDER_KEYS:
            if not _text(provider.get(key)):
                problems.add(where, line_at(text, f"provider.{key}") or line_at(text, "provider"),
                             "[provider] %(key)s must be text of 1 to %(max)s characters", key=key, max=TEXT_MAX)
                bad = True
        bad = _unknown_keys(provider, _PROVIDER_KEYS, "provider.", where, text, problems) or bad
        if bad:
            continue
        basis_id = provider["id"]
        if not ID_RE.match(basis_id) or basis_id == CHEAPEST or basis_id != path.stem:
            problems.add(where, line_at(text, "provider.id"), "[provider] id must be kebab-case, not '%(cheapest)s', "
                         "and the file's name", cheapest=CHEAPEST)
            continue
        if basis_id in seen:
            problems.add(where, line_at(text, "provider.id"), "provider '%(id)s' is already defined in %(other)s",
                         id=basis_id, other=seen[basis_id])
            continue
        seen[basis_id] = where
        entries = doc.get("price", [])
        if not isinstance(entries, list) or not entries:
            problems.add(where, line_at(text, "price"), "no [[price]] tables")
            continue
        prices: list[Price] = []
        cards: set[str] = set()
        for n, entry in enumerate(entries):
            at = f"price[{n + 1}]"
            if not isinstance(entry, dict):
                problems.add(where, line_at(text, at), "price %(index)s must be a table", index=n + 1)
                continue
            ok = not _unknown_keys(entry, tuple(_PRICE_KEYS), f"{at}.", where, text, problems)
            for key, required in _PRICE_KEYS.items():
                if key not in entry:
                    if required:
                        problems.add(where, line_at(text, at), "price %(index)s: '%(key)s' is missing", index=n + 1,
                                     key=key)
                        ok = False
                    continue
                value = entry[key]
                if key in ("on_demand", "spot"):
                    good = _number(value)
                    message = N_("price %(index)s: '%(key)s' must be a number of USD per card-hour from 0.01 to 1000")
                elif key in ("date", "spot_date"):
                    good = isinstance(value, str) and bool(DATE_RE.match(value))
                    message = N_("price %(index)s: '%(key)s' must be a date (YYYY-MM-DD, or YYYY-MM)")
                elif key == "card":
                    good = isinstance(value, str) and bool(ID_RE.match(value))
                    message = N_("price %(index)s: '%(key)s' must be a card id")
                else:
                    good = _text(value)
                    message = N_("price %(index)s: '%(key)s' must be text of 1 to 400 characters")
                if not good:
                    problems.add(where, line_at(text, f"{at}.{key}"), message, index=n + 1, key=key)
                    ok = False
            if ok and "spot" in entry and ("spot_date" not in entry or "spot_source" not in entry):
                problems.add(where, line_at(text, f"{at}.spot"), "price %(index)s: a spot price needs its spot_date "
                             "and spot_source", index=n + 1)
                ok = False
            if ok and entry["card"] in cards:
                problems.add(where, line_at(text, f"{at}.card"), "price %(index)s: card '%(card)s' is priced twice",
                             index=n + 1, card=entry["card"])
                ok = False
            if not ok:
                continue
            cards.add(entry["card"])
            prices.append(Price(card=entry["card"], on_demand=float(entry["on_demand"]), date=entry["date"],
                                source=entry["source"],
                                spot=float(entry["spot"]) if "spot" in entry else None,
                                spot_date=entry.get("spot_date", ""), spot_source=entry.get("spot_source", ""),
                                line=line_at(text, f"{at}.card")))
        bases.append(Basis(id=basis_id, name=provider["name"], offer=provider["offer"], url=provider["url"],
                           prices=tuple(prices), path=where))
    return tuple(bases)


def _own(card: Card) -> bool:
    """A price the card brings itself: given by the person (--price) or by a user catalog."""
    return card.priced and not card.price_assumed and not card.price_provider


def names(bases: Iterable[Basis]) -> str:
    """The providers' names, as a message lists the bases searched."""
    return ", ".join(basis.name for basis in bases)


def _shipped(card: Card, shipped: Path | None) -> bool:
    """A card of the guide's catalog or of a shipped one (rules/catalogs): the
    cards the price bases are about. A user's card of the same id may be
    another card (a modded one with more memory): it keeps its catalog's terms."""
    if card.origin == "guide":
        return True
    if shipped is None:
        return False
    try:
        return Path(card.source).resolve().parent == shipped.resolve()
    except (OSError, RuntimeError, ValueError):
        return False


def priced(cards: Iterable[Card], bases: tuple[Basis, ...], provider: str = CHEAPEST,
           shipped: Path | None = None) -> tuple[Card, ...]:
    """``cards`` priced from ``bases``: by ``provider``'s alone, or by each
    card's cheapest (:data:`CHEAPEST`). Only the cards of the guide's catalog
    and of the shipped ones (in ``shipped``, rules/catalogs) are; one that
    brings its own price (--price, its catalog's) keeps it."""
    used = bases if provider == CHEAPEST else tuple(basis for basis in bases if basis.id == provider)
    searched = names(used)
    out = []
    for card in cards:
        if not card.price_provider and (_own(card) or not _shipped(card, shipped)):
            out.append(card)
            continue
        rows = [(basis, price) for basis in used if (price := basis.price(card.id)) is not None]
        if not rows:
            if card.price_provider:      # priced by another provider's basis: this one has no price for it
                card = replace(card, priced=False, price_on_demand=0.0, price_spot=0.0, price_source="",
                               spot_market=False)
            out.append(replace(card, price_provider="", price_date="", spot_provider="", spot_date="",
                               spot_source="", price_basis=searched))
            continue
        basis, price = min(rows, key=lambda row: (row[1].on_demand, row[0].id))
        spots = [(b, p, p.spot) for b, p in rows if p.spot is not None]
        spot_basis, spot, spot_price = min(spots, key=lambda row: (row[2], row[0].id)) if spots else (None, None, None)
        # a spot price is the run's only when it is below the cheapest on-demand one
        if spot_basis is None or spot is None or spot_price is None or spot_price >= price.on_demand:
            out.append(replace(
                card, priced=True, price_assumed=False, price_on_demand=price.on_demand,
                price_spot=price.on_demand, spot_market=False, price_source=price.source,
                price_provider=basis.name, price_date=price.date, spot_provider="", spot_date="", spot_source="",
                price_basis=basis.name))
            continue
        out.append(replace(
            card, priced=True, price_assumed=False, price_on_demand=price.on_demand, price_spot=spot_price,
            spot_market=True, price_source=price.source, price_provider=basis.name, price_date=price.date,
            spot_provider=spot_basis.name, spot_date=spot.spot_date, spot_source=spot.spot_source,
            price_basis=basis.name if spot_basis is basis else f"{basis.name}, {spot_basis.name}"))
    return tuple(aged(out, bases))


def _day(text: str) -> datetime.date:
    """A price's date (DATE_RE): a month without its day is read as its first."""
    return datetime.date.fromisoformat(text if len(text) == 10 else f"{text}-01")


def aged(cards: Iterable[Card], bases: tuple[Basis, ...]) -> list[Card]:
    """``cards`` with the age of their prices: the days between each one's date and the newest date of
    every basis (on demand or spot), so that an answer can say a price is old without reading a clock."""
    dates = [_day(d) for basis in bases for price in basis.prices for d in (price.date, price.spot_date) if d]
    if not dates:
        return list(cards)
    newest = max(dates)
    return [replace(card, price_age_days=(newest - _day(card.price_date)).days if card.price_date else 0,
                    spot_age_days=(newest - _day(card.spot_date)).days if card.spot_date else 0)
            for card in cards]


def for_provider(kb: KnowledgeBase, provider: str | None) -> KnowledgeBase:
    """``kb`` with its cards priced by ``provider`` (kb itself for the default,
    each card's cheapest basis, which the loader already applied). A dozen
    cards are priced again in microseconds: nothing is kept."""
    if not provider or provider == CHEAPEST or not kb.prices:
        return kb
    return replace(kb, catalog=priced(kb.catalog, kb.prices, provider, kb.root / "catalogs"))


def for_profile(kb: KnowledgeBase, profile: Mapping[str, Any]) -> KnowledgeBase:
    """``kb`` priced by the profile's provider."""
    return for_provider(kb, profile.get("provider"))


def _unknown_keys(table: Mapping[str, Any], known: tuple[str, ...], prefix: str, where: str, text: str,
                  problems: Problems) -> bool:
    """Report each key of ``table`` not in ``known`` (at ``prefix`` + key); True when there was one."""
    unknown = [key for key in table if key not in known]
    for key in unknown:
        problems.add(where, line_at(text, f"{prefix}{key}"), "unknown key '%(key)s' (known: %(known)s)",
                     key=shown(key), known=", ".join(known))
    return bool(unknown)
