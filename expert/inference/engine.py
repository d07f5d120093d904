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

Configuration works as R1/XCON did: a rule proposes a configuration for
every card (``first-step``), then the rules of ``rules/recipes.toml``'s ladder
climb it one step at a time — each matches the candidate whose ``next_step``
it is and that does not fit — until one fits; then scale out for a deadline,
and settle the card's option. Ranking: the rules that collect (``market``,
``beaten``, ``order``) fire once, after every fact they read is declared
(their stage), and read those their ``when`` holds for in the order of their
``by`` keys — a sweep (:mod:`.sweep`), not a join of every pair; the first of
the order is the pick.

What a rule does is its action (rules.toml ``then``, :mod:`.actions`): the
engine hands it the facts its patterns matched and declares what it returns.
Rules fire stage by stage, in the order rules.toml lists the stages, and
within a stage in the file's order (:func:`.patterns.salience`), so no hash
seed moves the order of firing.

Provenance comes from the activations themselves: a rule's action receives
the facts its patterns matched, and every fact it declares is recorded with
the rule that declared it. The engine class is built once per set of rules
and each thread keeps its own instance (a shared experta engine gives wrong
answers under threads).

The facts' classes are in :mod:`.facts`, the actions in :mod:`.actions`, each
rule's joins, patterns, test and salience in :mod:`.patterns`, the record of
a run in :mod:`.run`; this module holds the engine class and ``infer()``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._vendor import experta
from ..knowledge import COLLECTS, KnowledgeBase, RuleDef
from . import requirement, sizing
from .actions import ACTIONS, Action, Context
from .facts import (
    FACT_CLASSES,
    INPUT,
    VERDICTS,
    Candidate,
    Card,
    Option,
    Pick,
    Profile,
    Ranking,
    Requirement,
    Verdict,
)
from .patterns import carrier, joined, patterns, salience
from .run import Firing, Run
from .sweep import Keyed

KnowledgeEngine, Rule = experta.KnowledgeEngine, experta.Rule

# The facts about one card (their `gpu`, a card's `id`, says which).
_ABOUT_A_CARD = ("candidate", "trial", "option", "card", "standing", "weight", "beaten")


@dataclass(frozen=True)
class _Reading:
    """What a rule reads whatever facts it matches, worked out once for its
    engine class: the fields its condition, ``by`` keys and message name, and
    which card a fact about one is about (by namespace); and whether it
    joins the card a configuration carries."""

    uses: dict[str, frozenset[str]]
    joins_card: bool


def _reading(rule: RuleDef) -> _Reading:
    uses: dict[str, set[str]] = {}
    for namespace, name in rule.condition.fields | {read for key in rule.by for read in key.fields} | rule.placeholders:
        uses.setdefault(namespace, set()).add(name)
    for namespace in _ABOUT_A_CARD:   # which card the fact is about
        uses.setdefault(namespace, set()).add("id" if namespace == "card" else "gpu")
    return _Reading({ns: frozenset(names) for ns, names in uses.items()}, "card" in joined(rule))


class _Engine(KnowledgeEngine):  # type: ignore[misc,valid-type]
    consultation: Run   # the run being answered (each thread has its own engine)
    card_fields: tuple[str, ...] = ("id",)   # the card fields a configuration carries (engine_class)
    readings: ClassVar[dict[int, _Reading]] = {}   # what each rule reads, by its index (engine_class)

    def fire(self, rule: RuleDef, bound: dict[str, Any]) -> None:
        """Take the rule's action on the facts an activation bound, declare
        what it declares (or, for a verdict or a note, record the
        conclusion), and record the firing with what it matched and read."""
        facts, env, gpu = self.bound_facts(rule, bound)
        reads: dict[str, set[str]] = {ns: set() for ns in env}
        seen = {ns: sizing.Reads(values, reads[ns]) for ns, values in env.items()}
        action = ACTIONS[rule.then] if rule.then else None
        collected = self.collect(rule, env) if rule.then in COLLECTS else []
        declared = action(Context(rule, self.consultation, self.facts, seen, collected)) if action else []
        if rule.then in COLLECTS:
            if not declared:
                return   # (it collected nothing to conclude from: as if it had not matched)
            facts[COLLECTS[str(rule.then)]] = [values for _, values in collected]   # what it read, in its order
            env.setdefault(COLLECTS[str(rule.then)], collected[0][1])            # (its message names the first)
        derived = []
        for namespace, values in declared:
            derived.append(self.derive(rule, action, namespace, values))
            if rule.then not in COLLECTS:   # (a rule that collects is about all the options it read, not one card)
                gpu = gpu or values.get("gpu") or (values.get("id") if namespace == "card" else None)
            env.setdefault("proposal" if namespace in ("candidate", "trial") else namespace, values)
        if not declared:
            derived.append(self.conclude(rule, gpu))
        self.consultation.firings.append(Firing(rule, gpu, self.matched(rule, facts, env, reads), derived, env))

    def bound_facts(self, rule: RuleDef, bound: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], str | None]:
        """The facts an activation bound, their values, and the card they are
        about; a configuration brings the card it carries."""
        run = self.consultation
        facts = {ns: bound[ns] for ns in rule.scope if ns in bound}
        env = {ns: run.plain(fact) for ns, fact in facts.items()}
        held_by = carrier(tuple(facts))
        if held_by and self.readings[rule.index].joins_card and "card" not in facts:  # the card its configuration carries
            facts["card"] = self.facts[run.card_ids[env[held_by]["gpu"]]]
            env["card"] = run.plain(facts["card"])
        return facts, env, env[held_by]["gpu"] if held_by else None

    def derive(self, rule: RuleDef, action: Action | None, namespace: str, values: dict[str, Any]) -> dict[str, Any]:
        """Declare one fact an action declared, and index it. A configuration
        carries the fields of its card the rules read, a trial its kind."""
        run = self.consultation
        if namespace in ("candidate", "trial"):
            card_fact = run.plain(self.facts[run.card_ids[values["gpu"]]])
            values["card"] = {name: card_fact[name] for name in self.card_fields}
            if namespace == "trial":
                values["trial_kind"] = action.trial if action else None
        fact = self.declare(FACT_CLASSES[namespace](**values))
        if fact is not None:
            run.plains[fact["__factid__"]] = values   # (what the fact was made of: read without thawing it)
            self.record(("card", values["id"]) if namespace == "card" else (namespace, values.get("gpu")), fact, rule)
        shown = dict(values)   # (what the trace shows: without what a configuration carries)
        for key in sizing.CARRIED.intersection(shown):
            del shown[key]
        return {"fact": namespace, "values": shown}

    def conclude(self, rule: RuleDef, gpu: str | None) -> dict[str, Any]:
        """A rule that declares nothing concludes: a verdict on the card's
        option (the ranking consumes it from working memory), or a note
        (advice, a warning: no rule consumes them, so they are recorded only)."""
        run = self.consultation
        run.conclusions.append((rule, gpu))
        run.fired.add((rule.id, gpu))
        if rule.kind in VERDICTS:
            verdict = {"rule": rule.id, "kind": rule.kind, "gpu": gpu}
            self.rule_on(rule, gpu, verdict)
            return {"fact": "verdict", "values": verdict}
        return {"fact": rule.kind, "values": {"gpu": gpu} if gpu else {}}

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
        run, namespace = self.consultation, COLLECTS[str(rule.then)]
        cls = FACT_CLASSES[namespace]
        keyed = []
        for fact in self.facts.values():
            if isinstance(fact, cls):
                item = {**env, namespace: run.plain(fact)}
                if rule.condition(item):
                    keyed.append(([key(item) for key in rule.by], item[namespace]))
        keyed.sort(key=lambda pair: pair[0])
        return keyed

    def matched(self, rule: RuleDef, facts: dict[str, Any], env: dict[str, Any],
                reads: dict[str, set[str]]) -> list[dict[str, Any]]:
        """The facts the activation matched, each with the fields the rule's
        condition, message and helper read, and where the fact came from."""
        uses = self.readings[rule.index].uses
        matched: list[dict[str, Any]] = []
        for namespace in ("profile", "req", "card", "candidate", "trial", "option", "standing", "weight", "ranking",
                          "market", "beaten", "pick"):
            if namespace not in facts:
                continue
            read = uses.get(namespace, frozenset()).union(reads.get(namespace, ()))
            if not read:
                continue
            names = sorted(read - sizing.CARRIED)
            if isinstance(facts[namespace], list):   # the facts a rule that collects read
                matched.extend({"fact": namespace, "from": self.consultation.origin.get(self.consultation.ids[
                    namespace, values["gpu"]], INPUT), "values": {name: values.get(name) for name in names}}
                               for values in facts[namespace])
                continue
            fact = facts[namespace]
            origin = INPUT if namespace == "profile" else self.consultation.origin.get(
                fact.get("__factid__"), "catalog" if namespace == "card" else INPUT)
            values = env[namespace]
            matched.append({"fact": namespace, "from": origin, "values": {name: values.get(name) for name in names}})
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
        attrs: dict[str, Any] = {f"rule_{rule.index}": Rule(*patterns(rule), salience=salience(rule, len(kb.rules)))(
            _action(rule)) for rule in kb.rules}
        # A configuration carries the fields of its card that the rules' conditions read.
        attrs["readings"] = {rule.index: _reading(rule) for rule in kb.rules}
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
