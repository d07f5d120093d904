"""The inference engine: the knowledge base's rules compiled into one experta
``KnowledgeEngine`` class, run by forward chaining.

Every rule of ``rules/rules.toml`` becomes an experta rule that matches the
most specific fact of its kind's scope (see ``_patterns``) and whose test is
its compiled ``when``. Saliences order the stages (derive the requirement, size the
options, rule out and rank, pick, then advise and warn); within a stage
results never depend on firing order, which changes with ``PYTHONHASHSEED``.

Provenance is recorded by the rules' own actions while experta runs: each
firing's matched facts (and where they came from) and what it declared.

The engine class is built once per knowledge base and each thread keeps its
own instance (a shared experta engine gives wrong answers under threads).
"""

from __future__ import annotations

import inspect
import threading
from dataclasses import field
from typing import Any, Callable

from . import calc
from ._experta import experta
from .kb import Card, KnowledgeBase, RuleDef
from .records import record

KnowledgeEngine, Fact, Rule, AS, TEST = (experta.KnowledgeEngine, experta.Fact, experta.Rule, experta.AS,
                                         experta.TEST)
ReteMatcher, ORFC = experta.matchers.ReteMatcher, experta.fieldconstraint.ORFC
WhereNode, ConflictSetNode = experta.matchers.rete.nodes.WhereNode, experta.matchers.rete.nodes.ConflictSetNode
WhereCheck = experta.matchers.rete.check.WhereCheck


class _Fact(Fact):  # type: ignore[misc,valid-type]
    """A fact compared by identity once declared.

    experta compares activations fact by fact, field by field, many times per
    consultation (most of its run time). A declared fact is one object with a
    unique ``__factid__`` for its whole life, so comparing ids is equivalent
    and far cheaper. Undeclared facts (the rules' patterns) keep experta's
    comparison; duplicate detection in ``declare()`` does not use ``==``.
    """

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        mine = dict.get(self, "__factid__")
        theirs = dict.get(other, "__factid__") if isinstance(other, dict) else None
        if mine is not None and theirs is not None:
            return mine == theirs and self.__class__ is other.__class__
        return bool(Fact.__eq__(self, other))

    __hash__ = Fact.__hash__


class _Rule(Rule):  # type: ignore[misc,valid-type]
    """An experta rule compared by identity.

    experta hashes and compares rules (their patterns, deeply) every time it
    orders the agenda. Each rule of the knowledge base is one object, built
    once with its engine class, so identity is equivalent and much cheaper.
    """

    __eq__ = object.__eq__
    __hash__ = object.__hash__


class Profile(_Fact):
    """The person's answers, after defaults."""


class Requirement(_Fact):
    """What the run needs."""


class Option(_Fact):
    """One card, sized for the run."""


class Pick(_Fact):
    """The best option, or found=False."""


FACT_CLASSES = {"profile": Profile, "req": Requirement, "option": Option, "pick": Pick}
SALIENCE = {"requirement": 100, "own-option": 90, "catalog-options": 90, "reject": 60, "demote": 55,
            "prefer": 50, "pick": 30, "advice": 20, "warning": 10}
# What each helper reads, shown as its matched facts in the trace.
HELPER_USES = {
    "requirement": {"profile": ("model_size_b", "method", "dataset_examples")},
    "own-option": {"profile": ("vram_gb", "deadline_h"), "req": ("vram_gb", "ref_hours")},
    "catalog-options": {"profile": ("deadline_h", "interruptible"), "req": ("vram_gb", "ref_hours")},
    "pick": {"profile": ("budget", "deadline_h")},
}
INPUT = "input"


def salience(rule: RuleDef) -> int:
    return SALIENCE[rule.derive if rule.kind == "derive" else rule.kind]  # type: ignore[index]


@record(frozen=False)
class Firing:
    """One fired activation, as recorded while the engine ran."""

    rule: RuleDef
    gpu: str | None
    matched: list[dict[str, Any]]
    derived: list[dict[str, Any]]
    env: dict[str, Any]


@record(frozen=False)
class Run:
    """The working record of one consultation."""

    kb: KnowledgeBase
    profile: dict[str, Any]
    basis: str = "guide"
    req: dict[str, Any] | None = None
    req_fact: dict[str, Any] | None = None
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    cards: dict[str, Card] = field(default_factory=dict)
    origin: dict[tuple[str, str | None], str] = field(default_factory=dict)
    conclusions: list[tuple[RuleDef, str | None]] = field(default_factory=list)
    ranking: list[str] = field(default_factory=list)
    pick: dict[str, Any] | None = None
    firings: list[Firing] = field(default_factory=list)

    def order(self, gpu: str | None) -> int:
        if gpu is None or gpu == "own":
            return -1
        return next(i for i, card in enumerate(self.kb.catalog) if card.id == gpu)

    def add_option(self, option: dict[str, Any]) -> None:
        # Two helpers of equal salience add options in an order that varies
        # with PYTHONHASHSEED: keep them in canonical order (own card, then catalog).
        self.options[option["gpu"]] = option
        self.options = dict(sorted(self.options.items(), key=lambda item: self.order(item[0])))

    def env(self, option: Any = None, pick: Any = None) -> dict[str, Any]:
        """The facts a rule sees: the one profile and requirement of this run,
        and the option (with its card) or pick it matched."""
        env: dict[str, Any] = {"profile": self.profile}
        if self.req_fact is not None:
            env["req"] = self.req_fact
        if option is not None:
            env["option"] = option
            env["card"] = self.cards[option["gpu"]].fact()
        if pick is not None:
            env["pick"] = pick
        return env

    def sorted_firings(self) -> list[Firing]:
        return sorted(self.firings, key=lambda f: (-salience(f.rule), f.rule.index, self.order(f.gpu)))


def _plain(fact: Any) -> dict[str, Any]:
    return {k: v for k, v in fact.items() if isinstance(k, str) and not k.startswith("__")}


def _in_normal_form(rule: Any) -> bool:
    """True for the rules this module builds: one fact pattern with no
    ``|`` constraints, then tests. experta's rewriting to disjunctive normal
    form leaves such a rule as it is."""
    pattern, *rest = rule
    return (isinstance(pattern, Fact) and all(isinstance(ce, TEST) for ce in rest)
            and not any(isinstance(value, ORFC) for value in pattern.values()))


class _Matcher(ReteMatcher):  # type: ignore[misc,valid-type]
    """experta's Rete matcher, with shortcuts for rules in normal form (all of
    ours): building the network was most of the start-up of a process; and
    collecting the agenda's changes asks only the rules that have any.

    experta rewrites every rule to disjunctive normal form, which leaves ours
    as they are, and wires each one through generic dispatch; for a fact
    pattern followed by tests the network is a test node per test under the
    pattern's alpha node, then the rule's conflict-set node. Any other rule
    goes through experta's own code (tests/test_engine.py compares both).
    """

    @staticmethod
    def prepare_ruleset(engine: Any) -> set[Any]:
        rules = engine.get_rules()
        if not all(_in_normal_form(rule) for rule in rules):
            return ReteMatcher.prepare_ruleset(engine)
        # Copies, as experta's rewriting makes: the class's rule objects are
        # shared by every engine of the class (and every thread).
        return {rule.new_conditions(*rule) for rule in rules}

    def changes(self, adding: Any = None, deleting: Any = None) -> tuple[list[Any], list[Any]]:
        # As experta's, but asks only the conflict-set nodes that have
        # something new (asking empties them); it runs after every firing.
        for fact in deleting or ():
            self.root_node.remove(fact)
        for fact in adding or ():
            self.root_node.add(fact)
        added: list[Any] = []
        removed: list[Any] = []
        for node in self._get_conflict_set_nodes():
            if node.added or node.removed:
                new, gone = node.get_activations()
                added.extend(new)
                removed.extend(gone)
        return added, removed

    @staticmethod
    def build_beta_part(ruleset: set[Any], alpha_terminals: dict[Any, Any]) -> None:
        if not all(_in_normal_form(rule) for rule in ruleset):
            return ReteMatcher.build_beta_part(ruleset, alpha_terminals)
        for rule in ruleset:
            node = alpha_terminals[rule[0]]
            for test in rule[1:]:
                where = WhereNode(WhereCheck(test[0]))
                node.add_child(where, where.activate)
                node = where
            conflict_set = ConflictSetNode(rule)
            node.add_child(conflict_set, conflict_set.activate)
        return None


class _Engine(KnowledgeEngine):  # type: ignore[misc,valid-type]
    __matcher__ = _Matcher

    def fire(self, rule: RuleDef, bound: dict[str, Any]) -> None:
        run = _CURRENT.run
        env = run.env(*(_plain(bound[name]) if name in bound else None for name in ("option", "pick")))
        gpu = env["option"]["gpu"] if "option" in env else None
        derived: list[dict[str, Any]] = []
        if rule.kind == "derive":
            for namespace, values in HELPERS[rule.derive](run, env):  # type: ignore[index]
                key = values.get("gpu") if namespace == "option" else None
                run.origin[(namespace, key)] = rule.id
                self.declare(FACT_CLASSES[namespace](**values))
                derived.append({"fact": namespace, "values": values})
                env.setdefault(namespace, values)
        else:
            # No rule matches on these conclusions, so they are recorded, not
            # declared: each declared fact costs a pass through the network.
            run.conclusions.append((rule, gpu))
            derived.append({"fact": rule.kind, "values": {"gpu": gpu} if gpu else {}})
        run.firings.append(Firing(rule, gpu, self._matched(rule, env), derived, env))

    def _matched(self, rule: RuleDef, env: dict[str, Any]) -> list[dict[str, Any]]:
        uses: dict[str, set[str]] = {}
        for namespace, name in rule.condition.fields:
            uses.setdefault(namespace, set()).add(name)
        for namespace, names in HELPER_USES.get(rule.derive or "", {}).items():
            uses.setdefault(namespace, set()).update(names)
        matched = []
        run = _CURRENT.run
        for namespace in ("profile", "req", "option", "card", "pick"):
            if namespace not in uses or namespace not in env:
                continue
            values = env[namespace]
            key = values.get("gpu") if namespace == "option" else None
            origin = INPUT if namespace == "profile" else (
                "catalog" if namespace == "card" else run.origin.get((namespace, key), INPUT))
            matched.append({"fact": namespace, "from": origin,
                            "values": {name: values.get(name) for name in sorted(uses[namespace])}})
        return matched


# --- Helpers the derive rules call --------------------------------------------

Declared = list[tuple[str, dict[str, Any]]]


def _requirement(run: Run, env: dict[str, Any]) -> Declared:
    run.req = calc.requirement(run.kb, env["profile"], run.basis)
    run.req_fact = {k: v for k, v in run.req.items() if k != "anchors"}
    return [("req", run.req_fact)]


def _own_option(run: Run, env: dict[str, Any]) -> Declared:
    if env["profile"]["vram_gb"] is None:  # a knowledge base whose rule forgot to require it
        return []
    card = calc.own_card(run.kb, env["profile"])
    run.cards[card.id] = card
    option = calc.configure(run.kb, env["profile"], env["req"], card, "own")
    run.add_option(option)
    return [("option", option)]


def _catalog_options(run: Run, env: dict[str, Any]) -> Declared:
    declared: Declared = []
    for card in run.kb.catalog:
        run.cards[card.id] = card
        option = calc.configure(run.kb, env["profile"], env["req"], card, "cloud")
        run.add_option(option)
        declared.append(("option", option))
    return declared


def effective(conclusions: list[tuple[RuleDef, str | None]]) -> list[tuple[RuleDef, str | None]]:
    """The conclusions that stand: a rule's conclusion is dropped when a rule
    that ``overrides`` it fired on the same card (or both on none)."""
    fired = {(rule.id, gpu) for rule, gpu in conclusions}
    overridden = {(other, gpu) for rule, gpu in conclusions for other in rule.overrides}
    return [(rule, gpu) for rule, gpu in conclusions if (rule.id, gpu) not in overridden or (rule.id, gpu) not in fired]


def _pick(run: Run, env: dict[str, Any]) -> Declared:
    conclusions = effective(run.conclusions)
    rejected = {gpu for rule, gpu in conclusions if rule.kind == "reject"}
    demoted = {gpu for rule, gpu in conclusions if rule.kind == "demote"}
    factors: dict[str, list[float]] = {}
    for rule, gpu in conclusions:
        if rule.kind == "prefer" and gpu is not None:
            factors.setdefault(gpu, []).append(rule.factor)  # type: ignore[arg-type]
    # Ties go to the option that needs fewer cards to hold the model, then to
    # catalog order.
    scored = [(gpu in demoted, calc.score(run.kb, env["profile"], option, sorted(factors.get(gpu, []))),
               option["min_count"], run.order(gpu), gpu) for gpu, option in run.options.items() if gpu not in rejected]
    run.ranking = [gpu for *_, gpu in sorted(scored)]
    if run.ranking:
        run.pick = {**run.options[run.ranking[0]], "found": True}
    else:
        run.pick = {name: None for name in ("gpu", "count", "hours")} | {"found": False}
    return [("pick", run.pick)]


HELPERS: dict[str, Callable[[Run, dict[str, Any]], Declared]] = {
    "requirement": _requirement,
    "own-option": _own_option,
    "catalog-options": _catalog_options,
    "pick": _pick,
}


# --- Compiling the knowledge base into an engine class ---------------------------

def _patterns(rule: RuleDef) -> list[Any]:
    # A rule matches the most specific fact of its scope. A consultation has
    # exactly one Profile, declared first, and one Requirement, declared
    # before any Option or Pick; joining them into every rule would only make
    # experta build and compare tokens that always match (it was half of the
    # run time), so the rule's test and action read them from the run's
    # record of working memory instead.
    scope = rule.scope
    if "option" in scope:
        patterns = [AS.option << Option()]
    elif "pick" in scope:
        patterns = [AS.pick << Pick()]
    elif "req" in scope:
        patterns = [AS.req << Requirement()]
    else:
        patterns = [AS.profile << Profile()]
    if rule.condition.source != "true":
        patterns.append(TEST(_test(rule)))
    return patterns


_SIGNATURES: dict[Any, inspect.Signature] = {}


def _signed(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with its signature computed once per code object.

    experta asks ``inspect.signature`` of a rule's action each time it copies
    the rule while building the Rete network (about seven times a rule), and
    of each test once; the closures of one ``def`` share a signature.
    """
    code = function.__code__
    if code not in _SIGNATURES:
        _SIGNATURES[code] = inspect.signature(function)
    function.__signature__ = _SIGNATURES[code]  # type: ignore[attr-defined]
    return function


def _test(rule: RuleDef) -> Callable[..., bool]:
    # experta passes bindings by parameter name, so each scope gets a function
    # with exactly the name of the fact it matches.
    holds = rule.condition
    scope = rule.scope
    if "option" in scope:
        def test_option(option: Any) -> bool:
            return holds(_CURRENT.run.env(option=option))
        return _signed(test_option)
    if "pick" in scope:
        def test_pick(pick: Any) -> bool:
            return holds(_CURRENT.run.env(pick=pick))
        return _signed(test_pick)
    if "req" in scope:
        def test_req(req: Any) -> bool:
            return holds({"profile": _CURRENT.run.profile, "req": req})
        return _signed(test_req)

    def test_profile(profile: Any) -> bool:
        return holds({"profile": profile})
    return _signed(test_profile)


class _Current(threading.local):
    run: Run


_CURRENT = _Current()


def _action(rule: RuleDef) -> Callable[..., None]:
    def action(self: _Engine, **bound: Any) -> None:
        self.fire(rule, bound)

    action.__name__ = rule.id
    return _signed(action)


_CLASSES: dict[int, tuple[Any, type]] = {}
_CLASSES_LOCK = threading.Lock()


def engine_class(kb: KnowledgeBase) -> type:
    """The engine class of ``kb``'s rules, built once (rebuilding leaks in
    experta). Catalogs are facts, not rules: knowledge bases that differ only
    in their cards share one class."""
    with _CLASSES_LOCK:
        entry = _CLASSES.get(id(kb.rules))
        if entry is None or entry[0] is not kb.rules:
            attrs = {f"rule_{rule.index}": _Rule(*_patterns(rule), salience=salience(rule))(_action(rule))
                     for rule in kb.rules}
            entry = (kb.rules, type("ExpertEngine", (_Engine,), attrs))
            _CLASSES[id(kb.rules)] = entry
        return entry[1]


class _Engines(threading.local):
    def __init__(self) -> None:
        self.by_kb: dict[int, Any] = {}


_ENGINES = _Engines()


def infer(kb: KnowledgeBase, profile: dict[str, Any], basis: str = "guide") -> Run:
    """Run one consultation through this thread's engine for ``kb``; ``basis``
    says whether the guide's figures or the first-principles estimate set the
    requirement."""
    cls = engine_class(kb)
    engine = _ENGINES.by_kb.get(id(cls))
    if engine is None:
        engine = cls()
        _ENGINES.by_kb[id(cls)] = engine
    run = Run(kb, dict(profile), basis)
    _CURRENT.run = run  # this thread's run: the rules' tests and actions record into it
    engine.reset()
    engine.declare(Profile(**profile))
    engine.run()
    return run
