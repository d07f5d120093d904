"""A consultation held turn by turn: ask, explain why, answer — for the
interactive CLI and for chatbots. No click in here.

    c = Consultation(lang="en")
    while (q := c.next_question()) is not None:
        c.answer(q.id, input(q.text))
    print(c.result().render("text"))

Which questions are asked, and in what order, comes from the knowledge base
(``rules/questions.toml``): each question's ``ask_if`` is evaluated on a
provisional consultation made of the answers so far and the defaults for the
rest. A skipped question keeps its default, so ``result()`` is exactly
``advise()`` with the same facts.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..application import consult
from ..errors import InputError
from ..escape import one_line
from ..explanation.result import Result
from ..explanation.wording import owned_name, profile_value
from ..i18n import Lang, Localizer, resolve_lang
from ..input import freetext, values
from ..input import profile as profile_module
from ..input.arguments import check_bounds, check_paths, field_alias, profile_arguments, profile_parameters
from ..input.profile_types import ProfileArguments, Unpack
from ..knowledge import PROFILE_FIELDS, find_cards
from ..knowledge.bases import Catalogs, knowledge_base
from ..knowledge.vocabulary import fold, vocabulary
from . import provisional
from .api import is_registered, register_catalog, registered_catalog
from .saved_state import STATE_VERSION, check_state, with_field_names

# Words that mean "none" for the optional fields (no own GPU, no deadline).
_UNITS = {"size": "B", "number": "GB", "hours": "h"}


@dataclass(frozen=True)
class Told:
    """What :meth:`Consultation.tell` understood in a message."""

    understood: dict[str, Any]       # field -> value, as stored
    problems: dict[str, str]         # field -> why the value found was not accepted
    text: str                        # what was understood, in the consultation's language
    notes: dict[str, str] = field(default_factory=dict)      # field -> an assumption or a value said twice
    questions: dict[str, str] = field(default_factory=dict)  # field -> "did you mean QLoRA?" (nothing taken)
    counts: dict[str, int] = field(default_factory=dict)     # field -> how many cards ("two 3090s")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class AnswerError(InputError):
    """An answer that is not accepted; ``field`` is the question's id."""


@dataclass(frozen=True)
class Question:
    """The next question of an interactive consultation, in the user's language."""

    id: str
    text: str
    hint: str | None
    kind: str                        # size, number, integer, hours, choice, bool
    choices: list[dict[str, Any]]    # [{"value": ..., "label": ...}] for choice and bool
    unit: str | None
    default: Any
    default_label: str
    optional: bool                   # "no" is an answer (no own GPU, no deadline)
    why: str
    rules: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Consultation:
    """One consultation, one question at a time. See the module docstring."""

    @profile_parameters
    def __init__(self, lang: Lang | None = None, rules_dir: str | Path | None = None,
                 catalog: Catalogs = None, *, model: Any = None, **profile: Unpack[ProfileArguments]) -> None:
        """The profile fields given are known facts: not asked (keyword
        arguments, declared once: :class:`expert.input.profile_types.ProfileArguments`;
        ``model`` is another name for ``model_size_b``, as in advise()).
        ``catalog``: catalog files of the application, or ids it registered with
        ``register_catalog()``; saved state keeps only the ids. An unknown
        field is an :class:`InputError`."""
        self.lang = resolve_lang(lang)
        self._tr = Localizer(self.lang)
        # another name of a field ("model", "vram"): one table; a field under two names is refused, as advise() does
        named = {**profile, "model": model} if model is not None else dict(profile)
        known_facts = {name: value for name, value in profile_arguments(named, self._tr).items() if value is not None}
        check_bounds({**known_facts, "catalog": catalog}, self._tr)
        check_paths(rules_dir, catalog, self._tr)
        self.rules_dir = None if rules_dir is None else str(rules_dir)
        # a shipped catalog by its name ("current"), as advise() takes it
        given = [catalog] if isinstance(catalog, (str, Path)) else list(catalog or [])
        registered = [c if is_registered(c) else register_catalog(c) for c in given]
        self.catalog = registered
        self._kb = knowledge_base(self.rules_dir, [registered_catalog(c, self._tr) for c in registered])
        self.known: dict[str, Any] = {}
        for name, value in known_facts.items():
            self._check_field(name)
            if value is not None and profile_module.says_none(self._kb.fields[name], value):
                self.known[name] = None          # "no" GPU, "no" deadline: an answer, as everywhere else
            elif value is not None:
                spec = self._kb.fields[name]
                # a card's name is kept as its id, as an answer is: the profile records the card
                card = (profile_module.named_card(self._kb, name, value, self._tr)
                        if spec.cards and isinstance(value, str) and not profile_module.says_none(spec, value) else None)
                self.known[name] = card or self._kept(name, value, profile_module.parse_field(self._kb, name, value,
                                                                                               self._tr))
        self.answers: dict[str, Any] = {}
        self.history: list[str] = []
        # A field answered "yes" that takes a card's name: its question asks which card next.
        self.which: str | None = None
        # Values a message seemed to mean ("qlroa": qlora): the field's question asks "did you mean?";
        # "yes" takes the value.
        self.guess: dict[str, Any] = {}
        # Answers taken back (back()): each is its question's default until the question is answered again,
        # so that going back and pressing Enter keeps what was said.
        self.earlier: dict[str, Any] = {}

    # --- the conversation -----------------------------------------------------

    def facts(self) -> dict[str, Any]:
        """Everything known so far: facts given at the start, then answers."""
        return {**self.known, **self.answers}

    def next_question(self) -> Question | None:
        """The next question worth asking, or None when the consultation is complete."""
        facts = self.facts()
        env = None
        for spec in self._kb.questions:
            if spec.field in facts:
                continue
            if spec.field == self.which:
                return self._question(spec, which=True)
            if spec.condition.source != "true":
                env = env or self._provisional_env(facts)
                if not spec.condition(env):
                    continue
            return self._question(spec)
        return None

    def answer(self, question_id: str, raw: Any) -> None:
        """Validate and store an answer (again to change it). Raises AnswerError; nothing is stored then."""
        question_id = self._field_name(question_id)
        self._check_field(question_id)
        check_bounds({question_id: raw}, self._tr)
        if question_id in self.guess and isinstance(raw, str) and profile_module.says_yes(raw):
            raw = self.guess[question_id]
        if (self._kb.fields[question_id].cards and question_id != self.which and isinstance(raw, str)
                and profile_module.says_yes(raw)):
            self.which = question_id       # "yes, I have one": the question asks which
            return
        value = self._parse(question_id, raw)
        if question_id == self.which:
            self.which = None
        self.answers[question_id] = value
        self.guess.pop(question_id, None)
        self.earlier.pop(question_id, None)
        if question_id in self.history:
            self.history.remove(question_id)
        self.history.append(question_id)

    def tell(self, text: str) -> Told:
        """Take every answer recognised in a sentence of free text ("I want to
        fine-tune Mistral-7B with LoRA on my 3090"), in English or Spanish: the
        words come from ``rules/vocabulary.toml`` and the catalog. Each value is
        validated as an answer; those that are not accepted are left out and
        reported. Returns what was understood, with a sentence that says so;
        ``next_question()`` then asks only what is still missing."""
        if not isinstance(text, str):
            raise AnswerError("text", self._tr.gettext("text: a message is expected."))
        if len(text) > freetext.MAX_TELL:
            raise AnswerError("text", self._tr.gettext(
                "text: the message is too long; at most %(most)s characters.") % {"most": freetext.MAX_TELL})
        if freetext.too_long(text):
            raise AnswerError("text", self._tr.gettext(
                "text: the message is too long once its symbols and ligatures are spelled out; at most %(most)s "
                "characters.") % {"most": freetext.MAX_TELL})
        understood: dict[str, Any] = {}
        problems: dict[str, str] = {}
        notes: dict[str, str] = {}
        questions: dict[str, str] = {}
        _ = self._tr.gettext
        reading = freetext.read(text, self._kb)
        for name, raw in reading.found.items():
            doubt = self._choice_doubt(name, raw, text)     # "full or lora", "not lora": not an answer
            if doubt is not None:
                problems[name] = doubt
                continue
            try:
                self.answer(name, "no" if raw is None else raw)
            except InputError as error:
                problems[name] = str(error)
                continue
            understood[name] = self.answers[name]
            self.guess.pop(name, None)
        for name, words in reading.refused.items():
            if name in self._kb.fields:     # refused as the answer would be ("by friday")
                try:
                    self._parse(name, words)
                except InputError as error:
                    problems[name] = str(error)
            else:
                problems[name] = _("'%(value)s' is not a number that can be read safely; write it with digits, "
                                   "such as 10000 or 1.5.") % {"value": profile_module.shown(words)}
        understood = {name: understood[name] for name in self._kb.fields if name in understood}
        for name, earlier in reading.repeated.items():
            if name in understood:
                notes[name] = _("%(label)s was said more than once: the later statement is kept (%(kept)s, not "
                                "%(earlier)s).") % {
                    "label": _upper_first(_(self._kb.fields[name].label)), "kept": self._said(name, understood[name]),
                    "earlier": self._tr.list([self._said_raw(name, value) for value in earlier], style="or")}
        for name, words in reading.assumed.items():
            if name in understood:
                notes[name] = _("'%(words)s' is read as %(value)s, an assumption: give a number of hours or days "
                                "to change it.") % {"words": words, "value": self._said(name, understood[name])}
        counts = {name: count for name, count in reading.counts.items() if name in understood}
        for name, count in counts.items():
            notes[name] = _("%(count)s cards of your own: the advice sizes them together, as one machine of that "
                            "many devices.") % {
                "count": self._tr.number(count, 0)}
        for name, (word, value) in reading.guesses.items():
            if name not in self.facts():
                self.guess[name] = value
                questions[name] = _("By '%(word)s', did you mean %(value)s? Answer yes, or give the %(label)s.") % {
                    "word": profile_module.shown(word), "value": self._said(name, value),
                    "label": _(self._kb.fields[name].label)}
        said = [f"{_(self._kb.fields[name].label)}: {self._said(name, value)}"
                for name, value in understood.items()]
        summary = (_("Understood: %(facts)s.") % {"facts": "; ".join(said)} if said
                   else _("Nothing in that message answers a question."))
        return Told(understood=understood, problems=problems,
                    text=" ".join([summary, *notes.values(), *questions.values(), *problems.values()]),
                    notes=notes, questions=questions, counts=counts)

    def _said_raw(self, name: str, raw: Any) -> str:
        """A value as the message gave it, said as the answer would be (for "not 48 h")."""
        try:
            return self._said(name, self._parse(name, "no" if raw is None else raw))
        except InputError:
            return profile_module.shown(raw)

    def _said(self, name: str, value: Any) -> str:
        """An answer as a person reads it: a model or a card named with its size."""
        if isinstance(value, str) and name == "model_size_b":
            resolved = profile_module.resolve_size(self._kb, value, self._tr)
            return f"{one_line(value)} ({self._tr.billions(resolved.total_b)})"
        if isinstance(value, str) and self._kb.fields[name].cards:
            counted = values.card_count(value, vocabulary(self._kb))
            count, card = counted if counted is not None and counted[0] > 1 else (1, value)
            found = find_cards(self._kb, card)
            if found:
                # by the name the answer gives it, without the brand words ("RTX 3090", not "NVIDIA GeForce …")
                shown = f"{owned_name(self._kb, found[0][1], found[0][0])} ({self._tr.gib(found[0][2])})"
                return f"{count} × {shown}" if count > 1 else shown
        return profile_value(self._kb, self._tr, name, value)

    def back(self) -> str | None:
        """Undo the last answer; returns the id of the question it answered, or
        None. The answer taken back is that question's default when it is
        asked again (:attr:`Question.default`): Enter keeps it."""
        if self.which is not None:       # back from "which card?" to "do you have one?"
            field_name, self.which = self.which, None
            return field_name
        if not self.history:
            return None
        last = self.history.pop()
        self.earlier[last] = self.answers.pop(last)
        return last

    def done(self) -> bool:
        return self.next_question() is None

    def result(self) -> Result:
        """The same result as ``advise()`` with the facts known so far."""
        return consult(self._kb, self._given(self.facts()), self._tr)[1]

    # --- state for chatbots ---------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The state to keep between chat turns: plain data (no file paths),
        a few hundred bytes; catalogs by their registered ids."""
        state: dict[str, Any] = {"version": STATE_VERSION, "lang": self.lang, "catalog": list(self.catalog),
                                 "known": dict(self.known), "answers": dict(self.answers), "history": list(self.history)}
        if self.which is not None:
            state["which"] = self.which
        if self.guess:
            state["guess"] = dict(self.guess)
        return state

    @classmethod
    def from_dict(cls, state: Any, rules_dir: str | Path | None = None) -> Consultation:
        """Rebuild a consultation saved with ``to_dict()``. The state is data
        from outside: its size, every key and every value are checked, and
        anything else raises :class:`InputError` (a ``ValueError``) naming the
        key. Catalogs must be ids registered in this process; ``rules_dir``
        comes from the application, never from the state."""
        state = with_field_names(state)
        check_state(state)
        tr = Localizer(state["lang"])
        for catalog_id in state["catalog"]:  # only ids this process registered: never a path from outside
            if not is_registered(catalog_id):
                registered_catalog(catalog_id, tr)  # raises, naming the id
        consultation = cls(lang=state["lang"], rules_dir=rules_dir, catalog=state["catalog"], **state["known"])
        answers = state["answers"]
        history = [name for name in state["history"] if name in answers]
        for name in history + [name for name in answers if name not in history]:
            value = answers[name]
            consultation.answer(name, "no" if value is None else value)
        which = state.get("which")
        if which is not None and not consultation._kb.fields[which].cards:
            raise InputError("state", tr.gettext("state: '%(key)s' is not accepted; %(accepted)s.") % {
                "key": "which", "accepted": tr.gettext("a profile field that takes a card's name")})
        if which is not None and which not in consultation.facts():
            consultation.which = which
        for name, value in (state.get("guess") or {}).items():
            consultation._parse(name, value)           # a value of the field, or InputError naming it
            if name not in consultation.facts():
                consultation.guess[name] = value
        return consultation

    # --- helpers --------------------------------------------------------------

    @staticmethod
    def _alias(name: str, lang: Any = None) -> str:

        return field_alias(name, PROFILE_FIELDS)

    def _field_name(self, name: Any) -> Any:
        return self._alias(name) if isinstance(name, str) else name

    def _check_field(self, name: Any) -> None:
        if not isinstance(name, str) or name not in self._kb.fields:
            raise AnswerError(name if isinstance(name, str) else "question_id", self._tr.gettext(
                "unknown field '%(field)s'; accepted: %(accepted)s.") % {
                "field": profile_module.shown(name),
                "accepted": ", ".join(self._kb.fields)})

    def _given(self, facts: dict[str, Any]) -> dict[str, Any]:
        # An optional field answered "none" is an answer, not a field left out.
        return {name: ("none" if name in facts and facts[name] is None else facts.get(name))
                for name in self._kb.fields}

    def _read_by_helpers(self) -> dict[str, set[str]]:
        return provisional.helper_reads(self._kb, self._given({}), self._tr)

    def _provisional_env(self, facts: dict[str, Any]) -> provisional.Env:
        return provisional.env(self._kb, self._given(facts), self._tr)

    def _parse(self, name: str, raw: Any) -> Any:
        spec = self._kb.fields[name]
        text = raw.strip() if isinstance(raw, str) else raw
        try:
            if isinstance(text, str):
                if profile_module.says_none(spec, text):
                    return None
                choices = self._choices(name)
                if choices and text.isascii() and text.isdigit() and 1 <= int(text) <= len(choices):
                    return choices[int(text) - 1]["value"]
                for choice in choices:
                    if text.lower() == str(choice["label"]).lower():
                        return choice["value"]
                if spec.cards:      # a card's name is kept as its id: the profile records the card
                    card = profile_module.named_card(self._kb, name, text, self._tr)
                    if card is not None:
                        return card
            return self._kept(name, text, profile_module.parse_field(self._kb, name, text, self._tr))
        except InputError as error:
            # Said in words ("RTX 3090" for your GPU, "50 mil", "by tomorrow")?
            short = isinstance(text, str) and len(text) <= profile_module.MAX_TEXT
            reading = freetext.read(text, self._kb, answering=name) if short else freetext.Reading()
            found = reading.found
            # Read again only when the words say one thing else, and say it: "full or lora", "10k or
            # 20k", "1 day 2 hours" say two things, "not lora" what is not wanted.
            if name in found and found[name] != text:
                doubt = self._doubt(name, found[name], text, reading.repeated.get(name, []))
                if doubt is not None:
                    raise AnswerError(error.field, doubt) from None
                if found[name] is None:
                    return None
                # one value said twice ("my 3090 with 24 GB"): the card, which says more than its memory
                said = [found[name], *reading.repeated.get(name, [])]
                card = next((v for v in said if self._kb.fields[name].cards and isinstance(v, str)), found[name])
                try:
                    return self._parse(name, card)    # a card found is kept as its id
                except InputError:
                    pass
            raise AnswerError(error.field, str(error)) from None

    def _doubt(self, name: str, value: Any, text: str, earlier: list[Any]) -> str | None:
        """Why the value free text found in an answer is not its answer (in
        the person's language), or None when it is: the answer names other
        values too, or an alternative to it, or says it is not wanted
        (vocabulary.toml [answers])."""
        _ = self._tr.gettext
        spec = self._kb.fields[name]
        said = {"label": _(spec.label), "value": profile_module.shown(text)}
        values = [value, *earlier]
        if earlier and not self._one_value(name, values):
            return _("%(label)s: '%(value)s' names more than one answer; give one.") % said
        choice = self._choice_doubt(name, value, text)
        if choice is not None:
            return choice
        first = fold(text).replace(",", " ").split()[:1]
        if spec.cards and value is not None and first and profile_module.says_none(spec, first[0]):
            return _("%(label)s: '%(value)s' says none and names a card; say which.") % said
        return None

    def _choice_doubt(self, name: str, value: Any, text: str) -> str | None:
        """Why ``text`` does not choose ``value`` for a choice field: it offers
        another choice ("full or lora") or negates this one ("not lora"); None
        when it does, or the field is not a choice."""
        _ = self._tr.gettext
        spec = self._kb.fields[name]
        said = {"label": _(spec.label), "value": profile_module.shown(text)}
        vocab = vocabulary(self._kb)
        folded = fold(text)

        def near(before: tuple[str, ...], words: list[str]) -> bool:    # one of ``before``, then a word, a word apart at most
            before, words = tuple(w for w in before if w), [w for w in words if w]
            if not before or not words:
                return False
            pattern = (r"(?<![\w'-])(?:" + "|".join(re.escape(w) for w in before) + r")\s+(?:\S+\s+)?(?:"
                       + "|".join(re.escape(w) for w in words) + r")(?![\w'-])")
            return re.search(pattern, folded) is not None

        if spec.choices and value is not None:
            words = vocab.choice_words.get(name, {})
            mine = [w for w, choice in words.items() if choice == value] + [str(value)]
            others = [w for w, choice in words.items() if choice != value] + [c for c in spec.choices if c != value]
            alternative = r"(?<![\w'-])(?:%s)\s*(?:%s)(?![\w'-])" % (
                "|".join(re.escape(w) for w in others), "|".join(re.escape(w) for w in vocab.alternatives))
            if near(vocab.alternatives, others) or (vocab.alternatives and re.search(alternative, folded)):
                return _("%(label)s: '%(value)s' names more than one answer; give one.") % said
            if near(vocab.negations, mine):
                return _("%(label)s: '%(value)s' says what you do not want; say what you do.") % said
        return None

    def _one_value(self, name: str, values: list[Any]) -> bool:
        """Whether the values free text found for a field are one: the same
        figure, and at most one card (a card and its memory are one)."""
        spec = self._kb.fields[name]
        cards, figures = set(), set()
        for raw in values:
            try:
                card = (profile_module.named_card(self._kb, name, raw, self._tr)
                        if spec.cards and isinstance(raw, str) else None)
                cards |= {card} if card else set()
                figures.add(profile_module.parse_field(self._kb, name, raw, self._tr) if raw is not None else None)
            except InputError:
                return False
        return len(cards) <= 1 and len(figures) <= 1

    def _kept(self, name: str, raw: Any, value: Any) -> Any:
        """What is kept of a valid answer: its value, but a model's name as
        named (the result resolves it again, with its experts and
        architecture, and saved state keeps the name)."""
        if name == "model_size_b" and isinstance(raw, str):
            resolved = profile_module.resolve_size(self._kb, raw, self._tr)
            if resolved.read_as != "number":
                return raw.strip()
        return value

    def _choices(self, name: str) -> list[dict[str, Any]]:
        spec = self._kb.fields[name]
        if spec.type == "bool":
            return [{"value": True, "label": self._tr.gettext("yes")}, {"value": False, "label": self._tr.gettext("no")}]
        return [{"value": c, "label": self._tr.gettext(spec.choice_labels[c])} for c in spec.choices]

    def _question(self, spec: Any, which: bool = False) -> Question:
        field_spec = self._kb.fields[spec.field]
        _ = self._tr.gettext
        rules = [rule.id for rule in self._kb.rules
                 if ("profile", spec.field) in rule.condition.fields or ("profile", spec.field) in rule.placeholders
                 or rule.id in self._read_by_helpers().get(spec.field, ())]
        why = _(spec.why)      # in plain words: the rule ids stay in ``rules`` (and `expert explain`)
        default = field_spec.default
        optional = default is None
        if spec.field in self.earlier and not which:    # taken back: what was said is the default
            default = self.earlier[spec.field]
            default_label = self._said(spec.field, default)
        elif default is None:
            default_label = _(field_spec.none_label or "none")
        elif field_spec.type == "bool":
            default_label = _("yes") if default else _("no")
        elif field_spec.choices:
            default_label = _(field_spec.choice_labels[default])
        else:
            default_label = self._tr.number(default, 2)
        text, hint = (spec.which_text, spec.which_hint) if which and spec.which_text else (spec.text, spec.hint)
        if which:       # after "yes, I have one", the default (none) reads as changing one's mind
            default_label = _("none after all")
        asked = _(text)
        if spec.field in self.guess:
            asked = _("Did you mean %(value)s?") % {"value": self._said(spec.field, self.guess[spec.field])} + " " + asked
        return Question(spec.field, asked, _(hint) if hint else None, field_spec.type,
                        self._choices(spec.field), _UNITS.get(field_spec.type), default, default_label,
                        optional, why, rules)


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


