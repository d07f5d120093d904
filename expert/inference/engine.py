"""The inference engine: the knowledge base's rules compiled into one experta
``KnowledgeEngine`` class, run by forward chaining.

Working memory holds one ``Profile`` (the person's answers), one
``Requirement`` (the guide's figure), a ``Card`` per GPU (the catalog's, and
the person's own), the ``Candidate`` configurations the configuration rules
propose, the ``Option`` chosen for each card, the ``Verdict`` of each reject,
demote and prefer rule, then for each option no reject verdict is on its
``Standing``, the cheapest rented one's ``Market``, a ``Beaten`` mark for
each option another beats on money and time, each option's ``Weight``
(what the ranking compares), the one ``Ranking`` and the ``Pick``: one fact
per option at every stage, never one per pair. The requirement, the cards,
the candidates, the options, the ranking and the pick are read from working
memory after the run: an action declares facts and writes nothing else but
the run's indexes of them. Every rule joins the facts it reasons about
through its patterns (a candidate or option with the card of the same
``gpu``), and its compiled ``when`` is an experta test over exactly those
facts.

Configuration works as R1/XCON did: ``propose`` a configuration for every
card, then climb the ladder of ``rules/recipes.toml`` one rule at a time —
each configure rule matches the candidate whose ``next_step`` it is and that
does not fit — until one fits; then scale out for a deadline, and settle the
card's option. Ranking: the rules that collect (``market``, ``beaten``,
``order``) fire once, after every fact they read is declared (their
salience), and read those their ``when`` holds for in the order of their
``by`` keys — a sweep (:mod:`.sweep`), not a join of every pair; the first
of the order is the pick. Saliences order the stages; within a stage
results never depend on firing order, which changes with ``PYTHONHASHSEED``.

Provenance comes from the activations themselves: a rule's action receives
the facts its patterns matched, and every fact it declares is recorded with
the rule that declared it. The engine class is built once per set of rules
and each thread keeps its own instance (a shared experta engine gives wrong
answers under threads).

The facts' classes and the stages are in :mod:`.facts`, each rule's joins,
patterns and test in :mod:`.patterns`, the record of a run in :mod:`.run`;
this module holds the engine class, its actions and ``infer()``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._vendor import experta
from ..knowledge import COLLECTS, LARGER_BATCH, SCALE_OUT, SPEED_UP, KnowledgeBase, RuleDef
from ..knowledge.conditions import COMPARED_FIELDS
from ..knowledge.records import (
    DEADLINE_MET,
    DEADLINE_NEXT,
    FEWEST_CARDS,
    MORE_CARDS,
    NO_COUNT_FITS,
    NO_FAST_LINK,
    PRECISION_FOUND,
    PRECISION_KEPT,
    PRECISION_NEXT,
    PRECISION_NONE,
    PRECISION_UP,
    SPEED_FOUND,
    SPEED_NEXT,
)
from . import requirement, sizing, sweep
from .facts import (
    FACT_CLASSES,
    INPUT,
    SCALE_TRIAL,
    SPEED_TRIAL,
    STANDING_FIELDS,
    VERDICTS,
    WEIGHT_FIELDS,
    Candidate,
    Card,
    Option,
    Pick,
    Profile,
    Ranking,
    Requirement,
    Verdict,
    salience,
    stage,
)
from .patterns import carrier, joined, patterns
from .run import Firing, Run
from .sweep import Keyed

KnowledgeEngine, Rule = experta.KnowledgeEngine, experta.Rule

# The facts about one card (their `gpu`, a card's `id`, says which).
_ABOUT_A_CARD = ("candidate", "trial", "option", "card", "standing", "weight", "beaten")


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
            facts["card"] = self.facts[run.card_ids[gpu_id]]
            env["card"] = run.plain(facts["card"])
        reads: dict[str, set[str]] = {ns: set() for ns in env}
        seen = {ns: sizing.Reads(values, reads[ns]) for ns, values in env.items()}
        collected = self.collect(rule, env) if stage(rule) in COLLECTS else []
        declared = list(self.conclude(rule, seen, collected))
        if stage(rule) in COLLECTS and not declared:
            return   # (it collected nothing to conclude from: as if it had not matched)
        gpu = env[held_by]["gpu"] if held_by else None
        derived = []
        for namespace, values in declared:
            fact = self.declare(FACT_CLASSES[namespace](**values))
            if fact is not None:
                run.plains[fact["__factid__"]] = values   # (what the fact was made of: read without thawing it)
                self.record(("card", values["id"]) if namespace == "card" else (namespace, values.get("gpu")),
                            fact, rule)
            derived.append({"fact": namespace, "values": {k: v for k, v in values.items() if k not in sizing.CARRIED}})
            if not collected:   # (a rule that collects is about all the options it read, not one card)
                gpu = gpu or values.get("gpu") or (values.get("id") if namespace == "card" else None)
            env.setdefault("proposal" if namespace in ("candidate", "trial") else namespace, values)
        if collected:    # what it read: each fact it collected, in its order (its message names the first)
            facts[COLLECTS[stage(rule)]] = [values for _, values in collected]
            env.setdefault(COLLECTS[stage(rule)], collected[0][1])
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

    def declare(self, *facts: Any) -> Any:
        self.consultation.declared += len(facts)   # (counted: the work a run does, tests/test_scaling.py)
        return super().declare(*facts)

    def record(self, key: tuple[str | None, ...], fact: Any, rule: RuleDef) -> None:
        """Index a fact a rule declared, and note the rule."""
        self.consultation.origin[fact["__factid__"]] = rule.id
        self.consultation.ids[key] = fact["__factid__"]
        if key[0] == "card":
            self.consultation.card_ids[str(key[1])] = fact["__factid__"]

    def rule_on(self, rule: RuleDef, gpu: str | None, verdict: dict[str, Any]) -> None:
        """Declare a verdict, unless a rule that ``overrides`` it already ruled
        on the same card; retract the verdicts it overrides."""
        run = self.consultation
        if not run.overridden(rule.id, gpu):
            fact = self.declare(Verdict(**verdict))
            if fact is not None:
                self.record(("verdict", str(gpu), rule.id), fact, rule)
        for overridden in rule.overrides:
            key = ("verdict", str(gpu), overridden)
            if key in run.ids:
                self.retract(self.facts[run.ids.pop(key)])

    def collect(self, rule: RuleDef, env: dict[str, Any]) -> Keyed:
        """The facts a rule that collects reads: those of its kind (``standing``
        or ``weight``) its ``when`` holds for, sorted by its ``by`` keys (with
        the values of the keys)."""
        run, namespace = self.consultation, COLLECTS[stage(rule)]
        cls = FACT_CLASSES[namespace]
        keyed = []
        for fact in self.facts.values():
            if isinstance(fact, cls):
                item = {**env, namespace: run.plain(fact)}
                if rule.condition(item):
                    keyed.append(([key(item) for key in rule.by], item[namespace]))
        keyed.sort(key=lambda pair: pair[0])
        return keyed

    def weighed(self, option: Mapping[str, Any], rules: list[str], gpu: str | None) -> dict[str, Any]:
        """What the ranking compares of an option (rules.toml ``order-options``):
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

    def conclude(self, rule: RuleDef, seen: dict[str, Any], collected: Keyed) -> Iterator[tuple[str, dict[str, Any]]]:
        """What a rule declares: a derived fact through its helper, or nothing
        (a verdict or a note, recorded in the run). ``collected``: what a rule
        that collects read, in its order."""
        run = self.consultation
        what = stage(rule)
        if what == "requirement":
            req = requirement.requirement(run.kb, seen["profile"], run.basis)
            yield "req", {k: v for k, v in req.items() if k != "anchors"}
        elif what == "own-card":
            yield "card", requirement.own_card(run.kb, seen["profile"]).fact()
        elif what in ("propose", "configure", "trial", SCALE_TRIAL, SPEED_TRIAL, LARGER_BATCH, SCALE_OUT, SPEED_UP,
                      PRECISION_UP, PRECISION_KEPT):
            sizer = sizing.Sizer(run.kb, seen["profile"], seen["req"], run.basis, run.sized)
            namespace = "candidate"
            if what == LARGER_BATCH:
                candidate = sizer.larger_batch(seen["card"], seen["candidate"])
            elif what == SCALE_OUT:  # its first count is a trial
                namespace = "trial"
                candidate = sizer.first_scale_trial(seen["card"], dict(seen["candidate"].plain))
            elif what == SPEED_UP:  # its first count is a trial (none: the slow recipe stands)
                candidate = sizer.first_speed_trial(seen["card"], dict(seen["candidate"].plain))
                namespace = "candidate" if candidate.get("sped_up") else "trial"
            elif what == PRECISION_UP:  # its first count is a trial (none: the leaner recipe stands)
                candidate = sizer.first_precision_trial(seen["card"], dict(seen["candidate"].plain))
                namespace = "trial" if "next_count" in candidate else "candidate"
            elif what == PRECISION_KEPT:  # the leaner recipe stands, weighed
                candidate = {**sizing.bare(seen["candidate"].plain), "step": PRECISION_KEPT, "precision_weighed": True}
            elif rule.step == PRECISION_NEXT:
                namespace = "trial"
                candidate = sizer.next_precision_trial(seen["card"], seen["trial"])
            elif rule.step in (PRECISION_FOUND, PRECISION_NONE):   # the trial's verdict settles the candidate
                candidate = sizer.precision_weighed(seen["trial"], found=rule.step == PRECISION_FOUND)
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
            card_fact = run.plain(self.facts[run.card_ids[candidate["gpu"]]])
            candidate["card"] = {name: card_fact[name] for name in self.card_fields}
            yield namespace, candidate
        elif what == "option":
            yield "option", dict(seen["candidate"].plain)
        elif what == "standing":
            option = seen["option"].plain
            yield "standing", {name: option[name] for name in STANDING_FIELDS} | {"order": run.order(option["gpu"])}
        elif what == "market" and collected:   # the first of the rented options in the rule's order
            cheapest = collected[0][1]
            yield "market", {"cheapest_gpu": cheapest["gpu"], "cheapest_total_cost": cheapest["total_cost"]}
        elif what == "beaten":
            yield from (("beaten", beaten) for beaten in sweep.beaten(collected))
        elif what == "rank":   # every verdict is on it: what the ranking compares
            standing = seen["standing"].plain
            ruled = [r.id for r in run.kb.rules if r.kind in ("demote", "prefer") and (r.id, standing["gpu"]) in run.fired]
            weight = {name: standing[name] for name in WEIGHT_FIELDS}
            beaten = run.ids.get(("beaten", standing["gpu"]))   # (how deep in the sweep's chains it is)
            yield "weight", weight | self.weighed(weight, ruled, standing["gpu"]) | {
                "beaten": 0 if beaten is None else self.facts[beaten]["depth"]}
        elif what == "order" and collected:
            yield "ranking", sweep.ranking(collected)
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
        order = self.facts[run.ids["ranking", None]]["order"]
        options = [run.plain(self.facts[run.ids["standing", gpu]]) for gpu in order if gpu != pick]
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
        for namespace, name in rule.condition.fields | {read for key in rule.by for read in key.fields}:
            uses.setdefault(namespace, set()).add(name)
        for namespace, name in rule.placeholders:
            if namespace in facts:
                uses.setdefault(namespace, set()).add(name)
        for namespace in facts:
            if namespace in _ABOUT_A_CARD:  # which card the fact is about
                uses.setdefault(namespace, set()).add("id" if namespace == "card" else "gpu")
        matched: list[dict[str, Any]] = []
        for namespace in ("profile", "req", "card", "candidate", "trial", "option", "standing", "weight", "ranking",
                          "market", "beaten", "pick"):
            if namespace not in facts or not uses.get(namespace):
                continue
            if isinstance(facts[namespace], list):   # the facts a rule that collects read
                matched.extend({"fact": namespace, "from": self.consultation.origin.get(self.consultation.ids[
                    namespace, values["gpu"]], INPUT), "values": {name: values.get(name) for name in
                                                                  sorted(uses[namespace] - sizing.CARRIED)}}
                               for values in facts[namespace])
                continue
            fact = facts[namespace]
            origin = INPUT if namespace == "profile" else self.consultation.origin.get(
                fact.get("__factid__"), "catalog" if namespace == "card" else INPUT)
            values = env[namespace]
            matched.append({"fact": namespace, "from": origin,
                            "values": {name: values.get(name) for name in sorted(uses[namespace] - sizing.CARRIED)}})
        return matched


def _action(rule: RuleDef) -> Callable[..., None]:
    def action(self: _Engine, **bound: Any) -> None:
        self.fire(rule, bound)

    action.__name__ = rule.id
    return action


@dataclass
class _Built:
    """The engine class built for one tuple of rules, and each thread's engine of it."""

    rules: tuple[RuleDef, ...]
    cls: type
    engines: threading.local = field(default_factory=threading.local)


# The engine classes of the last few rule sets, newest last. An entry holds its
# rules, so no other tuple can take their id() while it is here; a class that
# falls out goes with its threads' engines.
_BUILT: OrderedDict[int, _Built] = OrderedDict()
_BUILT_LOCK = threading.Lock()
CLASS_CACHE_SIZE = 8


def _built(kb: KnowledgeBase) -> _Built:
    with _BUILT_LOCK:
        built = _BUILT.get(id(kb.rules))
        if built is not None and built.rules is kb.rules:
            _BUILT.move_to_end(id(kb.rules))
            return built
        attrs: dict[str, Any] = {f"rule_{rule.index}": Rule(*patterns(rule), salience=salience(rule))(
            _action(rule)) for rule in kb.rules}
        # A configuration carries the fields of its card that the rules' conditions read.
        attrs["card_fields"] = ("id",) + tuple(sorted(
            {name for rule in kb.rules for ns, name in rule.condition.fields if ns == "card"} - {"id"}))
        built = _BUILT[id(kb.rules)] = _Built(kb.rules, type("ExpertEngine", (_Engine,), attrs))
        while len(_BUILT) > CLASS_CACHE_SIZE:
            _BUILT.popitem(last=False)
        return built


def engine_class(kb: KnowledgeBase) -> type:
    """The engine class of ``kb``'s rules, built once for the last few rule
    sets (CLASS_CACHE_SIZE). Catalogs are facts, not rules: knowledge bases
    that differ only in their cards share one class."""
    return _built(kb).cls


def thread_engine(kb: KnowledgeBase) -> Any:
    """This thread's engine for ``kb``'s rules, made on first use: an experta
    engine holds one consultation's working memory, so threads never share one."""
    engines = _built(kb).engines
    engine = getattr(engines, "engine", None)
    if engine is None:
        engine = engines.engine = engine_class(kb)()
        engine.joins = _joins(engine.matcher.root_node)
    return engine


def _joins(root: Any) -> list[Any]:
    """The join and negation nodes of an engine's Rete network: each counts the
    pairs of facts it tried in a run (the vendored experta's `compared`)."""
    found: dict[int, Any] = {}
    todo = [root]
    while todo:
        node = todo.pop()
        if id(node) not in found:
            found[id(node)] = node
            todo.extend(child.node for child in node.children)
    return [node for node in found.values() if hasattr(node, "compared")]


def begin(engine: Any, kb: KnowledgeBase, profile: dict[str, Any], basis: str,
          only: Collection[str] | None = None) -> Run:
    """Start a consultation on ``engine`` (an instance of ``engine_class(kb)``):
    working memory emptied, then the answers and the cards declared."""
    run = Run(kb, dict(profile), basis)
    engine.consultation = run
    engine.reset()
    engine.declare(Profile(**profile))
    for card in kb.catalog if only is None else (card for card in kb.catalog if card.id in only):
        values = card.fact()
        run.card_ids[card.id] = engine.declare(Card(**values))["__factid__"]
        run.plains[run.card_ids[card.id]] = values
    return run


def infer(kb: KnowledgeBase, profile: dict[str, Any], basis: str = "checked",
          only: Collection[str] | None = None) -> Run:
    """Run one consultation through this thread's engine for ``kb``. ``basis``
    says what sizes a configuration: the guide's figure ("guide"), the
    first-principles estimate ("estimate"), or the larger of both ("checked").
    ``only``: the ids of the catalog cards to consider (all by default)."""
    engine = thread_engine(kb)
    run = begin(engine, kb, profile, basis, only)
    engine.run()
    run.compared = sum(node.compared for node in engine.joins)
    # What the rules concluded, read from working memory: the actions write
    # nothing else (the run's ids, origin and fired are indexes of it).
    options, ranked, catalog = [], [], {card.id: card for card in kb.catalog}
    for fact in engine.facts.values():   # (in the order they were declared)
        if isinstance(fact, Requirement):
            run.req = run.plain(fact)
        elif isinstance(fact, Card):
            run.cards[fact["id"]] = requirement.own_card(kb, run.profile) if fact["id"] == "own" else catalog[fact["id"]]
        elif isinstance(fact, Candidate):
            run.candidates.setdefault(fact["gpu"], []).append(run.plain(fact))
        elif isinstance(fact, Option):
            options.append(run.plain(fact))
        elif isinstance(fact, Ranking):
            ranked = list(fact["order"])
        elif isinstance(fact, Pick):
            run.pick = run.plain(fact)
    run.options = {option["gpu"]: option for option in sorted(options, key=lambda o: run.order(o["gpu"]))}
    run.ranking = ranked
    return run
