"""Validate and normalise a consultation's input into the profile fact.

Field names, types, defaults and bounds come from ``rules/profile.toml``.
Values may be typed as a person would write them: ``70B``, ``Llama-3-8B``,
``8 GB``, ``2 days``/``2 días``, ``yes``/``sí``. A bad value raises
:class:`~expert.errors.InputError` naming the field, in the consultation's
language; nothing is half-done.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InputError, nearest
from ..escape import quoted
from ..i18n import Localizer
from ..knowledge import KnowledgeBase, ProfileField, find_cards, find_unsupported, hub, models
from ..knowledge.source import N_
from ..knowledge.vocabulary import fold
from . import values

_NUMBER = r"(\d+(?:[.,]\d+)?|[.,]\d+)"
_HOURS = re.compile(r"^" + _NUMBER + r"\s*(h|hr|hrs|hours?|horas?|d|days?|d[ií]as?|min|minutes?|minutos?)?$",
                    re.IGNORECASE)
_WITH_UNIT = re.compile(r"^" + _NUMBER + r"\s*(gb|gib|g)?$", re.IGNORECASE)
_NAME_AND_VRAM = re.compile(r"^(.*\S)\s+(\d{1,4})\s*(?:gb|gib|g)$", re.IGNORECASE)   # a name, then its VRAM
_AMOUNT = re.compile(r"^" + _NUMBER + r"()$")     # epochs: "2", "2.5", "2,5"
# The kinds of field whose figures take decimals: a thousands separator is ambiguous there.
_DECIMAL = frozenset({"size", "hours", "number", "amount"})
_COUNT = re.compile(r"^(\d+(?:[.,]\d+)?)\s*(k|m)?$", re.IGNORECASE)
# A whole number written with thousands separators: "10.000" (Spanish),
# "10,000" (English), "1.000.000"; never a decimal.
_GROUPED = re.compile(r"^\d{1,3}(?:([.,])\d{3})(?:\1\d{3})*$")
_COUNT_BEFORE = re.compile(r"(?:\d|[\w.,]\s+)$")     # a word after a count: "4096tokens", "10k examples"
# The word a count's refusal names as the one it may carry ("with or without 'tokens' after it"); each
# is one of the field's words in rules/vocabulary.toml (a test checks), in the person's language.
_COUNT_WORD = {"dataset_examples": N_("examples"), "tokens_per_example": N_("tokens")}
_TRUE = {"yes", "y", "true", "1", "sí", "si", "s", "on"}
# "Yes" as a person says it ("1" is a VRAM figure where a card's name is taken).
_YES = {"yes", "y", "sí", "si", "s", "yep", "sure", "claro"}
_FALSE = {"no", "n", "false", "0", "off"}
_UNIT_HOURS = {"d": 24.0, "da": 24.0, "dí": 24.0, "di": 24.0, "mi": 1 / 60}
# The longest text a value may be: a model name with its organisation and
# suffixes fits; a chat message pasted into a field does not. Every pattern
# below runs on at most this much text.
MAX_TEXT = 100
# The settings a person may fix instead of the rules, as the profile holds them once read
# (expert.input.settings): the sequence length, the micro-batch, the LoRA rank, activation checkpointing.
SETTINGS = ("seq_len", "micro_batch", "lora_rank", "checkpointing")


# Words that answer "none" for the optional fields (no own GPU, no deadline):
# a real answer, not a field left out.
NONE_WORDS = {"no", "none", "n", "nope", "ninguna", "ninguno", "nada", "sin", "sin plazo", "-", "—"}


def says_none(spec: ProfileField, value: Any) -> bool:
    """Whether ``value`` answers "none" for an optional field."""
    return spec.default is None and isinstance(value, str) and value.strip().lower() in NONE_WORDS


def says_yes(text: str) -> bool:
    """Whether ``text`` answers "yes" (yes, sí, y, ...)."""
    return text.strip().lower() in _YES


def yes_or_no(value: Any) -> bool | None:
    """A yes-or-no value as every entry point reads it (True, "yes", "sí",
    "1", "off" ...), or None when it is neither."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    return None


def is_given(value: Any) -> bool:
    """Whether a value was given: None and empty or blank text mean "not given"."""
    return value is not None and not (isinstance(value, str) and not value.strip())


def shown(value: Any) -> str:
    """A value as it can be quoted back safely: one short line, no escape
    sequences, control or format characters (expert/escape.py)."""
    return quoted(value)


def _to_float(text: str) -> float:
    return float(text.replace(",", "."))


_PRICE = re.compile(r"^\$?\s*(\d{1,7}(?:[.,]\d{1,6})?)\s*(?:\$|usd)?$", re.IGNORECASE)


def price(value: Any) -> float | None:
    """A price in USD as a person writes it (2.5, "2,50", "$2.5", "2.5 USD"), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and len(value) <= MAX_TEXT:
        match = _PRICE.match(value.strip())
        if match and values.grouped(match.group(1)) is None:    # "1,024": 1024 or 1.024 a card-hour? refused
            return _to_float(match.group(1))
    return None


class _Parser:
    def __init__(self, spec: ProfileField, tr: Localizer, kb: KnowledgeBase | None = None) -> None:
        self.spec, self.tr, self.kb = spec, tr, kb
        self.resolved: models.Resolved | None = None
        self.card: str | None = None     # the id of the card a name named (fields with cards = true)
        self.count = 1                   # how many of that card ("2x RTX 3090", "two 3090s")
        self.original: str | None = None  # the text as written, when the number reader rewrote it
        self.assumption: str | None = None   # words read as a fixed length ("ASAP": 24 hours)

    def vocabulary(self) -> Any:
        from ..knowledge.vocabulary import vocabulary

        return vocabulary(self.kb) if self.kb is not None else None

    def hours(self, value: Any) -> float:
        """A duration: a number of hours, or text the value reader reads
        ("48h", "2 days", "1w", "a week", "dos días", "ASAP"); a day of the
        calendar ("by friday") is refused, the same way everywhere."""
        vocab = self.vocabulary()
        if isinstance(value, str) and vocab is not None:
            try:
                read = values.read_hours(value, vocab)
            except values.Calendar:
                raise self.error("%(label)s: '%(value)s' is a day of the calendar, not a length of time; say how "
                                 "long from now, such as 48h, 3 days or 1 week.", value) from None
            if read is not None:
                self.assumption = read.assumption
                return self.bounded(read.hours, value)
        number, unit = self.number(value, _HOURS, N_("8, 8h, 2 days, 1 week"))
        return self.bounded(number * _UNIT_HOURS.get((unit or "h")[:2], 1.0), value)

    def error(self, template: str, value: Any, suggestions: Iterable[str] = (), **params: Any) -> InputError:
        """The field's error in the user's language; the nearest accepted values (if any) follow as "did you mean"."""
        suggestions = list(suggestions)
        if isinstance(value, str) and self.original is not None:
            value = self.original          # quoted as the person wrote it, not as the reader rewrote it
        message = self.tr.gettext(template) % {
            "label": self.tr.gettext(self.spec.label), "field": self.spec.name, "value": shown(value), **params}
        return InputError(self.spec.name, message + self.tr.did_you_mean(suggestions), suggestions)

    def ambiguous(self, value: Any, figure: str) -> InputError:
        """A figure with a thousands separator where decimals are read ("1,024 GB")."""
        separator = "," if "," in figure else "."
        return self.error("%(label)s: '%(value)s' is ambiguous: in %(figure)s the '%(separator)s' could separate "
                          "thousands or decimals. Write the figure without a thousands separator, such as %(whole)s, "
                          "or with at most two decimals.", value, figure=shown(figure), separator=separator,
                          whole=figure.replace(separator, ""))

    def number(self, value: Any, pattern: re.Pattern[str] | None, example: str) -> tuple[float, str | None]:
        if isinstance(value, bool):
            raise self.error("%(label)s: '%(value)s' is not a number; for example %(example)s.",
                             value, example=example)
        if isinstance(value, int):
            try:
                return float(value), None
            except OverflowError:
                raise self.error("%(label)s: '%(value)s' is not a finite number.", value) from None
        if isinstance(value, float):
            return value, None
        if isinstance(value, str) and pattern is not None:
            match = pattern.match(value.strip())
            if match:
                return _to_float(match.group(1)), (match.group(2) or "").lower() or None
        if isinstance(value, str) and "_" not in value:     # "-3", "+2", "inf": read, then bounded ("4_8" is not a number)
            try:
                return float(value.strip()), None
            except ValueError:
                pass
        raise self.error("%(label)s: '%(value)s' is not a number; for example %(example)s.",
                         value, example=self.tr.gettext(example))

    def bound(self, number: float) -> str:
        """A bound as a person reads it, in the field's unit."""
        kind = self.spec.type
        if kind == "hours":
            return self.tr.hours(number)
        if kind == "size":
            return self.tr.billions(number)
        if kind == "number":
            return self.tr.gib(number)
        return self.tr.number(number, 0)

    def bounded(self, number: float, value: Any) -> float:
        spec = self.spec
        if not math.isfinite(number):
            raise self.error("%(label)s: '%(value)s' is not a finite number.", value)
        if spec.min_exclusive is not None and number <= spec.min_exclusive:
            raise self.error("%(label)s: '%(value)s' is not accepted; it must be greater than %(bound)s.",
                             value, bound=self.bound(spec.min_exclusive))
        if spec.min is not None and number < spec.min:
            raise self.error("%(label)s: '%(value)s' is not accepted; it must be at least %(bound)s.",
                             value, bound=self.bound(spec.min))
        if spec.max is not None and number > spec.max:
            raise self.error("%(label)s: '%(value)s' is not accepted; it must be at most %(bound)s.",
                             value, bound=self.bound(spec.max))
        return number

    def parse(self, value: Any) -> Any:
        kind = self.spec.type
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise self.error("%(label)s: '%(value)s' is too long; at most %(most)s characters.",
                             value, most=MAX_TEXT)
        if isinstance(value, str):
            # One reader of numbers (expert/input/values.py): "1½", "١٫٥", "10⁴", "1e4" as plain digits, or refused.
            try:
                plain = values.plain_numbers(value)
            except values.Unreadable as error:
                if shown(error.text) == shown(value):     # the whole answer refused: quoted once ('1e400')
                    raise self.error("%(label)s: '%(value)s' is not a number that can be read safely; write it "
                                     "with digits, such as 10000 or 1.5.", value) from None
                raise self.error("%(label)s: '%(value)s' is not a number that can be read safely ('%(part)s'); "
                                 "write it with digits, such as 10000 or 1.5.", value, part=shown(error.text)) \
                    from None
            if plain != value:
                self.original = value
                value = plain
            figure = values.grouped(value) if kind in _DECIMAL else None
            if figure is not None:
                raise self.ambiguous(value, figure)
        if kind == "size":
            return self.bounded(self.size(value), value)
        if kind == "hours":
            return self.hours(value)
        if kind == "number" and self.spec.cards and isinstance(value, str) and self.kb is not None:
            return self.card_or_number(value)
        if kind == "number":
            return self.bounded(self.number(value, _WITH_UNIT, N_("24, 24 GB"))[0], value)
        if kind == "amount":
            return self.bounded(self.number(value, _AMOUNT, N_("1 or 2.5"))[0], value)
        if kind == "integer":
            return self.integer(value)
        if kind == "bool":
            return self.boolean(value)
        return self.choice(value)

    def card_or_number(self, value: str) -> float:
        """A card's name (of rules/owned.toml or the catalog): its VRAM; else a figure in GB."""
        assert self.kb is not None
        text = value.strip()
        if text.lower() in _YES:
            raise self.error("%(label)s: which GPU? Give its name, such as %(examples)s, or its VRAM in GB, such as "
                             "24.", value, examples=self.tr.list(list(self.kb.owned_examples), style="or"))
        # a count of one too: "1 × RTX 3090" is how an answer writes one card (round five)
        counted = values.card_count(text, self.vocabulary())
        if counted is not None and (find_cards(self.kb, counted[1])
                                                        or _NAME_AND_VRAM.match(counted[1])
                                                        or _WITH_UNIT.match(counted[1])):
            return self.several(value, *counted)
        found = find_cards(self.kb, text)
        if len(found) > 1:
            raise self.error("%(label)s: '%(value)s' could be %(cards)s; say which, or give its VRAM in GB.", value,
                             cards=self.tr.list([name for _, name, _ in found], style="or"))
        if found:
            self.card = found[0][0]
            return self.bounded(found[0][2], value)
        if _WITH_UNIT.match(text):
            return self.bounded(self.number(value, _WITH_UNIT, N_("24, 24 GB"))[0], value)
        named = _NAME_AND_VRAM.match(text)      # a card's name, then its VRAM in GB
        if named:
            same = [card for card in find_cards(self.kb, named.group(1)) if card[2] == float(named.group(2))]
            if len(same) == 1:
                self.card = same[0][0]
                return self.bounded(same[0][2], value)
        unsupported = find_unsupported(self.kb, text)
        if unsupported is not None:
            raise self.error("%(label)s: %(name)s is not supported: %(reason)s", value, name=unsupported.name,
                             reason=self.tr.gettext(unsupported.reason))
        cards = {card.id: card.aliases + (card.name,) for card in self.kb.owned}
        cards.update({gpu.id: gpu.aliases + (gpu.name,) for gpu in self.kb.known_cards()})
        raise self.error("%(label)s: '%(value)s' is neither a VRAM figure in GB (24, 24 GB) nor a GPU the knowledge "
                         "base knows by its name or catalog id.", value,
                         suggestions=nearest(text, cards, keys=cards))

    def several(self, value: str, count: int, name: str) -> float:
        """Several cards of one's own ("2x RTX 3090", "two 3090s"): the VRAM of
        one of them, the card named and how many (``count``), at most the most
        cards one node of the catalog holds (its ``per_node``)."""
        assert self.kb is not None
        most = max(card.per_node for card in self.kb.catalog)     # the most cards one machine of the catalog holds
        if not 1 <= count <= most:
            raise self.error("%(label)s: '%(value)s' counts %(count)s cards; give from 1 to %(most)s cards of your "
                             "own, in one machine.", value, count=self.tr.number(count, 0),
                             most=self.tr.number(most, 0))
        vram = self.card_or_number(name)
        self.count = count
        return vram

    def size(self, value: Any) -> float:
        """A size or a model name, through the one resolver (expert/knowledge/models.py)."""
        assert self.kb is not None
        if isinstance(value, str) and hub.is_hub_id(value.strip()) and models.lookup(self.kb, value) is None:
            # "org/name" the table does not know: the model's config.json on the Hugging Face Hub.
            self.resolved = models.read_hub(self.kb, value.strip(), self.tr)
            return self.resolved.total_b
        resolved = models.resolve_name(self.kb, value)
        if resolved is None and isinstance(value, str) and value.strip():
            close = models.suggestions(self.kb, value)
            if close:
                raise InputError(self.spec.name, self.tr.gettext(
                    "%(label)s: '%(value)s' is not a size or a model we know; did you mean %(names)s? A size in "
                    "billions (7, 70B) is accepted too.") % {"label": self.tr.gettext(self.spec.label),
                                                             "value": shown(value),
                                                             "names": self.tr.list(close, style="or")}, close)
            raise self.error("%(label)s: '%(value)s' is not a size or a model we know; give the size "
                             "in billions (7, 70B) or a model's name (Llama-3.1-8B, Mixtral-8x7B; `expert models` "
                             "lists them).", value)
        if resolved is None:
            return self.number(value, None, N_("7, 70B, Llama-3-8B"))[0]
        self.resolved = resolved
        return resolved.total_b

    def counted(self, value: str) -> str:
        """``value`` without the word after its count when the word is this field's ("10k examples",
        "4096 tokens": rules/vocabulary.toml); one of another count's is refused ("10k examples" as tokens)."""
        vocab = self.vocabulary()
        if vocab is None:
            return value
        text = fold(value)
        # the longest word the count ends with ("2k tokens per example" ends with "example" too)
        found = max(((len(word), field, word) for field, words in vocab.count_words.items() for word in words
                     if text.endswith(word) and _COUNT_BEFORE.search(text[:-len(word)])), default=None)
        if found is not None:
            _, field, said = found
            if field != self.spec.name:
                own = _COUNT_WORD.get(self.spec.name)
                raise self.error("%(label)s: '%(value)s' counts %(other)s, not %(label)s; give a number such as "
                                 "%(example)s, with or without '%(word)s' after it.", value,
                                 other=self.tr.gettext(self.kb.fields[field].label) if self.kb else field,
                                 example=self.tr.list(self.tr.gettext(self.example()).split(", "), style="or"),
                                 word=self.tr.gettext(own) if own else "")
            self.original = self.original or value
            return text[:-len(said)].strip()
        return value

    def example(self) -> str:
        """The examples of a count, its own (tokens in one example are not the dataset's examples)."""
        return N_("512, 4k") if self.spec.name == "tokens_per_example" else N_("10000, 10k, 50 thousand")

    def integer(self, value: Any) -> int:
        if isinstance(value, str):
            value = self.counted(value)
        if isinstance(value, str) and _GROUPED.match(value.strip()):
            value = value.strip().replace(".", "").replace(",", "")
        vocab = self.vocabulary()
        if isinstance(value, str) and values.in_billions(value):
            raise self.error("%(label)s: '%(value)s' is not accepted: a count is not read in billions; give it in "
                             "digits, or in thousands or millions, such as %(example)s.", value,
                             example=self.tr.list(self.tr.gettext(self.example()).split(", "), style="or"))
        if isinstance(value, str) and vocab is not None:
            # "50 mil", "2 Thousand", "1,5 millones": the multipliers of rules/vocabulary.toml, folded
            self.original = self.original or value
            value = fold(value)
        # each count with examples of its own: "10000" tokens in one example was no example to give
        number, unit = self.number(value, values.count_pattern(vocab) if vocab is not None else _COUNT,
                                   self.example())
        number *= (values.multiplier(self.spec.name, unit, vocab) if vocab is not None
                   else {"k": 1e3, "m": 1e6}.get((unit or "").lower(), 1))
        self.bounded(number, value)
        if number != int(number):
            raise self.error("%(label)s: '%(value)s' is not a whole number.", value)
        return int(number)

    def boolean(self, value: Any) -> bool:
        read = yes_or_no(value)
        if read is None:
            raise self.error("%(label)s: '%(value)s' is not accepted; answer yes or no.", value)
        return read

    def choice(self, value: Any) -> str:
        """A choice, case-insensitively, by its value, its label in any language or an alias
        (rules/vocabulary.toml [aliases.values]); the error names them in the user's language."""
        if isinstance(value, str) and value.strip().lower() in self.spec.choices:
            return value.strip().lower()
        vocab = self.vocabulary()
        if vocab is not None:
            found = values.read_choice(value, vocab.choice_words.get(self.spec.name, {}))
            if found is not None:
                return found
        accepted = accepted_choices(self.tr, self.spec.choices, self.spec.choice_labels)
        words = vocab.choice_words.get(self.spec.name, {}) if vocab is not None else {}
        # The nearest word in either language ("bajoo" -> low), else the nearest value ("qlroa" -> qlora).
        import difflib  # (here: a command that is understood does not pay for it)

        close = (difflib.get_close_matches(fold(value), [w for w in words if len(w) >= 4], n=1, cutoff=0.75)
                 if isinstance(value, str) and len(value) >= 4 else [])
        guesses = [words[close[0]]] if close else nearest(value, self.spec.choices) if isinstance(value, str) else []
        raise self.error("%(label)s: '%(value)s' is not accepted; choose %(accepted)s.", value, accepted=accepted,
                         suggestions=guesses)


def accepted_choices(tr: Localizer, choices: Any, labels: Mapping[str, str] | None = None) -> str:
    """The accepted values of a choice, in the user's language: each label
    the value, or its translated label with the value after it when the label
    does not start with it ("bajo (low), medio (medium) o alto (high)"), inside
    the label's brackets when it has some ("típico (typical, Hugging Face + PEFT)")."""
    named = []
    for value in choices:
        label = tr.gettext(labels[value]) if labels and value in labels else value
        head, bracket, rest = label.partition(" (")
        untranslated = not labels or label == labels.get(value)
        if head.lower() == value.lower() or (untranslated and label.lower().startswith(value.lower())):
            named.append(value)
        elif bracket:  # "típico (Hugging Face + PEFT)": the value inside the label's own brackets
            named.append(f"{head} ({value}, {rest}")
        else:
            named.append(f"{label} ({value})")
    return tr.list(named, style="or")


def build(kb: KnowledgeBase, given: Mapping[str, Any], tr: Localizer,
          model_config: Any = None) -> tuple[dict[str, Any], list[str]]:
    """The full profile (defaults filled in) and the names of defaulted fields.

    ``model_size_b`` is resolved (a size, a model of the table, a name read by
    its pattern) and the profile gains the derived fields of
    :meth:`expert.knowledge.models.Resolved.profile_fields`; ``model_config`` (the path
    of a Hugging Face config.json) stands for ``model_size_b``. Besides, the
    profile says which card a name given for the person's own GPU named
    (``own_gpu``: its id, or None) and how many of it the person has
    (``own_gpu_count``: "2x RTX 3090" is two; None without a GPU of one's own).
    """
    profile: dict[str, Any] = {}
    assumed: list[str] = []
    own_gpu = None
    own_count = 1
    resolved: models.Resolved | None = None
    if model_config is not None:
        resolved = resolve_size(kb, given.get("model_size_b"), tr, model_config)
        given = {**given, "model_size_b": resolved.total_b}
    for name, spec in kb.fields.items():
        value = given.get(name)
        if says_none(spec, value):
            profile[name] = None
        elif not is_given(value):
            assumed.append(name)
            profile[name] = spec.default
        else:
            parser = _Parser(spec, tr, kb)
            profile[name] = parser.parse(value)
            own_gpu = own_gpu or parser.card
            own_count = max(own_count, parser.count)
            if name == "model_size_b" and resolved is None:
                resolved = parser.resolved
    if resolved is None:
        resolved = models.Resolved(profile["model_size_b"], profile["model_size_b"], "number")
    profile.update(resolved.profile_fields())
    profile["model_shape"] = resolved.shape
    profile[OWN_GPU] = own_gpu
    profile[OWN_GPU_COUNT] = own_count if profile.get("vram_gb") else None
    profile[OWN_VRAM] = own_count * profile["vram_gb"] if profile.get("vram_gb") else None
    for name in SETTINGS:       # read already (expert.input.settings); None: the rules choose it
        profile[name] = given.get(name)
    return profile, assumed


# The profile keys that record the card the person named as their own, and how many of it.
OWN_GPU = "own_gpu"
OWN_GPU_COUNT = "own_gpu_count"
OWN_VRAM = "own_vram_gb"


def resolve_size(kb: KnowledgeBase, value: Any, tr: Localizer, model_config: Any = None) -> models.Resolved:
    """The model a size answer (or a config.json) stands for, checked as
    ``model_size_b`` is: the one resolver of every place a size is accepted."""
    if model_config is not None:
        if is_given(value):
            raise InputError("model_config", tr.gettext(
                "model_config: give the model's size or name, or its config.json, not both."))
        resolved = models.read_config(kb, model_config, tr)
        _Parser(kb.fields["model_size_b"], tr, kb).bounded(resolved.total_b, resolved.name)
        return resolved
    parser = _Parser(kb.fields["model_size_b"], tr, kb)
    total = parser.parse(value)
    return parser.resolved or models.Resolved(total, total, "number")


def parse_field(kb: KnowledgeBase, name: str, value: Any, tr: Localizer) -> Any:
    """Parse one field's value (for callers that take answers one at a time)."""
    return _Parser(kb.fields[name], tr, kb).parse(value)


def named_card(kb: KnowledgeBase, name: str, value: Any, tr: Localizer) -> str | None:
    """The id of the card ``value`` names for field ``name``, if it names one,
    with its count before it when it names several ("2x rtx-3080"); raises
    InputError like parse_field when the value is not accepted."""
    parser = _Parser(kb.fields[name], tr, kb)
    parser.parse(value)
    if parser.card is not None and parser.count > 1:     # "two 3090s": the count is kept with the card
        return f"{parser.count}x {parser.card}"
    return parser.card
