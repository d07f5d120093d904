"""The engine's shortcut in building experta's Rete network changes nothing."""

from __future__ import annotations

import json
import re

import pytest

from expert import advise, engine
from expert.api import knowledge_base
from test_embedding import mixed_profiles


def answers(profiles: list[dict]) -> list[str]:
    return [json.dumps(advise(**p).to_dict(), sort_keys=True) for p in profiles]


def test_experta_own_network_gives_the_same_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    profiles = mixed_profiles(120, seed=11)
    ours = answers(profiles)
    cls = engine.engine_class(knowledge_base())
    plain = type("PlainRete", (cls,), {"__matcher__": engine.ReteMatcher})()
    assert type(plain.matcher) is engine.ReteMatcher
    monkeypatch.setitem(engine._ENGINES.by_kb, id(cls), plain)
    assert answers(profiles) == ours


def test_rules_in_normal_form_are_copied_not_rewritten() -> None:
    cls = engine.engine_class(knowledge_base())
    instance = cls()
    rules = instance.get_rules()
    prepared = engine._Matcher.prepare_ruleset(instance)
    assert {(r._wrapped, r.salience, tuple(r)) for r in prepared} == {(r._wrapped, r.salience, tuple(r)) for r in rules}
    assert not {id(r) for r in prepared} & {id(r) for r in rules}  # shared class objects stay untouched
    by_action = {r._wrapped: r for r in prepared}
    experta_way = {r._wrapped: r for r in engine.ReteMatcher.prepare_ruleset(instance)}
    assert by_action.keys() == experta_way.keys()
    for action, rule in by_action.items():
        assert tuple(rule) == tuple(experta_way[action]) and rule.salience == experta_way[action].salience


def test_a_rule_not_in_normal_form_goes_through_experta() -> None:
    Fact, TEST, OR = engine.Fact, engine.TEST, engine.experta.OR
    assert engine._in_normal_form(engine.Rule(Fact(a=1), TEST(lambda: True)))
    assert not engine._in_normal_form(engine.Rule(OR(Fact(a=1), Fact(a=2))))
    assert not engine._in_normal_form(engine.Rule(Fact(a=engine.experta.L(1) | engine.experta.L(2))))


def shape(node: object) -> list:
    """The network below ``node`` as nested (node type, check or rule) pairs, in a canonical order."""
    children = [shape(child.node) for child in node.children]
    what = getattr(node, "matcher", None)
    label = type(node).__name__
    if hasattr(node, "rule"):
        label += ":" + node.rule._wrapped.__name__
    elif what is not None and type(what).__name__ == "WhereCheck":
        label += ":" + what.test.__name__ + repr(sorted(what.parameters))
    elif what is not None:
        label += ":" + re.sub(r"__pattern_\d+__", "__pattern__", repr(what))  # experta names it by id()
    return [label, sorted(children, key=repr)]


def test_the_network_is_the_one_experta_builds() -> None:
    cls = engine.engine_class(knowledge_base())
    ours = cls()
    theirs = type("PlainRete", (cls,), {"__matcher__": engine.ReteMatcher})()
    assert type(ours.matcher) is engine._Matcher
    assert shape(ours.matcher.root_node) == shape(theirs.matcher.root_node)
