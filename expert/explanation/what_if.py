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
    changed: list[dict[str, Any]]
    why: list[dict[str, Any]]       # rules that fire now or no longer: those about cards first
    after: dict[str, Any]

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

        def add(what: str, old: str, new: str) -> None:
            if old != new:
                changed.append({"what": what, "before": old, "after": new})

        for name in PROFILE_FIELDS:
            add(self._(self.kb.fields[name].label), self.field_value(name, before.profile[name]),
                self.field_value(name, after.profile[name]))
        add(_("VRAM needed"), tr.gib(before.requirement["vram_gb"]), tr.gib(after.requirement["vram_gb"]))
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
