"""Languages, translations and locale-aware formatting.

English is the source language; every other language is a gettext catalog in
``locales/`` compiled to ``.mo`` at build time. A missing catalog is an error,
never a silent fall-back to English.
"""

from __future__ import annotations

import gettext as _gettext
import math
import os
import re
import struct
import threading
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from decimal import ROUND_HALF_UP, Decimal
from functools import cache, lru_cache
from typing import Any, Literal, TypeGuard

from . import paths
from .errors import InputError
from .escape import quoted

Lang = Literal["en", "es"]
SUPPORTED: tuple[Lang, ...] = ("en", "es")
DOMAIN = "messages"
_LANG_RE = re.compile(r"^([a-zA-Z]{2,3})(?:[_-][a-zA-Z0-9]+)?(?:\.[\w-]+)?(?:@\w+)?$")


# Who an answer speaks to, where it says how to give a value (a refusal's field, an advice's setting):
# "cli", the command line's flags; "library", advise()'s keywords (the default: who calls the library
# passes keywords); "tools", an assistant calling tools over MCP, which has no flags: it is told the tool's
# argument; "web", a person at the page of `expert serve`: the form's field. Each way in sets it around its
# call (interfaces/cli/main.py, interfaces/mcp/server.py, interfaces/web/app.py); "ask", a person in the
# consultation of `expert ask` (interfaces/cli/ask.py), which takes fewer flags than `expert advise`: its own,
# or the command that takes a setting it does not ask, named with it. The words of each setting on each way
# are in rules/labels.toml [how_cli], [how_ask], [how_library], [how_tools], [how_web].
WayIn = Literal["cli", "ask", "library", "tools", "web"]
WAYS_IN: tuple[WayIn, ...] = ("cli", "ask", "library", "tools", "web")
WAY_IN: ContextVar[WayIn] = ContextVar("expert_way_in", default="library")


def for_tools() -> bool:
    """Whether what is being answered is a tool call (MCP): name its arguments, not flags."""
    return WAY_IN.get() == "tools"


def served() -> bool:
    """Whether the asker is away from this machine (a tool call over MCP, a visitor of the web page): no
    file of theirs can be named, and the Hugging Face cache and token are the server's."""
    return WAY_IN.get() in ("tools", "web")


class CatalogMissing(RuntimeError):
    """The compiled catalog of a supported language is not installed."""


def _language_of(value: str) -> str | None:
    match = _LANG_RE.match(value.strip())
    return match.group(1).lower() if match else None


def _supported(lang: str | None) -> TypeGuard[Lang]:
    return lang in SUPPORTED


def accepted_language(header: str) -> Lang | None:
    """The language of ours an HTTP ``Accept-Language`` header prefers (the highest ``q``, the first of
    equals), or None when it names none of ours. Only its first 200 characters and 20 entries are read."""
    best: Lang | None = None
    best_q = 0.0
    for part in header[:200].split(",")[:20]:
        tag, _, params = part.strip().partition(";")
        code = _language_of(tag.strip()) if tag.strip() != "*" else None
        try:
            q = float(params.strip()[2:]) if params.strip().startswith("q=") else 1.0
        except ValueError:
            q = 0.0
        if _supported(code) and q > best_q:
            best, best_q = code, q
    return best


def resolve_lang(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> Lang:
    """``explicit``, else ``EXPERT_LANG``, else ``LC_ALL``/``LANG``, else English.

    An explicit or ``EXPERT_LANG`` value that is not supported is an error;
    a system locale that is not supported (``fr_FR``, ``C``) means English.
    """
    env = os.environ if environ is None else environ
    for source, value in (("lang", explicit), ("EXPERT_LANG", env.get("EXPERT_LANG"))):
        if value is None or (source == "EXPERT_LANG" and not value.strip()):
            continue
        lang = _language_of(value) if isinstance(value, str) else None
        if not _supported(lang):
            raise InputError(source, f"{source}: '{quoted(value)}' is not a supported language; accepted: "
                                     + ", ".join(SUPPORTED))
        return lang
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name)
        if value:
            lang = _language_of(value)
            return lang if _supported(lang) else "en"
    return "en"


_LOCK = threading.Lock()


@cache
def translations(lang: str, localedir: str | None = None) -> _gettext.NullTranslations:
    if lang == "en":
        return _gettext.NullTranslations()
    directory = localedir or str(paths.LOCALES)
    try:
        with _LOCK:
            return _gettext.translation(DOMAIN, directory, languages=[lang])
    except (OSError, struct.error, UnicodeError, ValueError):   # missing, or damaged (cut short, not a catalog)
        raise CatalogMissing(
            f"the '{lang}' message catalog is not compiled in {directory}, or is damaged "
            f"(expected {lang}/LC_MESSAGES/{DOMAIN}.mo); reinstall the package with 'pip install .'"
        ) from None


class Localizer:
    """Translate and format for one language."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.translations = translations(lang)

    def gettext(self, message: str) -> str:
        return self.translations.gettext(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self.translations.ngettext(singular, plural, n)

    def number(self, value: float, digits: int = 1) -> str:
        return _number(value, digits, self.lang)

    def gib(self, value: float) -> str:
        """An amount of memory in GiB (2**30 bytes), the one unit memory is
        shown in: cards are sold and their drivers report in it. CLDR has no
        gibibyte, so the number is babel's and the symbol is "GiB" in every
        language (the IEC's symbol, which Spanish writes too): "20.2 GiB",
        "20,2 GiB"."""
        return _gib(value, self.lang)

    def hours(self, value: float) -> str:
        """A duration; under an hour, in whole minutes (never "0 hr", never
        "60 min"), else in hours to a tenth. One rounding everywhere: a run
        reads the same in an option, the chart, WHY NOT and WHAT IF."""
        return _hours(value, self.lang)

    def hours_alone(self, value: float) -> str:
        """A duration read on its own, as the options table and the "Time and cost" chart show a run:
        under a minute, "< 1 min" (:meth:`hours` rounds it up to the "1 min" a minute's run reads too),
        as :meth:`gib_part` writes a part of memory; as short in Spanish as in English, so that the
        table's time column ("< 1 min, tarde") leaves a card's name its room at 80 columns."""
        if float(f"{value:.4g}") * 60 < 1:
            return "< " + _unit(1, "duration-minute", self.lang)
        return _hours(value, self.lang)

    def gib_part(self, value: float) -> str:
        """A part of a device's memory: "< 0.1 GiB" for one above nothing that :meth:`gib` would
        write "0 GiB"."""
        shown = _gib(value, self.lang)
        return "< " + _gib(0.1, self.lang) if value > 0 and shown == _gib(0, self.lang) else shown

    def money(self, value: float, currency: str = "USD") -> str:
        """An amount of money: cents under 10, whole units from there, "$190", "190 US$"."""
        return _money(_shown_money(value), currency, self.lang)

    def billions(self, value: float) -> str:
        return self.number(value, 2) + "B"

    def list(self, items: Iterable[str], style: str = "standard") -> str:
        return _babel().format_list(list(items), style=style, locale=self.lang)

    def did_you_mean(self, names: Iterable[str]) -> str:
        """" Did you mean a, b or c?" for the names :func:`expert.errors.nearest` found; "" for none."""
        names = list(names)
        if not names:
            return ""
        return " " + self.gettext("Did you mean %(names)s?") % {"names": self.list(names, style="or")}


# babel's formatting functions, imported on first use (``expert --help`` does
# not need babel) and then once for all threads: under a lock, because a first
# import of babel submodules from several threads at once was seen to fail
# with a partially initialised module.
_BABEL: Any = None
_BABEL_LOCK = threading.Lock()


def _babel() -> Any:
    global _BABEL
    if _BABEL is None:
        with _BABEL_LOCK:
            if _BABEL is None:
                from types import SimpleNamespace

                from babel import Locale
                from babel.lists import format_list
                from babel.numbers import format_currency, format_decimal
                from babel.units import format_unit

                _BABEL = SimpleNamespace(Locale=Locale, format_list=format_list, format_currency=format_currency,
                                         format_decimal=format_decimal, format_unit=format_unit)
    return _BABEL


# The same few values are formatted again and again (every message that
# names the requirement, say): babel re-parses its patterns each time.
@lru_cache(maxsize=4096)
def _number(value: float, digits: int, lang: str) -> str:
    pattern = "#,##0" + ("." + "#" * digits if digits else "")
    return _babel().format_decimal(value, format=pattern, locale=lang)


@lru_cache(maxsize=4096)
def _hours(value: float, lang: str) -> str:
    # Read at the four significant digits the JSON gives (consult.significant),
    # then to a tenth half up: a sentence and the chart, one from the hours
    # computed and one from the JSON's, read alike ("3.5 hr" for 3.4512 and
    # 3.45, where they once read "3.5 hr" and "3.4 hr").
    value = float(f"{value:.4g}")
    # whole minutes rounded up, from the minutes to a hundredth: four significant digits of hours carry
    # that much noise (a minute's run, 0.01667 hr, is 1.0002 min, and read "2 min" until 2026-12-07)
    minutes = max(1, math.ceil(round(value * 60, 2) - 1e-9))
    if minutes < 60:
        return _unit(minutes, "duration-minute", lang)
    return _unit(float(Decimal(repr(value)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)), "duration-hour", lang)


def _shown_money(value: float) -> float:
    return round(value, 2 if value < 10 else 0)


def same_hours(a: float, b: float) -> bool:
    """Whether two durations read the same as :meth:`Localizer.hours` writes
    them: "1.6 hr" and "1.6 hr". The rules' conditions use it, so that no
    sentence compares a figure with itself."""
    return _hours(a, "en") == _hours(b, "en")


def same_money(a: float, b: float) -> bool:
    """Whether two amounts read the same as :meth:`Localizer.money` writes them ("$13" and "$13")."""
    return _shown_money(a) == _shown_money(b)


@lru_cache(maxsize=4096)
def _unit(value: float, unit: str, lang: str) -> str:
    return _babel().format_unit(value, unit, length="short", format="#,##0.#", locale=lang)


@lru_cache(maxsize=4096)    # (babel parses the pattern again at every call: an answer writes a thousand figures)
def _gib(value: float, lang: str) -> str:
    return _babel().format_decimal(value, format="#,##0.#", locale=lang) + " GiB"


@lru_cache(maxsize=4096)
def _money(value: float, currency: str, lang: str) -> str:
    babel = _babel()
    pattern = babel.Locale.parse(lang).currency_formats["standard"].pattern
    if value >= 10:   # whole units: "$190", not "$190.00"
        pattern = re.sub(r"\.0+", "", pattern)
    return babel.format_currency(value, currency, format=pattern, locale=lang, currency_digits=False)
