"""The explanation facility: an :class:`Explanation` of a consultation (HOW,
WHY NOT and WHAT IF, built from the engine's record of what fired,
``Run.firings``, never by re-deriving the reasoning), which
:func:`expert.application.explain` runs. Each part is a module of its own:

- HOW (:mod:`.how`): for each recommendation, the chain from the person's answers (and the
  defaults assumed for them) through every rule that led to it.
- WHY NOT (:mod:`.why_not`): for a card, the rule conditions that ruled it out (evaluated
  again, leaf by leaf, on the facts the rule matched), and the smallest change
  to the person's situation that would make it the answer, found by the
  consultations the application reruns (:class:`expert.application.Reruns`).
- WHAT IF (:mod:`.what_if`): the consultation the application reran with changed answers, and
  what changed and which rules account for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..escape import one_line
from ..i18n import Localizer
from ..knowledge import PROFILE_FIELDS, KnowledgeBase  # the fields: declared once, in rules/profile.toml
from ..knowledge.records import cite_line
from .how import How
from .result import Note, Result, as_data
from .what_if import WhatIf, WhatIfRun
from .why_not import WhyNot, WhyNotSearch
from .wording import total_in_words

# The most bytes of JSON the summary of an explanation takes (compact, UTF-8, as MCP sends it): a chat's
# share (issue 38: 3 KB).
SUMMARY_BYTES = 3000
# WHY NOT for every card ruled out covers the first so many (in catalog
# order); the others are named after them ("and N more"), and each can be
# asked about alone (why_not=). A large catalog then costs about as much to
# explain as the shipped one.
MAX_WHY_NOT = 8


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
    # Listing every card ruled out (no card asked about), the text and markdown say a reject rule that
    # names its cards together once (``together``, the result's rejected_together), and each card's
    # text without it (``listed``: None, nothing left of its own). The JSON keeps every card's whole text.
    together: list[Note] = field(default_factory=list)
    listed: dict[str, str | None] = field(default_factory=dict)

    @property
    def lang(self) -> str:
        return self.result.lang

    @property
    def kb(self) -> KnowledgeBase:
        """The knowledge base the answer was reasoned and worded with. Never None: an explanation is made
        only by :func:`expert.application.explain`, from consult()'s Result, which build_result() gives
        its knowledge base (only a Result built by hand, or read back from JSON, comes without one)."""
        if self.result.kb is None:
            raise ValueError("an Explanation is made from a Result that carries its knowledge base")
        return self.result.kb

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
                "changed": self.what_if.changed_shown(),
                "others": self.what_if_others(),
                "rules": [{"rule": w["rule"], "fires": w["fires"]} for w in self.what_if.why]},
            "more": {"why_not": 0, "how_texts": 0},
        }
        if data["how"] and data["how"][0]["text"] == data["requirement"]["text"]:
            del data["how"][0]["text"]     # said once, as the requirement
        import json

        def size() -> int:
            return len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())   # as MCP sends it

        if data["what_if"] and size() > SUMMARY_BYTES:
            data["what_if"]["others"] = ""     # the least of it: a count of cards past the first options
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
        sections, gettext = self.kb.sections, Localizer(self.lang).gettext
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
        return total_in_words(Localizer(self.lang), cost, self.kb.labels["pricing"])

    def more_text(self) -> str:
        """The cards ruled out past MAX_WHY_NOT, in a sentence ("" if none)."""
        if not self.more:
            return ""
        tr = Localizer(self.lang)
        names = [one_line(m["name"]) for m in self.more[:MAX_WHY_NOT]]
        if len(self.more) > len(names):
            names.append(tr.ngettext("%(n)s other", "%(n)s others", len(self.more) - len(names)) % {
                "n": len(self.more) - len(names)})
        return tr.ngettext("And %(n)s more card ruled out: %(names)s. Ask about it alone (why not, "
                           "%(how_why_not)s) to see what would change that.",
                           "And %(n)s more cards ruled out: %(names)s. Ask about one of them alone (why not, "
                           "%(how_why_not)s) to see what would change that.", len(self.more)) % {
            "n": len(self.more), "names": tr.list(names), "how_why_not": self.kb.how(tr, "why_not")}

    def what_if_others(self) -> str:
        """WHAT IF's cards that change past the shown ones, in a sentence ("" if none)."""
        n = self.what_if.others() if self.what_if else 0
        if not n:
            return ""
        shown = self.kb.ranking["shown"]      # the options an answer shows (rules/ranking.toml)
        return Localizer(self.lang).ngettext(
            "Outside the first %(shown)s options, %(n)s more card changes rank, time or cost; the "
            "explanation's JSON lists it, with the rules that account for it.",
            "Outside the first %(shown)s options, %(n)s more cards change rank, time or cost; the "
            "explanation's JSON lists each, with the rules that account for them.", n) % {"n": n, "shown": shown}

    def render(self, fmt: str = "text", width: int = 80, color: bool = False) -> str:
        from .render import render_explanation

        return render_explanation(self, fmt, width, color)


class Explainer(WhyNotSearch, WhatIfRun):
    """HOW, WHY NOT and WHAT IF of one consultation (:mod:`.how`, :mod:`.why_not`, :mod:`.what_if`)."""


