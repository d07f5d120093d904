"""The answer to a consultation, what ``advise()`` returns, as data:
:class:`Result` and its parts, ``to_dict()`` (the JSON contract of PRODUCT.md,
in full or as the summary for chats) and ``render()``.

The result is built, and worded, by :func:`expert.explanation.answer.build_result`
(the words: :mod:`expert.explanation.wording`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, overload

from ..errors import InputError, nearest
from ..escape import json_text, quoted
from ..i18n import Localizer
from ..knowledge import PROFILE_FIELDS, KnowledgeBase, load
from .templating import check_format, environment
from .wording import memory_sentence, profile_value

# The version of the JSON contract (``expert schema --what output``), and its two forms.
SCHEMA_VERSION = "1.0"
DETAILS = ("full", "summary")
# The summary form: the pick and the next two options, without what only the
# full form needs (the rules, the reasons, the arithmetic behind the cost; the
# recipe by its id, rules/recipes.toml).
SUMMARY_OPTIONS = 3
SUMMARY_LEFT_OUT = ("rules", "reasons", "source", "total_vram_gb", "cost_class", "time", "name", "where", "pricing",
                    "setup", "memory")
# Of the cost, the summary keeps what a person reads; of the profile, what is known.
SUMMARY_COST = ("currency", "per_hour", "total", "pricing")


def check_detail(detail: Any, lang: str) -> None:
    if detail not in DETAILS:
        tr = Localizer(lang)
        close = nearest(detail, DETAILS)
        raise InputError("detail", tr.gettext("detail: '%(value)s' is not accepted; choose %(accepted)s.") % {
            "value": quoted(detail),
            "accepted": tr.list(DETAILS, style="or")} + tr.did_you_mean(close), close)


_ATOMIC = (str, int, float, bool, type(None))
_ATOMIC_SET = frozenset(_ATOMIC)


def as_data(value: Any) -> Any:
    """``dataclasses.asdict()`` of a record, a copy the caller may change, made
    without asking ``copy.deepcopy()`` for every number and string, which
    the ``asdict()`` of Python 3.10 and 3.11 does: it was a fifth of the time
    of an ``advise()`` whose JSON is asked for (``to_dict()`` 22 ms after a
    consultation of 80, measured on 2026-12-02). The same result as asdict()."""
    kind = type(value)
    if kind in _ATOMIC:
        return value
    # A plain value inside is taken as it is, not through a call of its own (most of a result's are).
    if kind is dict:
        if _ATOMIC_SET.issuperset(map(type, value.values())) and _ATOMIC_SET.issuperset(map(type, value)):
            return dict(value)
        return {k if type(k) in _ATOMIC else as_data(k): v if type(v) in _ATOMIC else as_data(v)
                for k, v in value.items()}
    if kind is list or kind is tuple:
        if _ATOMIC_SET.issuperset(map(type, value)):
            return kind(value)
        return kind(v if type(v) in _ATOMIC else as_data(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        copied = {}
        for f in fields(value):
            v = getattr(value, f.name)
            copied[f.name] = v if type(v) in _ATOMIC else as_data(v)
        return copied
    return copy.deepcopy(value)

@dataclass(frozen=True)
class Setup:
    """An option's recipe as run, as the estimator sized it: what a launch
    file sets. ``given``: the settings the person fixed (``seq_len``,
    ``micro_batch``, ``lora_rank``, ``checkpointing``); the others the rules
    chose."""

    method: str
    strategy: str
    devices: int
    precision: str
    optimizer: str
    base_bits: int
    lora_rank: int | None       # None for full fine-tuning (no adapters)
    seq_len: int                # tokens per sequence the memory is sized for
    micro_batch: int
    checkpointing: bool
    offload: bool
    stack: str
    given: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Memory:
    """What each device of an option holds, part by part (the estimator's,
    for :class:`Setup`), against each device's memory: in GiB (2**30 bytes),
    what is compared and shown; the *_gb fields are the same in GB (10**9
    bytes), but device_gb, the device's size as sold."""

    weights_gb: float
    gradients_gb: float
    optimizer_gb: float         # the optimizer's states
    activations_gb: float
    overhead_gb: float          # the framework's own (CUDA context, allocator)
    estimate_gb: float          # the parts' sum
    per_device_gb: float        # what the option is sized by (the estimate rounded up, or the guide's share)
    device_gb: float            # each device's size as sold (a card of 24 GB)
    parts_gib: dict[str, float]     # weights, gradients, optimizer, activations, overhead
    estimate_gib: float
    per_device_gib: float
    device_memory_gib: float        # each device's memory as its driver reports it

    def parts(self) -> dict[str, float]:
        """The parts in GiB by their name in the estimator (weights, gradients, optimizer, activations, overhead)."""
        return dict(self.parts_gib)


@dataclass(frozen=True)
class Recommendation:
    """One recommended configuration: which card, how many, how long, and why."""

    rank: int
    gpu: str
    name: str
    source: str             # "guide", "own", or the user catalog's file name
    count: int
    vram_gb: float
    total_vram_gb: float
    strategy: str
    where: str
    pricing: str | None
    hours: float
    cost: dict[str, Any]    # currency, per_hour, total, pricing, on_demand_total, spot_total, price_assumed
    cost_class: str         # the guide's relative cost: low ... high, or own
    time: dict[str, Any]    # tokens, flops_per_token, tokens_per_second, hours, speed_assumed
    meets_deadline: bool | None
    recipe: dict[str, Any]  # strategy, precision, optimizer, base_bits, checkpointing, offload
    devices: int            # physical devices in all (a dual-die card counts two)
    per_device_gb: float    # what each device needs with this recipe and strategy, in GB (10**9 bytes)
    host_ram_gb: float | None   # CPU memory the offloaded state needs, in GB; None without offload
    # The same in GiB (2**30 bytes), the unit shown, and each device's memory as its driver reports it
    per_device_gib: float
    host_ram_gib: float | None
    device_memory_gib: float
    rules: list[str]
    text: str
    reasons: list[dict[str, str]] = field(default_factory=list)
    setup: Setup | None = None      # the recipe as run (None in a Result built by hand without it)
    memory: Memory | None = None    # each device's memory, part by part


@dataclass(frozen=True)
class Note:
    """A piece of advice or a warning, with the rules that gave it."""

    id: str
    rules: list[str]
    text: str


@dataclass(frozen=True)
class Rejection:
    """A card ruled out, with the rules that ruled it out."""

    gpu: str
    name: str
    source: str
    rules: list[str]
    text: str


@dataclass(frozen=True)
class TraceStep:
    """One rule that fired: what it matched, what it concluded, and where the guide says so."""

    rule: str
    kind: str
    cites: dict[str, str]
    heuristics: list[str]
    matched: list[dict[str, Any]]
    derived: list[dict[str, Any]]
    text: str


class Trace(Sequence[TraceStep]):
    """The rules that fired, as trace steps, written the first time they are
    read: most answers (the text, the summary, a chat's message) never read
    them, and writing every step's message is most of building a result."""

    def __init__(self, write: Callable[[], list[TraceStep]]) -> None:
        self._write: Callable[[], list[TraceStep]] | None = write
        self._steps: list[TraceStep] = []

    def _written(self) -> list[TraceStep]:
        if self._write is not None:
            self._steps, self._write = self._write(), None
        return self._steps

    @overload
    def __getitem__(self, index: int) -> TraceStep: ...

    @overload
    def __getitem__(self, index: slice) -> list[TraceStep]: ...

    def __getitem__(self, index: int | slice) -> TraceStep | list[TraceStep]:
        return self._written()[index]

    def __len__(self) -> int:
        return len(self._written())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return repr(self._written())


@dataclass(frozen=True)
class Result:
    """The answer to a consultation, in one language (``to_dict()`` is the JSON contract)."""

    lang: str
    profile: dict[str, Any]
    assumed: list[str]
    requirement: dict[str, Any]
    recommendations: list[Recommendation]
    advice: list[Note]
    warnings: list[Note]
    rejected: list[Rejection]
    trace: Sequence[TraceStep]
    kb: KnowledgeBase | None = field(repr=False, compare=False, default=None)   # for rendering labels
    # The reject rules that name their cards together (rules.toml `together`, such as no provider renting
    # them): one line each for all its cards, which their own texts in `rejected` leave out.
    rejected_together: list[Note] = field(default_factory=list)

    def to_dict(self, detail: str = "full") -> dict[str, Any]:
        """The JSON contract. ``detail="full"``: everything, with the trace;
        ``"summary"``: the pick, the next alternatives, advice and warnings, a few
        KB for a model's context (``expert schema --what output``)."""
        check_detail(detail, self.lang)
        if detail == "summary":
            return self._summary()
        return {
            "schema_version": SCHEMA_VERSION,
            "detail": "full",
            "lang": self.lang,
            "profile": dict(self.profile),
            "assumed": list(self.assumed),
            "requirement": dict(self.requirement),
            "recommendations": [as_data(r) for r in self.recommendations],
            "advice": [as_data(n) for n in self.advice],
            "warnings": [as_data(n) for n in self.warnings],
            "rejected": [as_data(r) for r in self.rejected],
            "rejected_together": [as_data(n) for n in self.rejected_together],
            "trace": [as_data(t) for t in self.trace],
        }

    def shown(self) -> list[Recommendation]:
        """The recommendations text and markdown show: the first of the
        ranking (rules/ranking.toml ``shown``: four), and the person's own card
        wherever it ranks (it misses the deadline, say)."""
        shown = (self.kb or load()).ranking["shown"]
        first = self.recommendations[:shown]
        own = [r for r in self.recommendations[shown:] if r.gpu == "own"]
        return first + own

    def _summary(self) -> dict[str, Any]:
        return self._summary_data(self.summary_selection("json"))

    def _summary_data(self, chosen: SummaryChoice) -> dict[str, Any]:
        recommendations = []
        for rec in chosen.recommendations:
            data = as_data(rec)
            for key in SUMMARY_LEFT_OUT:
                data.pop(key, None)
            data["recipe_id"] = data.pop("recipe")["id"]
            data["cost"] = {key: data["cost"][key] for key in SUMMARY_COST}
            for key in ("host_ram_gb", "host_ram_gib", "meets_deadline"):
                if data[key] is None:
                    del data[key]
            if data["devices"] == data["count"]:
                del data["devices"]
            recommendations.append(data)
        data = {
            "schema_version": SCHEMA_VERSION,
            "detail": "summary",
            "lang": self.lang,
            # every field of the profile; of what was derived from them, what is known
            "profile": {k: v for k, v in self.profile.items()
                        if k in PROFILE_FIELDS or (v is not None and k != "model_shape")},
            "assumed": list(self.assumed),
            "requirement": {"vram_gb": self.requirement["vram_gb"], "text": self.requirement["text"]},
            "recommendations": recommendations,
            "more_recommendations": len(self.recommendations) - len(chosen.recommendations),
            "advice": [{"id": n.id, "text": n.text} for n in chosen.advice],
            "warnings": [{"id": n.id, "text": n.text} for n in chosen.warnings],
        }
        for key, count in (("more_advice", chosen.more_advice), ("more_warnings", chosen.more_warnings)):
            if count:
                data[key] = count
        return data

    def _in_summary(self, note: Note) -> bool:
        """A note is in the summary form unless its rule says it is not (rules.toml ``summary``)."""
        kb = self.kb or load()
        return all(rule.in_summary for rule in kb.rules if rule.id in note.rules)

    def summary_selection(self, form: str = "json") -> SummaryChoice:
        """What the summary form shows as ``form`` (``json``, or ``markdown``,
        which text shows too): the pick and the next two options, the advice
        and warnings meant for it; beyond SUMMARY_BYTES of that form, advice is
        left out from the end, then the options after the pick, then warnings
        from the end (each counted), until it fits. The pick always stays. The
        markdown, without the JSON's keys and profile, keeps more of them."""
        import json

        advice = [n for n in self.advice if self._in_summary(n)]
        warnings = [n for n in self.warnings if self._in_summary(n)]
        chosen = SummaryChoice(self.recommendations[:SUMMARY_OPTIONS], advice, warnings, 0, 0)

        def fits(chosen: SummaryChoice) -> bool:
            if form == "json":
                sent = json.dumps(self._summary_data(chosen), separators=(",", ":"), ensure_ascii=False)
                return len(sent.encode()) <= SUMMARY_BYTES
            return len(self._rendered("markdown", 80, chosen).encode()) <= SUMMARY_BYTES

        while not fits(chosen):
            if chosen.advice:
                chosen = replace(chosen, advice=chosen.advice[:-1], more_advice=chosen.more_advice + 1)
            elif len(chosen.recommendations) > 1:
                chosen = replace(chosen, recommendations=chosen.recommendations[:-1])
            elif chosen.warnings:
                chosen = replace(chosen, warnings=chosen.warnings[:-1], more_warnings=chosen.more_warnings + 1)
            else:
                break
        return chosen

    def render(self, fmt: str = "text", width: int = 80, detail: str = "full", verbose: bool = False) -> str:
        """The result as ``text`` (terminal), ``markdown`` (chat) or ``json``.
        Text and markdown give the answer at a glance, on one screen: the
        memory, the pick with its recipe and reasons, the options as a table,
        time and cost, the advice and warnings meant for it (rules.toml
        ``brief``), the cards left out by name; ``verbose=True``, everything:
        each option in full, all the advice, why each card was left out, what
        was assumed. ``detail="summary"`` leaves out the trace (json), and the
        reasons, the cards not recommended and the assumptions (markdown,
        text): a short form for chat, of what :meth:`summary_selection` keeps."""
        check_format(fmt, self.lang)
        check_detail(detail, self.lang)
        if not isinstance(verbose, bool):
            raise InputError("verbose", Localizer(self.lang).gettext("verbose: true or false is expected."))
        if fmt == "json":
            return json_text(self.to_dict(detail))
        if detail == "summary":
            return self._rendered(fmt, width, self.summary_selection("markdown"))
        return self._rendered(fmt, width, None) if verbose else self._brief(fmt, width)

    def _rejected_by_reason(self, kb: KnowledgeBase, tr: Localizer) -> dict[str, list[str]]:
        """The cards ruled out, each under the few words (labels.toml [reject])
        of its first reject rule that names cards one by one, in the order the
        answer lists them; a card whose only reason is said of several
        together is left to that line."""
        words = kb.labels.get("reject", {})
        groups: dict[str, list[str]] = {}
        for rejection in self.rejected:
            rule = next((rule for rule in rejection.rules if rule in words), None)
            if rejection.text and rule is not None:
                groups.setdefault(tr.gettext(words[rule]), []).append(rejection.name)
        return groups

    def _brief(self, fmt: str, width: int) -> str:
        """The one-screen answer (:meth:`render`)."""
        from .chart import options_table, time_and_cost
        from .wording import recipe_in_words

        tr = Localizer(self.lang)
        _ = tr.gettext
        kb = self.kb or load()
        brief = {rule.id for rule in kb.rules if rule.in_brief}
        advice = [n for n in self.advice if all(rule in brief for rule in n.rules)]
        warnings = [n for n in self.warnings if all(rule in brief for rule in n.rules)]
        names = [rej.name for rej in self.rejected]
        # a card whose only reason is one said of several cards together (no provider rents it: its own
        # text is empty) is not a worse card: named apart, with what would rank it
        unpriced = [rej.name for rej in self.rejected if not rej.text]
        groups = self._rejected_by_reason(kb, tr)
        # with one provider's prices asked for (--provider lambda), the others may well rent those cards
        provider = next((basis.name for basis in kb.prices if basis.id == self.profile.get("provider")), None)
        unrented = {"cards": tr.list(unpriced), "how_price_card": kb.how(tr, "price_card"), "provider": provider}
        rejected = " ".join(part for part in (
            _("Not recommended — %(groups)s.") % {"groups": "; ".join(
                _("%(reason)s: %(cards)s") % {"reason": reason, "cards": tr.list(cards)}
                for reason, cards in groups.items())} if groups else "",
            "" if not unpriced else
            tr.ngettext("No provider rents %(cards)s; give your price (%(how_price_card)s) and it is ranked.",
                        "No provider rents %(cards)s; give your price (%(how_price_card)s) and they are ranked.",
                        len(unpriced)) % unrented if provider is None else
            tr.ngettext("%(provider)s does not rent %(cards)s; give your price (%(how_price_card)s) and it is "
                        "ranked.",
                        "%(provider)s does not rent %(cards)s; give your price (%(how_price_card)s) and they are "
                        "ranked.", len(unpriced)) % unrented) if part)
        left = []
        if len(self.advice) > len(advice):
            count = len(self.advice) - len(advice)
            left.append(tr.ngettext("%(count)s more piece of advice", "%(count)s more pieces of advice", count)
                        % {"count": count})
        if len(self.warnings) > len(warnings):
            count = len(self.warnings) - len(warnings)
            left.append(tr.ngettext("%(count)s more warning", "%(count)s more warnings", count) % {"count": count})
        if names:
            left.append(_("the full reason each card was left out"))
        if self.assumed:
            left.append(_("what was assumed"))
        # markdown is for a chat, whose reader types no flags: what the long form adds, not how the CLI asks
        more = "" if not left else (
            _("The full answer adds %(what)s; the explanation shows the reasoning.") % {"what": tr.list(left)}
            if fmt == "markdown" else
            _("%(how_verbose)s adds %(what)s; %(how_explain)s shows the reasoning.") % {
                "what": tr.list(left), "how_verbose": kb.how(tr, "verbose"), "how_explain": kb.how(tr, "explain")})
        template = environment(self.lang).get_template(f"advise.brief.{'md' if fmt == 'markdown' else 'txt'}.j2")
        chart = time_and_cost(self, kb, tr, width)
        top = self.recommendations[0] if self.recommendations else None
        memory = _pick_memory(tr, top, always=fmt == "markdown")
        return template.render(r=self, width=width, table=options_table(self, kb, tr, width), chart=chart,
                               ranked=chart.ranked if chart else "", memory=memory,
                               recipe=recipe_in_words(kb, tr, self.profile.get("method"), top) if top else "",
                               advice=advice, warnings=warnings, rejected=rejected, more=more)

    def _rendered(self, fmt: str, width: int, chosen: SummaryChoice | None) -> str:
        from .chart import time_and_cost

        tr = Localizer(self.lang)
        kb = self.kb or load()    # a Result built by hand may come without its knowledge base
        assumed = [f"{tr.gettext(kb.fields[name].label)}: {profile_value(kb, tr, name, self.profile[name])}"
                   for name in self.assumed]
        template = environment(self.lang).get_template(f"advise.{'md' if fmt == 'markdown' else 'txt'}.j2")
        top = self.recommendations[0] if self.recommendations else None
        memory = _pick_memory(tr, top, always=fmt == "markdown" and chosen is None)
        if chosen is None:
            return template.render(r=self, width=width, assumed=assumed, summary=False, memory=memory,
                                   alternatives=self.shown()[1:], advice=self.advice, warnings=self.warnings,
                                   left_out="", chart=time_and_cost(self, kb, tr, width))
        return template.render(r=self, width=width, assumed=assumed, summary=True, memory=memory,
                               alternatives=chosen.recommendations[1:], advice=chosen.advice,
                               warnings=chosen.warnings, left_out=chosen.left_out(tr), chart=None)


def _pick_memory(tr: Localizer, top: Recommendation | None, always: bool) -> str:
    """What the pick's devices hold, part by part, and the settings it was sized for: when ``always``
    (markdown), else only when the person fixed a setting (the answer says which were given, which chosen)."""
    if top is None or top.memory is None or top.setup is None or not (always or top.setup.given):
        return ""
    return memory_sentence(tr, top.memory, top.setup)


@dataclass(frozen=True)
class SummaryChoice:
    """What the summary form keeps of a result, and how much it leaves out."""

    recommendations: list[Recommendation]
    advice: list[Note]
    warnings: list[Note]
    more_advice: int            # advice left out beyond the bytes (not that meant only for the full form)
    more_warnings: int

    def left_out(self, tr: Localizer) -> str:
        """What the full answer has beyond this, in a sentence ("" if nothing)."""
        parts = [tr.ngettext("%(count)s more piece of advice", "%(count)s more pieces of advice", self.more_advice)
                 % {"count": self.more_advice}] if self.more_advice else []
        if self.more_warnings:
            parts.append(tr.ngettext("%(count)s more warning", "%(count)s more warnings", self.more_warnings)
                         % {"count": self.more_warnings})
        return tr.gettext("The full answer has %(what)s.") % {"what": tr.list(parts)} if parts else ""


# The most bytes a summary takes, its JSON (compact, UTF-8, as MCP sends it)
# and its markdown alike, each fitted on its own: a chat's share (issue 38: 3 KB). Beyond
# it, advice is left out from the end, then the options after the pick, then
# warnings from the end (counted in more_advice, more_recommendations,
# more_warnings); the pick stays.
SUMMARY_BYTES = 3000
