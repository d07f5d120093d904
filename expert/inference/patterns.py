"""The knowledge base's rules compiled into experta patterns: the facts each
rule joins (those its condition, message and action read, in an order that
starts from the fact it is about), the patterns that bind them, the test its
``when`` becomes, and its salience (from its stage's place in rules.toml and
its own). :mod:`.engine` builds the engine class from them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .._vendor import experta
from ..knowledge import COLLECTS, RuleDef
from .actions import ACTIONS
from .facts import FACT_CLASSES

AS, MATCH, TEST = experta.AS, experta.MATCH, experta.TEST

# The fact a rule is about, by its scope.
_SUBJECTS = ("candidate", "trial", "option", "market", "pick", "card", "req", "profile")


def joined(rule: RuleDef) -> tuple[str, ...]:
    """The namespaces a rule's patterns bind, in a fixed order. A rule that
    collects binds none of the facts it collects: its action reads them."""
    named = {ns for ns, _ in rule.condition.fields} | {ns for ns, _ in rule.placeholders}
    named |= {ns for key in rule.by for ns, _ in key.fields}
    action = ACTIONS[rule.then] if rule.then else None
    wanted = set(action.reads if action else ()) | (named & set(rule.scope))
    wanted.discard(COLLECTS.get(rule.then or "", ""))
    if rule.kind in ("reject", "demote", "prefer"):  # a conclusion about one card's option
        wanted.add("option")
    if rule.kind in ("reject", "demote", "prefer", "advice", "warning"):
        # Rules of a kind join the same facts first (the requirement, the answers), so that the Rete
        # network joins each option, or the pick, with them once for all those rules, not once for each.
        wanted |= {"req", "profile"} & set(rule.scope)
    if not wanted:
        wanted.add(next(ns for ns in _SUBJECTS if ns in rule.scope))
    if "card" in wanted and not wanted & {"candidate", "trial", "option"} and not (action and "card" in action.reads):
        wanted.add("option")
    # The fact the rule is about comes first: a join then starts from the few
    # facts that can match it, not from every card.
    return tuple(ns for ns in _JOIN_ORDER if ns in wanted)


_JOIN_ORDER = ("candidate", "trial", "option", "standing", "weight", "ranking", "pick", "card", "market", "beaten",
               "req", "profile")


def patterns(rule: RuleDef) -> list[Any]:
    """The facts a rule joins: those its condition, message and helper read.
    A candidate or option is joined with the card of the same ``gpu``; a
    rule whose action takes the next step matches the candidate whose next
    step it is; a rule of a stage that settles trials, the trials of its kind."""
    action = ACTIONS[rule.then] if rule.then else None
    names = bound(rule)
    patterns = []
    for namespace in names:
        cls = FACT_CLASSES[namespace]
        if namespace == "candidate":
            fields = {"next_step": rule.step} if action and action.next_step else {}
            fact = cls(gpu=MATCH.gpu, **fields)
        elif namespace == "trial":
            fact = cls(gpu=MATCH.gpu, trial_kind=rule.trials)
        elif namespace == "ranking":   # the pick: the first of the order
            fact = cls(first_gpu=MATCH.gpu)
        elif namespace in ("standing", "weight", "beaten"):
            fact = cls(gpu=MATCH.gpu)
        elif namespace == "option":
            # Ranking an option that does not fit would only add noise: prefer
            # and demote rules see the options that fit.
            fact = cls(gpu=MATCH.gpu, fits=True) if rule.kind in ("prefer", "demote") else cls(gpu=MATCH.gpu)
        else:
            fact = cls()
        patterns.append(getattr(AS, namespace) << fact)
    if action and action.unless:   # the fact its activations may not be matched with
        patterns.append(experta.NOT(action.unless()))
    if rule.condition.source != "true" and rule.then not in COLLECTS:  # (a rule that collects tests each fact it reads)
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
    holds = rule.condition.evaluate
    with_card = carrier(names) if "card" in joined(rule) and "card" not in names else None

    def test(**facts: Any) -> bool:
        if with_card:
            facts["card"] = facts[with_card]["card"]
        return bool(holds(facts))

    test.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in names])
    test.__name__ = f"test_{rule.id.replace('-', '_')}"
    return test


def salience(rule: RuleDef, rules: int) -> int:
    """The rule's salience among ``rules`` rules: every rule of an earlier
    stage fires first, and within a stage the rule earlier in the file, so
    the order of firing never depends on a hash seed. (experta fires the
    activation of the highest salience first.)"""
    return -(rule.rank * rules + rule.index)
