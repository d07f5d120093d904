"""The knowledge base's rules compiled into experta patterns: the facts each
rule joins (those its condition, message and helper read, in an order that
starts from the fact it is about), the patterns that bind them, and the
test its ``when`` becomes. :mod:`.engine` builds the engine class from them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .._vendor import experta
from ..knowledge import COLLECTS, LARGER_BATCH, SCALE_OUT, SPEED_UP, RuleDef
from ..knowledge.records import PRECISION_KEPT, PRECISION_UP
from .facts import FACT_CLASSES, SCALE_TRIAL, SPEED_TRIAL, Standing, Verdict, stage

AS, MATCH, TEST = experta.AS, experta.MATCH, experta.TEST

# The fact a stage's rules match none of, as well as their patterns: an option
# stands when no reject verdict is on it; no option stands when there is none.
_ABSENT = {"standing": lambda: Verdict(kind="reject", gpu=MATCH.gpu),
           "no-pick": lambda: Standing()}
# The facts each stage's helper reads, besides what the rule's condition and
# message name: a rule joins exactly the facts it reasons about.
HELPER_NEEDS = {"requirement": ("profile",), "own-card": ("profile",), "propose": ("profile", "req", "card"),
                "configure": ("profile", "req", "candidate", "card"), "trial": ("profile", "req", "trial", "card"),
                SCALE_TRIAL: ("profile", "req", "trial", "card"), SPEED_TRIAL: ("profile", "req", "trial", "card"), SCALE_OUT: ("profile", "req", "candidate", "card"),
                SPEED_UP: ("profile", "req", "candidate", "card"), PRECISION_UP: ("profile", "req", "candidate", "card"),
                PRECISION_KEPT: ("profile", "req", "candidate", "card"),
                LARGER_BATCH: ("profile", "req", "candidate", "card"),
                "option": ("profile", "candidate"), "standing": ("option", "profile"),
                "market": ("profile",), "beaten": ("profile",), "rank": ("standing", "profile"),
                "order": ("profile",), "pick": ("ranking", "option"), "no-pick": ("profile",)}
# The fact a rule is about, by its scope.
_SUBJECTS = ("candidate", "trial", "option", "market", "pick", "card", "req", "profile")


def joined(rule: RuleDef) -> tuple[str, ...]:
    """The namespaces a rule's patterns bind, in a fixed order. A rule that
    collects binds none of the facts it collects: its action reads them."""
    named = {ns for ns, _ in rule.condition.fields} | {ns for ns, _ in rule.placeholders}
    named |= {ns for key in rule.by for ns, _ in key.fields}
    wanted = set(HELPER_NEEDS.get(stage(rule), ())) | (named & set(rule.scope))
    wanted.discard(COLLECTS.get(stage(rule), ""))
    if rule.kind in ("reject", "demote", "prefer"):  # a conclusion about one card's option
        wanted.add("option")
    if rule.kind in ("reject", "demote", "prefer", "advice", "warning"):
        # Rules of a kind join the same facts first (the requirement, the answers), so that the Rete
        # network joins each option, or the pick, with them once for all those rules, not once for each.
        wanted |= {"req", "profile"} & set(rule.scope)
    if not wanted:
        wanted.add(next(ns for ns in _SUBJECTS if ns in rule.scope))
    if "card" in wanted and not wanted & {"candidate", "trial", "option"} and stage(rule) != "propose":
        wanted.add("option")
    # The fact the rule is about comes first: a join then starts from the few
    # facts that can match it, not from every card.
    return tuple(ns for ns in _JOIN_ORDER if ns in wanted)


_JOIN_ORDER = ("candidate", "trial", "option", "standing", "weight", "ranking", "pick", "card", "market", "beaten",
               "req", "profile")


def patterns(rule: RuleDef) -> list[Any]:
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
        elif namespace == "ranking":   # the pick: the first of the order
            fact = cls(first_gpu=MATCH.gpu)
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
    if rule.condition.source != "true" and what not in COLLECTS:  # (a rule that collects tests each fact it reads)
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
