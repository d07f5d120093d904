"""The inference engine: the knowledge base's rules compiled into one experta
``KnowledgeEngine`` class, run by forward chaining.

Working memory holds one ``Profile`` (the person's answers), one
``Requirement`` (the guide's figure), a ``Card`` per GPU (the catalog's, and
the person's own), the ``Candidate`` configurations the configuration rules
propose, the ``Option`` chosen for each card, the ``Verdict`` of each reject,
demote and prefer rule, then for each option no reject verdict is on its
``Standing`` and ``Place`` (weighed by the demote and prefer verdicts on it,
then counting the options ranked before it), the marks pairs of options
leave (``Undercut``, ``Beaten``, the cheapest rented one's ``Market``), each
option's ``Weight`` (what the ranking compares), and the ``Pick``. The
options, the ranking and the pick are read from working memory after the
run. Every rule joins the facts it reasons about through its patterns (a
candidate or option with the card of the same ``gpu``), and its compiled
``when`` is an experta test over exactly those facts.

Configuration works as R1/XCON did: ``propose`` a configuration for every
card, then climb the ladder of ``rules/recipes.toml`` one rule at a time —
each configure rule matches the candidate whose ``next_step`` it is and that
does not fit — until one fits; then scale out for a deadline, and settle the
card's option. Ranking works the same way: rules match pairs of standing
options (``ranks-before``, the cheapest, the dominated) and the first ranked
is the pick. Saliences order the stages; within a stage results never
depend on firing order, which changes with ``PYTHONHASHSEED``.

Provenance comes from the activations themselves: a rule's action receives
the facts its patterns matched, and every fact it declares is recorded with
the rule that declared it. The engine class is built once per set of rules
and each thread keeps its own instance (a shared experta engine gives wrong
answers under threads).
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._vendor import experta
from ..knowledge import LARGER_BATCH, OFF_LADDER, SCALE_OUT, SPEED_UP, TRIAL_STEPS, KnowledgeBase, RuleDef
from ..knowledge import Card as CardDef
from ..knowledge.conditions import COMPARED_FIELDS, FIELDS
from ..knowledge.records import (
    DEADLINE_MET,
    DEADLINE_NEXT,
    FEWEST_CARDS,
    MORE_CARDS,
    NO_COUNT_FITS,
    NO_FAST_LINK,
    SCALE_TRIAL_STEPS,
    SPEED_FOUND,
    SPEED_NEXT,
    SPEED_TRIAL_STEPS,
)
from . import requirement, sizing

KnowledgeEngine, Fact, Rule, AS, MATCH, TEST = (experta.KnowledgeEngine, experta.Fact, experta.Rule, experta.AS,
                                                experta.MATCH, experta.TEST)


class Profile(Fact):  # type: ignore[misc,valid-type]
    """The person's answers, after defaults."""


class Requirement(Fact):  # type: ignore[misc,valid-type]
    """What the guide says the run needs."""


class Card(Fact):  # type: ignore[misc,valid-type]
    """A GPU that can be configured: a catalog card or the person's own."""


class Candidate(Fact):  # type: ignore[misc,valid-type]
    """One configuration of one card, proposed by a configuration rule."""


class Trial(Fact):  # type: ignore[misc,valid-type]
    """One count of cards tried for a ladder step, before the rules over trials settle it."""


class Option(Fact):  # type: ignore[misc,valid-type]
    """The configuration that stands for a card."""


class Verdict(Fact):  # type: ignore[misc,valid-type]
    """A ruling on one card's option (reject, demote or prefer), consumed by the ranking."""


class Standing(Fact):  # type: ignore[misc,valid-type]
    """An option no reject verdict ruled out, with its card's place in the catalog."""


class Undercut(Fact):  # type: ignore[misc,valid-type]
    """A rented option another comes before as the cheapest (low budget)."""


class Market(Fact):  # type: ignore[misc,valid-type]
    """The cheapest rented option that fits, the mark a low budget holds the others to."""


class Beaten(Fact):  # type: ignore[misc,valid-type]
    """An option another beats on both money and time."""


class Place(Fact):  # type: ignore[misc,valid-type]
    """A standing option's place: weighed by the demote and prefer verdicts on
    it, then how many options rank before it."""


class Weight(Fact):  # type: ignore[misc,valid-type]
    """What the ranking compares of a standing option, once every verdict is on it."""


class Pick(Fact):  # type: ignore[misc,valid-type]
    """The best option, or found=False."""


FACT_CLASSES = {"profile": Profile, "req": Requirement, "card": Card, "candidate": Candidate, "trial": Trial,
                "option": Option, "verdict": Verdict, "standing": Standing, "other": Standing,
                "undercut": Undercut, "market": Market, "beaten": Beaten, "weight": Weight, "rival": Weight,
                "place": Place, "pick": Pick}
VERDICTS = ("reject", "demote", "prefer")
# What the options that stand are compared by (conditions.FIELDS): a standing
# option's fields, and those of its weight in the ranking.
STANDING_FIELDS = tuple(name for name in FIELDS["standing"] if name != "order")
WEIGHT_FIELDS = ("gpu", "count", "where", "total_vram_gb", "hours", "total_cost", "devices", "order")
# The two of a pair of options bind their card's id under these names.
_PAIRED = {"other": "other_gpu", "rival": "other_gpu"}
# The fact a stage's rules match none of, as well as their patterns: an option
# stands when no reject verdict is on it; the cheapest rented option is one no
# other undercuts; no option stands when there is none.
_ABSENT = {"standing": lambda: Verdict(kind="reject", gpu=MATCH.gpu),
           "market": lambda: Undercut(gpu=MATCH.gpu),
           "no-pick": lambda: Standing()}
# What each kind of rule declares (derive rules: what their helper declares).
# The stage of the rules over the trials of scaling out: after scale-out, so that
# the trace reads in the order the counts were tried.
SCALE_TRIAL = "scale-trial"
# ... and those over the trials of speeding up, after speed-up.
SPEED_TRIAL = "speed-trial"
DECLARES = {"requirement": "req", "own-card": "card", "propose": "candidate", "configure": "candidate",
            "trial": "candidate", SCALE_TRIAL: "candidate", SPEED_TRIAL: "candidate",
            "option": "option", "standing": "standing", "undercut": "undercut", "market": "market",
            "beaten": "beaten", "before": "place", "rank": "weight", "pick": "pick", "no-pick": "pick"}
SALIENCE = {"requirement": 100, "own-card": 95, "propose": 90, "configure": 85, "trial": 84, LARGER_BATCH: 83, SPEED_UP: 82,
            SPEED_TRIAL: 81, SCALE_OUT: 80, SCALE_TRIAL: 79,
            "option": 75,
            "reject": 60, "standing": 59, "undercut": 58, "market": 57, "beaten": 56, "demote": 55, "prefer": 50,
            "rank": 46, "before": 45, "pick": 30, "no-pick": 30, "advice": 20, "warning": 10}
INPUT = "input"


def stage(rule: RuleDef) -> str:
    if rule.kind == "derive":
        return str(rule.derive)
    if rule.kind == "configure":
        if rule.step in SCALE_TRIAL_STEPS:
            return SCALE_TRIAL
        if rule.step in SPEED_TRIAL_STEPS:
            return SPEED_TRIAL
        if rule.step in TRIAL_STEPS:
            return "trial"
        return str(rule.step) if rule.step in OFF_LADDER else ("propose" if rule.proposes else "configure")
    return rule.kind


def salience(rule: RuleDef) -> int:
    return SALIENCE[stage(rule)]


@dataclass
class Firing:
    """One fired activation: the rule, the facts it matched (with the rule
    that declared each) and the facts it declared."""

    rule: RuleDef
    gpu: str | None
    matched: list[dict[str, Any]]
    derived: list[dict[str, Any]]
    env: dict[str, Any]


@dataclass
class Run:
    """The working record of one consultation."""

    kb: KnowledgeBase
    profile: dict[str, Any]
    basis: str = "checked"
    req: dict[str, Any] | None = None
    cards: dict[str, CardDef] = field(default_factory=dict)
    candidates: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    conclusions: list[tuple[RuleDef, str | None]] = field(default_factory=list)
    ranking: list[str] = field(default_factory=list)
    pick: dict[str, Any] | None = None
    firings: list[Firing] = field(default_factory=list)
    origin: dict[int, str] = field(default_factory=dict)   # fact id -> the rule that declared it
    # The facts about one card by (namespace, gpu) (a verdict's by (namespace, gpu, rule)): the
    # working memory's index, so that an action modifies or retracts the one it means.
    ids: dict[tuple[str | None, ...], int] = field(default_factory=dict, repr=False)
    fired: set[tuple[str, str | None]] = field(default_factory=set, repr=False)   # the conclusions drawn
    plains: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)
    card_ids: dict[str, int] = field(default_factory=dict, repr=False)   # card id -> its fact id

    def __post_init__(self) -> None:
        self.positions = {card.id: i for i, card in enumerate(self.kb.catalog)}
        self.overriders: dict[str, list[str]] = {}   # rule id -> the rules that override it
        for rule in self.kb.rules:
            for other in rule.overrides:
                self.overriders.setdefault(other, []).append(rule.id)
        self.demotions = [rule.id for rule in self.kb.rules if rule.kind == "demote"]

    def overridden(self, rule_id: str, gpu: str | None) -> bool:
        """Did a rule that overrides ``rule_id`` conclude on the same card?"""
        return any((other, gpu) in self.fired for other in self.overriders.get(rule_id, ()))

    def plain(self, fact: Any) -> dict[str, Any]:
        """A declared fact's fields as a plain dict (made once per fact: facts never change)."""
        key = fact["__factid__"]
        if key not in self.plains:
            self.plains[key] = _plain(fact)
        return self.plains[key]

    def order(self, gpu: str | None) -> int:
        if gpu is None or gpu == "own":
            return -1
        return self.positions.get(gpu, len(self.positions))

    def sorted_firings(self) -> list[Firing]:
        # (a rule that compares two options fires once per pair: the other card orders those)
        return sorted(self.firings, key=lambda f: (-salience(f.rule), f.rule.index, self.order(f.gpu), [
            self.order(m["values"]["gpu"]) for m in f.matched if "gpu" in m["values"]]))


class _Reads(Mapping[str, Any]):
    """A fact as a helper sees it, noting which fields it reads."""

    def __init__(self, values: Mapping[str, Any], read: set[str]) -> None:
        self.plain, self.read = values, read      # plain: the values, read without noting (not Mapping.values)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return self.plain[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.plain)

    def __len__(self) -> int:
        return len(self.plain)


def _plain(fact: Any) -> dict[str, Any]:
    return {k: (v if type(v) in _SCALARS else _thawed(v)) for k, v in fact.items()
            if isinstance(k, str) and not k.startswith("__")}


_SCALARS = {str, int, float, bool, type(None)}


def _thawed(value: Any) -> Any:
    # experta freezes lists and dicts it is given; the rest of the package reads plain ones.
    if isinstance(value, Mapping):
        return {k: _thawed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thawed(v) for v in value]
    return value


class _Engine(KnowledgeEngine):  # type: ignore[misc,valid-type]
    consultation: Run   # the run being answered (each thread has its own engine)
    card_fields: tuple[str, ...] = ("id",)   # the card fields a configuration carries (engine_class)

    def fire(self, rule: RuleDef, bound: dict[str, Any]) -> None:
        run = self.consultation
        facts = {ns: bound[ns] for ns in rule.scope if ns in bound}
        env = {ns: run.plain(fact) for ns, fact in facts.items()}
        held_by = carrier(tuple(facts))
        if held_by and "card" in joined(rule) and "card" not in facts:  # the card its configuration carries
            gpu_id = env[held_by]["gpu"]
            facts["card"], env["card"] = {"__factid__": run.card_ids.get(gpu_id)}, run.cards[gpu_id].fact()
        reads: dict[str, set[str]] = {ns: set() for ns in env}
        seen = {ns: _Reads(values, reads[ns]) for ns, values in env.items()}
        declared = list(self.conclude(rule, seen))
        gpu = env[held_by]["gpu"] if held_by else None
        derived = []
        for namespace, values in declared:
            key = (namespace, values.get("gpu"))
            if namespace in _MODIFIED and key in run.ids:   # a count that changes while options are compared
                self.record(key, self.modify(self.facts[run.ids[key]], **values), rule)
            else:
                fact = self.declare(FACT_CLASSES[namespace](**values))
                if fact is not None:
                    self.record(("card", values["id"]) if namespace == "card" else key, fact, rule)
            derived.append({"fact": namespace, "values": {k: v for k, v in values.items() if k not in sizing.CARRIED}})
            gpu = gpu or values.get("gpu") or (values.get("id") if namespace == "card" else None)
            env.setdefault("proposal" if namespace in ("candidate", "trial") else namespace, values)
        if not declared:
            run.conclusions.append((rule, gpu))
            run.fired.add((rule.id, gpu))
            if rule.kind in VERDICTS:  # the ranking consumes it from working memory
                verdict = {"rule": rule.id, "kind": rule.kind, "gpu": gpu}
                derived.append({"fact": "verdict", "values": verdict})
                self.rule_on(rule, gpu, verdict)
            else:  # advice and warnings: no rule consumes them, so they are recorded only
                derived.append({"fact": rule.kind, "values": {"gpu": gpu} if gpu else {}})
        run.firings.append(Firing(rule, gpu, self.matched(rule, facts, env, reads), derived, env))

    def record(self, key: tuple[str | None, ...], fact: Any, rule: RuleDef) -> None:
        """Index a fact a rule declared (or modified), and note the rule."""
        self.consultation.origin[fact["__factid__"]] = rule.id
        self.consultation.ids[key] = fact["__factid__"]
        if key[0] == "card":
            self.consultation.card_ids[str(key[1])] = fact["__factid__"]

    def rule_on(self, rule: RuleDef, gpu: str | None, verdict: dict[str, Any]) -> None:
        """Declare a verdict, unless a rule that ``overrides`` it already ruled
        on the same card; retract the verdicts it overrides; and weigh the
        card's standing option by the demote and prefer verdicts that stand on it."""
        run = self.consultation
        if not run.overridden(rule.id, gpu):
            fact = self.declare(Verdict(**verdict))
            if fact is not None:
                self.record(("verdict", str(gpu), rule.id), fact, rule)
        for overridden in rule.overrides:
            key = ("verdict", str(gpu), overridden)
            if key in run.ids:
                self.retract(self.facts[run.ids.pop(key)])
        weighed = ("place", gpu)
        if weighed in run.ids and (rule.kind != "reject" or rule.overrides):
            weight = run.plain(self.facts[run.ids[weighed]])
            rules = sorted(weight["rules"] + ([rule.id] if rule.kind != "reject" else []), key=lambda r: run.kb.rule(r).index)
            # (it comes from the last of its verdicts in rules.toml: the same whatever order they fired in)
            self.record(weighed, self.modify(self.facts[run.ids[weighed]], **self.weighed(weight, rules, gpu)),
                        run.kb.rule(rules[-1]) if rules else rule)

    def weighed(self, option: Mapping[str, Any], rules: list[str], gpu: str | None) -> dict[str, Any]:
        """What the ranking compares of an option (rules.toml ``ranks-before``):
        ``demotion`` adds a power of two for each demote rule that stands on it
        (an earlier rule a larger one), ``score`` is the pure evaluation's with
        the factors of the prefer rules that stand on it."""
        run = self.consultation
        standing = [r for r in map(run.kb.rule, rules) if not run.overridden(r.id, gpu)]
        stands = {r.id for r in standing}
        factors = sorted(float(r.factor) for r in standing if r.kind == "prefer" and r.factor is not None)
        demotions = run.demotions
        return {"rules": list(rules), "factors": factors,
                "demotion": sum(2 ** (len(demotions) - 1 - i) for i, d in enumerate(demotions) if d in stands),
                "score": sizing.score(run.kb, run.profile, option, factors)}

    def conclude(self, rule: RuleDef, seen: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        """What a rule declares: a derived fact through its helper, or nothing
        (a verdict or a note, recorded in the run)."""
        run = self.consultation
        what = stage(rule)
        if what == "requirement":
            run.req = requirement.requirement(run.kb, seen["profile"], run.basis)
            yield "req", {k: v for k, v in run.req.items() if k != "anchors"}
        elif what == "own-card":
            card = requirement.own_card(run.kb, seen["profile"])
            run.cards[card.id] = card
            yield "card", card.fact()
        elif what in ("propose", "configure", "trial", SCALE_TRIAL, SPEED_TRIAL, LARGER_BATCH, SCALE_OUT, SPEED_UP):
            sizer = sizing.Sizer(run.kb, seen["profile"], seen["req"], run.basis)
            namespace = "candidate"
            if what == LARGER_BATCH:
                candidate = sizer.larger_batch(seen["card"], seen["candidate"])
            elif what == SCALE_OUT:  # its first count is a trial
                namespace = "trial"
                candidate = sizer.first_scale_trial(seen["card"], dict(seen["candidate"].plain))
            elif what == SPEED_UP:  # its first count is a trial (none: the slow recipe stands)
                candidate = sizer.first_speed_trial(seen["card"], dict(seen["candidate"].plain))
                namespace = "candidate" if candidate.get("sped_up") else "trial"
            elif rule.step == SPEED_NEXT:
                namespace = "trial"
                candidate = sizer.next_speed_trial(seen["card"], seen["trial"])
            elif what == SPEED_TRIAL:      # found or none: the trial's verdict settles the candidate
                candidate = sizer.sped_up(seen["trial"], pays=rule.step == SPEED_FOUND)
            elif rule.step == MORE_CARDS:
                namespace = "trial"
                candidate = sizer.trial(seen["card"], seen["trial"]["step"], int(seen["trial"]["next_count"]))
            elif rule.step in (FEWEST_CARDS, NO_COUNT_FITS):
                candidate = sizer.tried(seen["card"], seen["trial"])
            elif rule.step == NO_FAST_LINK:
                candidate = sizer.impossible(seen["trial"])
            elif rule.step == DEADLINE_NEXT:
                namespace = "trial"
                candidate = sizer.next_scale_trial(seen["card"], seen["trial"])
            elif what == SCALE_TRIAL:      # met or missed: the trial's verdict settles the candidate
                candidate = sizer.scaled(seen["trial"], meets=rule.step == DEADLINE_MET)
            elif sizing.ladder_step(run.kb, seen["profile"]["method"], str(rule.step))["spread"] == "card":
                candidate = sizer.step(seen["card"], str(rule.step))
            else:  # a step over several devices: its first count is a trial
                namespace = "trial"
                previous = seen.get("candidate")
                candidate = sizer.first_trial(seen["card"], str(rule.step),
                                              dict(previous.plain) if previous is not None else None)
            card_fact = run.cards[candidate["gpu"]].fact()
            candidate["card"] = {name: card_fact[name] for name in self.card_fields}
            if namespace == "candidate":
                run.candidates.setdefault(candidate["gpu"], []).append(candidate)
            yield namespace, candidate
        elif what == "option":
            yield "option", dict(seen["candidate"].plain)
        elif what == "standing":
            option = seen["option"].plain
            standing = {name: option[name] for name in STANDING_FIELDS} | {"order": run.order(option["gpu"])}
            yield "standing", standing
            weight = {name: standing[name] for name in WEIGHT_FIELDS}
            # (the verdicts already on it: an overriding rule can make an option stand late)
            ruled = [r.id for r in run.kb.rules if r.kind in ("demote", "prefer") and (r.id, option["gpu"]) in run.fired]
            yield "place", weight | self.weighed(weight, ruled, option["gpu"]) | {"behind": 0, "weighed": False}
        elif what in ("undercut", "beaten"):
            yield what, {"gpu": seen["standing"]["gpu"]}
        elif what == "market":
            yield "market", {"cheapest_gpu": seen["standing"]["gpu"],
                             "cheapest_total_cost": seen["standing"]["total_cost"]}
        elif what == "before":   # the rival has one more option before it
            gpu = seen["rival"]["gpu"]
            yield "place", {"gpu": gpu, "behind": self.facts[run.ids["place", gpu]]["behind"] + 1}
        elif what == "rank":   # every verdict is on it: what the ranking compares
            place = seen["place"].plain
            yield "weight", {name: place[name] for name in FIELDS["weight"]}
            yield "place", {"gpu": place["gpu"], "weighed": True}
        elif what == "pick":
            option = dict(seen["option"].plain)
            yield "pick", {**option, "found": True, **self.compared(option["gpu"])}
        elif what == "no-pick":
            yield "pick", dict.fromkeys(("gpu", "count", "hours")) | {"found": False}

    def compared(self, pick: str) -> dict[str, Any]:
        """The rented options the pick is weighed against, as pick fields
        (conditions.COMPARED): the next in the ranking, the fastest, and the
        cheapest in all (the cheaper per hour of two that cost the same); None
        when there is none. A summary of the ranking the rules declared, for
        the advice rules to read (experta has no pattern that collects facts)."""
        run = self.consultation
        ranked = sorted((self.facts[i]["behind"], key[1]) for key, i in run.ids.items() if key[0] == "place")
        options = [run.plain(self.facts[run.ids["standing", gpu]]) for _, gpu in ranked if gpu != pick]
        others = [option for option in options if option["where"] == "cloud"]
        chosen = {"next": others[0] if others else None,
                  "fastest": min(others, key=lambda o: o["hours"], default=None),
                  "cheap": min(others, key=lambda o: (o["total_cost"], o["per_hour"]), default=None)}
        return {f"{which}_{name}": (option[name] if option else None)
                for which, option in chosen.items() for name in COMPARED_FIELDS}

    def matched(self, rule: RuleDef, facts: dict[str, Any], env: dict[str, Any],
                reads: dict[str, set[str]]) -> list[dict[str, Any]]:
        """The facts the activation matched, each with the fields the rule's
        condition, message and helper read, and where the fact came from."""
        uses = {ns: set(names) for ns, names in reads.items()}
        for namespace, name in rule.condition.fields:
            uses.setdefault(namespace, set()).add(name)
        for namespace, name in rule.placeholders:
            if namespace in facts:
                uses.setdefault(namespace, set()).add(name)
        for namespace in facts:
            if namespace in _ABOUT_A_CARD:  # which card the fact is about
                uses.setdefault(namespace, set()).add("id" if namespace == "card" else "gpu")
        matched = []
        for namespace in ("profile", "req", "card", "candidate", "trial", "option", "standing", "other", "weight",
                          "rival", "place", "market", "beaten", "pick"):
            if namespace not in facts or not uses.get(namespace):
                continue
            fact = facts[namespace]
            origin = INPUT if namespace == "profile" else self.consultation.origin.get(
                fact.get("__factid__"), "catalog" if namespace == "card" else INPUT)
            values = env[namespace]
            matched.append({"fact": namespace, "from": origin,
                            "values": {name: values.get(name) for name in sorted(uses[namespace] - sizing.CARRIED)}})
        return matched


def effective(conclusions: list[tuple[RuleDef, str | None]]) -> list[tuple[RuleDef, str | None]]:
    """The conclusions that stand: a rule's conclusion is dropped when a rule
    that ``overrides`` it fired on the same card (or both on none)."""
    fired = {(rule.id, gpu) for rule, gpu in conclusions}
    overridden = {(other, gpu) for rule, gpu in conclusions for other in rule.overrides}
    return [(rule, gpu) for rule, gpu in conclusions if (rule.id, gpu) not in overridden or (rule.id, gpu) not in fired]


# --- Compiling the knowledge base into an engine class ---------------------------

# The facts each stage's helper reads, besides what the rule's condition and
# message name: a rule joins exactly the facts it reasons about.
HELPER_NEEDS = {"requirement": ("profile",), "own-card": ("profile",), "propose": ("profile", "req", "card"),
                "configure": ("profile", "req", "candidate", "card"), "trial": ("profile", "req", "trial", "card"),
                SCALE_TRIAL: ("profile", "req", "trial", "card"), SPEED_TRIAL: ("profile", "req", "trial", "card"), SCALE_OUT: ("profile", "req", "candidate", "card"),
                SPEED_UP: ("profile", "req", "candidate", "card"), LARGER_BATCH: ("profile", "req", "candidate", "card"),
                "option": ("profile", "candidate"), "standing": ("option", "profile"),
                "undercut": ("standing", "other", "profile"), "market": ("standing", "profile"),
                "beaten": ("standing", "other"), "before": ("weight", "rival"), "rank": ("place", "profile"),
                "pick": ("place", "option"), "no-pick": ("profile",)}
# The fact a rule is about, by its scope.
_SUBJECTS = ("candidate", "trial", "option", "market", "pick", "card", "req", "profile")
# The facts about one card (their `gpu`, a card's `id`, says which).
_ABOUT_A_CARD = ("candidate", "trial", "option", "card", "standing", "other", "weight", "rival", "place", "beaten")
# Facts an action changes rather than declares again (the count of options before one).
_MODIFIED = ("place",)


def joined(rule: RuleDef) -> tuple[str, ...]:
    """The namespaces a rule's patterns bind, in a fixed order."""
    named = {ns for ns, _ in rule.condition.fields} | {ns for ns, _ in rule.placeholders}
    wanted = set(HELPER_NEEDS.get(stage(rule), ())) | (named & set(rule.scope))
    if rule.kind in ("reject", "demote", "prefer"):  # a conclusion about one card's option
        wanted.add("option")
    if not wanted:
        wanted.add(next(ns for ns in _SUBJECTS if ns in rule.scope))
    if "card" in wanted and not wanted & {"candidate", "trial", "option"} and stage(rule) != "propose":
        wanted.add("option")
    # The fact the rule is about comes first: a join then starts from the few
    # facts that can match it, not from every card.
    return tuple(ns for ns in _JOIN_ORDER if ns in wanted)


_JOIN_ORDER = ("candidate", "trial", "option", "standing", "other", "weight", "rival", "place", "pick", "card",
               "market", "beaten", "req", "profile")


def _patterns(rule: RuleDef) -> list[Any]:
    """The facts a rule joins: those its condition, message and helper read.
    A candidate or option is joined with the card of the same ``gpu``; a
    configure rule matches the candidate whose next step it is."""
    what = stage(rule)
    names = bound(rule)
    patterns = []
    for namespace in names:
        cls = FACT_CLASSES[namespace]
        if namespace == "candidate":
            fields = {"next_step": rule.step} if what == "configure" else {}
            fact = cls(gpu=MATCH.gpu, **fields)
        elif namespace in _PAIRED:
            fact = cls(gpu=getattr(MATCH, _PAIRED[namespace]))
        elif namespace == "place":   # weighed by every verdict (rank-options), or the first of the ranking (the pick)
            fact = cls(gpu=MATCH.gpu, weighed=False) if what == "rank" else cls(gpu=MATCH.gpu, weighed=True, behind=0)
        elif namespace in ("trial", "standing", "weight", "beaten"):
            fact = cls(gpu=MATCH.gpu)
        elif namespace == "option":
            # Ranking an option that does not fit would only add noise: prefer
            # and demote rules see the options that fit.
            fact = cls(gpu=MATCH.gpu, fits=True) if rule.kind in ("prefer", "demote") else cls(gpu=MATCH.gpu)
        else:
            fact = cls()
        patterns.append(getattr(AS, namespace) << fact)
    if what in _ABSENT:
        patterns.append(experta.NOT(_ABSENT[what]()))
    if rule.condition.source != "true":
        patterns.append(TEST(_test(rule, names)))
    return patterns


def carrier(names: tuple[str, ...]) -> str | None:
    """The candidate or option a rule matches: it carries its card."""
    return next((ns for ns in ("candidate", "trial", "option") if ns in names), None)


def bound(rule: RuleDef) -> tuple[str, ...]:
    """The facts a rule's patterns bind: those it joins, except a card that
    comes with the candidate or option it matches. Joining every candidate
    with every card would cost the square of the catalog's size (experta's
    joins compare each pair); a configuration carries its card instead."""
    names = joined(rule)
    if "card" in names and carrier(names):
        return tuple(ns for ns in names if ns != "card")
    return names


def _test(rule: RuleDef, names: tuple[str, ...]) -> Callable[..., bool]:
    # experta passes a test the bindings named by its parameters: give it
    # exactly the names of the facts the rule joins.
    holds = rule.condition
    with_card = carrier(names) if "card" in joined(rule) and "card" not in names else None

    def test(**facts: Any) -> bool:
        if with_card:
            facts["card"] = facts[with_card]["card"]
        return bool(holds(facts))

    test.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in names])
    test.__name__ = f"test_{rule.id.replace('-', '_')}"
    return test


def _action(rule: RuleDef) -> Callable[..., None]:
    def action(self: _Engine, **bound: Any) -> None:
        self.fire(rule, bound)

    action.__name__ = rule.id
    return action


_CLASSES: dict[int, tuple[Any, type]] = {}
_CLASSES_LOCK = threading.Lock()


def engine_class(kb: KnowledgeBase) -> type:
    """The engine class of ``kb``'s rules, built once (rebuilding leaks in
    experta). Catalogs are facts, not rules: knowledge bases that differ only
    in their cards share one class."""
    with _CLASSES_LOCK:
        entry = _CLASSES.get(id(kb.rules))
        if entry is None or entry[0] is not kb.rules:
            attrs: dict[str, Any] = {f"rule_{rule.index}": Rule(*_patterns(rule), salience=salience(rule))(
                _action(rule)) for rule in kb.rules}
            # A configuration carries the fields of its card that the rules' conditions read.
            attrs["card_fields"] = ("id",) + tuple(sorted(
                {name for rule in kb.rules for ns, name in rule.condition.fields if ns == "card"} - {"id"}))
            entry = (kb.rules, type("ExpertEngine", (_Engine,), attrs))
            _CLASSES[id(kb.rules)] = entry
        return entry[1]


class _Engines(threading.local):
    def __init__(self) -> None:
        self.by_class: dict[int, Any] = {}


_ENGINES = _Engines()


def infer(kb: KnowledgeBase, profile: dict[str, Any], basis: str = "checked",
          only: Collection[str] | None = None) -> Run:
    """Run one consultation through this thread's engine for ``kb``. ``basis``
    says what sizes a configuration: the guide's figure ("guide"), the
    first-principles estimate ("estimate"), or the larger of both ("checked").
    ``only``: the ids of the catalog cards to consider (all by default)."""
    cls = engine_class(kb)
    engine = _ENGINES.by_class.get(id(cls))
    if engine is None:
        engine = cls()
        _ENGINES.by_class[id(cls)] = engine
    run = Run(kb, dict(profile), basis)
    engine.consultation = run
    engine.reset()
    engine.declare(Profile(**profile))
    for card in kb.catalog if only is None else (card for card in kb.catalog if card.id in only):
        run.cards[card.id] = card
        run.card_ids[card.id] = engine.declare(Card(**card.fact()))["__factid__"]
    engine.run()
    # What the rules concluded, read from working memory.
    options, ranked = [], []
    for fact in engine.facts.values():
        if isinstance(fact, Option):
            options.append(run.plain(fact))
        elif isinstance(fact, Place):
            ranked.append((fact["behind"], fact["gpu"]))
        elif isinstance(fact, Pick):
            run.pick = run.plain(fact)
    run.options = {option["gpu"]: option for option in sorted(options, key=lambda o: run.order(o["gpu"]))}
    run.ranking = [gpu for _, gpu in sorted(ranked)]
    return run
