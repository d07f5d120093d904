"""The one reader of values: numbers as people write them, durations, choices
and argument names. Every entry point (the library, the CLI, MCP, a
consultation's answers and free text) reads a value through here, so the
same string gives the same value, or the same refusal, everywhere.

The words are knowledge, in ``rules/vocabulary.toml``: the units of time
(``[duration_units]``), the numbers said in words (``[number_words]``), the
fixed-length deadline words (``[deadline_words]``), the calendar words that
are refused (``[calendar_words]``), and the aliases of argument names and
of values (``[aliases]``). This module only applies them.

Numbers first (:func:`plain_numbers`): non-ASCII decimal digits ("١٫٥"),
vulgar fractions ("1½"), superscript powers ("10⁴") and exponents ("1e4")
become plain ASCII numbers before anything else reads the text; what cannot
be read so (an exponent beyond any figure of the profile) is refused with
:class:`Unreadable` — never read as another number.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from ..knowledge.vocabulary import fold

# The largest figure an exponent or a power may write: beyond every bound of
# the profile (rules/profile.toml: at most 1e9 examples), so anything larger is
# a typo and is refused rather than read.
MAX_POWER = 10 ** 15
_SUPERSCRIPT = {"⁰": "0", "¹": "1", "²": "2", "³": "3", "⁴": "4", "⁵": "5", "⁶": "6", "⁷": "7", "⁸": "8",
                "⁹": "9", "⁻": "-"}
_SEPARATORS = {"\u066b": ".", "\u066c": ",", "\u2044": "/", "\uff0e": ".", "\uff0c": ","}  # Arabic and fullwidth separators, fraction slash


class Unreadable(ValueError):
    """A number written in a way that cannot be read safely; ``text`` is the part refused."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def _fraction(char: str) -> float | None:
    """The value of a vulgar fraction character (½, ¾, ⅛ ...), or None."""
    if unicodedata.category(char) != "No":
        return None
    try:
        value = unicodedata.numeric(char)
    except ValueError:
        return None
    return value if 0 < value < 1 else None


def _written(value: float) -> str:
    """A number as plain ASCII that every reader takes as that number: never
    three digits after the point (which the readers take for thousands)."""
    if value == int(value) and abs(value) < MAX_POWER:
        return str(int(value))
    text = f"{value:.6f}".rstrip("0")
    if len(text.partition(".")[2]) == 3:
        text += "0"
    return text


_POWER = re.compile(r"(\d+(?:\.\d+)?)(?P<ten>\s*(?:x|×|·|\*)\s*10(?=\s*(?:\^|\*\*)))?\s*(?:\^|\*\*)\s*"
                    r"([+-]?\d{1,4})(?![\d])|(?<![\w.])(\d+(?:\.\d+)?)e([+-]?\d{1,4})(?![\w])", re.IGNORECASE)
_TIMES_TEN = re.compile(r"(\d+(?:\.\d+)?)\s*(?:x|×|·|\*)\s*10$")


def plain_numbers(text: str) -> str:
    """``text`` with its numbers in plain ASCII: "1½" → "1.5", "١٫٥" → "1.5",
    "10⁴" → "10000", "2⁴B" → "16B", "1e4" and "10^4" → "10000". A superscript
    after a letter (a footnote mark) becomes a space; it is never a digit.
    Raises :class:`Unreadable` for a power or exponent that is not a finite
    figure of a sensible size. Linear in the length of the text."""
    if text.isascii() and not re.search(r"\d\s*(?:\^|\*\*)|\de", text, re.IGNORECASE):
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char in _SEPARATORS:
            out.append(_SEPARATORS[char])
        elif char in _SUPERSCRIPT:
            j = i
            while j < len(text) and text[j] in _SUPERSCRIPT:
                j += 1
            exponent = "".join(_SUPERSCRIPT[c] for c in text[i:j])
            written = "".join(out)
            scaled = _TIMES_TEN.search(written)            # "1.5×10⁴": 1.5 times ten to the fourth
            base = re.search(r"(\d+(?:\.\d+)?)$", written)
            if base is None:
                out.append(" ")
            elif not re.fullmatch(r"-?\d{1,4}", exponent):
                raise Unreadable(base.group(1) + text[i:j])
            elif scaled is not None:
                out = [written[:scaled.start()], _power(scaled.group(1), exponent, scaled.group(0) + text[i:j],
                                                        times_ten=True)]
            else:
                del out[len(out) - len(base.group(1)):]
                out.append(_power(base.group(1), exponent, base.group(1) + text[i:j]))
            i = j
            continue
        elif (fraction := _fraction(char)) is not None:
            written = "".join(out)
            whole = re.search(r"(\d+)\s?$", written)
            # "½½", "1¼¾", "2.5½", "½1": a fraction after a figure with decimals, or
            # a digit right after a fraction, is not a number: refused, never summed.
            after = text[i + 1:i + 2]
            if re.search(r"[.,]\d+\s?$", written) or (after and (after.isdigit() or _fraction(after) is not None)):
                raise Unreadable(text[max(0, i - 8):i + 2].strip())
            if whole is not None:
                del out[len(out) - len(whole.group(0)):]
                out.append(_written(int(whole.group(1)) + fraction))
            else:
                out.append(_written(fraction))
        elif not char.isascii() and unicodedata.category(char) == "Nd":
            out.append(str(unicodedata.decimal(char)))
        else:
            out.append(char)
        i += 1
    plain = "".join(out)
    # "1/2" written with the fraction slash: a fraction
    plain = re.sub(r"(?<![\d/])(\d{1,3})/(\d{1,3})(?![\d/])",
                   lambda m: _written(int(m.group(1)) / int(m.group(2))) if "\u2044" in text and int(m.group(2))
                   else m.group(0), plain)
    return _POWER.sub(lambda m: _power(m.group(1) or m.group(4), m.group(3) or m.group(5), m.group(0),
                                       times_ten=bool(m.group(4)) or bool(m.group("ten"))), plain)


def _power(base: str, exponent: str, written: str, times_ten: bool = False) -> str:
    """base^exponent (or base × 10^exponent), as plain text; refused when it is not a sensible figure."""
    try:
        power = int(exponent)
        if abs(power) > 30:
            raise Unreadable(written)
        value = Decimal(base) * (Decimal(10) ** power) if times_ten else Decimal(base) ** power
    except (InvalidOperation, OverflowError, ValueError):
        raise Unreadable(written) from None
    if not value.is_finite() or value > MAX_POWER:
        raise Unreadable(written)
    return _written(float(value))


# --- durations ---------------------------------------------------------------

@dataclass(frozen=True)
class Hours:
    """A duration read from text: hours, and the assumption made reading it (or None)."""

    hours: float
    assumption: str | None = None     # a deadline word read as a fixed length ("ASAP", "tomorrow")


class Calendar(ValueError):
    """A deadline given as a day of the calendar ("by friday"): refused everywhere."""


def number_pattern(number_words: Iterable[str]) -> str:
    """A number in digits or in words (``[number_words]``), as a regex group."""
    words = "|".join(re.escape(w) for w in sorted(number_words, key=len, reverse=True))
    digits = r"\d+(?:[.,]\d+)?|[.,]\d+"
    return "(" + digits + ("|" + words if words else "") + ")"


def read_hours(text: str, vocab: Any) -> Hours | None:
    """Hours from a whole answer ("48", "48h", "2 days", "1w", "a week", "dos días",
    "in 3 days", "ASAP", "by tomorrow"), or None when it is not a duration.
    A day of the calendar ("by friday", "para el viernes") raises :class:`Calendar`."""
    folded = fold(text).replace(":", " ")
    folded = " ".join(folded.split())
    for phrase, hours in vocab.deadline_words:
        if folded == phrase or folded in (f"by {phrase}", f"para {phrase}", f"in {phrase}", f"en {phrase}"):
            return Hours(hours, phrase if phrase in vocab.assumed_deadlines else None)
    if any(re.search(r"(?<![\w])" + re.escape(word) + r"(?![\w])", folded) for word in vocab.calendar_words):
        raise Calendar(text)
    match = vocab.duration.fullmatch(folded)
    if match is None:
        return None
    return Hours(number_value(match.group(1), vocab) * vocab.duration_units[match.group(2) or "h"])


def number_value(text: str, vocab: Any) -> float:
    """A number in digits ("1.5", "1,5") or in words ("two", "dos", "a"); a
    figure with a thousands separator never gets here (see :data:`GROUPED`)."""
    if text in vocab.number_words:
        return vocab.number_words[text]
    return float(text.replace(",", "."))


# A figure written with a thousands separator: "1,024", "10.000", "1.000.000".
# A count reads it as thousands ("10.000 examples"); in a figure that takes
# decimals (a size, GB, hours, epochs) it could be 1024 or 1.024, so every
# reader refuses it there rather than guess.
GROUPED = re.compile(r"(?<![\d.,])[1-9]\d{0,2}([.,])\d{3}(?:\1\d{3})*(?![\d.,])")


def grouped(text: str) -> str | None:
    """The figure of ``text`` written with a thousands separator, or None."""
    match = GROUPED.search(text)
    return match.group(0) if match else None


# --- counts ------------------------------------------------------------------

# The words of a size in billions ("7 billion", "70 mil millones"): a model's
# size in free text, and never a count of examples or tokens, which every
# reader refuses (the profile's counts stop well short of a billion of them).
BILLIONS = r"(?:billions?|bn|mil\s+millones)"
_IN_BILLIONS = re.compile(r"\d\s*" + BILLIONS + r"$", re.IGNORECASE)


def multiplier_words(vocab: Any) -> str:
    """The multipliers of a count (rules/vocabulary.toml [multipliers]: "k",
    "thousand", "mil", "m", "millones" ...) as a regex alternation, longest
    first, so that "millones" is never read as "mil" and "lones"."""
    return "|".join(re.escape(m) for m in sorted(vocab.multipliers, key=len, reverse=True)) or "(?!)"


def count_pattern(vocab: Any) -> re.Pattern[str]:
    """A whole answer that is a count, folded (:func:`fold`): its figure
    (group 1) and its multiplier (group 2, or None): "50k", "50 mil",
    "2 thousand", "1,5 millones"."""
    return _count_regex(multiplier_words(vocab))


@functools.lru_cache(maxsize=8)
def _count_regex(words: str) -> re.Pattern[str]:
    return re.compile(r"^(\d+(?:[.,]\d+)?)\s*(" + words + r")?$")


def in_billions(text: str) -> bool:
    """Whether ``text`` ends with a figure in billions ("2 billion", "5 mil millones")."""
    return _IN_BILLIONS.search(fold(text)) is not None


def multiplier(field: str, unit: str | None, vocab: Any) -> float:
    """What a multiplier after a count stands for in ``field``: "k" is 1,024
    in a count of tokens ("2k", "8k": 2,048 and 8,192, as context lengths
    are written; rules/vocabulary.toml [token_multipliers]) and 1,000
    elsewhere ("10k examples"); no unit is 1."""
    if not unit:
        return 1.0
    key = unit.lower()
    if field == "tokens_per_example" and key in vocab.token_multipliers:
        return float(vocab.token_multipliers[key])
    return float(vocab.multipliers.get(key, 1.0))


# --- several cards of one's own -----------------------------------------------

def card_count(text: str, vocab: Any) -> tuple[int, str] | None:
    """A count before a card's name ("2x RTX 3090", "2 × 3090", "two 3090s",
    "dos 3090"): the count and the name as written; None when the text
    starts with no count. Whether the name names a card is the caller's to
    check (so "24 GB" is not 24 cards of "GB"), and so is a plural's "s"
    (expert/knowledge/owned.py find_cards: a card whose name ends in an "S"
    is that card, not several of the card without it)."""
    spoken = "|".join(re.escape(w) for w in sorted(vocab.number_words, key=len, reverse=True)) or "(?!)"
    # (the vocabulary's words are folded, and folding drops "×": it is always a times sign here)
    times = "|".join(re.escape(x) for x in [*(x for x in vocab.card_times if x), "×"])
    match = re.match(r"\s*(?:(\d{1,3})\s*(?:" + times + r")\s*|(\d{1,3})\s+|(" + spoken + r")\s+(?:(?:" + times
                     + r")\s*)?)(?=\S)", text, re.IGNORECASE)
    if match is None:
        return None
    written = match.group(1) or match.group(2) or match.group(3)
    count = int(written) if written.isdigit() else int(vocab.number_words[fold(written)])
    return count, text[match.end():].strip()


# --- choices -----------------------------------------------------------------

_JOINERS = re.compile(r"[\s_-]+")


def spelling(text: str) -> str:
    """``text`` folded, with its hyphens, underscores and spaces as one hyphen:
    "paged_adamw8bit", "Paged-AdamW8bit" and "paged adamw8bit" are one spelling."""
    return _JOINERS.sub("-", fold(text)).strip("-")


def read_choice(text: Any, words: dict[str, str]) -> str | None:
    """The choice ``text`` names (case, accents, spacing, and hyphen or
    underscore between its words aside), or None."""
    if not isinstance(text, str):
        return None
    found = words.get(fold(text))
    if found is not None:
        return found
    wanted = spelling(text)
    if not wanted:
        return None
    matches = {value for word, value in words.items() if spelling(word) == wanted}
    return matches.pop() if len(matches) == 1 else None


def argument(name: str, declared: Iterable[str], vocab: Any) -> str:
    """The declared argument a name stands for: itself when declared, else the
    argument whose alias it is (``[aliases.arguments]``), else itself (the caller
    refuses it). An alias never hides an argument the callee declares itself."""
    declared = set(declared)
    if name in declared:
        return name
    key = name.strip().lower().replace("-", "_")
    if key in declared:
        return key
    for target, aliases in vocab.argument_aliases.items():
        if target in declared and key in aliases:
            return target
    return name


def finite(value: float) -> bool:
    return math.isfinite(value)
