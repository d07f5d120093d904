"""WHAT IF: the consultation the application reran with changed answers, and what changed and
which rules account for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..input.profile import is_given
from ..knowledge import PROFILE_FIELDS
from .how import Reasoning
from .result import Result
from .wording import total_in_words

NOTE_KINDS = ("advice", "warning")


@dataclass(frozen=True)
class WhatIf:
    """WHAT IF: how the answer changes when some answers change."""

    changes: dict[str, Any]
    changed: list[dict[str, Any]]   # what, before, after; a card's row also its gpu
    why: list[dict[str, Any]]       # rules that fire now or no longer: those about cards first
    after: dict[str, Any]
    # The cards whose rows the text and the page show: those among the options shown before
    # or after, and those ruled in or out. The others are counted in a sentence (JSON lists them).
    shown: list[str]

    def changed_shown(self) -> list[dict[str, Any]]:
        """The changes the text shows: the profile's, the requirement's, the answer's and the shown cards'."""
        return [c for c in self.changed if c.get("gpu") is None or c["gpu"] in self.shown]

    def because_shown(self) -> list[dict[str, Any]]:
        """The rules of :meth:`because` about the shown cards, or about none."""
        return [w for w in self.because() if w["gpu"] is None or w["gpu"] in self.shown]

    def others(self) -> int:
        """How many cards change past the shown ones (rank, count, time or cost)."""
        return len(self.changed) - len(self.changed_shown())

    def because(self) -> list[dict[str, Any]]:
        """The rules that changed which cards are ruled out or how they rank."""
        return [w for w in self.why if w["kind"] not in NOTE_KINDS]

    def notes(self) -> list[dict[str, Any]]:
        """The advice and warnings that appear or disappear."""
        return [w for w in self.why if w["kind"] in NOTE_KINDS]


class WhatIfRun(Reasoning):
    """WHAT IF the answers changed."""

    # --- WHAT IF --------------------------------------------------------------

    def what_if(self, changes: Mapping[str, Any]) -> WhatIf:
        _, tr = self._, self.tr
        given = {**self.given, **changes}
        # (a model size of its own leaves the model's config.json out)
        run_after, after = self.reruns.whole(given, keep_model=not is_given(changes.get("model_size_b")))
        before = self.result
        changed: list[dict[str, Any]] = []

        def add(what: str, old: str, new: str, gpu: str | None = None) -> bool:
            """A row for what changed (a card's with its gpu); whether there was one."""
            if old == new:
                return False
            changed.append({"what": what, "before": old, "after": new} | ({"gpu": gpu} if gpu else {}))
            return True

        for name in PROFILE_FIELDS:
            add(self._(self.kb.fields[name].label), self.field_value(name, before.profile[name]),
                self.field_value(name, after.profile[name]))
        # the figure the requirement's sentence leads with: the usual recipe's need on one GPU
        def need(result: Result) -> str:
            return tr.gib(result.requirement.get("first_principles_gib") or result.requirement["vram_gb"])

        add(_("VRAM needed on one GPU with the usual recipe"), need(before), need(after))
        def top(result: Result) -> str:
            if not result.recommendations:
                return _("none")
            rec = result.recommendations[0]
            label = self.w.option_label({"where": rec.where, "count": rec.count, "gpu": rec.gpu,
                                         "total_vram_gb": rec.total_vram_gb})
            return _("%(label)s, about %(hours)s, %(cost)s") % {"label": label, "hours": tr.hours(rec.hours),
                                                                 "cost": self.money(rec)}

        add(_("Recommendation"), top(before), top(after))
        shown = {rec.gpu for result in (before, after) for rec in result.recommendations[:self.kb.ranking["shown"]]}
        # the cards in the order of the answer after the change: its options by rank, then the others
        ranks = {rec.gpu: rec.rank for rec in after.recommendations}
        cards = sorted(set(self.run.options) | set(run_after.options),
                       key=lambda gpu: (ranks.get(gpu, len(ranks) + 1), self.run.order(gpu)))
        for gpu in cards:
            if (add(self.w.name(gpu), self.card_state(before, gpu), self.card_state(after, gpu), gpu)
                    and self.standing(before, gpu) != self.standing(after, gpu)):
                shown.add(gpu)     # ruled in or out, or now considered
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
        return WhatIf(dict(after.profile), changed, why, after.to_dict(),
                      sorted(shown & {c["gpu"] for c in changed if "gpu" in c}, key=self.run.order))

    def money(self, rec: Any) -> str:
        """What a recommendation costs in all, in a word or two."""
        return total_in_words(self.tr, rec.cost)

    @staticmethod
    def gpu_of(step: Any) -> str | None:
        for derived in step.derived:
            if derived["values"].get("gpu"):
                return str(derived["values"]["gpu"])
        return None

    @staticmethod
    def standing(result: Result, gpu: str) -> str:
        """Whether a card is an option, ruled out or not considered in ``result``."""
        if any(r.gpu == gpu for r in result.recommendations):
            return "option"
        return "ruled out" if any(r.gpu == gpu for r in result.rejected) else "not considered"

    def card_state(self, result: Result, gpu: str) -> str:
        rec = next((r for r in result.recommendations if r.gpu == gpu), None)
        if rec is not None:
            return self.tr.ngettext("rank %(rank)s (%(count)s card, about %(hours)s, %(cost)s)",
                                    "rank %(rank)s (%(count)s cards, about %(hours)s, %(cost)s)", rec.count) % {
                "rank": rec.rank, "count": rec.count, "hours": self.tr.hours(rec.hours), "cost": self.money(rec)}
        if any(r.gpu == gpu for r in result.rejected):
            return self._("ruled out")
        return self._("not considered")
