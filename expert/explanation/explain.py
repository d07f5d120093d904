"""The explanation facility: :func:`explain` answers a consultation and explains
it (an :class:`Explanation`: HOW, WHY NOT and WHAT IF, built from the
engine's record of what fired, ``Run.firings``, never by re-deriving the
reasoning). Each part is a module of its own:

- HOW (:mod:`.how`): for each recommendation, the chain from the person's answers (and the
  defaults assumed for them) through every rule that led to it.
- WHY NOT (:mod:`.why_not`): for a card, the rule conditions that ruled it out (evaluated
  again, leaf by leaf, on the facts the rule matched), and the smallest change
  to the person's situation, found by re-running the consultation, that would
  make it the answer.
- WHAT IF (:mod:`.what_if`): the consultation re-run with changed answers, and what changed and
  which rules account for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, nearest
from ..escape import one_line
from ..i18n import Lang, Localizer, resolve_lang
from ..input import profile_types, settings
from ..input.arguments import (
    ADVISE_ARGUMENTS,
    check_bounds,
    check_paths,
    field_alias,
    model_argument,
    with_aliases,
    with_prices,
)
from ..input.profile import MAX_TEXT, SETTINGS, shown
from ..knowledge import PROFILE_FIELDS, find_cards  # the fields: declared once, in rules/profile.toml
from ..knowledge.bases import Catalogs, knowledge_base
from ..knowledge.records import cite_line
from ..knowledge.vocabulary import vocabulary
from .consult import Basis, consult
from .how import How
from .result import Result, as_data
from .what_if import WhatIf, WhatIfRun
from .why_not import WhyNot, WhyNotSearch
from .wording import Writer, total_in_words

# The most bytes of JSON the summary of an explanation takes (compact, UTF-8, as MCP sends it): a chat's
# share (issue 38: 3 KB).
SUMMARY_BYTES = 3000
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
            "how": [as_data(h) for h in self.how],
            "why_not": [as_data(w) for w in self.why_not],
            "why_not_more": [dict(m) for m in self.more],
            "what_if": as_data(self.what_if) if self.what_if else None,
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
            return len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())   # as MCP sends it

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
    provider: profile_types.Provider | None = None,
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
    seq_len: int | str | None = None,
    batch: int | str | None = None,
    lora_rank: int | str | None = None,
    checkpointing: bool | str | None = None,
    detail: str = "full",
    **unknown: Any,
) -> Explanation:
    """Answer a consultation and explain it: HOW for every recommendation, WHY
    NOT for every card ruled out (or for ``why_not``), and WHAT IF the answers
    in ``what_if`` (field → value) changed. ``detail``: ``"full"`` or
    ``"summary"`` (the compact form for chats, at most SUMMARY_BYTES of JSON,
    in ``to_dict()`` and ``render()``).

    The profile fields are advise()'s; ``model``, ``model_config``,
    ``prices`` and the settings (``seq_len``, ``batch``, ``lora_rank``,
    ``checkpointing``) are as in advise(). Raises :class:`InputError` on a bad value,
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
    fields.update(settings.given(kb, tr, {"seq_len": seq_len, "batch": batch, "lora_rank": lora_rank,
                                          "checkpointing": checkpointing}))
    if what_if:
        changes: dict[str, Any] = {}
        named: dict[str, str] = {}      # the name each change was given under
        for name, value in what_if.items():
            field = field_alias(str(name), PROFILE_FIELDS)
            if field not in PROFILE_FIELDS:
                close = nearest(str(name), PROFILE_FIELDS)
                raise InputError(shown(str(name))[:40], tr.gettext("what_if: unknown field '%(field)s'; accepted: "
                                                                   "%(accepted)s.")
                                 % {"field": shown(str(name)), "accepted": ", ".join(PROFILE_FIELDS)}
                                 + tr.did_you_mean(close), close)
            if field in changes:        # one field under two names: refused, not one of them kept
                raise InputError(field, tr.gettext("%(argument)s: given twice, as %(field)s and as %(alias)s; give "
                                                   "one.") % {"argument": field, "field": shown(named[field]),
                                                              "alias": shown(str(name))})
            changes[field], named[field] = value, str(name)
        what_if = changes
    given = {name: fields.get(name) for name in (*PROFILE_FIELDS, *SETTINGS)}
    given["model_size_b"] = model_argument(given["model_size_b"], model, tr)
    run, result = consult(kb, given, tr, basis, model_config)
    writer = Writer(kb, run, tr)
    explainer = _Explainer(kb, run, result, writer, given, basis, model_config, consult, MAX_CONSULTATIONS)
    if why_not is not None and why_not not in run.options:
        # a card as people name it (its name, any case or spacing), as vram_gb and estimate's gpu read it
        cards = ([card for card, _, _ in find_cards(kb, why_not) if card in run.options]
                 if isinstance(why_not, str) and len(why_not) <= MAX_TEXT else [])
        if len(cards) != 1:
            close = nearest(why_not, run.options, keys={gpu: (card.name,) if (card := kb.card(gpu)) else ()
                                                        for gpu in run.options})
            raise InputError("why_not", tr.gettext("why-not: '%(gpu)s' is not a card of this consultation; choose "
                                                   "one of the %(count)s cards it weighed (its options and the "
                                                   "cards not recommended), by catalog id.") % {
                "gpu": shown(why_not), "count": len(run.options)}
                             + tr.did_you_mean(close), close)
        why_not = cards[0]
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


class _Explainer(WhyNotSearch, WhatIfRun):
    """HOW, WHY NOT and WHAT IF of one consultation (:mod:`.how`, :mod:`.why_not`, :mod:`.what_if`)."""


