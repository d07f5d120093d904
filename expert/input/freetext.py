"""Profile values recognised in free text ("I want to fine-tune Mistral-7B
with LoRA on my 3090"), in English and Spanish.

The words are knowledge: ``rules/vocabulary.toml`` (phrases for each field,
time in words, count multipliers, the cards people own) and the catalog's
card names. This module only matches them: case- and accent-insensitive, on
whole words, the longest phrase first, each stretch of text used once. What
it finds is raw text or numbers; the caller validates each value as an
answer (:func:`expert.input.profile.parse_field`), so bounds and messages stay
those of the profile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

from ..knowledge import KnowledgeBase
from ..knowledge.vocabulary import normal, vocabulary
from .values import BILLIONS, grouped, multiplier, multiplier_words

# Text longer than this is not read (a chat message, not a document), counted
# both as written and once normalised (see too_long).
MAX_TELL = 1000


def too_long(text: str) -> bool:
    """Whether ``text`` is over MAX_TELL characters as written or once
    normalised: one character may spell out to many (U+FDFA is four words,
    18 characters), and the matching works on the normalised text. Text over
    the cap as written is not normalised at all, so normalising costs at most
    MAX_TELL characters' worth."""
    return len(text) > MAX_TELL or len(normal(text)) > MAX_TELL

# A number starts where no digit is before it: scanning a run of digits stays linear.
# A number as people write it; not part of a word, an exponent ("1e309") or a
# negative ("-5"): those are left unread rather than misread.
_NUMBER = r"(?<![\w.,+\u2212-])(\d{1,3}(?:[.,]\d{3})+(?![\d])|\d+(?:[.,]\d+)?)(?![\d]*e[+-]?\d)"
_SIZE = re.compile(r"(?<![\w.])" + _NUMBER + r"\s?b(?![a-z0-9])")
_SIZE_WORDS = re.compile(_NUMBER + r"\s*" + BILLIONS + r"\b")
_HOURS = re.compile(_NUMBER + r"\s*(h|hr|hrs|hours?|horas?|d|days?|dias?|min|minutes?|minutos?)(?![a-z])")
_HOURS_PER = {"h": 1.0, "hr": 1.0, "hrs": 1.0, "hour": 1.0, "hours": 1.0, "hora": 1.0, "horas": 1.0,
              "d": 24.0, "day": 24.0, "days": 24.0, "dia": 24.0, "dias": 24.0,
              "min": 1 / 60, "minute": 1 / 60, "minutes": 1 / 60, "minuto": 1 / 60, "minutos": 1 / 60}
_GB = re.compile(_NUMBER + r"\s*(?:gb|gib|g)(?![a-z])")


def _number(text: str, multiplied: bool = False) -> float:
    """'10,000' and '10.000' are ten thousand; '1,5' (before a multiplier, or
    alone) is one and a half."""
    if re.fullmatch(r"\d{1,3}(?:[.,]\d{3})+", text) and not multiplied:
        return float(re.sub(r"[.,]", "", text))
    return float(text.replace(",", "."))


def _any_of(words: tuple[str, ...]) -> str:
    return "(?:" + "|".join(re.escape(w) for w in words) + ")"


def _figure(text: str) -> float | str:
    """A figure that takes decimals (a size, GB): '1,5' is one and a half;
    '1,024' could be either, so it is passed on as written, for the answer to
    refuse as every entry point does."""
    return text if grouped(text) is not None else float(text.replace(",", "."))


# The memory said right after a card's name: "<card> 80GB", "<card> de 80 GB", "<card> with 80 GB".
_SIZE_AFTER = re.compile(r"\s*(?:(?:de|with|con|of)\s+)?(\d{2,3})\s*gb(?![\w])")


# The longest run of words a model's name takes ("deepseek r1 distill qwen 32b").
MODEL_WORDS = 6
_WORD = re.compile(r"[\w.+/-]+")


def _model_named(kb: KnowledgeBase, t: _Text) -> tuple[str, tuple[int, int]] | None:
    """The name of the model table the text names, and where; longest first."""
    from ..knowledge.models import lookup

    spans = [m.span() for m in _WORD.finditer(t.text)]
    for size in range(min(MODEL_WORDS, len(spans)), 0, -1):
        for i in range(len(spans) - size + 1):
            start, end = spans[i][0], spans[i + size - 1][1]
            if t.free(start, end):
                model = lookup(kb, t.text[start:end])
                if model is not None:
                    return model.name, (start, end)
    return None


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


@dataclass(frozen=True)
class _Found:
    """A place in the text, as a match gives it."""

    begin: int
    stop: int

    def span(self) -> tuple[int, int]:
        return (self.begin, self.stop)

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.stop


class _Text:
    """Normalised text, with the stretches already used."""

    def __init__(self, text: str) -> None:
        self.text = normal(text)
        self.used: list[tuple[int, int]] = []

    def free(self, start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in self.used)

    def find(self, phrase: str, suffixes: tuple[str, ...] = (), start: int = 0) -> _Found | None:
        """The first free place where ``phrase`` stands as whole words (with one
        of ``suffixes`` after it, if given: "3090s"). A substring search: no
        pattern is compiled per phrase."""
        text = self.text
        while (at := text.find(phrase, start)) >= 0:
            start = at + 1
            end = at + len(phrase)
            if at > 0 and _word_char(text[at - 1]):
                continue
            for suffix in ("", *suffixes):
                if text.startswith(suffix, end) and not (end + len(suffix) < len(text)
                                                         and _word_char(text[end + len(suffix)])):
                    if self.free(at, end + len(suffix)):
                        return _Found(at, end + len(suffix))
                    break
        return None

    def find_all(self, phrase: str, suffixes: tuple[str, ...] = ()) -> list[_Found]:
        """Every free place of ``phrase`` (see find), left to right; each is then used."""
        found, start = [], 0
        while (match := self.find(phrase, suffixes, start)) is not None:
            found.append(match)
            self.used.append(match.span())
            start = match.end()
        return found

    def finditer(self, pattern: re.Pattern[str]) -> list[re.Match[str]]:
        return [m for m in pattern.finditer(self.text) if self.free(*m.span())]

    def use(self, match: re.Match[str] | _Found) -> None:
        self.used.append(match.span())

    def before(self, match: re.Match[str] | _Found, words: int) -> str:
        return " ".join(self.text[:match.start()].split()[-words:])


def _has_cue(before: str, cues: tuple[str, ...]) -> bool:
    return any(re.search(r"(?<![\w])" + re.escape(cue) + r"(?![\w])", before) for cue in cues)


@dataclass
class Reading:
    """What a message says, field by field. When a field is stated more than
    once, the later statement wins (``found``) and the earlier values are kept
    in ``repeated`` so that the reply can say which one was kept."""

    found: dict[str, Any] = dc_field(default_factory=dict)       # field -> raw value (the later statement)
    repeated: dict[str, list[Any]] = dc_field(default_factory=dict)   # field -> the earlier values, overridden
    assumed: dict[str, str] = dc_field(default_factory=dict)     # field -> the words read as an assumption (ASAP)
    refused: dict[str, str] = dc_field(default_factory=dict)     # field -> the words refused ("by friday", "1e400")
    guesses: dict[str, tuple[str, str]] = dc_field(default_factory=dict)  # field -> (word as written, likely value)
    counts: dict[str, int] = dc_field(default_factory=dict)      # field -> how many cards ("two 3090s")


def extract(text: str, kb: KnowledgeBase, answering: str | None = None) -> dict[str, Any]:
    """Every profile field recognised in ``text``: {field: raw value} (a value
    of the field, a number, or None for "none"). ``answering``: the field a
    question asked about, whose value may then be given bare ("RTX 3090" for
    the own GPU, "50 mil" for the dataset)."""
    return read(text, kb, answering).found


# What a number refused by the value reader stands in for in the text: nothing reads it.
_REFUSED = "\u2205"


def _plain(text: str, reading: Reading) -> str:
    """The text with its numbers in plain ASCII (expert/input/values.py); a number
    that cannot be read is refused, for the fields its neighbours would give it."""
    from .values import Unreadable, plain_numbers

    pieces = []
    for piece in re.split(r"(\s+)", text):
        try:
            pieces.append(plain_numbers(piece))
        except Unreadable as error:
            reading.refused.setdefault("number", error.text)
            pieces.append(_REFUSED)
    return "".join(pieces)


def read(text: str, kb: KnowledgeBase, answering: str | None = None) -> Reading:
    """What ``text`` says (see :class:`Reading`)."""
    vocab = vocabulary(kb)
    reading = Reading()
    t = _Text(_plain(text[:MAX_TELL], reading))
    said: dict[str, list[tuple[int, Any]]] = {}

    def take(field: str, value: Any, match: re.Match[str] | _Found | tuple[int, int]) -> None:
        span = match if isinstance(match, tuple) else match.span()
        t.used.append(span)
        said.setdefault(field, []).append((span[0], value))

    for phrase, field, value in vocab.phrases:
        if phrase in t.text:
            for hit in t.find_all(phrase):
                take(field, value, hit)
    # Cards, with how many ("two 3090s", "tengo dos 3090", "4x <card>"): a card's
    # name is never a count. Its own card when a cue ("my", "tengo") is near, when
    # answering that question, or when a count says how many the person has.
    times = "|".join(re.escape(x) for x in vocab.card_times) or "(?!)"
    spoken = "|".join(re.escape(w) for w in sorted(vocab.number_words, key=len, reverse=True)) or "(?!)"
    # (between the count and the name, the brand words owned.toml ignores: "two NVIDIA ...")
    brands = "|".join(re.escape(w) for w in sorted(kb.owned_ignore, key=len, reverse=True)) or "(?!)"
    counted_card = re.compile(r"(?:(?<![\w.,])(\d{1,4}|" + spoken + r")\s*(?:(?:" + times + r")\s*)?"
                              r"(?:(?:" + brands + r")\s+)*)?$")
    # (between a name and its size, the form factors owned.toml lists, as nvidia-smi prints them)
    forms = "|".join(re.escape(w) for w in sorted(kb.owned_forms, key=len, reverse=True)) or "(?!)"
    size_after = re.compile(r"(?:\s+(?:" + forms + r"))*" + _SIZE_AFTER.pattern)
    for name, card_id in vocab.cards:
        for hit in (t.find_all(name, ("s", "es")) if name in t.text else []):
            before = t.text[:hit.start()]
            count_match = counted_card.search(before[-24:])
            count = None
            if count_match and count_match.group(1):
                count_text = count_match.group(1)
                count = int(vocab.number_words.get(count_text, 0) or (int(count_text) if count_text.isdigit() else 0))
            start = hit.start() - (len(count_match.group(0)) if count_match and count else 0)
            t.used.append((start, hit.end()))
            own = (answering == "vram_gb" or _has_cue(t.before(hit, 4), vocab.own_cues)
                   or (count is not None and not _has_cue(t.before(hit, 5), vocab.rent_cues)))
            end = hit.end()
            named: Any = card_id
            if own:
                # A name that stands for several cards (one model in 40 and 80 GB): the size after it
                # says which ("<card> de 80 GB"); without one the name is passed on as written,
                # and the answer asks which, as every entry point does.
                from ..knowledge import find_cards

                found = find_cards(kb, t.text[hit.start():hit.end()])
                if len(found) > 1:
                    size = size_after.match(t.text, end)
                    chosen = [card for card, _, vram in found if size and float(size.group(1)) == vram]
                    named = chosen[0] if chosen else t.text[hit.start():hit.end()]
                    if chosen and size:
                        end = size.end()
                        t.used.append((hit.end(), end))
                if count and count > 1:     # "two 3090s": read as every entry point reads "2x 3090"
                    named = f"{count}x {named}"
                take("vram_gb", named, (start, end))
                if count and count > 1:
                    reading.counts["vram_gb"] = count
                elif "vram_gb" in reading.counts:
                    del reading.counts["vram_gb"]
    for match in t.finditer(_GB):
        near = t.before(match, 6) + " " + " ".join(t.text[match.end():].split()[:3])
        if answering == "vram_gb" or (_has_cue(t.before(match, 6), vocab.own_cues)
                                      and _has_cue(near, vocab.gpu_words)):
            take("vram_gb", _figure(match.group(1)), match)
    # The model: a name of the model table (rules/models.toml), the longest
    # run of words that names one ("Mixtral 8x7B", "llama 3.1 70b instruct"),
    # else its size: "Mistral-7B", "70B", "7 billion".
    for _ in range(4):
        named = _model_named(kb, t)
        if named is None:
            break
        take("model_size_b", named[0], named[1])
    # A count of examples in billions ("2 billion examples", "5 mil millones de ejemplos") is no model's
    # size: passed on as written, for the value reader to refuse as every entry point does.
    if vocab.dataset_words:
        for match in t.finditer(re.compile(_NUMBER + r"\s*" + BILLIONS + r"\s*(?:de\s+)?"
                                           + _any_of(vocab.dataset_words) + r"(?![\w])")):
            take("dataset_examples", match.group(0), match)
    for pattern in (_SIZE, _SIZE_WORDS):
        for match in t.finditer(pattern):
            take("model_size_b", _figure(match.group(1)), match)
    # Counts: a number with its multiplier ("50k", "50 mil", "2.048"),
    # before or after the words that say what it counts.
    counted = _NUMBER + r"\s*(" + multiplier_words(vocab) + r")?(?![\w])"

    def take_count(field: str, patterns: list[re.Pattern[str]], whole: bool) -> None:
        """Every count a pattern finds, as ``field``'s value."""
        for pattern in patterns:
            for match in t.finditer(pattern):
                if not t.free(*match.span()):
                    continue
                unit = match.group(2)
                value = _number(match.group(1), bool(unit)) * multiplier(field, unit, vocab)
                take(field, int(value) if whole and value == int(value) else value, match)

    # The dataset: a count before a dataset word, or (answering) a bare count.
    patterns = ([re.compile(counted + r"\s*(?:de\s+)?" + _any_of(vocab.dataset_words) + r"(?![\w])")]
                if vocab.dataset_words else [])
    patterns.append(re.compile(r"(?:dataset|datos|data)\s+(?:of|de|with|con)?\s*" + counted))
    if answering == "dataset_examples":     # a bare count, not one of tokens ("4096 tokens": the value reader's refusal)
        tokens = vocab.count_words.get("tokens_per_example", ())
        patterns.append(re.compile(counted + (r"(?!\s*" + _any_of(tokens) + r"(?![\w]))" if tokens else "")))
    # Epochs ("3 epochs", "2 épocas") and tokens per example ("2k tokens per
    # example", "secuencias de 2048 tokens", "of 512 tokens"), when the words say which.
    token_patterns = []
    if vocab.token_after:
        token_patterns.append(re.compile(counted + r"\s*" + _any_of(vocab.token_after) + r"(?![\w])"))
    if vocab.token_before:
        token_patterns.append(re.compile(_any_of(vocab.token_before) + r"\s*" + counted))
    for before, after in vocab.token_around:
        token_patterns.append(re.compile(r"(?<![\w])" + re.escape(before) + r"\s+" + counted + r"\s*"
                                         + re.escape(after) + r"(?![\w])"))
    take_count("dataset_examples", patterns, whole=True)
    take_count("tokens_per_example", token_patterns, whole=True)
    if vocab.epoch_words:
        take_count("epochs", [re.compile(counted + r"\s*" + _any_of(vocab.epoch_words) + r"(?![\w])")], whole=False)
    # The deadline: time in words (a fixed length: "ASAP", "by tomorrow"), a
    # number of hours, days or weeks, or a day of the calendar (refused).
    for phrase, hours in vocab.deadline_words:
        for hit in (t.find_all(phrase) if phrase in t.text else []):
            take("deadline_h", hours, hit)
            if phrase in vocab.assumed_deadlines:
                reading.assumed[f"deadline_h@{hit.start()}"] = phrase
    for match in t.finditer(vocab.hours_in_text):
        amount, unit = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        if amount not in vocab.number_words and grouped(amount) is not None:
            take("deadline_h", match.group(0), match)      # "1,000 hours": refused by the answer, as everywhere
            continue
        number = vocab.number_words[amount] if amount in vocab.number_words else _number(amount)
        take("deadline_h", number * vocab.duration_units[unit], match)
    for word in vocab.calendar_words:
        for hit in (t.find_all(word) if word in t.text else []):
            lead = _CALENDAR_LEAD.search(t.text[:hit.start()])
            take("deadline_h", _Calendar(t.text[lead.start() if lead else hit.start():hit.end()]), hit)
    # The later statement wins; the earlier ones are said back as overridden.
    for field, values in said.items():
        values.sort(key=lambda pair: pair[0])
        start, value = values[-1]
        earlier = [v for _, v in values[:-1] if v != value]
        if earlier:
            reading.repeated[field] = earlier
        if isinstance(value, _Calendar):
            reading.refused[field] = value.text
            continue
        reading.found[field] = value
        assumed = reading.assumed.pop(f"{field}@{start}", None)
        if assumed is not None:
            reading.assumed[field] = assumed
    reading.assumed = {k: v for k, v in reading.assumed.items() if "@" not in k}
    if "vram_gb" not in reading.found:
        reading.counts.pop("vram_gb", None)
    # A word close to a value of a choice field not otherwise given ("qlroa"):
    # asked about, never taken.
    import difflib

    for field, words in vocab.choice_words.items():
        if field in reading.found:
            continue
        candidates = [w for w in words if len(w) >= 4 and " " not in w]
        for word in re.findall(r"[a-z][a-z0-9-]{3,}", t.text):
            if word in words or any(word in phrase.split() for phrase, _, _ in vocab.phrases[:0]):
                continue
            close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.75)
            # a word that only starts or ends another ("tune" in "fine-tune" and "tuned")
            # is another word, not a misspelling of it
            if close and not (close[0].startswith(word) or word.startswith(close[0])):
                reading.guesses[field] = (word, words[close[0]])
                break
    return reading


# The words that lead to a day of the calendar ("by friday", "para el viernes"), said back with it.
_CALENDAR_LEAD = re.compile(r"(?:(?:by|until|till|on|before|para|hasta|antes de|antes del)\s+"
                            r"(?:(?:el|la|the|this|next|este|esta)\s+)?)$")


@dataclass(frozen=True)
class _Calendar:
    """A deadline said as a day of the calendar: refused (it would depend on today's date)."""

    text: str
