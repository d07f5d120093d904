"""The inference engine: the knowledge base's rules compiled into one experta
``KnowledgeEngine`` class, run by forward chaining.

Working memory holds one ``Profile`` (the person's answers), one
``Requirement`` (the guide's figure), a ``Card`` per GPU (the catalog's, and
the person's own), the ``Candidate`` configurations the configuration rules
propose, the ``Option`` chosen for each card, and the ``Pick``. Every rule
joins the facts it reasons about through its patterns (a candidate or option
with the card of the same ``gpu``), and its compiled ``when`` is an experta
test over exactly those facts.

Configuration works as R1/XCON did: ``propose`` a configuration for every
card, then climb the ladder of ``rules/recipes.toml`` one rule at a time —
each configure rule matches the candidate whose ``next_step`` it is and that
does not fit — until one fits; then scale out for a deadline, and settle the
card's option. Saliences order the stages; within a stage results never
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
from ..knowledge.conditions import COMPARED_FIELDS
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
from . import sizing

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


class Market(Fact):  # type: ignore[misc,valid-type]
    """The standing options weighed against each other, before the ranking."""


class Pick(Fact):  # type: ignore[misc,valid-type]
    """The best option, or found=False."""


FACT_CLASSES = {"profile": Profile, "req": Requirement, "card": Card, "candidate": Candidate, "trial": Trial,
                "option": Option,
                "verdict": Verdict, "market": Market, "pick": Pick}
VERDICTS = ("reject", "demote", "prefer")
# What each kind of rule declares (derive rules: what their helper declares).
# The stage of the rules over the trials of scaling out: after scale-out, so that
# the trace reads in the order the counts were tried.
SCALE_TRIAL = "scale-trial"
# ... and those over the trials of speeding up, after speed-up.
SPEED_TRIAL = "speed-trial"
DECLARES = {"requirement": "req", "own-card": "card", "propose": "candidate", "configure": "candidate",
            "trial": "candidate", SCALE_TRIAL: "candidate", SPEED_TRIAL: "candidate",
            "option": "option", "market": "market", "pick": "pick"}
SALIENCE = {"requirement": 100, "own-card": 95, "propose": 90, "configure": 85, "trial": 84, LARGER_BATCH: 83, SPEED_UP: 82,
            SPEED_TRIAL: 81, SCALE_OUT: 80, SCALE_TRIAL: 79,
            "option": 75,
            "reject": 60, "market": 58, "demote": 55, "prefer": 50, "pick": 30, "advice": 20, "warning": 10}
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
    plains: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)
    card_ids: dict[str, int] = field(default_factory=dict, repr=False)   # card id -> its fact id

    def __post_init__(self) -> None:
        self.positions = {card.id: i for i, card in enumerate(self.kb.catalog)}

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
        return sorted(self.firings, key=lambda f: (-salience(f.rule), f.rule.index, self.order(f.gpu)))


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
            fact = self.declare(FACT_CLASSES[namespace](**values))
            if fact is not None:
                run.origin[fact["__factid__"]] = rule.id
                if namespace == "card":
                    run.card_ids[values["id"]] = fact["__factid__"]
            derived.append({"fact": namespace, "values": {k: v for k, v in values.items() if k not in sizing.CARRIED}})
            gpu = gpu or values.get("gpu") or (values.get("id") if namespace == "card" else None)
            env.setdefault("proposal" if namespace in ("candidate", "trial") else namespace, values)
        if not declared:
            run.conclusions.append((rule, gpu))
            if rule.kind in VERDICTS:  # the ranking consumes it from working memory
                verdict = {"rule": rule.id, "kind": rule.kind, "gpu": gpu}
                fact = self.declare(Verdict(**verdict))
                if fact is not None:
                    run.origin[fact["__factid__"]] = rule.id
                derived.append({"fact": "verdict", "values": verdict})
            else:  # advice and warnings: no rule consumes them, so they are recorded only
                derived.append({"fact": rule.kind, "values": {"gpu": gpu} if gpu else {}})
        run.firings.append(Firing(rule, gpu, self.matched(rule, facts, env, reads), derived, env))

    def conclude(self, rule: RuleDef, seen: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        """What a rule declares: a derived fact through its helper, or nothing
        (a verdict or a note, recorded in the run)."""
        run = self.consultation
        what = stage(rule)
        if what == "requirement":
            run.req = sizing.requirement(run.kb, seen["profile"], run.basis)
            yield "req", {k: v for k, v in run.req.items() if k != "anchors"}
        elif what == "own-card":
            card = sizing.own_card(run.kb, seen["profile"])
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
            option = dict(seen["candidate"].plain)
            run.options[option["gpu"]] = option
            yield "option", option
        elif what == "market":
            verdicts = [(run.kb.rule(f["rule"]), f["gpu"]) for f in self.facts.values() if isinstance(f, Verdict)]
            yield "market", _market(run, seen["profile"], verdicts)
        elif what == "pick":
            verdicts = [(run.kb.rule(f["rule"]), f["gpu"]) for f in self.facts.values() if isinstance(f, Verdict)]
            yield "pick", _pick(run, seen["profile"], verdicts)

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
        for namespace, key in (("candidate", "gpu"), ("trial", "gpu"), ("option", "gpu"), ("card", "id")):
            if namespace in facts:  # which card the fact is about
                uses.setdefault(namespace, set()).add(key)
        matched = []
        for namespace in ("profile", "req", "card", "candidate", "trial", "option", "market", "pick"):
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


def _standing(run: Run, verdicts: list[tuple[RuleDef, str | None]]) -> dict[str, dict[str, Any]]:
    """The options no reject verdict ruled out."""
    rejected = {gpu for rule, gpu in effective(verdicts) if rule.kind == "reject"}
    return {gpu: option for gpu, option in run.options.items() if gpu not in rejected}


def _market(run: Run, profile: Mapping[str, Any], verdicts: list[tuple[RuleDef, str | None]]) -> dict[str, Any]:
    """The standing options that fit, weighed against each other: the
    cheapest rented one that meets the deadline (of all rented ones when none
    does), and the cards whose option another beats on both money and time.
    Arithmetic only: demote rules decide what follows from it."""
    standing = {gpu: option for gpu, option in _standing(run, verdicts).items() if option["fits"]}
    deadline = profile["deadline_h"]
    rented = [option for option in standing.values() if option["where"] == "cloud"]
    meeting = [o for o in rented if deadline is None or o["elapsed_hours"] <= deadline] or rented
    cheapest = min(meeting, key=lambda o: (o["total_cost"], o["hours"], run.order(o["gpu"])), default=None)
    beaten = sorted(gpu for gpu, option in standing.items()
                    if any(other != gpu and _beats(theirs, option) for other, theirs in standing.items()))
    return {"cheapest_gpu": cheapest["gpu"] if cheapest else None,
            "cheapest_total_cost": cheapest["total_cost"] if cheapest else None, "beaten": beaten}


def _pick(run: Run, profile: Mapping[str, Any], verdicts: list[tuple[RuleDef, str | None]]) -> dict[str, Any]:
    """Rank the options no verdict ruled out: by the demote verdicts on each
    (an option a demote rule matched ranks after those it did not; rules
    earlier in rules.toml weigh more), then by score (sizing.score with the
    factors of the preference verdicts on each); ties go to fewer devices,
    then catalog order."""
    conclusions = effective(verdicts)
    demotions = [rule for rule in run.kb.rules if rule.kind == "demote"]
    demoted = {(rule.id, gpu) for rule, gpu in conclusions if rule.kind == "demote"}
    factors: dict[str, list[float]] = {}
    for rule, gpu in conclusions:
        if rule.kind == "prefer" and gpu is not None:
            factors.setdefault(gpu, []).append(rule.factor)  # type: ignore[arg-type]
    standing = _standing(run, verdicts)
    scored = [(tuple((rule.id, gpu) in demoted for rule in demotions),
               sizing.score(run.kb, profile, option, sorted(factors.get(gpu, []))),
               option["devices"], run.order(gpu), gpu) for gpu, option in standing.items()]
    run.ranking = [gpu for *_, gpu in sorted(scored)]
    if run.ranking:
        run.pick = {**run.options[run.ranking[0]], "found": True, **_compared(run)}
    else:
        run.pick = dict.fromkeys(("gpu", "count", "hours")) | {"found": False}
    return run.pick


def _beats(one: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """``one`` costs no more and takes no longer than ``other``, and is better in one of them."""
    return (one["total_cost"] <= other["total_cost"] and one["hours"] <= other["hours"]
            and (one["total_cost"] < other["total_cost"] or one["hours"] < other["hours"]))


def _compared(run: Run) -> dict[str, Any]:
    """The rented options the pick is weighed against, as pick fields
    (conditions.COMPARED): the next in the ranking, the fastest, and the
    cheapest in all (the cheaper per hour of two that cost the same); None
    when there is no other."""
    others = [run.options[gpu] for gpu in run.ranking[1:] if run.options[gpu]["where"] == "cloud"]
    chosen = {"next": others[0] if others else None,
              "fastest": min(others, key=lambda o: o["hours"], default=None),
              "cheap": min(others, key=lambda o: (o["total_cost"], o["per_hour"]), default=None)}
    return {f"{which}_{name}": (option[name] if option else None)
            for which, option in chosen.items() for name in COMPARED_FIELDS}


# --- Compiling the knowledge base into an engine class ---------------------------

# The facts each stage's helper reads, besides what the rule's condition and
# message name: a rule joins exactly the facts it reasons about.
HELPER_NEEDS = {"requirement": ("profile",), "own-card": ("profile",), "propose": ("profile", "req", "card"),
                "configure": ("profile", "req", "candidate", "card"), "trial": ("profile", "req", "trial", "card"),
                SCALE_TRIAL: ("profile", "req", "trial", "card"), SPEED_TRIAL: ("profile", "req", "trial", "card"), SCALE_OUT: ("profile", "req", "candidate", "card"),
                SPEED_UP: ("profile", "req", "candidate", "card"), LARGER_BATCH: ("profile", "req", "candidate", "card"),
                "option": ("profile", "candidate"), "market": ("profile",), "pick": ("profile",)}
# The fact a rule is about, by its scope.
_SUBJECTS = ("candidate", "trial", "option", "market", "pick", "card", "req", "profile")


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


_JOIN_ORDER = ("candidate", "trial", "option", "pick", "card", "market", "req", "profile")


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
        elif namespace == "trial":
            fact = cls(gpu=MATCH.gpu)
        elif namespace == "option":
            # Ranking an option that does not fit would only add noise: prefer
            # and demote rules see the options that fit.
            fact = cls(gpu=MATCH.gpu, fits=True) if rule.kind in ("prefer", "demote") else cls(gpu=MATCH.gpu)
        else:
            fact = cls()
        patterns.append(getattr(AS, namespace) << fact)
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
    run.options = dict(sorted(run.options.items(), key=lambda item: run.order(item[0])))
    return run
