"""Profile values recognised in free text ("I want to fine-tune Mistral-7B
with LoRA on my 3090"), in English and Spanish.

The words are knowledge: ``rules/vocabulary.toml`` (phrases for each field,
time in words, count multipliers, the cards people own) and the catalog's
card names. This module only matches them: case- and accent-insensitive, on
whole words, the longest phrase first, each stretch of text used once. What
it finds is raw text or numbers; the caller validates each value as an
answer (:func:`expert.profile.parse_field`), so bounds and messages stay
those of the profile.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import KnowledgeBaseError
from .kb import KnowledgeBase

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
_SIZE_WORDS = re.compile(_NUMBER + r"\s*(?:billion|bn|mil millones)\b")
_HOURS = re.compile(_NUMBER + r"\s*(h|hr|hrs|hours?|horas?|d|days?|dias?|min|minutes?|minutos?)(?![a-z])")
_HOURS_PER = {"h": 1.0, "hr": 1.0, "hrs": 1.0, "hour": 1.0, "hours": 1.0, "hora": 1.0, "horas": 1.0,
              "d": 24.0, "day": 24.0, "days": 24.0, "dia": 24.0, "dias": 24.0,
              "min": 1 / 60, "minute": 1 / 60, "minutes": 1 / 60, "minuto": 1 / 60, "minutos": 1 / 60}
_GB = re.compile(_NUMBER + r"\s*(?:gb|gib|g)(?![a-z])")


def normal(text: str) -> str:
    """Lower case, no accents, hyphens and punctuation as spaces, single spaces."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    plain = re.sub(r"(?:(?<=\s)|^)-(?=\d)", "\u2212", plain)     # a minus sign stays: "-5" is not 5
    plain = re.sub(r"[^\w.,'+\u2212]+", " ", plain)
    plain = re.sub(r"(?<!\d)[.,]|[.,](?!\d)", " ", plain)    # punctuation, not a decimal point
    return " ".join(plain.split())


def _number(text: str, multiplied: bool = False) -> float:
    """'10,000' and '10.000' are ten thousand; '1,5' (before a multiplier, or
    alone) is one and a half."""
    if re.fullmatch(r"\d{1,3}(?:[.,]\d{3})+", text) and not multiplied:
        return float(re.sub(r"[.,]", "", text))
    return float(text.replace(",", "."))


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


_CACHE: dict[tuple[Any, ...], Vocabulary] = {}
_LOCK = threading.Lock()


def vocabulary(kb: KnowledgeBase) -> Vocabulary:
    """The vocabulary of ``kb``'s ``vocabulary.toml`` and catalog (loaded once)."""
    catalog = tuple((card.id, card.name) for card in kb.catalog) + tuple((card.id, card.name) for card in kb.owned)
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
    from .kb.source import _Problems, _read

    read_problems = _Problems()
    data = _read(path, read_problems)[0] if path.exists() else {}
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
            elif spec.type == "choice" and value not in spec.choices or spec.type == "bool" and not isinstance(
                    parsed, bool) or spec.type not in ("choice", "bool") and value != "none":
                problems.append(f"phrases.{field}.{value}: not a value of {field}")
                continue
            phrases += [(phrase, field, parsed) for phrase in words(listed, f"phrases.{field}.{value}")]
    deadline_words = [(normal(k), float(v)) for k, v in (data.get("deadline_words") or {}).items()
                      if isinstance(v, (int, float)) and v > 0]
    multipliers = {normal(k): float(v) for k, v in (data.get("multipliers") or {}).items()
                   if isinstance(v, (int, float)) and v > 0}
    dataset_words = words((data.get("dataset_words") or {}).get("words", []), "dataset_words.words")
    run = data.get("run") or {}
    epoch_words = words(run.get("epochs", []), "run.epochs")
    token_after = words(run.get("tokens_after", []), "run.tokens_after")
    token_before = words(run.get("tokens_before", []), "run.tokens_before")
    own = data.get("own_gpu") or {}
    cues = words(own.get("cues", []), "own_gpu.cues")
    gpu_words = words(own.get("gpu_words", []), "own_gpu.gpu_words")
    # The cards a person may own (rules/owned.toml: names and aliases) and the
    # catalog's, each named by its id: the profile records the card.
    cards: dict[str, str] = {}
    for card in kb.owned:
        for name in (card.name, *card.aliases):
            full = normal(name)
            cards.setdefault(full, card.id)
            cards.setdefault(full.replace("nvidia ", "").replace("geforce ", ""), card.id)
    for card in kb.catalog:
        full = normal(card.name)
        cards.setdefault(full, card.id)
        cards.setdefault(full.split(" ", 1)[-1], card.id)       # the name without its vendor
    if problems:
        raise KnowledgeBaseError([(str(path), 0, "%(problem)s", {"problem": problem}) for problem in problems])
    return Vocabulary(
        phrases=tuple(sorted(phrases, key=lambda p: -len(p[0]))),
        deadline_words=tuple(sorted(deadline_words, key=lambda p: -len(p[0]))),
        multipliers=multipliers, dataset_words=tuple(dataset_words), epoch_words=tuple(epoch_words),
        token_after=tuple(sorted(token_after, key=len, reverse=True)),
        token_before=tuple(sorted(token_before, key=len, reverse=True)), own_cues=tuple(cues),
        gpu_words=tuple(gpu_words),
        cards=tuple(sorted(cards.items(), key=lambda p: -len(p[0]))))


# The longest run of words a model's name takes ("deepseek r1 distill qwen 32b").
MODEL_WORDS = 6
_WORD = re.compile(r"[\w.+/-]+")


def _model_named(kb: KnowledgeBase, t: "_Text") -> tuple[str, tuple[int, int]] | None:
    """The name of the model table the text names, and where; longest first."""
    from .models import lookup

    spans = [m.span() for m in _WORD.finditer(t.text)]
    for size in range(min(MODEL_WORDS, len(spans)), 0, -1):
        for i in range(len(spans) - size + 1):
            start, end = spans[i][0], spans[i + size - 1][1]
            if t.free(start, end):
                model = lookup(kb, t.text[start:end])
                if model is not None:
                    return model.name, (start, end)
    return None


class _Text:
    """Normalised text, with the stretches already used."""

    def __init__(self, text: str) -> None:
        self.text = normal(text)
        self.used: list[tuple[int, int]] = []

    def free(self, start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in self.used)

    def find(self, phrase: str) -> re.Match[str] | None:
        for match in re.finditer(r"(?<![\w])" + re.escape(phrase) + r"(?![\w])", self.text):
            if self.free(*match.span()):
                return match
        return None

    def finditer(self, pattern: re.Pattern[str]) -> list[re.Match[str]]:
        return [m for m in pattern.finditer(self.text) if self.free(*m.span())]

    def use(self, match: re.Match[str]) -> None:
        self.used.append(match.span())

    def before(self, match: re.Match[str], words: int) -> str:
        return " ".join(self.text[:match.start()].split()[-words:])


def _has_cue(before: str, cues: tuple[str, ...]) -> bool:
    return any(re.search(r"(?<![\w])" + re.escape(cue) + r"(?![\w])", before) for cue in cues)


def extract(text: str, kb: KnowledgeBase, answering: str | None = None) -> dict[str, Any]:
    """Every profile field recognised in ``text``: {field: raw value} (a value
    of the field, a number, or None for "none"). ``answering``: the field a
    question asked about, whose value may then be given bare ("RTX 3090" for
    the own GPU, "50 mil" for the dataset)."""
    vocab = vocabulary(kb)
    found: dict[str, Any] = {}
    t = _Text(text[:MAX_TELL])

    def take(field: str, value: Any, match: re.Match[str]) -> None:
        t.use(match)
        found.setdefault(field, value)

    for phrase, field, value in vocab.phrases:
        if field not in found and (match := t.find(phrase)):
            take(field, value, match)
    # The person's own card: by name, after "my"/"tengo" (or bare, answering that question).
    if "vram_gb" not in found:
        for name, card_id in vocab.cards:
            match = t.find(name)
            if match and (answering == "vram_gb" or _has_cue(t.before(match, 3), vocab.own_cues)):
                take("vram_gb", card_id, match)
                break
    if "vram_gb" not in found:
        for match in t.finditer(_GB):
            near = t.before(match, 6) + " " + " ".join(t.text[match.end():].split()[:3])
            if answering == "vram_gb" or (_has_cue(t.before(match, 6), vocab.own_cues)
                                          and _has_cue(near, vocab.gpu_words)):
                take("vram_gb", _number(match.group(1)), match)
                break
    # The model: a name of the model table (rules/models.toml), the longest
    # run of words that names one ("Mixtral 8x7B", "llama 3.1 70b instruct"),
    # else its size: "Mistral-7B", "70B", "7 billion".
    if "model_size_b" not in found:
        named = _model_named(kb, t)
        if named is not None:
            t.used.append(named[1])
            found["model_size_b"] = named[0]
    for pattern in (_SIZE, _SIZE_WORDS):
        if "model_size_b" not in found and (matches := t.finditer(pattern)):
            take("model_size_b", _number(matches[-1].group(1)), matches[-1])
    # Counts: a number with its multiplier ("50k", "50 mil", "2.048"),
    # before or after the words that say what it counts.
    multipliers = "|".join(re.escape(m) for m in sorted(vocab.multipliers, key=len, reverse=True))
    counted = _NUMBER + (r"\s*(" + multipliers + r")?(?![\w])" if multipliers else r"()")

    def any_of(words: tuple[str, ...]) -> str:
        return "(?:" + "|".join(re.escape(w) for w in words) + ")"

    def take_count(field: str, patterns: list[re.Pattern[str]], whole: bool) -> None:
        """The first count a pattern finds, as ``field``'s value."""
        for pattern in patterns:
            if field not in found and (matches := t.finditer(pattern)):
                unit = matches[0].group(2)
                value = _number(matches[0].group(1), bool(unit)) * vocab.multipliers.get(unit or "", 1.0)
                take(field, int(value) if whole and value == int(value) else value, matches[0])

    # The dataset: a count before a dataset word, or (answering) a bare count.
    patterns = ([re.compile(counted + r"\s*(?:de\s+)?" + any_of(vocab.dataset_words) + r"(?![\w])")]
                if vocab.dataset_words else [])
    patterns.append(re.compile(r"(?:dataset|datos|data)\s+(?:of|de|with|con)?\s*" + counted))
    if answering == "dataset_examples":
        patterns.append(re.compile(counted))
    take_count("dataset_examples", patterns, whole=True)
    # Epochs ("3 epochs", "2 épocas") and tokens per example ("2k tokens per
    # example", "secuencias de 2048 tokens"), when the words say which.
    if vocab.epoch_words:
        take_count("epochs", [re.compile(counted + r"\s*" + any_of(vocab.epoch_words) + r"(?![\w])")], whole=False)
    patterns = []
    if vocab.token_after:
        patterns.append(re.compile(counted + r"\s*" + any_of(vocab.token_after) + r"(?![\w])"))
    if vocab.token_before:
        patterns.append(re.compile(any_of(vocab.token_before) + r"\s*" + counted))
    take_count("tokens_per_example", patterns, whole=True)
    # The deadline: time in words, or a number of hours, days or minutes.
    if "deadline_h" not in found:
        for phrase, hours in vocab.deadline_words:
            if match := t.find(phrase):
                take("deadline_h", hours, match)
                break
    if "deadline_h" not in found and (matches := t.finditer(_HOURS)):
        match = matches[0]
        take("deadline_h", _number(match.group(1)) * _HOURS_PER[match.group(2)], match)
    return found
