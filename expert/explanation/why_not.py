"""WHY NOT: for a card, the rule conditions that ruled it out (evaluated
again, leaf by leaf, on the facts the rule matched), and the smallest change
to the person's situation, found by re-running the consultation, that would
make it the answer.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from ..inference.estimate import round_up
from ..inference.run import Firing
from ..input.bounds import Bounds
from ..input.profile import OWN_GPU, OWN_GPU_COUNT, OWN_VRAM
from ..knowledge import PROFILE_FIELDS, SCALE_OUT, TRIAL_STEPS
from ..knowledge.conditions import FROM_CARD, Leaf
from ..knowledge.records import DEADLINE_MET, DEADLINE_MISSED, FEWEST_CARDS, NO_COUNT_FITS, SPEED_FOUND, KnowledgeBase
from ..knowledge.source import N_
from .how import Reasoning
from .result import Result

# The facts that hold one configuration of one card (conditions.FIELDS).
CONFIGURATIONS = ("candidate", "trial", "option")


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
    # of a card that fits none of the setups tried: the one that came closest, when not the last (a sentence)
    closest: str | None = None


def said(kb: KnowledgeBase, reasons: list[Reason], closest: str | None, leave_out: Collection[str] = ()) -> list[str]:
    """What a rejected card's reasons say, in order, but those of the rules
    in ``leave_out``; the setup that came ``closest`` right after the first
    whose rule names the last setup tried (rules.toml names_closest)."""
    texts: list[str] = []
    for r in (r for r in reasons if r.rule not in leave_out):
        texts.append(r.text)
        if closest and kb.rule(r.rule).names_closest:
            texts.append(closest)
            closest = None          # said once
    return [text for text in texts if text]


class WhyNotSearch(Reasoning):
    """WHY NOT for each card asked about."""

    # --- WHY NOT --------------------------------------------------------------

    def leaf_text(self, leaf: Leaf) -> str:
        """One condition of a rule as a person reads it: a sentence for a field that is true or false
        (rules/labels.toml [yes] and [no]: "it does not fit"), a field's label and its value, and a
        comparison in words ("is more than"), never a field's dotted name or an operator."""
        _ = self._
        if leaf.op in ("not", ""):
            source, value = leaf.operands[0]
            said = self.kb.labels.get("yes" if value else "no", {}).get(source or "")
            if said:
                return _(said)
            return f"{self.condition_label(source or '')}: {_('yes') if value else _('no')}"
        (left_source, left_value), constants = leaf.operands[0], [src is None for src, _v in leaf.operands[1:]]
        if leaf.op in ("==", "in", "!=", "not in") and left_source and all(constants):
            shown = f"{self.condition_label(left_source)}: {self.shown_value(left_source, left_value)}"
            if leaf.op in ("!=", "not in"):
                other = leaf.operands[1][1]
                others = other if isinstance(other, (list, tuple)) else [other]
                shown += " (" + _("not %(values)s") % {"values": self.tr.list(
                    [self.shown_value(left_source, v) for v in others], style="or")} + ")"
            return shown
        ops = leaf.op.split(" ")
        if ops[-1] in ("not", "is") and len(ops) > len(leaf.operands) - 1:  # 'not in', 'is not'
            ops = [leaf.op]
        operands = [self.operand(source, value, left_source) for source, value in leaf.operands]
        return self.tr.list([self.compared(op, left, right)
                             for op, left, right in zip(ops, operands, operands[1:], strict=False)])

    def operand(self, source: str | None, value: Any, field: str | None) -> str:
        """One side of a comparison: a field's label and its value ("deadline (24 hr)"), a
        multiple of one ("1.1 × cost of the cheapest option ($10.36)"), or a constant, shown as
        ``field``'s values are (the field it is compared with)."""
        if source is None:
            return self.shown_value(field or "", value)
        scaled = _SCALED.match(source)
        if scaled:      # a field times a constant (rules.toml: "market.cheapest_total_cost * 1.1")
            name = scaled["field"]
            return self._("%(factor)s × %(field)s (%(value)s)") % {
                "factor": self.tr.number(float(scaled["factor"]), 3), "field": self.condition_label(name),
                "value": self.shown_value(name, value)}
        return self._("%(field)s (%(value)s)") % {"field": self.condition_label(source),
                                              "value": self.shown_value(source, value)}

    def compared(self, op: str, left: str, right: str) -> str:
        words = {">": N_("%(left)s is more than %(right)s"), ">=": N_("%(left)s is at least %(right)s"),
                 "<": N_("%(left)s is less than %(right)s"), "<=": N_("%(left)s is at most %(right)s"),
                 "==": N_("%(left)s is the same as %(right)s"), "!=": N_("%(left)s differs from %(right)s"),
                 "in": N_("%(left)s is one of %(right)s"), "not in": N_("%(left)s is none of %(right)s"),
                 "is": N_("%(left)s is %(right)s"), "is not": N_("%(left)s is not %(right)s")}
        return self._(words[op]) % {"left": left, "right": right}

    def shown_value(self, source: str, value: Any) -> str:
        """A field's value as the text shows it: a card by its name, the others as format_value does."""
        namespace, _sep, name = source.partition(".")
        if name == "gpu" and isinstance(value, str) and (value == "own" or value in self.run.cards):
            return self.w.name(value)
        return self.w.value(namespace, name, value)

    def condition_label(self, source: str) -> str:
        """A field as a condition names it, with its article (rules/labels.toml [conditions]: "the
        deadline"), else its label."""
        label = self.kb.labels.get("conditions", {}).get(source)
        return self._(label) if label else self.field_label(source)

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
                       for leaf in leaves if leaf.holds and not joins(leaf)],
                      self.w.message(firing.rule, firing.env))

    def status(self, gpu: str, result: Result) -> tuple[str, int | None]:
        rank = next((r.rank for r in result.recommendations if r.gpu == gpu), None)
        if rank is None:
            return "rejected", None
        rec, pick = result.recommendations[rank - 1], result.recommendations[0]
        # Several cards explain it only where the answer takes fewer (or it is the answer);
        # ranked behind an answer of as many cards, the ranking is why.
        if rec.count > 1 and (rank == 1 or rec.count > pick.count):
            return "more-cards", rank
        if rank > 1:
            return "ranked-lower", rank
        return "recommended", rank

    def why_not(self, gpu: str) -> WhyNot:
        _ = self._
        status, _rank = self.status(gpu, self.result)
        name = self.w.listed_name(gpu)
        reasons: list[Reason] = []
        closest = None
        if status == "rejected":
            reasons = [self.reason(f) for f in self.firings if f.gpu == gpu and f.rule.kind == "reject"]
            closest = self.closest(gpu, reasons)
            summary = " ".join(said(self.kb, reasons, closest))
        elif status == "more-cards":
            reasons = self.more_cards(gpu)
            summary = " ".join(r.text for r in reasons)
            if _rank == 1:      # asked about the answer itself: say so, then why one card is not enough
                summary = _("It is the recommendation, on %(count)s cards rather than one.") % {
                    "count": self.result.recommendations[0].count} + " " + summary
            else:               # an option of the answer: say which, before why it takes more cards than the pick
                pick = self.result.recommendations[0].gpu
                summary = _("It is option %(rank)s, %(label)s, on more cards than the recommendation, "
                            "%(pick)s.") % {"rank": _rank, "label": self.w.option_label(self.run.options[gpu]),
                                             "pick": self.w.option_label(self.run.options[pick])} + " " + summary
        elif status == "ranked-lower":
            reasons = self.contrast(gpu)
            summary = " ".join(r.text for r in reasons)
        else:
            summary = _("It is the recommendation.")
        change = None if status == "recommended" else self.smallest_change(gpu, status)
        tail = self.what_would_change(gpu, status, change)
        return WhyNot(gpu, name, status, reasons, change, summary + (" " + tail if tail else ""), closest)

    def what_would_change(self, gpu: str, status: str, change: dict[str, Any] | None) -> str:
        """The end of a card's WHY NOT: the smallest change that would make it
        the answer, or why none is given (once :meth:`smallest_change` ran)."""
        _ = self._
        if change:
            return str(change["text"])
        if gpu in self.stopped:
            return _("No change was found within the %(n)s consultations an explanation may run.") % {
                "n": self.max_consultations}
        if gpu in self.beyond:
            field, needed = self.beyond[gpu]
            spec = self.kb.fields[field]
            return _("It would need this %(field)s: %(needed)s, above the most accepted (%(most)s); no "
                     "single change within the answers' bounds would make it the answer.") % {
                "field": self._(spec.label), "needed": self.field_value(field, needed),
                "most": self.field_value(field, spec.max)}
        return _("No single change would make it the answer.") if status != "recommended" else ""

    def closest(self, gpu: str, reasons: list[Reason]) -> str | None:
        """Where the rejection names the last setup tried (rules.toml
        names_closest), the one that came closest, when it is another."""
        if not any(self.kb.rule(r.rule).names_closest for r in reasons):
            return None
        return self.w.closest(gpu, self.firings)

    def listed(self, entry: WhyNot, together: set[str]) -> str | None:
        """``entry``'s text where every card ruled out is listed and the reject
        rules in ``together`` (rules.toml ``together``, such as no provider
        renting a card) are said once for all their cards, before the list:
        its other reasons and what would change it; None when that leaves
        nothing of its own to say (no other reason, no change found)."""
        if entry.status != "rejected" or not any(r.rule in together for r in entry.reasons):
            return entry.text
        own = said(self.kb, entry.reasons, entry.closest, together)
        if not own and entry.change is None:
            return None
        return " ".join(own + [self.what_would_change(entry.gpu, entry.status, entry.change)])

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
        reasons = [Reason("rank-options", self.cites(next(f for f in self.firings if f.rule.then == "rank")), [],
                          _("%(pick)s: about %(pick_hours)s, %(pick_cost)s in all; %(this)s: about %(hours)s, "
                            "%(cost)s in all.") % {
                              "pick": self.w.option_label(theirs), "pick_hours": tr.hours(theirs["hours"]),
                              "pick_cost": tr.money(theirs["total_cost"]), "this": self.w.option_label(mine),
                              "hours": tr.hours(mine["hours"]),
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
        down to the profile. Of a configuration that a firing read only the
        fields its card decides (conditions.FROM_CARD), what the card came
        from is followed instead (the catalog, or the answers that made one's
        own card): a rule that reads whether a card is cloud, AMD or priced
        is undone by no answer about the model or the run. None when that
        cannot bound a change: a rule that overrides one of them could fire
        on anything it reads."""
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
                elif matched["fact"] in CONFIGURATIONS and matched["values"].keys() <= FROM_CARD:
                    # the rule that declared the card (one's own card); "catalog" for the others, as engine.matched says
                    gpu = matched["values"]["gpu"]      # a configuration is always read with its card's id
                    made_by = self.run.origin.get(self.run.card_ids[gpu], "catalog")
                    todo += [f for f in declared.get(made_by, []) if f.gpu in (gpu, None)]
                elif matched["from"] in declared:
                    todo += [f for f in declared[matched["from"]] if f.gpu in (firing.gpu, None)]
        return fields

    def answer_of(self, key: str) -> str:
        """The answer a profile key comes from: profile.build derives the
        model's fields (model_active_b, model_shape ...) from model_size_b, and
        ``own_gpu``, ``own_gpu_count`` and ``own_vram_gb`` from the answer that
        named a card."""
        if key in self.kb.fields:
            return key
        if key in (OWN_GPU, OWN_GPU_COUNT, OWN_VRAM):
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
                value = round_up(elapsed)
                if not self.accepted(name, value):      # longer than any deadline a person may give
                    self.beyond.setdefault(gpu, (name, value))
                    continue
            elif value == "none":
                if profile[name] is None:
                    continue
                value = None
            if profile[name] == value:
                continue
            singles.append({name: value})
        pairs = [{**a, **b} for a, b in itertools.combinations(singles, 2) if not a.keys() & b.keys()]
        return singles + pairs

    def accepted(self, name: str, value: float) -> bool:
        """Whether the answer ``name`` may be ``value``: inside its bounds (rules/profile.toml), as the value
        reader checks them; a change beyond them is not a change a person can make."""
        spec = self.kb.fields[name]
        return Bounds(spec.min, spec.min_exclusive, spec.max).holds(value)

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
                 # the model as named (its resolved total would lose its experts and shape), and one's own
                 # GPU as named (its VRAM per card would lose how many: four 24 GiB cards read as 24 GiB)
                 "model_size_b": self.given.get("model_size_b"), "vram_gb": self.given.get("vram_gb"), **change}
        return {name: given.get(name) for name in PROFILE_FIELDS}

    def consulted(self, change: Mapping[str, Any]) -> Result | None:
        """The whole consultation with ``change`` made, run once per change
        for all the cards asked about."""
        key = tuple(sorted(change.items()))
        if key not in self.consultations:
            if len(self.consultations) >= self.max_consultations:
                return None
            self.consultations[key] = self.reruns.whole(self.given_with(change), only=self.contenders(change))[1]
        return self.consultations[key]

    @functools.cached_property
    def ruled_out(self) -> dict[str, set[str] | None]:
        """The catalog cards the run ruled out, each with the answers its
        rejections read (read_by; None when that cannot be bounded)."""
        rejections: dict[str, list[Firing]] = {}
        for firing in self.firings:
            if firing.rule.kind == "reject" and firing.gpu is not None:
                rejections.setdefault(firing.gpu, []).append(firing)
        ranked = set(self.run.ranking)
        return {card.id: self.read_by(rejections[card.id]) for card in self.kb.catalog
                if card.id in rejections and card.id not in ranked}

    def contenders(self, change: Mapping[str, Any]) -> list[str]:
        """The catalog cards that may rank once ``change`` is made: those that
        ranked, and those ruled out by rules that read an answer it changes
        (read_by). A card still ruled out has no standing, so no other
        option's rank depends on it, and it need not be configured again."""
        return [card.id for card in self.kb.catalog
                if card.id not in self.ruled_out or (read := self.ruled_out[card.id]) is None or read & change.keys()]

    def card_alone(self, gpu: str, change: Mapping[str, Any], most: int | None) -> bool:
        """Whether ``gpu`` stands (with at most ``most`` cards, if given) once ``change``
        is made, by a consultation of that card alone: a rule that rules a
        card out or configures it sees only that card's facts, the answers and
        the requirement (its stage's `sees`), so the other cards need not be
        configured again. A whole consultation confirms what this finds."""
        if tuple(sorted(change.items())) in self.consultations:
            return True
        run = self.reruns.alone(self.given_with(change), gpu)
        return gpu in run.ranking and (most is None or run.options[gpu]["count"] <= most)

    def smallest_change(self, gpu: str, status: str) -> dict[str, Any] | None:
        """The first change of ``rules/explain.toml`` (then pairs) that makes ``gpu`` the answer:
        recommended at all if it was ruled out; with fewer cards (one, if one
        holds the model) if it needed more; first if it ranked lower.

        Only changes of the answers the failing rules read are tried, each
        first on the card alone, and a whole consultation is run for a change
        that works there (and once for every card that needs it), of the
        cards that change may bring back (contenders)."""
        option = self.run.options[gpu]
        most = 1 if option["min_count"] == 1 else option["count"] - 1
        failing = self.failing(gpu, status)
        read = self.read_by(failing) if failing else None
        for change in self.candidate_changes(gpu, read):
            if status != "ranked-lower" and not self.card_alone(gpu, change, most if status == "more-cards" else None):
                continue
            result = self.consulted(change)
            if result is None:          # max_consultations run
                self.stopped.add(gpu)
                return None
            rec = next((r for r in result.recommendations if r.gpu == gpu), None)
            if rec is None or (status == "more-cards" and rec.count > most) or (status == "ranked-lower" and rec.rank != 1):
                continue
            described = self.tr.list([
                f"{self._(self.kb.fields[k].label)}: {self.field_value(k, self.run.profile[k])} → "
                f"{self.field_value(k, v)}" for k, v in change.items()])
            # Spanish says several cards in the plural: "se recomendarían tus 4 × <tarjeta>"
            cards = rec.count if gpu != "own" else int(self.run.profile.get("own_gpu_count") or 1)
            text = (self.tr.ngettext("Smallest change: %(change)s; then %(label)s would be recommended.",
                                     "Smallest change: %(change)s; then %(label)s would be recommended.", cards)
                    if rec.rank == 1 else
                    self._("Smallest change: %(change)s; then %(label)s would do, ranked %(rank)s.")) % {
                "change": described, "label": self.w.option_label({**self.run.options[gpu],
                    "count": rec.count, "total_vram_gb": rec.total_vram_gb}), "rank": rec.rank}
            return {"fields": change, "rank": rec.rank, "count": rec.count, "text": text}
        return None


def joins(leaf: Leaf) -> bool:
    """Whether a condition only joins two facts of one card (rules.toml "beaten.gpu == option.gpu"):
    it holds for every card the rule fires on, so WHY NOT leaves it out; the rule's message says
    what the joined fact means (the option that beats this one, by name)."""
    return leaf.op == "==" and len(leaf.operands) == 2 and all(
        source is not None and source.endswith(".gpu") for source, _value in leaf.operands)


# A field times a constant, as a condition writes it: "market.cheapest_total_cost * 1.1".
_SCALED = re.compile(r"\A(?P<field>[a-z_]+\.[a-z_]+) \* (?P<factor>[0-9]+(?:\.[0-9]+)?)\Z")


def _embedded(sentence: str) -> str:
    """A sentence quoted after a colon starts in lower case (unless it starts with a name)."""
    return sentence[:1].lower() + sentence[1:] if sentence[1:2].islower() else sentence
