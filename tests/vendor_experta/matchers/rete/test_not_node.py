import pytest

from ...conftest import remember  # expert: the memories are hashed (expert/_vendor/README.md, item 15)


def test_notnode_exists():
    try:
        from expert._vendor.experta.matchers.rete.nodes import NotNode
    except ImportError as exc:
        assert False, exc


def test_notnode_is_abstractnode():
    from expert._vendor.experta.matchers.rete.nodes import NotNode
    from expert._vendor.experta.matchers.rete.abstract import TwoInputNode

    assert issubclass(NotNode, TwoInputNode)


def test_notnode_accepts_callable():
    from expert._vendor.experta.matchers.rete.nodes import NotNode

    # MUST NOT RAISE
    NotNode(lambda l, r: True)

    with pytest.raises(TypeError):
        NotNode('NONCALLABLE')


def test_notnode_left_activate_valid_empty_right(TestNode):
    from expert._vendor.experta.matchers.rete.nodes import NotNode
    from expert._vendor.experta.matchers.rete.token import Token
    from expert._vendor.experta.fact import Fact

    nn = NotNode(lambda l, r: True)
    tn1 = TestNode()
    tn2 = TestNode()

    nn.add_child(tn1, tn1.activate)
    nn.add_child(tn2, tn2.activate)

    token = Token.valid(Fact(test='data'))
    nn.activate_left(token)

    assert tn1.added == [token]
    assert tn2.added == [token]
    assert nn.left_memory[token.to_info()] == 0


def test_notnode_left_activate_valid_non_matching(TestNode):
    from expert._vendor.experta.matchers.rete.nodes import NotNode
    from expert._vendor.experta.matchers.rete.token import Token
    from expert._vendor.experta.fact import Fact

    nn = NotNode(lambda l, r: False)
    remember(nn.right_memory, Token.valid(Fact(test='data1')).to_info())  # expert: a _Memory
    remember(nn.right_memory, Token.valid(Fact(test='data2')).to_info())  # expert: a _Memory

    tn1 = TestNode()
    tn2 = TestNode()

    nn.add_child(tn1, tn1.activate)
    nn.add_child(tn2, tn2.activate)

    token = Token.valid(Fact(test='data'))
    nn.activate_left(token)

    assert tn1.added == [token]
    assert tn2.added == [token]
    assert nn.left_memory[token.to_info()] == 0


def test_notnode_left_activate_valid_matching(TestNode):
    from expert._vendor.experta.matchers.rete.nodes import NotNode
    from expert._vendor.experta.matchers.rete.token import Token
    from expert._vendor.experta.fact import Fact

    nn = NotNode(lambda l, r: True)
    remember(nn.right_memory, Token.valid(Fact(test='data')).to_info())  # expert: a _Memory

    tn1 = TestNode()
    tn2 = TestNode()

    nn.add_child(tn1, tn1.activate)
    nn.add_child(tn2, tn2.activate)

    token = Token.valid(Fact(test='data'))
    nn.activate_left(token)

    assert not tn1.added
    assert not tn2.added
    assert nn.left_memory[token.to_info()] == 1


def test_notnode_right_activate_valid_empty(TestNode):
    from expert._vendor.experta.matchers.rete.nodes import NotNode
    from expert._vendor.experta.matchers.rete.token import Token
    from expert._vendor.experta.fact import Fact

    nn = NotNode(lambda l, r: True)
    tn1 = TestNode()
    tn2 = TestNode()

    nn.add_child(tn1, tn1.activate)
    nn.add_child(tn2, tn2.activate)

    token = Token.valid(Fact(test='data'))
    nn.activate_right(token)

    assert not tn1.added
    assert not tn2.added
    assert token.to_info() in nn.right_memory


def test_notnode_right_activate_invalid_match_more_than_one(TestNode):
    from expert._vendor.experta.matchers.rete.nodes import NotNode
    from expert._vendor.experta.matchers.rete.token import Token
    from expert._vendor.experta.fact import Fact

    nn = NotNode(lambda l, r: True)
    tn1 = TestNode()
    tn2 = TestNode()

    nn.add_child(tn1, tn1.activate)
    nn.add_child(tn2, tn2.activate)

    token = Token.invalid(Fact(test='data'))

    remember(nn.right_memory, token.to_info())  # expert: a _Memory
    nn.left_memory[token.to_info()] = 2
    remember(nn.left_index, token.to_info())  # expert: the left data, indexed, are what a right token tries

    nn.activate_right(token)

    assert not tn1.added
    assert not tn2.added
    assert nn.left_memory[token.to_info()] == 1


def test_notnode_right_activate_invalid_match_just_one(TestNode):
    from expert._vendor.experta.matchers.rete.nodes import NotNode
    from expert._vendor.experta.matchers.rete.token import Token
    from expert._vendor.experta.fact import Fact

    nn = NotNode(lambda l, r: True)
    tn1 = TestNode()
    tn2 = TestNode()

    nn.add_child(tn1, tn1.activate)
    nn.add_child(tn2, tn2.activate)

    token = Token.invalid(Fact(test='data'))

    remember(nn.right_memory, token.to_info())  # expert: a _Memory
    nn.left_memory[token.to_info()] = 1
    remember(nn.left_index, token.to_info())  # expert: the left data, indexed, are what a right token tries

    nn.activate_right(token)

    assert Token.valid(Fact(test='data')) in tn1.added
    assert Token.valid(Fact(test='data')) in tn2.added
    assert nn.left_memory[token.to_info()] == 0


def test_notnode_right_activate_valid_match_more_than_one(TestNode):
    from expert._vendor.experta.matchers.rete.nodes import NotNode
    from expert._vendor.experta.matchers.rete.token import Token
    from expert._vendor.experta.fact import Fact

    nn = NotNode(lambda l, r: True)
    tn1 = TestNode()
    tn2 = TestNode()

    nn.add_child(tn1, tn1.activate)
    nn.add_child(tn2, tn2.activate)

    token = Token.valid(Fact(test='data'))

    nn.left_memory[token.to_info()] = -1
    remember(nn.left_index, token.to_info())  # expert: the left data, indexed, are what a right token tries

    nn.activate_right(token)

    assert not tn1.added
    assert not tn2.added
    assert nn.left_memory[token.to_info()] == 0


def test_notnode_right_activate_valid_match_just_one(TestNode):
    from expert._vendor.experta.matchers.rete.nodes import NotNode
    from expert._vendor.experta.matchers.rete.token import Token
    from expert._vendor.experta.fact import Fact

    nn = NotNode(lambda l, r: True)
    tn1 = TestNode()
    tn2 = TestNode()

    nn.add_child(tn1, tn1.activate)
    nn.add_child(tn2, tn2.activate)

    token = Token.valid(Fact(test='data'))

    nn.left_memory[token.to_info()] = 0
    remember(nn.left_index, token.to_info())  # expert: the left data, indexed, are what a right token tries

    nn.activate_right(token)

    assert Token.invalid(Fact(test='data')) in tn1.added
    assert Token.invalid(Fact(test='data')) in tn2.added
    assert nn.left_memory[token.to_info()] == 1
