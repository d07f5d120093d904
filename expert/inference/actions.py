"""The actions rules take: what a rule of ``rules/rules.toml`` does when it
fires, named by its ``then``, as CLIPS writes ``=>`` and Drools ``then``.

Each action is a small function registered here with what it reads and what
it declares:

- ``reads``: the facts it reads besides those its rule's condition and message
  name; the rule's patterns join exactly those (:mod:`.patterns`), and the
  fields it reads of them are noted as it reads them (``sizing.Reads``): the
  trace and WHY NOT show them as what the rule read;
- ``declares``: the kinds of fact it may declare (``knowledge.records.ACTIONS``
  holds the same, for the loader and ``expert check``: a rule whose action is
  not there, or an action no rule names, is refused);
- ``trial``: the kind of trial it declares, settled by the rules of the stage
  that names that kind (rules.toml ``[[stage]] trials``); the trial's
  patterns match that kind only, so the rules of one kind of trial never need
  to exclude the others in their conditions;
- ``next_step``: it matches the candidate whose next step on the ladder is the
  rule's ``step``;
- ``unless``: a fact no activation of it may be matched with (an option stands
  when no reject verdict is on it).

An action takes the :class:`Context` and, by name, the facts it reads, and
returns the facts it declares as ``(kind, values)`` pairs; it prints nothing
and declares nothing itself (the engine does, and records the firing). The
arithmetic is in :mod:`.sizing` (configurations), :mod:`.requirement` and
:mod:`.sweep` (the rules that collect); the words are in the rules'
messages.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .._vendor import experta
from ..knowledge import ACTIONS as DECLARED
from ..knowledge import KnowledgeBase, RuleDef
from ..knowledge.conditions import COMPARED_FIELDS
from ..knowledge.records import PRECISION_KEPT
from . import requirement, sizing, sweep
from .facts import STANDING_FIELDS, WEIGHT_FIELDS, Standing, Verdict
from .sweep import Keyed

MATCH = experta.MATCH
Declared = Iterable[tuple[str, dict[str, Any]]]


@dataclass
class Context:
    """What an action sees besides the facts it reads: the rule that fired,
    the consultation's run, the engine's working memory (read only) and, for
    a rule that collects, what it collected, in its order."""

    rule: RuleDef
    run: Any                       # run.Run (the consultation)
    memory: Mapping[int, Any]      # the engine's facts, by id
    seen: dict[str, Any]           # the facts it matched, as sizing.Reads
    collected: Keyed = field(default_factory=list)

    @property
    def kb(self) -> KnowledgeBase:
        return self.run.kb

    @cached_property
    def sizer(self) -> sizing.Sizer:
        """The consultation's sizer, reading the profile and requirement this activation matched."""
        return sizing.Sizer(self.kb, self.seen["profile"], self.seen["req"], self.run.basis, self.run.sized)

    def fact(self, key: tuple[str | None, ...]) -> dict[str, Any] | None:
        """A declared fact by the run's index (``("standing", gpu)``), as plain values; None when there is none."""
        fact_id = self.run.ids.get(key)
        return None if fact_id is None else self.run.plain(self.memory[fact_id])


@dataclass(frozen=True)
class Action:
    """One action: its function and what it reads and declares."""

    name: str
    function: Callable[..., Declared]
    reads: tuple[str, ...]
    declares: tuple[str, ...]
    trial: str | None = None
    next_step: bool = False
    unless: Callable[[], Any] | None = None
    parameters: tuple[str, ...] = ()

    def __call__(self, context: Context) -> list[tuple[str, dict[str, Any]]]:
        facts = {name: context.seen.get(name) for name in self.parameters}
        return list(self.function(context, **facts))


ACTIONS: dict[str, Action] = {}


def action(name: str, *, reads: tuple[str, ...], declares: tuple[str, ...], trial: str | None = None,
           next_step: bool = False, unless: Callable[[], Any] | None = None
           ) -> Callable[[Callable[..., Declared]], Callable[..., Declared]]:
    """Register the function it decorates as the action ``name``."""
    def register(function: Callable[..., Declared]) -> Callable[..., Declared]:
        parameters = tuple(inspect.signature(function).parameters)[1:]
        assert name not in ACTIONS and set(parameters) <= set(reads), (name, parameters)
        ACTIONS[name] = Action(name, function, reads, declares, trial, next_step, unless, parameters)
        return function
    return register


_CONFIGURE = ("profile", "req", "candidate", "card")   # what the configuration rules read
_TRIAL = ("profile", "req", "trial", "card")           # ... and those that settle a trial


def _configured(context: Context, card: Mapping[str, Any], step: str,
                previous: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """A ladder step on ``card``: on one card, a candidate; a step that spreads
    over devices, a trial of its first count (the rules of count-to-fit settle it)."""
    sizer = context.sizer
    if sizing.ladder_step(context.kb, context.seen["profile"]["method"], step)["spread"] == "card":
        return "candidate", sizer.step(card, step)
    return "trial", sizer.first_trial(card, step, dict(previous) if previous is not None else None)


# --- derived facts -----------------------------------------------------------

@action("requirement", reads=("profile",), declares=("req",))
def what_the_run_needs(context: Context, profile: Mapping[str, Any]) -> Declared:
    """The guide's figure and the estimate's: what the run needs (:mod:`.requirement`)."""
    req = requirement.requirement(context.kb, profile, context.run.basis)
    yield "req", {k: v for k, v in req.items() if k != "anchors"}


@action("own-card", reads=("profile",), declares=("card",))
def the_own_card(context: Context, profile: Mapping[str, Any]) -> Declared:
    """The person's own GPU(s), as a card to configure."""
    yield "card", requirement.own_card(context.kb, profile).fact()


# --- configuring a card: the ladder ----------------------------------------

@action("first-step", reads=("profile", "req", "card"), declares=("candidate", "trial"), trial="cards")
def first_step(context: Context, card: Mapping[str, Any]) -> Declared:
    """The first step of the method's ladder on every card."""
    yield _configured(context, card, str(context.rule.step), None)


@action("next-step", reads=_CONFIGURE, declares=("candidate", "trial"), trial="cards", next_step=True)
def next_step(context: Context, card: Mapping[str, Any], candidate: Any) -> Declared:
    """The rule's step of the ladder, on the card whose candidate names it as its next step."""
    yield _configured(context, card, str(context.rule.step), candidate.plain)


@action("next-count-to-fit", reads=_TRIAL, declares=("trial",), trial="cards")
def next_count_to_fit(context: Context, card: Mapping[str, Any], trial: Mapping[str, Any]) -> Declared:
    """The trial's step on the next count of cards, carrying the configuration
    the step would replace (a step no count of one node holds without a fast
    link falls back to it: ``step-impossible``)."""
    yield "trial", context.sizer.trial(card, trial["step"], int(trial["next_count"]), trial["previous"])


@action("step-settled", reads=_TRIAL, declares=("candidate",))
def step_settled(context: Context, card: Mapping[str, Any], trial: Mapping[str, Any]) -> Declared:
    """The trial as the step's candidate (settled at its micro-batch when it fits)."""
    yield "candidate", context.sizer.tried(card, trial)


@action("step-impossible", reads=_TRIAL, declares=("candidate",))
def step_impossible(context: Context, trial: Mapping[str, Any]) -> Declared:
    """The configuration the step would have replaced, marked as a step that cannot be taken."""
    yield "candidate", context.sizer.impossible(trial)


@action("shard-over-pcie", reads=_TRIAL, declares=("candidate",))
def shard_over_pcie(context: Context, card: Mapping[str, Any], trial: Mapping[str, Any]) -> Declared:
    """The trial on cards without a fast link as the step's candidate: its
    weights gathered over PCIe, through the host, at the link's own rate
    (timing.toml [links]), and, for its trade-off, the hours the same cards
    would take with NVLink (``nvlink_hours``); settled at its micro-batch."""
    config = context.sizer.tried(card, trial)
    assert config["nvlink_hours"] is not None, "the rule fires on several cards without a fast link only"
    yield "candidate", config


@action("larger-micro-batch", reads=_CONFIGURE, declares=("candidate",))
def larger_micro_batch(context: Context, card: Mapping[str, Any], candidate: Mapping[str, Any]) -> Declared:
    """The candidate at the fastest micro-batch that fits."""
    yield "candidate", context.sizer.larger_batch(card, candidate)


# --- a faster recipe on more cards -------------------------------------------

@action("first-speed-trial", reads=_CONFIGURE, declares=("candidate", "trial"), trial="speed")
def first_speed_trial(context: Context, card: Mapping[str, Any], candidate: Any) -> Declared:
    """The first count tried for a faster recipe; with nothing to try, the candidate marked sped up."""
    tried = context.sizer.first_speed_trial(card, dict(candidate.plain))
    yield ("candidate" if tried.get("sped_up") else "trial"), tried


@action("next-speed-trial", reads=_TRIAL, declares=("trial",), trial="speed")
def next_speed_trial(context: Context, card: Mapping[str, Any], trial: Mapping[str, Any]) -> Declared:
    yield "trial", context.sizer.next_speed_trial(card, trial)


@action("faster-recipe-found", reads=_TRIAL, declares=("candidate",))
def faster_recipe_found(context: Context, trial: Mapping[str, Any]) -> Declared:
    """The trial that pays becomes the card's candidate."""
    yield "candidate", context.sizer.sped_up(trial, pays=True)


@action("slower-recipe-stands", reads=_TRIAL, declares=("candidate",))
def slower_recipe_stands(context: Context, trial: Mapping[str, Any]) -> Declared:
    """No count pays: the base the trials were weighed against stands."""
    yield "candidate", context.sizer.sped_up(trial, pays=False)


# --- mixed precision for a production run ----------------------------------

@action("first-precision-trial", reads=_CONFIGURE, declares=("candidate", "trial"), trial="precision")
def first_precision_trial(context: Context, card: Mapping[str, Any], candidate: Any) -> Declared:
    """The first count tried for mixed precision; with none, the candidate marked weighed."""
    tried = context.sizer.first_precision_trial(card, dict(candidate.plain))
    yield ("trial" if "next_count" in tried else "candidate"), tried


@action("leaner-recipe-kept", reads=_CONFIGURE, declares=("candidate",))
def leaner_recipe_kept(context: Context, candidate: Any) -> Declared:
    """The leaner recipe stands, weighed."""
    yield "candidate", {**sizing.bare(candidate.plain), "step": PRECISION_KEPT, "precision_weighed": True}


@action("next-precision-trial", reads=_TRIAL, declares=("trial",), trial="precision")
def next_precision_trial(context: Context, card: Mapping[str, Any], trial: Mapping[str, Any]) -> Declared:
    yield "trial", context.sizer.next_precision_trial(card, trial)


@action("mixed-precision-found", reads=_TRIAL, declares=("candidate",))
def mixed_precision_found(context: Context, trial: Mapping[str, Any]) -> Declared:
    """The trial that holds mixed precision becomes the card's candidate."""
    yield "candidate", context.sizer.precision_weighed(trial, found=True)


@action("leaner-recipe-stands", reads=_TRIAL, declares=("candidate",))
def leaner_recipe_stands(context: Context, trial: Mapping[str, Any]) -> Declared:
    """No count of one node holds it: the leaner base stands."""
    yield "candidate", context.sizer.precision_weighed(trial, found=False)


# --- more cards for the deadline --------------------------------------------

@action("first-scale-trial", reads=_CONFIGURE, declares=("trial",), trial="deadline")
def first_scale_trial(context: Context, card: Mapping[str, Any], candidate: Any) -> Declared:
    """The count after the candidate's, tried for the deadline."""
    yield "trial", context.sizer.first_scale_trial(card, dict(candidate.plain))


@action("next-scale-trial", reads=_TRIAL, declares=("trial",), trial="deadline")
def next_scale_trial(context: Context, card: Mapping[str, Any], trial: Mapping[str, Any]) -> Declared:
    yield "trial", context.sizer.next_scale_trial(card, trial)


@action("deadline-met", reads=_TRIAL, declares=("candidate",))
def deadline_met(context: Context, trial: Mapping[str, Any]) -> Declared:
    """The count that meets the deadline becomes the card's candidate."""
    yield "candidate", context.sizer.scaled(trial, meets=True)


@action("fastest-tried-stands", reads=_TRIAL, declares=("candidate",))
def fastest_tried_stands(context: Context, trial: Mapping[str, Any]) -> Declared:
    """No count meets it: the fastest that fits stands (the base when none does)."""
    yield "candidate", context.sizer.scaled(trial, meets=False)


# --- options, weighing and the pick -----------------------------------------

@action("option", reads=("profile", "candidate"), declares=("option",))
def option(context: Context, candidate: Any) -> Declared:
    """The candidate that stands for its card."""
    yield "option", dict(candidate.plain)


@action("standing", reads=("option", "profile"), declares=("standing",),
        unless=lambda: Verdict(kind="reject", gpu=MATCH.gpu))
def standing(context: Context, option: Any) -> Declared:
    """An option no reject verdict is on, with its card's place in the catalog."""
    values = option.plain
    yield "standing", {name: values[name] for name in STANDING_FIELDS} | {"order": context.run.order(values["gpu"])}


@action("market", reads=("profile",), declares=("market",))
def market(context: Context) -> Declared:
    """The first of the rented options in the rule's order: the mark a low budget holds the others to."""
    if context.collected:
        cheapest = context.collected[0][1]
        yield "market", {"cheapest_gpu": cheapest["gpu"], "cheapest_total_cost": cheapest["total_cost"]}


@action("beaten", reads=("profile",), declares=("beaten",))
def beaten(context: Context) -> Declared:
    """Each option one before it in the rule's order beats on money and time (one sweep)."""
    yield from (("beaten", found) for found in sweep.beaten(context.collected))


@action("rank", reads=("standing", "profile"), declares=("weight",))
def rank(context: Context, standing: Any) -> Declared:
    """What the ranking compares of a standing option, once every verdict is on it."""
    run, values = context.run, standing.plain
    ruled = [r.id for r in run.kb.rules if r.kind in ("demote", "prefer") and (r.id, values["gpu"]) in run.fired]
    weight = {name: values[name] for name in WEIGHT_FIELDS}
    depth = context.fact(("beaten", values["gpu"]))   # (how deep in the sweep's chains it is)
    yield "weight", weight | weighed(context, weight, ruled, values["gpu"]) | {
        "beaten": 0 if depth is None else depth["depth"]}


@action("order", reads=("profile",), declares=("ranking",))
def order(context: Context) -> Declared:
    """The weighed options in the rule's order."""
    if context.collected:
        yield "ranking", sweep.ranking(context.collected)


@action("pick", reads=("ranking", "option"), declares=("pick",))
def pick(context: Context, option: Any) -> Declared:
    """The first of the ranking, with the options it is weighed against."""
    values = dict(option.plain)
    yield "pick", {**values, "found": True, **compared(context, values["gpu"])}


@action("no-pick", reads=("profile",), declares=("pick",), unless=lambda: Standing())
def no_pick(context: Context) -> Declared:
    """No option stands."""
    yield "pick", dict.fromkeys(("gpu", "count", "hours")) | {"found": False}


def weighed(context: Context, option: Mapping[str, Any], rules: list[str], gpu: str | None) -> dict[str, Any]:
    """What the ranking compares of an option (rules.toml ``order-options``):
    ``demotion`` adds a power of two for each demote rule that stands on it
    (an earlier rule a larger one), ``score`` is the pure evaluation's with
    the factors of the prefer rules that stand on it."""
    run = context.run
    standing = [r for r in map(run.kb.rule, rules) if not run.overridden(r.id, gpu)]
    stands = {r.id for r in standing}
    factors = sorted(float(r.factor) for r in standing if r.kind == "prefer" and r.factor is not None)
    demotions = run.demotions
    return {"rules": list(rules), "factors": factors,
            "demotion": sum(2 ** (len(demotions) - 1 - i) for i, d in enumerate(demotions) if d in stands),
            "score": sizing.score(run.kb, run.profile, option, factors)}


def compared(context: Context, pick: str) -> dict[str, Any]:
    """The rented options the pick is weighed against, as pick fields
    (conditions.COMPARED): the next in the ranking, the fastest, and the
    cheapest in all (the cheaper per hour of two that cost the same), each
    among the options the answer shows (ranking.toml ``shown``), so that the
    advice names only an option a person sees; None when there is none. And
    ``others_cheapest_cost``: what the cheapest of every other rented option
    costs in all, shown or not, so that "costs less in all" is said only of
    a pick that does. A summary of the ranking the rules declared, for the
    advice rules to read (experta has no pattern that collects facts)."""
    ranking = context.fact(("ranking", None))
    order = ranking["order"] if ranking else []
    shown = set(order[:context.run.kb.ranking["shown"]])
    options = [context.fact(("standing", gpu)) for gpu in order if gpu != pick]
    every = [option for option in options if option is not None and option["where"] == "cloud"]
    others = [option for option in every if option["gpu"] in shown]
    chosen = {"next": others[0] if others else None,
              "fastest": min(others, key=lambda o: o["hours"], default=None),
              "cheap": min(others, key=lambda o: (o["total_cost"], o["per_hour"]), default=None)}
    return {**{f"{which}_{name}": (option[name] if option else None)
               for which, option in chosen.items() for name in COMPARED_FIELDS},
            "others_cheapest_cost": min((o["total_cost"] for o in every), default=None)}


def registry_problems() -> list[str]:
    """How this registry and the knowledge base's list of actions
    (``knowledge.records.ACTIONS``) differ; [] when they agree."""
    problems = [f"action '{name}' is not in knowledge.records.ACTIONS" for name in ACTIONS if name not in DECLARED]
    problems += [f"action '{name}' has no function here" for name in DECLARED if name not in ACTIONS]
    problems += [f"action '{name}' declares {act.declares}, knowledge.records.ACTIONS says {DECLARED[name]}"
                 for name, act in ACTIONS.items() if name in DECLARED and act.declares != DECLARED[name]]
    return problems
