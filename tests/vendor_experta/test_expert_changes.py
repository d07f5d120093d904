"""expert's changes to experta 1.9.4 (expert/_vendor/README.md, items 1-23),
each shown by a test of its own where the release's tests (beside this file)
do not already show it. This file is expert's, not experta's: the README's
table maps each change to the tests, here and in the release's files, that
cover it.

The matching changes (items 12, 15, 16, 18, 20) are also run against the
release's way, by switching the change off in the test (the join memories
kept as lists, a join made for every rule): the same activations either
way, and less work counted (pairs tried, nodes made) with the change."""

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from expert._vendor import experta
from expert._vendor.experta import AS, DefFacts, Fact, KnowledgeEngine, L, MATCH, NOT, Rule, watchers
from expert._vendor.experta.activation import Activation
from expert._vendor.experta.factlist import FactList
from expert._vendor.experta.matchers.rete import nodes, utils
from expert._vendor.experta.matchers.rete.check import FeatureCheck, SameContextCheck, TypeCheck
from expert._vendor.experta.matchers.rete.nodes import (BusNode, ConflictSetNode, FeatureTesterNode, NotNode,
                                                       OrdinaryMatchNode)
from expert._vendor.experta.matchers.rete.token import Token
from expert._vendor.experta.utils import freeze, frozendict, frozenlist, unfreeze

VENDOR = Path(experta.__file__).parent


class Recorder:
    """A node child that keeps what it is sent."""

    def __init__(self):
        self.added = []
        self.children = []

    def activate(self, token):
        self.added.append(token)


def network(engine):
    """Every node of an engine's Rete network, each once."""
    seen, todo = {}, [engine.matcher.root_node]
    while todo:
        node = todo.pop()
        if id(node) not in seen:
            seen[id(node)] = node
            todo.extend(child.node for child in node.children)
    return list(seen.values())


def pairs_tried(engine):
    return sum(getattr(node, "compared", 0) for node in network(engine))


def activations(engine):
    """The engine's agenda as comparable data: rule, facts and the names
    bound (less experta's own names for its patterns, made of ids)."""
    return sorted((act.rule.__name__, sorted(map(repr, act.facts)),
                   sorted(repr(item) for item in act.context.items() if not item[0].startswith("__pattern_")))
                  for act in engine.agenda.activations)


# Items 1-6: the package imports on its own -----------------------------------

def test_the_copy_imports_alone_and_leaves_the_host_as_it_was():
    # Items 1-5: relative imports (no top-level `experta`), its own frozendict
    # (no `frozendict` package), `schema` only for a Field, no basicConfig on
    # the root logger, no import error hidden behind a missing attribute.
    code = ("import logging, sys; root = logging.getLogger(); before = list(root.handlers)\n"
            "import expert._vendor.experta as e\n"
            "print([m for m in ('experta', 'frozendict', 'schema') if m in sys.modules],"
            " root.handlers == before, logging.getLogger('expert._vendor.experta.watchers').level, e.KnowledgeEngine.__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "True", str(logging.WARNING), "KnowledgeEngine"]


def test_the_licence_is_beside_the_code_and_its_tests():
    # Item 6: the release's LGPL-3.0 text, unchanged, with the code and with its tests.
    licence = (VENDOR / "LICENSE").read_text(encoding="utf-8")
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in licence and "Version 3" in licence
    assert (Path(__file__).parent / "LICENSE").read_text(encoding="utf-8") == licence


def test_its_own_frozendict_is_an_immutable_hashable_mapping():
    # Item 2: the class that replaces the frozendict==1.2 package.
    a, b = frozendict({"x": 1, "y": (2, 3)}), frozendict(y=(2, 3), x=1)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert dict(a) == {"x": 1, "y": (2, 3)} and repr(frozendict(x=1)) == "frozendict({'x': 1})"
    with pytest.raises(TypeError):
        a["x"] = 2  # type: ignore[index]
    frozen = freeze({"k": [1, {"n": {2}}]})
    assert isinstance(frozen, frozendict) and isinstance(frozen["k"], frozenlist)
    assert unfreeze(frozen) == {"k": [1, {"n": {2}}]}


# Item 7: Rule.new_conditions -----------------------------------------------

def test_a_rule_with_new_conditions_keeps_its_function_without_reading_it_again(monkeypatch):
    def act(self, a, b=1):
        return a + b

    rule = Rule(Fact(a=MATCH.a), salience=5)(act)
    read = []
    real = experta.rule.inspect.signature
    monkeypatch.setattr(experta.rule.inspect, "signature", lambda f: read.append(f) or real(f))
    copy = rule.new_conditions(Fact(a=MATCH.a, z=1))
    assert read == []   # the release read the signature again for every copy
    assert list(copy) == [Fact(a=MATCH.a, z=1)] and copy.salience == 5
    assert copy._wrapped is act and copy._wrapped_args is rule._wrapped_args and set(copy._wrapped_args) == {"self", "a", "b"}
    assert copy.__name__ == "act" and copy(None, a=2) == 3


# Item 8: the dispatcher defined once -----------------------------------------

def test_wiring_rules_registers_nothing_new():
    before = dict(utils._wire.registry)

    class Two(KnowledgeEngine):
        @Rule(Fact(a=MATCH.x), Fact(b=MATCH.x), NOT(Fact(c=MATCH.x)))
        def one(self):
            pass

        @Rule(Fact(a=1))
        def two(self):
            pass

    Two()
    Two()
    assert dict(utils._wire.registry) == before and len(before) == 9   # object + the 8 cases


# Item 9: ReteMatcher.changes ---------------------------------------------------

class ThreeRules(KnowledgeEngine):
    @Rule(Fact(kind="a"))
    def on_a(self):
        pass

    @Rule(Fact(kind="b"))
    def on_b(self):
        pass

    @Rule(Fact(kind="c"))
    def on_c(self):
        pass


def test_only_the_rules_a_change_reaches_are_asked_for_activations(monkeypatch):
    asked = []
    real = ConflictSetNode.get_activations
    monkeypatch.setattr(ConflictSetNode, "get_activations",
                        lambda self: asked.append(self.rule.__name__) or real(self))
    engine = ThreeRules()
    engine.reset()
    asked.clear()
    engine.declare(Fact(kind="b"))   # declare() asks the matcher for the changes
    assert asked == ["on_b"]         # the release asked all three rules' nodes
    assert [act.rule.__name__ for act in engine.agenda.activations] == ["on_b"]
    added, removed = engine.matcher.changes(adding=[Fact(kind="a")])
    assert asked == ["on_b", "on_a"] and [act.rule.__name__ for act in added] == ["on_a"] and removed == []


# Item 10: Token.copy -----------------------------------------------------------

def test_a_token_copy_is_equal_and_independent():
    token = Token.valid(Fact(a=1), {"x": 1})
    copy = token.copy()
    assert copy == token and type(copy) is Token and copy.data is not token.data
    copy.context["y"] = 2
    copy.data.add(Fact(b=2))
    assert token.context == {"x": 1} and token.data == {Fact(a=1)}


# Items 11 and 14: a fact's values ------------------------------------------------

def test_a_fact_keeps_scalars_as_they_are_and_freezes_the_rest():
    text, number = "x" * 3, 10 ** 30
    fact = Fact(text, n=number, f=1.5, b=True, none=None, items=[1, 2], table={"k": [3]}, kinds={4})
    assert fact[0] is text and fact["n"] is number and fact["f"] == 1.5 and fact["b"] is True
    assert fact["none"] is None
    assert isinstance(fact["items"], frozenlist) and isinstance(fact["table"], frozendict)
    assert isinstance(fact["kinds"], frozenset) and isinstance(fact["table"]["k"], frozenlist)
    fact["later"] = [5]
    assert fact["later"] == frozenlist([5])


def test_a_declared_fact_cannot_be_changed_by_update_or_item():
    engine = KnowledgeEngine()
    engine.reset()
    fact = engine.declare(Fact(a=1))
    with pytest.raises(RuntimeError):
        fact.update({"a": 2})
    with pytest.raises(RuntimeError):
        fact["a"] = 2
    assert fact["a"] == 1
    changed = engine.modify(fact, a=[2])
    assert changed["a"] == frozenlist([2]) and changed is not fact


# Item 12: BusNode sends a fact only to the tests of its type ---------------------

class Apple(Fact):
    pass


class Pear(Fact):
    pass


class GreenApple(Apple):
    pass


def test_the_bus_sends_a_fact_to_the_tests_of_its_type_and_every_other_child():
    bus = BusNode()
    apples, pears = FeatureTesterNode(TypeCheck(Apple)), FeatureTesterNode(TypeCheck(Pear))
    anything = FeatureTesterNode(FeatureCheck("colour", L("green")))
    tried = []
    for node in (apples, anything, pears):
        real = node._activate
        node._activate = lambda token, node=node, real=real: tried.append(node) or real(token)
        bus.add_child(node, node.activate)
    bus.add(Apple(colour="green"))
    assert tried == [apples, anything]            # the release: all three, pears failing its test
    tried.clear()
    bus.add(Pear())
    bus.add(GreenApple(colour="green"))           # a subclass: TypeCheck tests the exact type
    assert tried == [anything, pears, anything]
    later = FeatureTesterNode(TypeCheck(Pear))
    later_real = later._activate
    later._activate = lambda token: tried.append(later) or later_real(token)
    bus.add_child(later, later.activate)          # a child added afterwards is routed too
    tried.clear()
    bus.remove(Pear())
    assert tried == [anything, pears, later]


# Item 13: Activation.__eq__ -------------------------------------------------------

class Counted(Fact):
    compared = 0

    def __eq__(self, other):
        Counted.compared += 1
        return super().__eq__(other)

    __hash__ = Fact.__hash__


def test_activations_of_another_key_are_told_apart_without_comparing_facts():
    def act(self):
        pass

    rule = Rule(Fact())(act)
    first, second = Counted(a=1, __factid__=1), Counted(a=1, __factid__=2)
    one, same = Activation(rule, (first,), {"x": 1}), Activation(rule, (first,), {"x": 1})
    assert one == same and one != "not an activation"
    assert one != Activation(rule, (first,), {"x": 2})           # context differs
    assert one != Activation(Rule(Fact(), salience=1)(act), (first,), {"x": 1})   # rule and key differ
    Counted.compared = 0
    assert one != Activation(rule, (second,), {"x": 1})          # another fact id: another key
    assert Counted.compared == 0                                  # the release compared the facts first


# Item 15: hashed join memories -----------------------------------------------------

class CardVerdicts(KnowledgeEngine):
    """An option joined with the verdicts on the same card, and an option
    no veto names: the join of expert's rules about one card."""

    @Rule(AS.option << Fact(option=MATCH.card), Fact(verdict=MATCH.card, fits=True))
    def fits(self, option, card):
        pass

    @Rule(Fact(option=MATCH.card), NOT(Fact(veto=MATCH.card)))
    def kept(self, card):
        pass


def card_facts(cards):
    facts = [Fact(option=card) for card in range(cards)]
    facts += [Fact(verdict=card, fits=card % 3 == 0) for card in range(cards)]
    facts += [Fact(veto=card) for card in range(0, cards, 4)]
    return facts


def consult(engine_class, facts, retract_every=0):
    engine = engine_class()
    engine.reset()
    declared = [engine.declare(fact) for fact in facts]
    if retract_every:
        for fact in declared[::retract_every]:
            engine.retract(fact)
    return engine   # declare() and retract() update the agenda when the engine is not running


def release_and_ours(engine_class, facts, **how):
    """The engine run with hashed memories, and with the release's lists
    (every datum tried): ``_index`` never indexes a memory."""
    ours = consult(engine_class, facts, **how)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nodes, "_index", lambda *args: None)
        released = consult(engine_class, facts, **how)
    return released, ours


@pytest.mark.parametrize("retract_every", [0, 3])
def test_hashed_memories_give_the_activations_of_the_release_trying_linear_pairs(retract_every):
    counts = {}
    for cards in (20, 80):
        released, ours = release_and_ours(CardVerdicts, card_facts(cards), retract_every=retract_every)
        assert activations(ours) == activations(released) and activations(ours)
        counts[cards] = (pairs_tried(released), pairs_tried(ours))
    assert counts[80][0] >= 12 * counts[20][0]      # the release: the square of the cards
    assert counts[80][1] <= 4 * counts[20][1] + 8   # hashed: linear
    assert counts[80][1] * 20 < counts[80][0]


class Differing(KnowledgeEngine):
    """Joins the hashed memories cannot index: contexts that bind other
    names, a negated name."""

    @Rule(Fact(a=MATCH.x), Fact(b=MATCH.x))
    def same(self, x):
        pass

    @Rule(Fact(a=MATCH.x), Fact(c=~MATCH.x))
    def other(self, x):
        pass

    @Rule(Fact(a=MATCH.x), NOT(Fact(d=MATCH.x)))
    def none(self, x):
        pass


@pytest.mark.parametrize("facts", [
    pytest.param([Fact(a=1), Fact(b=1), Fact(c=2), Fact(d=3), Fact(a=2), Fact(b=2, e=3), Fact(d=1)], id="plain"),
    pytest.param([Fact(a=1), Fact(b=1), Fact(b=1, extra=1), Fact(c=1), Fact(c=5), Fact(a=5)], id="other-names"),
])
def test_joins_that_cannot_be_hashed_are_tried_as_the_release_tries_them(facts):
    released, ours = release_and_ours(Differing, facts)
    assert activations(ours) == activations(released) and activations(ours)
    for retracted in (0, 2):
        released, ours = release_and_ours(Differing, facts, retract_every=retracted)
        assert activations(ours) == activations(released)


def test_a_memory_stops_indexing_when_its_contexts_bind_other_names():
    left, right = nodes._Memory(), nodes._Memory()
    for side, context in ((left, {"x": 1}), (right, {"x": 1, "y": 2})):
        nodes._index(left, right, side, context)
        side.add(Token.valid(Fact(), context).to_info(), context)
    assert left.shared == right.shared == ("x",) and len(left.candidates({"x": 2})) == 0
    nodes._index(left, right, left, {"x": 3, "z": 4})   # another set of names on the left
    assert left.buckets is None and right.buckets is None and len(left.candidates({"x": 2})) == 1


def test_a_memory_with_an_unhashable_value_is_tried_datum_by_datum():
    # A declared fact's values are hashable (the fact list hashes them), so
    # this is the memories' own guard: a value that cannot be a key.
    left, right = nodes._Memory(), nodes._Memory()
    nodes._index(left, right, left, {"x": 1})
    one = Token.valid(Fact(), {"x": 1}).to_info()
    left.add(one, {"x": 1})
    nodes._index(left, right, right, {"x": [2]})
    assert left.buckets is None and right.names is False and list(left.candidates({"x": [2]})) == [one]


# Item 16: shared joins ------------------------------------------------------------

class SharedStart(KnowledgeEngine):
    @Rule(Fact(option=MATCH.card), Fact(need=MATCH.card), Fact(cheap=MATCH.card))
    def cheap(self, card):
        pass

    @Rule(Fact(option=MATCH.card), Fact(need=MATCH.card), Fact(fast=MATCH.card))
    def fast(self, card):
        pass

    @Rule(Fact(option=MATCH.card), Fact(need=MATCH.card))
    def needed(self, card):
        pass


def test_rules_that_start_alike_share_their_joins_and_fire_as_before(monkeypatch):
    facts = [Fact(option=1), Fact(option=2), Fact(need=1), Fact(need=2), Fact(cheap=1), Fact(fast=2)]
    ours = consult(SharedStart, facts)
    joins = [node for node in network(ours) if isinstance(node, OrdinaryMatchNode)]
    assert len(joins) == 3   # option x need, once; then x cheap, x fast

    def unshared(node_cls, left, right):
        node = node_cls(SameContextCheck())
        left.add_child(node, node.activate_left)
        right.add_child(node, node.activate_right)
        return node

    monkeypatch.setattr(utils, "_join", unshared)
    released = consult(SharedStart, facts)
    assert len([node for node in network(released) if isinstance(node, OrdinaryMatchNode)]) == 5
    assert activations(ours) == activations(released)
    assert [name for name, _, _ in activations(ours)] == ["cheap", "fast", "needed", "needed"]


def test_a_negation_and_a_join_of_the_same_branches_are_not_shared():
    class Both(KnowledgeEngine):
        @Rule(Fact(a=MATCH.x), Fact(b=MATCH.x))
        def joined(self, x):
            pass

        @Rule(Fact(a=MATCH.x), NOT(Fact(b=MATCH.x)))
        def alone(self, x):
            pass

    engine = consult(Both, [Fact(a=1), Fact(a=2), Fact(b=1)])
    kinds = sorted(type(node).__name__ for node in network(engine) if isinstance(node, (OrdinaryMatchNode, NotNode)))
    assert kinds == ["NotNode", "OrdinaryMatchNode"]
    assert activations(engine) == [("alone", ["Fact(a=2)"], ["('x', 2)"]),
                                   ("joined", ["Fact(a=1)", "Fact(b=1)"], ["('x', 1)"])]


# Item 17: fact ids kept, the FIRE line built only when logged ------------------------

def test_a_fact_id_ignores_special_keys_and_is_kept_for_the_retraction():
    facts = FactList()
    fact = facts.declare(Fact(a=1, b=[2]))
    assert FactList._get_fact_id(fact) == frozenset([Fact, ("a", 1), ("b", frozenlist([2]))])
    assert facts.declare(Fact(a=1, b=[2])) is None      # a duplicate
    facts.retract(fact)
    assert not facts.reference_counter
    assert facts.declare(Fact(a=1, b=[2])) is not False  # declared again once retracted


class Shown(Fact):
    shown = 0

    def __str__(self):
        Shown.shown += 1
        return super().__str__()


class Fires(KnowledgeEngine):
    @DefFacts()
    def start(self):
        yield Shown(n=1)

    @Rule(Shown(n=MATCH.n))
    def seen(self, n):
        self.seen_n = n


def test_the_fire_line_is_built_only_when_the_rules_watcher_logs_it():
    Shown.shown = 0
    engine = Fires()
    engine.reset()
    engine.run()
    assert engine.seen_n == 1 and Shown.shown == 0   # the release: str() of every fact of every firing
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    watchers.RULES.addHandler(handler)
    watchers.watch("RULES", level=logging.INFO)
    try:
        engine.reset()
        engine.run()
    finally:
        watchers.unwatch("RULES")
        watchers.RULES.removeHandler(handler)
    assert Shown.shown == 1 and [r.getMessage() for r in records] == ["FIRE 1 seen: <f-1>"]


# Item 18: tokens passed on, not copied -----------------------------------------------

def test_a_token_reaches_the_children_as_it_is_and_a_binding_changes_a_copy():
    bus = BusNode()
    plain = FeatureTesterNode(FeatureCheck("a", L(1)))
    binds_x = FeatureTesterNode(FeatureCheck("a", MATCH.x))
    binds_y = FeatureTesterNode(FeatureCheck("a", MATCH.y))
    seen = {name: Recorder() for name in ("plain", "x", "y")}
    for name, node in (("plain", plain), ("x", binds_x), ("y", binds_y)):
        bus.add_child(node, node.activate)
        node.add_child(seen[name], seen[name].activate)
    fact = Fact(a=1)
    bus.add(fact)
    (plain_token,), (x_token,), (y_token,) = (seen[name].added for name in ("plain", "x", "y"))
    assert plain_token.context == {} and x_token.context == {"x": 1} and y_token.context == {"y": 1}
    assert x_token.data == y_token.data == {fact} and x_token is not y_token
    where = nodes.WhereNode(lambda context: True)
    child = Recorder()
    where.add_child(child, child.activate)
    token = Token.valid(Fact(b=2), {"z": 3})
    where.activate(token)
    assert child.added[0] is token and token.context == {"z": 3}   # the release: a copy at every node


# Item 19: a declared fact hashed by its class and id ------------------------------------

class CostlyToHash:
    """A value that counts how often it is hashed."""

    hashed = 0

    def __hash__(self):
        CostlyToHash.hashed += 1
        return 7


def test_a_declared_fact_hashes_by_its_class_and_id_without_hashing_its_values():
    value = CostlyToHash()
    fact = FactList().declare(Fact(a=1, big=value))
    same = Fact(a=1, big=value, __factid__=fact["__factid__"])
    CostlyToHash.hashed = 0
    assert fact == same and hash(fact) == hash(same) and len({fact, same}) == 1
    assert len({Token.valid(fact).to_info(), Token.valid(same).to_info()}) == 1   # as the Rete network keys them
    assert CostlyToHash.hashed == 0                                  # the release: once for each fact
    other = Fact(a=1, big=value, __factid__=fact["__factid__"] + 1)
    assert other != fact and len({fact, other}) == 2
    undeclared = Fact(a=1, big=value)                                # no id: by its values, as the release
    assert hash(undeclared) == hash(Fact(a=1, big=value)) and CostlyToHash.hashed == 2


# Item 20: only the conflict-set nodes a token reached are asked -------------------------

class EveryNode(set):
    """The release's way: every conflict-set node asked after every change."""

    def clear(self):
        pass


def consult_asking(engine_class, facts, every, retract_every=3):
    engine = engine_class()
    if every:   # wired before the first change, as changes() wires its own set
        nodes_ = engine.matcher._get_conflict_set_nodes()
        engine.matcher.pending = EveryNode(nodes_)
        engine.matcher._order = {csn: position for position, csn in enumerate(nodes_)}
        for csn in nodes_:
            csn.pending = engine.matcher.pending
    engine.reset()
    declared = [engine.declare(fact) for fact in facts]
    for fact in declared[::retract_every]:
        engine.retract(fact)
    return engine


def test_the_matcher_asks_the_nodes_a_token_reached_in_the_network_order(monkeypatch):
    engine = ThreeRules()
    engine.reset()
    order = [csn.rule.__name__ for csn in engine.matcher._get_conflict_set_nodes()]
    asked = []
    real = ConflictSetNode.get_activations
    monkeypatch.setattr(ConflictSetNode, "get_activations",
                        lambda self: asked.append(self.rule.__name__) or real(self))
    added, removed = engine.matcher.changes(adding=[Fact(kind="c"), Fact(kind="a")])
    assert asked == [name for name in order if name in ("on_a", "on_c")]   # the network's order, not the facts'
    assert sorted(act.rule.__name__ for act in added) == ["on_a", "on_c"] and removed == []
    assert engine.matcher.pending == set()                                  # nothing left to ask next time
    asked.clear()
    engine.matcher.changes(adding=[Fact(kind="d")])                         # reaches no rule: none asked
    assert asked == []


def test_asking_the_reached_nodes_gives_the_release_activations():
    facts = card_facts(20)
    ours, released = (consult_asking(CardVerdicts, facts, every) for every in (False, True))
    assert activations(ours) == activations(released) and activations(ours)


# Item 21: scalars inside frozen dicts, lists and sets kept without the dispatch -------------

def test_freezing_nested_values_dispatches_only_on_the_containers(monkeypatch):
    from expert._vendor.experta import utils as experta_utils
    value = {"a": 1, "b": [2.5, {"c": "x", "d": None}], "e": {True, 3}}
    calls = []
    real = experta_utils.freeze
    monkeypatch.setattr(experta_utils, "freeze", lambda obj: calls.append(obj) or real(obj))
    frozen = real(value)
    assert frozen == frozendict(a=1, b=frozenlist([2.5, frozendict(c="x", d=None)]), e=frozenset({True, 3}))
    assert isinstance(frozen["b"], frozenlist) and isinstance(frozen["b"][1], frozendict)
    assert frozen["a"] is value["a"] and frozen["b"][1]["c"] is value["b"][1]["c"]
    assert calls == [value["b"], value["b"][1], value["e"]]   # the release: every value, scalars too (9 calls)


# Item 22: a fact's conditional elements found by isinstance() mapped over its values ----------

def test_a_fact_with_a_conditional_element_among_its_values_is_refused():
    assert not Fact(1, a="x", b=[1, 2], c={"d": 3}, e=None).has_field_constraints()
    assert Fact(1, a="x", b=NOT(Fact(c=1))).has_field_constraints()
    assert Fact(NOT(Fact(c=1)), a="x").has_field_constraints()
    with pytest.raises(TypeError, match="conditional elements"):
        engine = KnowledgeEngine()
        engine.reset()
        engine.declare(Fact(a=1, b=NOT(Fact(c=1))))


# Item 23: a join memory noting the names it already holds ----------------------------------

def test_a_memory_notes_the_same_names_again_without_making_a_set_of_them(monkeypatch):
    made = []
    monkeypatch.setattr(nodes, "frozenset", lambda names: made.append(1) or frozenset(names), raising=False)
    memory = nodes._Memory()
    memory.note({"x": 1, "y": 2})
    names = memory.names
    for value in range(5):
        memory.note({"y": value, "x": value})       # the same names, in another order
    assert memory.names is names and memory.names == {"x", "y"} and len(made) == 1   # the release: 6 sets made
    memory.note({"x": 1})                            # other names still stop the indexing
    assert memory.names is False
