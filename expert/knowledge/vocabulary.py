"""The words of free text and of the value reader, from ``rules/vocabulary.toml``
and the catalog's card names: :func:`vocabulary` reads and checks the file
once per knowledge base (``expert check`` reports its problems), and
:func:`normal` and :func:`fold` say how words are compared.

What reads a person's text with these words is in :mod:`expert.input`
(:mod:`~expert.input.freetext`, :mod:`~expert.input.values`).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any

from ..errors import KnowledgeBaseError
from ..i18n import SUPPORTED, Localizer
from .records import KnowledgeBase

_MINUS = re.compile(r"(?:(?<=\s)|^)-(?=\d)")
_NOT_WORD = re.compile(r"[^\w.,'+\u2212]+")
_PUNCTUATION = re.compile(r"(?<!\d)[.,]|[.,](?!\d)")


def _unaccented(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    if decomposed.isascii():        # (no combining mark is ASCII: most words are looked at no further)
        return decomposed
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def normal(text: str) -> str:
    """Lower case, no accents, hyphens and punctuation as spaces, single spaces."""
    plain = _unaccented(text.lower())
    plain = _MINUS.sub("\u2212", plain)     # a minus sign stays: "-5" is not 5
    plain = _NOT_WORD.sub(" ", plain)
    plain = _PUNCTUATION.sub(" ", plain)    # punctuation, not a decimal point
    return " ".join(plain.split())


def fold(text: str) -> str:
    """Lower case, no accents, single spaces: how words are compared."""
    return " ".join(_unaccented(text.strip().lower()).split())


def choice_words(field: str, choices: Iterable[str], labels: Mapping[str, Iterable[str]], value_aliases: Mapping[str, Mapping[str, Iterable[str]]]) -> dict[str, str]:
    """Every word that names a choice of ``field``: the value, its label in each
    language (``labels``: choice -> list of translated labels) and the aliases
    of ``[aliases.values.FIELD]``, folded, to the value."""
    words: dict[str, str] = {}
    aliases = value_aliases.get(field, {})
    for value in choices:
        for word in (value, *labels.get(value, ()), *aliases.get(value, ())):
            words.setdefault(fold(word), value)
    return words


@dataclass(frozen=True)
class Vocabulary:
    phrases: tuple[tuple[str, str, Any], ...]       # (phrase, field, value), longest phrase first
    deadline_words: tuple[tuple[str, float], ...]   # longest first
    multipliers: dict[str, float]
    dataset_words: tuple[str, ...]
    epoch_words: tuple[str, ...]                    # "epochs", "épocas": a count before one is the epochs
    token_after: tuple[str, ...]                    # "tokens per example": a count before one
    token_before: tuple[str, ...]                   # "sequences of": a count after one
    own_cues: tuple[str, ...]
    gpu_words: tuple[str, ...]                      # "gpu", "tarjeta": a size in GB near one is its VRAM
    cards: tuple[tuple[str, str], ...]              # (name as written, card id), longest first
    # The value reader's words (expert/input/values.py)
    duration_units: dict[str, float] = dc_field(default_factory=dict)     # unit -> hours
    token_multipliers: dict[str, float] = dc_field(default_factory=dict)  # in a count of tokens: "2k" -> 2,048
    number_words: dict[str, float] = dc_field(default_factory=dict)       # "two", "dos" -> 2
    calendar_words: tuple[str, ...] = ()                                  # refused as deadlines
    assumed_deadlines: frozenset[str] = frozenset()                       # said back as an assumption
    value_aliases: dict[str, dict[str, tuple[str, ...]]] = dc_field(default_factory=dict)
    argument_aliases: dict[str, tuple[str, ...]] = dc_field(default_factory=dict)
    card_times: tuple[str, ...] = ()                                      # "4x <card>", "8 × <card>"
    duration: re.Pattern[str] = re.compile(r"(?!)")                       # a whole answer that is a duration
    hours_in_text: re.Pattern[str] = re.compile(r"(?!)")                  # a duration inside a message
    choice_words: dict[str, dict[str, str]] = dc_field(default_factory=dict)  # field -> word -> value
    rent_cues: tuple[str, ...] = ()                                       # "rent 4x <card>": not the person's own
    negations: tuple[str, ...] = ()                                       # "not lora": an answer not taken
    alternatives: tuple[str, ...] = ()                                    # "full or lora": two answers
    token_around: tuple[tuple[str, str], ...] = ()                        # "of … tokens"
    # field -> the words that may follow its count ("10k examples", "4096 tokens"), longest first
    count_words: dict[str, tuple[str, ...]] = dc_field(default_factory=dict)


_CACHE: dict[tuple[Any, ...], Vocabulary] = {}
_LOCK = threading.Lock()


def vocabulary(kb: KnowledgeBase) -> Vocabulary:
    """The vocabulary of ``kb``'s ``vocabulary.toml`` and catalog (loaded once)."""
    # (with their aliases: two user catalogs' cards of one id and name may be written otherwise)
    catalog = (tuple((card.id, card.name, card.aliases) for card in kb.known_cards())
               + tuple((card.id, card.name, card.aliases) for card in kb.owned))
    path = Path(kb.root) / "vocabulary.toml"
    try:
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        stamp = (0, 0)
    key = (str(kb.root), stamp, catalog)
    with _LOCK:
        if key not in _CACHE:
            if len(_CACHE) >= 32:        # knowledge bases edited again and again
                _CACHE.pop(next(iter(_CACHE)))
            _CACHE[key] = _load(path, kb)
        return _CACHE[key]


def _load(path: Path, kb: KnowledgeBase) -> Vocabulary:
    from .source import Problems, read_toml

    read_problems = Problems()
    data = read_toml(path, read_problems)[0] if path.exists() else {}
    if read_problems.items:
        raise KnowledgeBaseError(read_problems.items)
    problems: list[str] = []

    def words(value: Any, where: str) -> list[str]:
        if not (isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)):
            problems.append(f"{where}: a list of words is expected")
            return []
        return [normal(v) for v in value]

    phrases: list[tuple[str, str, Any]] = []
    for field, table in (data.get("phrases") or {}).items():
        spec = kb.fields.get(field)
        if spec is None or not isinstance(table, dict):
            problems.append(f"phrases.{field}: not a profile field")
            continue
        for value, listed in table.items():
            parsed: Any = value
            if spec.type == "bool":
                parsed = {"true": True, "false": False}.get(value, value)
            if value == "none" and spec.default is None:
                parsed = None
            elif (spec.type == "choice" and value not in spec.choices) or (spec.type == "bool" and not isinstance(
                    parsed, bool)) or (spec.type not in ("choice", "bool") and value != "none"):
                problems.append(f"phrases.{field}.{value}: not a value of {field}")
                continue
            phrases += [(phrase, field, parsed) for phrase in words(listed, f"phrases.{field}.{value}")]
    deadline_words = [(normal(k), float(v)) for k, v in (data.get("deadline_words") or {}).items()
                      if isinstance(v, (int, float)) and v > 0]
    multipliers = {normal(k): float(v) for k, v in (data.get("multipliers") or {}).items()
                   if isinstance(v, (int, float)) and v > 0}
    token_multipliers = {normal(k): float(v) for k, v in (data.get("token_multipliers") or {}).items()
                         if isinstance(v, (int, float)) and v > 0}
    dataset_words = words((data.get("dataset_words") or {}).get("words", []), "dataset_words.words")
    run = data.get("run") or {}
    epoch_words = words(run.get("epochs", []), "run.epochs")
    token_after = words(run.get("tokens_after", []), "run.tokens_after")
    token_before = words(run.get("tokens_before", []), "run.tokens_before")
    token_words = words(run.get("token_words", []), "run.token_words")
    own = data.get("own_gpu") or {}
    cues = words(own.get("cues", []), "own_gpu.cues")
    gpu_words = words(own.get("gpu_words", []), "own_gpu.gpu_words")
    # The cards a person may own (rules/owned.toml) and the catalogs', by
    # their names and aliases, each naming its id: the profile records the card.
    cards: dict[str, str] = {}
    for owned in kb.owned:
        for name in (owned.name, *owned.aliases):
            full = normal(name)
            cards.setdefault(full, owned.id)
            cards.setdefault(full.replace("nvidia ", "").replace("geforce ", ""), owned.id)
    for card in kb.known_cards():
        full = normal(card.name)
        cards.setdefault(full, card.id)
        cards.setdefault(full.split(" ", 1)[-1], card.id)       # the name without its vendor
        for name in card.aliases:
            cards.setdefault(normal(name), card.id)
    def numbers(table: Any, where: str) -> dict[str, float]:
        if not isinstance(table, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
                                                  for v in table.values()):
            problems.append(f"{where}: a table of words to positive numbers is expected")
            return {}
        return {normal(k): float(v) for k, v in table.items()}

    units = numbers(data.get("duration_units") or {}, "duration_units")
    number_words = numbers(data.get("number_words") or {}, "number_words")
    calendar = words((data.get("calendar_words") or {}).get("words", []), "calendar_words.words")
    assumed = words((data.get("assumed_deadlines") or {}).get("words", []), "assumed_deadlines.words")
    times = words((data.get("card_counts") or {}).get("times", []), "card_counts.times")
    rent_cues = words((data.get("card_counts") or {}).get("rent_cues", []), "card_counts.rent_cues")
    negations = words((data.get("answers") or {}).get("negations", []), "answers.negations")
    alternatives = words((data.get("answers") or {}).get("alternatives", []), "answers.alternatives")
    around = []
    for pair in words(run.get("tokens_around", []), "run.tokens_around"):
        before, _, after = pair.partition(" n ")
        around.append((before, after))
    aliases = data.get("aliases") or {}
    argument_aliases = {}
    for target, listed in (aliases.get("arguments") or {}).items():
        argument_aliases[target] = tuple(w.strip().lower().replace("-", "_")
                                         for w in (listed if isinstance(listed, list) else []) if isinstance(w, str))
        if not isinstance(listed, list):
            problems.append(f"aliases.arguments.{target}: a list of names is expected")
    value_aliases: dict[str, dict[str, tuple[str, ...]]] = {}
    for target, table in (aliases.get("values") or {}).items():
        if not isinstance(table, dict):
            problems.append(f"aliases.values.{target}: a table of values is expected")
            continue
        spec = kb.fields.get(target)
        for value in table:
            if spec is not None and value not in spec.choices:
                problems.append(f"aliases.values.{target}.{value}: not a value of {target}")
        value_aliases[target] = {value: tuple(words(listed, f"aliases.values.{target}.{value}"))
                                 if listed else () for value, listed in table.items()}
    # Every word of each choice field: its values, their labels in every
    # language and the aliases; "budget high" and "presupuesto: bajo" are the
    # words of [field_words] before one of them.
    labels: dict[str, dict[str, tuple[str, ...]]] = {}
    chosen: dict[str, dict[str, str]] = {}
    for name, spec in kb.fields.items():
        if spec.type == "choice":
            labels[name] = {c: tuple(Localizer(lang).gettext(spec.choice_labels[c]) for lang in SUPPORTED)
                            for c in spec.choices}
            chosen[name] = choice_words(name, spec.choices, labels[name], value_aliases)
    for name, listed in (data.get("field_words") or {}).items():
        if name not in chosen:
            problems.append(f"field_words.{name}: not a choice field")
            continue
        for cue in words(listed, f"field_words.{name}"):
            for word, value in chosen[name].items():
                for link in ("", "is", "es", "is a", "es un", "es una"):
                    phrases.append((" ".join(normal(part) for part in (cue, link, word) if part), name, value))
    spoken = "|".join(re.escape(w) for w in sorted(number_words, key=len, reverse=True)) or "(?!)"
    unit = "|".join(re.escape(u) for u in sorted(units, key=len, reverse=True)) or "(?!)"
    long_unit = "|".join(re.escape(u) for u in sorted(units, key=len, reverse=True) if len(u) > 3 or u in ("day", "dia")) or "(?!)"
    duration = re.compile(r"(?:(?:in|en|within|dentro de|for|durante|takes|tarda)\s+)?"
                          r"(\d+(?:[.,]\d+)?|[.,]\d+|" + spoken + r")\s*(" + unit + ")?")
    # Inside a message, a number said in words takes a unit of more than one letter ("a week", not "a d").
    hours_in_text = re.compile(r"(?<![\w.,+\u2212-])(?:(\d+(?:[.,]\d+)?)\s*(" + unit + r")|(" + spoken + r")\s+("
                               + long_unit + r"))(?![\w])")
    if problems:
        raise KnowledgeBaseError([(str(path), 0, "%(problem)s", {"problem": problem}) for problem in problems])
    return Vocabulary(
        phrases=tuple(sorted(phrases, key=lambda p: -len(p[0]))),
        deadline_words=tuple(sorted(deadline_words, key=lambda p: -len(p[0]))),
        multipliers=multipliers, token_multipliers=token_multipliers, dataset_words=tuple(dataset_words), epoch_words=tuple(epoch_words),
        token_after=tuple(sorted(token_after, key=len, reverse=True)),
        token_before=tuple(sorted(token_before, key=len, reverse=True)), own_cues=tuple(cues),
        gpu_words=tuple(gpu_words),
        cards=tuple(sorted(cards.items(), key=lambda p: -len(p[0]))),
        duration_units=units, number_words=number_words, calendar_words=tuple(calendar),
        assumed_deadlines=frozenset(assumed), value_aliases=value_aliases, argument_aliases=argument_aliases,
        card_times=tuple(times), rent_cues=tuple(rent_cues), negations=tuple(negations), alternatives=tuple(alternatives), token_around=tuple(around),
        count_words={"dataset_examples": tuple(sorted(dataset_words, key=len, reverse=True)),
                     "tokens_per_example": tuple(sorted(token_words + token_after, key=len, reverse=True))},
        duration=duration, hours_in_text=hours_in_text, choice_words=chosen)

