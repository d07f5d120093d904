"""HOW: for each recommendation, the chain from the person's answers (and the
defaults assumed for them) through every rule that led to it, built from the
engine's record of what fired (``Run.firings``), never by re-deriving the
reasoning. :class:`Reasoning` holds one consultation's record and the words
HOW, WHY NOT (:mod:`.why_not`) and WHAT IF (:mod:`.what_if`) share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..escape import one_line
from ..inference.run import Firing, Run
from ..knowledge import PROFILE_FIELDS, KnowledgeBase
from .result import Result
from .wording import Writer


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


class Reasoning:
    """One consultation's record (its run, result and answers) and the words its explanations share."""

    def __init__(self, kb: KnowledgeBase, run: Run, result: Result, writer: Writer, given: dict[str, Any],
                 basis: str, model_config: Any, consult: Callable[..., tuple[Run, Result]], max_consultations: int) -> None:
        self.kb, self.run, self.result, self.w, self.given = kb, run, result, writer, given
        self.basis, self.model_config = basis, model_config
        self.tr = writer.tr
        self._ = writer.tr.gettext
        self.firings = run.sorted_firings()
        # How a consultation is run again (WHY NOT, WHAT IF), and how many times WHY NOT may.
        self.consult, self.max_consultations = consult, max_consultations
        # WHY NOT's consultations with one change made, by change (see smallest_change)
        self.reruns: dict[tuple[tuple[str, Any], ...], Result] = {}
        self.stopped: set[str] = set()     # the cards whose search reached max_consultations

    # --- shared wording ---------------------------------------------------------

    def field_value(self, name: str, value: Any) -> str:
        return self.w.profile_value(name, value)

    def answer(self, name: str) -> str:
        value = self.run.profile[name]
        shown = self.field_value(name, value)
        label = self.run.profile.get("model_label") if name == "model_size_b" else None
        if label:  # the model as the table (or its config.json) names it, then its size
            shown = f"{one_line(label)}, {shown}"
        count = self.run.profile.get("own_gpu_count") or 1
        if self.kb.fields[name].cards and value is not None and count > 1:   # two cards of 80 GB: 2 × 80 GB
            shown = f"{count} × {shown}"
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
                    # (how many cards of one's own, and their VRAM in all, are read with the cards' answer)
                    if name in matched["values"] or (self.kb.fields[name].cards and any(
                            key in matched["values"] for key in ("own_gpu_count", "own_vram_gb"))):
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
            if rule.then == "rank":
                if firing.gpu != gpu:
                    continue
                left = len(self.run.ranking)
                text = self.tr.ngettext("Ranked %(rank)s of %(n)s option left. %(why)s",
                                        "Ranked %(rank)s of %(n)s options left. %(why)s", left) % {
                    "rank": rank, "n": left, "why": self.w.message(rule, firing.env)}
                steps.append(self.step(firing, text))
            elif rule.then == "requirement" or (firing.gpu == gpu and rule.then != "standing"):
                # (that the option stands is plain from its rank: the rules that ruled others out are WHY NOT's)
                steps.append(self.step(firing))
            elif rank == 1 and (rule.kind == "warning" or (rule.kind == "advice" and self.about_configuration(firing))):
                steps.append(self.step(firing))
        return How(gpu, rank, self.w.option_label(option), steps)

    @staticmethod
    def about_configuration(firing: Firing) -> bool:
        """Advice that explains the picked configuration (its cards, strategy or
        fit), rather than how to rent or run it."""
        return any(m["fact"] == "pick" and set(m["values"]) - {"found", "where", "vendor", "cost", "hours"}
                   for m in firing.matched)
