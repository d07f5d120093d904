import pytest


def test_strategies_exists():
    try:
        from expert._vendor.experta import strategies
    except ImportError as exc:
        assert False, exc
    else:
        assert True


def test_Strategy_exists():
    from expert._vendor.experta import strategies

    assert hasattr(strategies, 'Strategy')


def test_Strategy_is_class():
    from expert._vendor.experta.abstract import Strategy

    assert isinstance(Strategy, type)


def test_Strategy_is_abstract():
    from expert._vendor.experta.abstract import Strategy

    with pytest.raises(TypeError):
        Strategy()


def test_DepthStrategy_exists():
    from expert._vendor.experta import strategies

    assert hasattr(strategies, 'DepthStrategy')


def test_DepthStrategy_is_Strategy():
    from expert._vendor.experta.strategies import DepthStrategy, Strategy

    assert issubclass(DepthStrategy, Strategy)


def test_DepthStrategy_has_update_agenda():
    from expert._vendor.experta.strategies import DepthStrategy
    assert hasattr(DepthStrategy(), 'update_agenda')


def test_DepthStrategy_update_agenda_no_facts_returns_empty_agenda():
    from expert._vendor.experta.strategies import DepthStrategy
    from expert._vendor.experta.agenda import Agenda

    st = DepthStrategy()
    a = Agenda()

    st.update_agenda(a, [], [])

    assert not a.activations


def test_DepthStrategy_update_agenda_activations_to_agenda():
    from expert._vendor.experta.strategies import DepthStrategy
    from expert._vendor.experta.activation import Activation
    from expert._vendor.experta import Rule
    from expert._vendor.experta.agenda import Agenda
    from expert._vendor.experta import Fact
    from expert._vendor.experta.factlist import FactList

    fl = FactList()
    f1 = Fact(1)
    fl.declare(f1)
    f2 = Fact(2)
    fl.declare(f2)

    act1 = Activation(rule=Rule(), facts=(f1, ))
    act2 = Activation(rule=Rule(), facts=(f2, ))

    a = Agenda()

    st = DepthStrategy()
    st.update_agenda(a, [act1, act2], [])

    assert act1 in a.activations
    assert act2 in a.activations


def test_DepthStrategy_update_agenda_assertion_order_affects_agenda_order_1():
    from expert._vendor.experta.strategies import DepthStrategy
    from expert._vendor.experta.activation import Activation
    from expert._vendor.experta import Rule
    from expert._vendor.experta.agenda import Agenda
    from expert._vendor.experta import Fact
    from expert._vendor.experta.factlist import FactList

    fl = FactList()

    f1 = Fact(1)
    fl.declare(f1)

    f2 = Fact(2)
    fl.declare(f2)

    f3 = Fact(3)
    fl.declare(f3)

    f4 = Fact(4)
    fl.declare(f4)

    act1 = Activation(rule=Rule(), facts=(f1, ))
    act2 = Activation(rule=Rule(), facts=(f2, ))
    first = [act1, act2]

    act3 = Activation(rule=Rule(), facts=(f3, ))
    act4 = Activation(rule=Rule(), facts=(f4, ))
    second = [act3, act4]

    a = Agenda()

    st = DepthStrategy()

    st.update_agenda(a, first, [])
    assert a.activations == first

    st.update_agenda(a, second, first)
    assert a.activations == second


def test_DepthStrategy_update_agenda_asertion_order_affects_agenda_order_2():
    from expert._vendor.experta.strategies import DepthStrategy
    from expert._vendor.experta.activation import Activation
    from expert._vendor.experta import Rule
    from expert._vendor.experta.agenda import Agenda
    from expert._vendor.experta import Fact
    from expert._vendor.experta.factlist import FactList

    fl = FactList()

    f1 = Fact(1)
    fl.declare(f1)

    f2 = Fact(2)
    fl.declare(f2)

    f3 = Fact(3)
    fl.declare(f3)

    f4 = Fact(4)
    fl.declare(f4)

    act1 = Activation(rule=Rule(), facts=(f1, ))
    act2 = Activation(rule=Rule(), facts=(f2, ))
    first = [act1, act2]

    act3 = Activation(rule=Rule(), facts=(f3, ))
    act4 = Activation(rule=Rule(), facts=(f4, ))
    second = [act3, act4]

    a = Agenda()

    st = DepthStrategy()

    st.update_agenda(a, second, [])
    assert a.activations == second

    st.update_agenda(a, first, second)
    assert a.activations == first


def test_DepthStrategy_update_agenda_asertion_order_affects_agenda_order_3():
    """

    From Clips docs on Depth Strategy::

      Newly activated rules are placed above all rules of the same salience.
      For example, given that facta activates rule1 and rule2 and factb
      activates rule3 and rule4, then if facta is asserted before factb, rule3
      and rule4 will be above rule1 and rule2 on the agenda. However, the
      position of rule1 relative to rule2 and rule3 relative to rule4 will be
      arbitrary.

    """
    from expert._vendor.experta.strategies import DepthStrategy
    from expert._vendor.experta.activation import Activation
    from expert._vendor.experta import Rule
    from expert._vendor.experta.agenda import Agenda
    from expert._vendor.experta import Fact
    from expert._vendor.experta.factlist import FactList

    fl = FactList()

    f1 = Fact(1)
    fl.declare(f1)

    f2 = Fact(2)
    fl.declare(f2)

    act1 = Activation(rule=Rule(), facts=(f1, ))
    act2 = Activation(rule=Rule(), facts=(f1, ))
    act3 = Activation(rule=Rule(), facts=(f2, ))
    act4 = Activation(rule=Rule(), facts=(f2, ))

    a = Agenda()

    st = DepthStrategy()

    st.update_agenda(a, [act1, act2, act3, act4], [])
    order = list(a.activations)

    assert (order.index(act4) > order.index(act1)
            and order.index(act4) > order.index(act2))
    assert (order.index(act3) > order.index(act1)
            and order.index(act3) > order.index(act2))


def test_DepthStrategy_update_agenda_different_salience():
    from random import shuffle

    from expert._vendor.experta.strategies import DepthStrategy
    from expert._vendor.experta.activation import Activation
    from expert._vendor.experta import Rule
    from expert._vendor.experta import Fact
    from expert._vendor.experta.agenda import Agenda
    from expert._vendor.experta.factlist import FactList

    flist = FactList()

    f1 = Fact(1)
    flist.declare(f1)

    f2 = Fact(2)
    flist.declare(f2)

    f3 = Fact(3)
    flist.declare(f3)

    f4 = Fact(4)
    flist.declare(f4)

    act1 = Activation(rule=Rule(salience=1), facts=(f1, ))
    act2 = Activation(rule=Rule(salience=2), facts=(f2, ))
    act3 = Activation(rule=Rule(salience=3), facts=(f3, ))
    act4 = Activation(rule=Rule(salience=4), facts=(f4, ))

    acts = [act1, act2, act3, act4]
    shuffle(acts)

    st = DepthStrategy()
    a = Agenda()

    for act in acts:
        st.update_agenda(a, acts, [])

    order = list(a.activations)
    assert (order.index(act4)
            > order.index(act3)
            > order.index(act2)
            > order.index(act1))
