import pytest


def test_featuretesternode_exists():
    try:
        from expert._vendor.experta.matchers.rete.nodes import FeatureTesterNode
    except ImportError as exc:
        assert False, exc


def test_featuretesternode_is_oneinputnode():
    from expert._vendor.experta.matchers.rete.nodes import FeatureTesterNode
    from expert._vendor.experta.matchers.rete.abstract import OneInputNode

    assert issubclass(FeatureTesterNode, OneInputNode)


def test_featuretesternode_accepts_callable():
    from expert._vendor.experta.matchers.rete.nodes import FeatureTesterNode

    # MUST NOT RAISE
    FeatureTesterNode(lambda x: True)

    with pytest.raises(TypeError):
        FeatureTesterNode('NONCALLABLE')


def test_featuretesternode_pass_when_callable_succeed(TestNode):
    from expert._vendor.experta.matchers.rete.nodes import FeatureTesterNode
    from expert._vendor.experta.matchers.rete.token import Token
    from expert._vendor.experta.fact import Fact

    ftn = FeatureTesterNode(lambda f: True)
    tn1 = TestNode()
    tn2 = TestNode()

    token = Token.valid(Fact(test=True))

    ftn.add_child(tn1, tn1.activate)
    ftn.add_child(tn2, tn2.activate)

    ftn.activate(token)

    assert tn1.added == tn2.added == [token]


def test_featuretesternode_pass_when_callable_fail(TestNode):
    from expert._vendor.experta.matchers.rete.nodes import FeatureTesterNode
    from expert._vendor.experta.matchers.rete.token import Token
    from expert._vendor.experta.fact import Fact

    ftn = FeatureTesterNode(lambda f: False)
    tn1 = TestNode()
    tn2 = TestNode()

    token = Token.valid(Fact(test=True))

    ftn.add_child(tn1, tn1.activate)
    ftn.add_child(tn2, tn2.activate)

    ftn.activate(token)

    assert tn1.added == tn2.added == []


def test_featuretesternode_pass_when_callable_adds_context(TestNode):
    from expert._vendor.experta.matchers.rete.nodes import FeatureTesterNode
    from expert._vendor.experta.matchers.rete.token import Token
    from expert._vendor.experta.fact import Fact

    ftn = FeatureTesterNode(lambda f: {'something': True})
    tn1 = TestNode()
    tn2 = TestNode()

    token = Token.valid(Fact(test=True))

    ftn.add_child(tn1, tn1.activate)
    ftn.add_child(tn2, tn2.activate)

    ftn.activate(token)

    newtoken = token.copy()
    newtoken.context['something'] = True

    assert tn1.added == tn2.added == [newtoken]


def test_featuretesternode_pass_when_callable_modify_context(TestNode):
    from expert._vendor.experta.matchers.rete.nodes import FeatureTesterNode
    from expert._vendor.experta.matchers.rete.token import Token
    from expert._vendor.experta.fact import Fact

    ftn = FeatureTesterNode(lambda f: {'something': True})
    tn1 = TestNode()
    tn2 = TestNode()

    token = Token.valid(Fact(test=True), {'something': False})

    ftn.add_child(tn1, tn1.activate)
    ftn.add_child(tn2, tn2.activate)

    ftn.activate(token)

    newtoken = token.copy()
    newtoken.context['something'] = True

    assert tn1.added == tn2.added == []


def test_featuretesternode_pass_when_callable_dont_modify_context(TestNode):
    from expert._vendor.experta.matchers.rete.nodes import FeatureTesterNode
    from expert._vendor.experta.matchers.rete.token import Token
    from expert._vendor.experta.fact import Fact

    ftn = FeatureTesterNode(lambda f: {'something': True})
    tn1 = TestNode()
    tn2 = TestNode()

    token = Token.valid(Fact(test=True), {'something': True})

    ftn.add_child(tn1, tn1.activate)
    ftn.add_child(tn2, tn2.activate)

    ftn.activate(token)

    newtoken = token.copy()
    newtoken.context['something'] = True

    assert tn1.added == tn2.added == [newtoken]


def test_featuretesternode_pass_fact_to_matcher():
    from expert._vendor.experta.matchers.rete.nodes import FeatureTesterNode
    from expert._vendor.experta.matchers.rete.token import Token
    from expert._vendor.experta.fact import Fact

    fact = Fact(this_is_my_fact=True)

    def _matcher(f):
        nonlocal fact
        assert f is fact

    ftn = FeatureTesterNode(_matcher)

    ftn.activate(Token.valid(fact))
