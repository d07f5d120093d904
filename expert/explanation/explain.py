"""The explanation facility: HOW, WHY NOT and WHAT IF, built from the engine's
record of what fired (``Run.firings``) — never by re-deriving the reasoning.

- HOW: for each recommendation, the chain from the person's answers (and the
  defaults assumed for them) through every rule that led to it.
- WHY NOT: for a card, the rule conditions that ruled it out (evaluated
  again, leaf by leaf, on the facts the rule matched), and the smallest change
  to the person's situation, found by re-running the consultation, that would
  make it the answer.
- WHAT IF: the consultation re-run with changed answers, and what changed and
  which rules account for it.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, nearest
from ..escape import one_line
from ..i18n import Lang, Localizer, resolve_lang
from ..inference import engine, sizing
from ..inference.engine import Firing, Run
from ..input import profile_types
from ..input.arguments import (
    ADVISE_ARGUMENTS,
    check_bounds,
    check_paths,
    field_alias,
    model_argument,
    with_aliases,
    with_prices,
)
from ..input.profile import OWN_GPU, is_given
from ..input.profile import build as build_profile
from ..knowledge import (
    PROFILE_FIELDS,  # declared once, in expert/knowledge/conditions.py
    SCALE_OUT,
    TRIAL_STEPS,
    KnowledgeBase,
)
from ..knowledge.bases import Catalogs, knowledge_base
from ..knowledge.conditions import Leaf
from ..knowledge.records import DEADLINE_MET, DEADLINE_MISSED, FEWEST_CARDS, NO_COUNT_FITS, SPEED_FOUND, cite_line
from ..knowledge.vocabulary import vocabulary
from .consult import Basis, consult
from .result import Result
from .wording import Writer, total_in_words

NOTE_KINDS = ("advice", "warning")
# The most bytes of JSON the summary of an explanation takes (UTF-8): a chat's share.
SUMMARY_BYTES = 3800
# WHY NOT for every card ruled out covers the first so many (in catalog
# order); the others are named after them ("and N more"), and each can be
# asked about alone (why_not=). A large catalog then costs about as much to
# explain as the shipped one.
MAX_WHY_NOT = 8
# The whole consultations WHY NOT may run, besides the first, for all the
# cards of one explanation (a change that works is nearly always found in the
# first or second; a card ranked lower cannot be tried alone, and finding no
# change for it would otherwise cost one for every change and pair).
MAX_CONSULTATIONS = 12


@dataclass(frozen=True)
class Step:
    """One rule firing in the chain that led to a recommendation."""

    rule: str
    kind: str
    cites: dict[str, str]
    sources: list[str]     # the person's answers and catalog entries it matched
    builds_on: list[str]   # the earlier rules that declared the other facts it matched
    text: str


@dataclass(frozen=True)
class How:
    """HOW: the chain of steps behind one recommendation."""

    gpu: str
    rank: int
    label: str
    steps: list[Step]


@dataclass(frozen=True)
class Reason:
    """One condition of a rule that ruled a card out, with its numbers."""

    rule: str
    cites: dict[str, str]
    conditions: list[dict[str, Any]]
    text: str


@dataclass(frozen=True)
class WhyNot:
    """WHY NOT: what ruled a card out and the smallest change that would make it the answer."""

    gpu: str
    name: str
    status: str            # rejected | more-cards | ranked-lower | recommended
    reasons: list[Reason]
    change: dict[str, Any] | None
    text: str


@dataclass(frozen=True)
class WhatIf:
    """WHAT IF: how the answer changes when some answers change."""

    changes: dict[str, Any]
    changed: list[dict[str, Any]]
    why: list[dict[str, Any]]       # rules that fire now or no longer: those about cards first
    after: dict[str, Any]

    def because(self) -> list[dict[str, Any]]:
        """The rules that changed which cards are ruled out or how they rank."""
        return [w for w in self.why if w["kind"] not in NOTE_KINDS]

    def notes(self) -> list[dict[str, Any]]:
        """The advice and warnings that appear or disappear."""
        return [w for w in self.why if w["kind"] in NOTE_KINDS]


@dataclass(frozen=True)
class Explanation:
    """A result with its reasoning: how, why not and what if."""

    result: Result
    how: list[How]
    why_not: list[WhyNot]
    what_if: WhatIf | None
    requested: str | None = None
    answers: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    detail: str = "full"       # "summary": the compact form for chats (to_dict and render)
    what_if_asked: tuple[str, ...] = ()    # the fields what_if changed, as asked
    more: list[dict[str, str]] = field(default_factory=list)   # cards ruled out past MAX_WHY_NOT: gpu, name

    @property
    def lang(self) -> str:
        return self.result.lang

    def to_dict(self, detail: str | None = None) -> dict[str, Any]:
        """The explanation as JSON data: everything (``"full"``), or the compact
        form for chats (``"summary"``: at most SUMMARY_BYTES of JSON)."""
        if (detail or self.detail) == "summary":
            return self.summary()
        data = self.result.to_dict()
        trace = data.pop("trace")
        return {
            **data,
            "answers": list(self.answers),
            "assumptions": list(self.assumptions),
            "how": [asdict(h) for h in self.how],
            "why_not": [asdict(w) for w in self.why_not],
            "why_not_more": [dict(m) for m in self.more],
            "what_if": asdict(self.what_if) if self.what_if else None,
            "trace": trace,
        }

    def summary(self) -> dict[str, Any]:
        """The compact form: the answer and its requirement, the steps of HOW
        for the pick (each rule, its guide section and what it says), the
        alternatives, WHY NOT in a sentence per card, and WHAT IF's changes.
        Texts are left out from the end, then whole entries (counted in
        ``more``), until the JSON takes at most SUMMARY_BYTES."""
        r = self.result
        data: dict[str, Any] = {
            "schema_version": r.to_dict("summary")["schema_version"], "detail": "summary", "lang": self.lang,
            "answer": r.recommendations[0].text if r.recommendations else None,
            "requirement": {"vram_gb": r.requirement.get("vram_gb"), "text": r.requirement.get("text")},
            "assumed": list(r.assumed),
            "how": [{"rule": s.rule, "section": s.cites.get("number"), "text": s.text}
                    for s in (self.how[0].steps if self.how else [])],
            "alternatives": [{"rank": rec.rank, "gpu": rec.gpu, "name": rec.name, "count": rec.count}
                             for rec in r.recommendations[1:4]],
            "why_not": [{"gpu": w.gpu, "name": w.name, "status": w.status, "text": w.text} for w in self.why_not],
            "what_if": None if self.what_if is None else {
                "changes": {k: v for k, v in self.what_if.changes.items() if k in PROFILE_FIELDS
                            and (k in self.requested_changes)},
                "changed": self.what_if.changed,
                "rules": [{"rule": w["rule"], "fires": w["fires"]} for w in self.what_if.why]},
            "more": {"why_not": 0, "how_texts": 0},
        }
        if data["how"] and data["how"][0]["text"] == data["requirement"]["text"]:
            del data["how"][0]["text"]     # said once, as the requirement
        import json

        def size() -> int:
            return len(json.dumps(data))     # non-ASCII escaped: the larger of the two ways JSON is sent

        for step in reversed(data["how"][1:]):
            if size() <= SUMMARY_BYTES:
                break
            if step.pop("text", None) is not None:
                data["more"]["how_texts"] += 1
        while size() > SUMMARY_BYTES and data["why_not"]:
            data["why_not"].pop()
            data["more"]["why_not"] += 1
        while size() > SUMMARY_BYTES and data["what_if"] and data["what_if"]["changed"]:
            data["what_if"]["changed"].pop()
        while size() > SUMMARY_BYTES and data["alternatives"]:
            data["alternatives"].pop()
        return data

    @property
    def requested_changes(self) -> tuple[str, ...]:
        return tuple(self.what_if_asked)

    @property
    def cited(self) -> list[dict[str, str]]:
        """The guide sections the shown steps and reasons cite, in guide order."""
        found = {c["number"]: c for c in [s.cites for h in self.how[:1] for s in h.steps]
                 + [r.cites for w in self.why_not for r in w.reasons] if c}
        sections, gettext = knowledge_base().sections, Localizer(self.lang).gettext
        cited = []
        for number in sorted(found, key=lambda n: int(n[1:])):
            section = sections.get(found[number]["section"])
            title = gettext(section.title) if section is not None and section.title else found[number]["heading"]
            cites = {**found[number], "title": title}
            cited.append({**cites, "line": cite_line(cites)})
        return cited

    def card_name(self, gpu: str) -> str:
        return next((r.name for r in self.result.recommendations + self.result.rejected if r.gpu == gpu), gpu)

    def hours(self, value: float) -> str:
        return Localizer(self.lang).hours(value)

    def cost(self, cost: Mapping[str, Any]) -> str:
        """A recommendation's total cost in words: nothing to rent, or the total and its pricing."""
        return total_in_words(Localizer(self.lang), cost, (self.result.kb or knowledge_base()).labels["pricing"])

    def more_text(self) -> str:
        """The cards ruled out past MAX_WHY_NOT, in a sentence ("" if none)."""
        if not self.more:
            return ""
        tr = Localizer(self.lang)
        names = [one_line(m["name"]) for m in self.more[:MAX_WHY_NOT]]
        if len(self.more) > len(names):
            names.append(tr.ngettext("%(n)s other", "%(n)s others", len(self.more) - len(names)) % {
                "n": len(self.more) - len(names)})
        return tr.ngettext("And %(n)s more card ruled out: %(names)s. Ask about it alone (why not, --why-not) "
                           "to see what would change that.",
                           "And %(n)s more cards ruled out: %(names)s. Ask about one of them alone (why not, "
                           "--why-not) to see what would change that.", len(self.more)) % {
            "n": len(self.more), "names": tr.list(names)}

    def render(self, fmt: str = "text", width: int = 80, color: bool = False) -> str:
        from .render import render_explanation

        return render_explanation(self, fmt, width, color)


def explain(
    *,
    # profile fields: generated by scripts/update_types.py from rules/profile.toml
    model_size_b: profile_types.ModelSizeB | None = None,
    method: profile_types.Method | None = None,
    budget: profile_types.Budget | None = None,
    rocm_ok: profile_types.RocmOk | None = None,
    deadline_h: profile_types.DeadlineH | None = None,
    vram_gb: profile_types.VramGb | None = None,
    dataset_examples: profile_types.DatasetExamples | None = None,
    tokens_per_example: profile_types.TokensPerExample | None = None,
    epochs: profile_types.Epochs | None = None,
    purpose: profile_types.Purpose | None = None,
    interruptible: profile_types.Interruptible | None = None,
    stack: profile_types.Stack | None = None,
    # end of the profile fields
    why_not: str | None = None,
    what_if: Mapping[str, Any] | None = None,
    lang: Lang | None = None,
    rules_dir: str | Path | None = None,
    catalog: Catalogs = None,
    basis: Basis = "checked",
    prices: Mapping[str, Any] | None = None,
    model: Any = None,
    model_config: Any = None,
    detail: str = "full",
    **unknown: Any,
) -> Explanation:
    """Answer a consultation and explain it: HOW for every recommendation, WHY
    NOT for every card ruled out (or for ``why_not``), and WHAT IF the answers
    in ``what_if`` (field → value) changed. ``detail``: ``"full"`` or
    ``"summary"`` (the compact form for chats, at most SUMMARY_BYTES of JSON,
    in ``to_dict()`` and ``render()``).

    The profile fields are advise()'s; ``model``, ``model_config`` and
    ``prices`` are as in advise(). Raises :class:`InputError` on a bad value,
    an unknown field (in the arguments or in ``what_if``), or an unknown card
    in ``why_not``.
    """
    tr = Localizer(resolve_lang(lang))
    check_bounds({**{name: value for name, value in locals().items() if name not in ("tr", "unknown")}, **unknown},
                    tr)
    check_paths(rules_dir, catalog, tr)
    if why_not is not None and not isinstance(why_not, str):
        raise InputError("why_not", tr.gettext("why_not: a card's id is accepted."))
    if what_if is not None and not (isinstance(what_if, Mapping) and all(isinstance(k, str) for k in what_if)):
        raise InputError("what_if", tr.gettext("what_if: a mapping of profile fields to values is accepted."))
    from ..input.values import read_choice

    detail = read_choice(detail, {"full": "full", "summary": "summary", **_detail_words()}) or detail
    if detail not in ("full", "summary"):
        raise InputError("detail", tr.gettext("detail: '%(value)s' is not accepted; choose %(accepted)s.") % {
            "value": str(detail)[:40], "accepted": tr.list(("full", "summary"), style="or")})
    arguments = locals()
    fields = {name: arguments[name] for name in PROFILE_FIELDS}
    fields = with_aliases(fields, unknown, tr, ("why_not", "what_if", "detail") + ADVISE_ARGUMENTS)
    kb = with_prices(knowledge_base(rules_dir, catalog), prices, tr)
    if what_if:
        for name in list(what_if):
            if field_alias(str(name), PROFILE_FIELDS) not in PROFILE_FIELDS:
                raise InputError(str(name)[:40], tr.gettext("unknown field '%(field)s'; accepted: %(accepted)s.")
                                 % {"field": str(name)[:40], "accepted": ", ".join(PROFILE_FIELDS)})
        what_if = {field_alias(str(name), PROFILE_FIELDS): value for name, value in what_if.items()}
    given = {name: fields.get(name) for name in PROFILE_FIELDS}
    given["model_size_b"] = model_argument(given["model_size_b"], model, tr)
    run, result = consult(kb, given, tr, basis, model_config)
    writer = Writer(kb, run, tr)
    explainer = _Explainer(kb, run, result, writer, given, basis, model_config)
    if why_not is not None and why_not not in run.options:
        close = nearest(why_not, run.options, keys={gpu: (card.name,) if (card := kb.card(gpu)) else ()
                                                    for gpu in run.options})
        raise InputError("why_not", tr.gettext("--why-not: '%(gpu)s' is not a card of this consultation "
                                               "(`expert catalogs` lists the cards).") % {"gpu": str(why_not)[:40]}
                         + tr.did_you_mean(close), close)
    rejected = [r.gpu for r in result.rejected]
    targets = [why_not] if why_not is not None else rejected[:MAX_WHY_NOT]
    more = [] if why_not is not None else rejected[MAX_WHY_NOT:]
    return Explanation(
        result,
        [explainer.how(rec.gpu) for rec in result.recommendations],
        [explainer.why_not(gpu) for gpu in targets],
        explainer.what_if(what_if) if what_if else None,
        why_not,
        explainer.answers(given=True),
        explainer.answers(given=False),
        detail,
        tuple(what_if or ()),
        [{"gpu": gpu, "name": writer.name(gpu)} for gpu in more],
    )


def _detail_words() -> dict[str, str]:
    """The other words for a detail (rules/vocabulary.toml [aliases.values.detail])."""
    aliases = vocabulary(knowledge_base()).value_aliases.get("detail", {})
    return {word: value for value, words in aliases.items() for word in words}


class _Explainer:
    def __init__(self, kb: KnowledgeBase, run: Run, result: Result, writer: Writer,
                 given: dict[str, Any], basis: str = "checked", model_config: Any = None) -> None:
        self.kb, self.run, self.result, self.w, self.given = kb, run, result, writer, given
        self.basis, self.model_config = basis, model_config
        self.tr = writer.tr
        self._ = writer.tr.gettext
        self.firings = run.sorted_firings()
        # WHY NOT's consultations with one change made, by change (see smallest_change)
        self._consulted: dict[tuple[tuple[str, Any], ...], Result] = {}
        self._stopped: set[str] = set()     # the cards whose search reached MAX_CONSULTATIONS

    # --- shared wording ---------------------------------------------------------

    def field_value(self, name: str, value: Any) -> str:
        return self.w.profile_value(name, value)

    def answer(self, name: str) -> str:
        value = self.run.profile[name]
        shown = self.field_value(name, value)
        label = self.run.profile.get("model_label") if name == "model_size_b" else None
        if label:  # the model as the table (or its config.json) names it, then its size
            shown = f"{one_line(label)}, {shown}"
        return f"{self._(self.kb.fields[name].label)}: {shown}"

    def answers(self, given: bool) -> list[str]:
        assumed = set(self.result.assumed)
        return [self.answer(name) for name in PROFILE_FIELDS if (name not in assumed) == given]

    def cites(self, firing: Firing) -> dict[str, str]:
        return self.w.cites(firing.rule)

    def sources(self, firing: Firing) -> list[str]:
        assumed = set(self.result.assumed)
        out = []
        for matched in firing.matched:
            if matched["fact"] == "profile":
                for name in PROFILE_FIELDS:
                    if name in matched["values"]:
                        note = " (" + self._("assumed") + ")" if name in assumed else ""
                        out.append(self.answer(name) + note)
        return out

    def step(self, firing: Firing, text: str | None = None) -> Step:
        builds_on = [m["from"] for m in firing.matched if m["from"] not in ("input", "catalog")]
        return Step(firing.rule.id, firing.rule.kind, self.cites(firing), self.sources(firing),
                    list(dict.fromkeys(builds_on)), text if text is not None else self.w.message(firing.rule, firing.env))

    # --- HOW ------------------------------------------------------------------

    def how(self, gpu: str) -> How:
        option = self.run.options[gpu]
        rank = self.run.ranking.index(gpu) + 1
        steps = []
        for firing in self.firings:
            rule = firing.rule
            if rule.derive == "requirement" or firing.gpu == gpu:
                steps.append(self.step(firing))
            elif rule.derive == "pick":
                left = len(self.run.ranking)
                text = self.tr.ngettext("Ranked %(rank)s of %(n)s option left. %(why)s",
                                        "Ranked %(rank)s of %(n)s options left. %(why)s", left) % {
                    "rank": rank, "n": left, "why": self.w.message(rule, firing.env)}
                steps.append(self.step(firing, text))
            elif rank == 1 and (rule.kind == "warning" or (rule.kind == "advice" and self.about_configuration(firing))):
                steps.append(self.step(firing))
        return How(gpu, rank, self.w.option_label(option), steps)

    @staticmethod
    def about_configuration(firing: Firing) -> bool:
        """Advice that explains the picked configuration (its cards, strategy or
        fit), rather than how to rent or run it."""
        return any(m["fact"] == "pick" and set(m["values"]) - {"found", "where", "vendor", "cost", "hours"}
                   for m in firing.matched)

    # --- WHY NOT --------------------------------------------------------------

    def leaf_text(self, leaf: Leaf) -> str:
        def operand(source: str | None, value: Any) -> str:
            if source is None:
                return self.w.value("", "", value) if not isinstance(value, str) else value
            namespace, _, name = source.partition(".")
            label = self.field_label(source)
            if name and label:
                return f"{label} {self.w.value(namespace, name, value)}"
            return self.w.value(namespace, name, value)

        if leaf.op == "not":
            source, value = leaf.operands[0]
            return f"{self.field_label(source or '')}: {self._('yes') if value else self._('no')}"
        if not leaf.op:
            source, value = leaf.operands[0]
            return f"{self.field_label(source or '')}: {self._('yes') if value else self._('no')}"
        (left_source, left_value), constants = leaf.operands[0], [src is None for src, _ in leaf.operands[1:]]
        if leaf.op in ("==", "in", "!=", "not in") and left_source and all(constants):
            namespace, _, name = left_source.partition(".")
            shown = f"{self.field_label(left_source)}: {self.w.value(namespace, name, left_value)}"
            if leaf.op in ("!=", "not in"):
                other = leaf.operands[1][1]
                others = other if isinstance(other, (list, tuple)) else [other]
                shown += " (" + self._("not %(values)s") % {"values": self.tr.list(
                    [self.w.value(namespace, name, v) for v in others], style="or")} + ")"
            return shown
        ops = leaf.op.split(" ")
        if ops[-1] in ("not", "is") and len(ops) > len(leaf.operands) - 1:  # 'not in', 'is not'
            ops = [leaf.op]
        pieces = [operand(*leaf.operands[0])]
        for op, right in zip(ops, leaf.operands[1:], strict=True):
            pieces += [op, operand(*right)]
        return " ".join(pieces)

    def field_label(self, source: str) -> str:
        namespace, _, name = source.partition(".")
        if namespace == "profile" and name in self.kb.fields:
            return self._(self.kb.fields[name].label)
        label = self.kb.labels.get("fields", {}).get(source)
        return self._(label) if label else source

    def reason(self, firing: Firing) -> Reason:
        leaves = firing.rule.condition.leaves(firing.env)
        return Reason(firing.rule.id, self.cites(firing),
                      [{"condition": leaf.source, "text": self.leaf_text(leaf), "holds": leaf.holds}
                       for leaf in leaves if leaf.holds],
                      self.w.message(firing.rule, firing.env))

    def status(self, gpu: str, result: Result) -> tuple[str, int | None]:
        rank = next((r.rank for r in result.recommendations if r.gpu == gpu), None)
        if rank is None:
            return "rejected", None
        rec = result.recommendations[rank - 1]
        if rec.count > 1:
            return "more-cards", rank
        if rank > 1:
            return "ranked-lower", rank
        return "recommended", rank

    def why_not(self, gpu: str) -> WhyNot:
        _ = self._
        status, _rank = self.status(gpu, self.result)
        name = self.w.name(gpu)
        reasons: list[Reason] = []
        if status == "rejected":
            reasons = [self.reason(f) for f in self.firings if f.gpu == gpu and f.rule.kind == "reject"]
            summary = " ".join(r.text for r in reasons)
        elif status == "more-cards":
            reasons = self.more_cards(gpu)
            summary = " ".join(r.text for r in reasons)
        elif status == "ranked-lower":
            reasons = self.contrast(gpu)
            summary = " ".join(r.text for r in reasons)
        else:
            summary = _("It is the recommendation.")
        change = None if status == "recommended" else self.smallest_change(gpu, status)
        if change:
            summary += " " + change["text"]
        elif gpu in self._stopped:
            summary += " " + _("No change was found within the %(n)s consultations an explanation may run.") % {
                "n": MAX_CONSULTATIONS}
        elif status != "recommended":
            summary += " " + _("No single change would make it the answer.")
        return WhyNot(gpu, name, status, reasons, change, summary)

    def more_cards(self, gpu: str) -> list[Reason]:
        """Why ``gpu`` takes more than one card: the configuration rules that
        spread it (one card did not fit, or missed the deadline), with the
        conditions that made them fire."""
        spread = [f for f in self.firings if f.gpu == gpu and f.rule.kind == "configure" and not f.rule.proposes
                  and any(d["values"].get("count", 1) > 1 for d in f.derived)]
        first = [f for f in spread if f.rule.step not in (SCALE_OUT, *TRIAL_STEPS)][:1]
        # and the rule that settled how many cards that step takes
        settled = [f for f in spread if f.rule.step in (FEWEST_CARDS, NO_COUNT_FITS)][:1]
        scaled = [f for f in spread if f.rule.step in (SCALE_OUT, DEADLINE_MET, DEADLINE_MISSED, SPEED_FOUND)]
        return [self.reason(f) for f in first + settled + scaled]

    def contrast(self, gpu: str) -> list[Reason]:
        """Why the pick ranks above ``gpu``: the numbers, and the rules that favoured either."""
        tr, _ = self.tr, self._
        pick_gpu = self.run.ranking[0]
        mine, theirs = self.run.options[gpu], self.run.options[pick_gpu]
        reasons = [Reason("rank-options", self.cites(next(f for f in self.firings if f.rule.derive == "pick")), [],
                          _("%(pick)s: about %(pick_hours)s, %(pick_cost)s in all; %(this)s: about %(hours)s, "
                            "%(cost)s in all.") % {
                              "pick": self.w.option_label(theirs), "pick_hours": tr.hours(theirs["hours"], like=mine["hours"]),
                              "pick_cost": tr.money(theirs["total_cost"]), "this": self.w.option_label(mine),
                              "hours": tr.hours(mine["hours"], like=theirs["hours"]),
                              "cost": tr.money(mine["total_cost"])})]
        on_pick = {f.rule.id: f for f in self.firings if f.gpu == pick_gpu and f.rule.kind in ("prefer", "demote")}
        on_mine = {f.rule.id: f for f in self.firings if f.gpu == gpu and f.rule.kind in ("prefer", "demote")}
        for rule_id in on_pick.keys() - on_mine.keys():
            firing = on_pick[rule_id]
            if firing.rule.kind == "prefer":
                reasons.append(Reason(rule_id, self.cites(firing), [], _("In favour of %(pick)s: %(text)s") % {
                    "pick": self.w.name(pick_gpu), "text": _embedded(self.w.message(firing.rule, firing.env))}))
        for rule_id in on_mine.keys() - on_pick.keys():
            firing = on_mine[rule_id]
            if firing.rule.kind == "demote":
                reasons.append(self.reason(firing))
            elif (firing.rule.factor or 0) > 1:  # a penalty the pick does not have
                reasons.append(Reason(rule_id, self.cites(firing), [], _("Against %(this)s: %(text)s") % {
                    "this": self.w.name(gpu), "text": _embedded(self.w.message(firing.rule, firing.env))}))
        return [reasons[0]] + sorted(reasons[1:], key=lambda r: self.kb.rule(r.rule).index)

    def read_by(self, firings: list[Firing]) -> set[str] | None:
        """The answers ``firings`` read: directly, or through the facts they
        matched (the firings that declared them, on the same card or on none),
        down to the profile. None when that cannot bound a change: a rule that
        overrides one of them could fire on anything it reads."""
        failing = {f.rule.id for f in firings}
        if any(failing & set(rule.overrides) for rule in self.kb.rules):
            return None
        declared: dict[str, list[Firing]] = {}
        for firing in self.firings:
            declared.setdefault(firing.rule.id, []).append(firing)
        fields: set[str] = set()
        seen: set[int] = set()
        todo = list(firings)
        while todo:
            firing = todo.pop()
            if id(firing) in seen:
                continue
            seen.add(id(firing))
            for matched in firing.matched:
                if matched["fact"] == "profile":
                    fields.update(self.answer_of(key) for key in matched["values"])
                elif matched["from"] in declared:
                    todo += [f for f in declared[matched["from"]] if f.gpu in (firing.gpu, None)]
        return fields

    def answer_of(self, key: str) -> str:
        """The answer a profile key comes from: profile.build derives the
        model's fields (model_active_b, model_shape ...) from model_size_b, and
        ``own_gpu`` from the answer that named a card."""
        if key in self.kb.fields:
            return key
        if key == OWN_GPU:
            return next((name for name, spec in self.kb.fields.items() if spec.cards), key)
        return "model_size_b"

    def candidate_changes(self, gpu: str, read: set[str] | None = None) -> list[dict[str, Any]]:
        """The changes of ``rules/explain.toml`` to try for ``gpu``, singles
        then pairs; with ``read``, only those of the answers the rules that
        ruled it out read (another answer cannot change what they concluded)."""
        option = self.run.options[gpu]
        profile = self.run.profile
        singles: list[dict[str, Any]] = []
        for name, value in self.kb.changes:
            if read is not None and name not in read:
                continue
            if value == "needed":
                # the deadline counts the setup the bill counts (ranking.toml [billing])
                elapsed = option["min_count_hours"] + (self.kb.ranking["setup_hours"] if option["where"] == "cloud"
                                                       else 0.0)
                if profile["deadline_h"] is None or elapsed <= profile["deadline_h"]:
                    continue
                value = sizing.round_up(elapsed)
            elif value == "none":
                if profile[name] is None:
                    continue
                value = None
            if profile[name] == value:
                continue
            singles.append({name: value})
        pairs = [{**a, **b} for a, b in itertools.combinations(singles, 2) if not a.keys() & b.keys()]
        return singles + pairs

    def failing(self, gpu: str, status: str) -> list[Firing] | None:
        """The firings a change must undo for ``gpu``: the rejections of a
        card ruled out, the steps that spread a card over more cards; None
        for a card ranked lower (its rank depends on every option)."""
        if status == "rejected":
            return [f for f in self.firings if f.gpu == gpu and f.rule.kind == "reject"]
        if status == "more-cards":
            return [f for f in self.firings if f.gpu == gpu and f.rule.kind == "configure"]
        return None

    def given_with(self, change: Mapping[str, Any]) -> dict[str, Any]:
        """The answers of this consultation with ``change`` made."""
        given = {**{k: v for k, v in self.run.profile.items() if k not in self.result.assumed},
                 # the model as named (its resolved total would lose its experts and shape)
                 "model_size_b": self.given.get("model_size_b"), **change}
        return {name: given.get(name) for name in PROFILE_FIELDS}

    def consulted(self, change: Mapping[str, Any]) -> Result | None:
        """The whole consultation with ``change`` made, run once per change
        for all the cards asked about."""
        key = tuple(sorted(change.items()))
        if key not in self._consulted:
            if len(self._consulted) >= MAX_CONSULTATIONS:
                return None
            self._consulted[key] = consult(self.kb, self.given_with(change), self.tr, self.basis,
                                           self.model_config)[1]
        return self._consulted[key]

    def card_alone(self, gpu: str, change: Mapping[str, Any], most: int | None) -> bool:
        """Whether ``gpu`` stands (with at most ``most`` cards, if given) once ``change``
        is made, by a consultation of that card alone: a rule that rules a
        card out or configures it sees only that card's facts, the answers and
        the requirement (kb.model.SCOPES), so the other cards need not be
        configured again. A whole consultation confirms what this finds."""
        if tuple(sorted(change.items())) in self._consulted:
            return True
        profile, _ = build_profile(self.kb, self.given_with(change), self.tr, self.model_config)
        run = engine.infer(self.kb, profile, self.basis, only=(gpu,))
        return gpu in run.ranking and (most is None or run.options[gpu]["count"] <= most)

    def smallest_change(self, gpu: str, status: str) -> dict[str, Any] | None:
        """The first change of ``rules/explain.toml`` (then pairs) that makes ``gpu`` the answer:
        recommended at all if it was ruled out; with fewer cards (one, if one
        holds the model) if it needed more; first if it ranked lower.

        Only changes of the answers the failing rules read are tried, each
        first on the card alone, and a whole consultation is run for a change
        that works there (and once for every card that needs it)."""
        option = self.run.options[gpu]
        most = 1 if option["min_count"] == 1 else option["count"] - 1
        failing = self.failing(gpu, status)
        read = self.read_by(failing) if failing else None
        for change in self.candidate_changes(gpu, read):
            if status != "ranked-lower" and not self.card_alone(gpu, change, most if status == "more-cards" else None):
                continue
            result = self.consulted(change)
            if result is None:          # MAX_CONSULTATIONS run
                self._stopped.add(gpu)
                return None
            rec = next((r for r in result.recommendations if r.gpu == gpu), None)
            if rec is None or (status == "more-cards" and rec.count > most) or (status == "ranked-lower" and rec.rank != 1):
                continue
            described = self.tr.list([
                f"{self._(self.kb.fields[k].label)}: {self.field_value(k, self.run.profile[k])} → "
                f"{self.field_value(k, v)}" for k, v in change.items()])
            text = self._("Smallest change: %(change)s; then %(label)s would be recommended, ranked %(rank)s.") % {
                "change": described, "label": self.w.option_label({**self.run.options[gpu],
                    "count": rec.count, "total_vram_gb": rec.total_vram_gb}), "rank": rec.rank}
            return {"fields": change, "rank": rec.rank, "count": rec.count, "text": text}
        return None

    # --- WHAT IF --------------------------------------------------------------

    def what_if(self, changes: Mapping[str, Any]) -> WhatIf:
        _, tr = self._, self.tr
        given = {**self.given, **changes}
        model_config = None if is_given(changes.get("model_size_b")) else self.model_config
        run_after, after = consult(self.kb, given, self.tr, self.basis, model_config)
        before = self.result
        changed: list[dict[str, Any]] = []

        def add(what: str, old: str, new: str) -> None:
            if old != new:
                changed.append({"what": what, "before": old, "after": new})

        for name in PROFILE_FIELDS:
            add(self._(self.kb.fields[name].label), self.field_value(name, before.profile[name]),
                self.field_value(name, after.profile[name]))
        add(_("VRAM needed"), tr.gb(before.requirement["vram_gb"]), tr.gb(after.requirement["vram_gb"]))
        def top(result: Result) -> str:
            if not result.recommendations:
                return _("none")
            rec = result.recommendations[0]
            label = self.w.option_label({"where": rec.where, "count": rec.count, "gpu": rec.gpu,
                                         "total_vram_gb": rec.total_vram_gb})
            return _("%(label)s, about %(hours)s, %(cost)s") % {"label": label, "hours": tr.hours(rec.hours),
                                                                 "cost": self.money(rec)}

        add(_("Recommendation"), top(before), top(after))
        for gpu in sorted(set(self.run.options) | set(run_after.options), key=self.run.order):
            add(self.w.name(gpu), self.card_state(before, gpu), self.card_state(after, gpu))
        # The steps of the configuration ladder are summed up by the cards'
        # states above; the rules that changed the answer are the others.
        old_fired = {(s.rule, self.gpu_of(s)): s for s in before.trace if s.kind not in ("derive", "configure")}
        new_fired = {(s.rule, self.gpu_of(s)): s for s in after.trace if s.kind not in ("derive", "configure")}
        why = [{"rule": k[0], "gpu": k[1], "kind": new_fired[k].kind, "fires": "now", "text": new_fired[k].text}
               for k in new_fired if k not in old_fired]
        why += [{"rule": k[0], "gpu": k[1], "kind": old_fired[k].kind, "fires": "no longer", "text": old_fired[k].text}
                for k in old_fired if k not in new_fired]
        # What changed the answer first: rules about the cards recommended
        # before and after, then about other cards, then advice and warnings.
        tops = {result.recommendations[0].gpu for result in (before, after) if result.recommendations}
        why.sort(key=lambda w: (w["kind"] in NOTE_KINDS, w["gpu"] not in tops))
        return WhatIf(dict(after.profile), changed, why, after.to_dict())

    def money(self, rec: Any) -> str:
        """What a recommendation costs in all, in a word or two."""
        return total_in_words(self.tr, rec.cost)

    @staticmethod
    def gpu_of(step: Any) -> str | None:
        for derived in step.derived:
            if derived["values"].get("gpu"):
                return str(derived["values"]["gpu"])
        return None

    def card_state(self, result: Result, gpu: str) -> str:
        rec = next((r for r in result.recommendations if r.gpu == gpu), None)
        if rec is not None:
            return self.tr.ngettext("rank %(rank)s (%(count)s card, about %(hours)s, %(cost)s)",
                                    "rank %(rank)s (%(count)s cards, about %(hours)s, %(cost)s)", rec.count) % {
                "rank": rec.rank, "count": rec.count, "hours": self.tr.hours(rec.hours), "cost": self.money(rec)}
        if any(r.gpu == gpu for r in result.rejected):
            return self._("ruled out")
        return self._("not considered")


def _embedded(sentence: str) -> str:
    """A sentence quoted after a colon starts in lower case (unless it starts with a name)."""
    return sentence[:1].lower() + sentence[1:] if sentence[1:2].islower() else sentence
