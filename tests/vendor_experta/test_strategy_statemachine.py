import pytest

from hypothesis import strategies as st
from hypothesis import assume, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.stateful import Bundle, RuleBasedStateMachine, rule, invariant, consumes

from expert._vendor.experta.activation import Activation
from expert._vendor.experta.agenda import Agenda
from expert._vendor.experta.engine import KnowledgeEngine
from expert._vendor.experta.fact import Fact
from expert._vendor.experta.factlist import FactList
from expert._vendor.experta.rule import Rule
from expert._vendor.experta.strategies import DepthStrategy

from .conftest import bounded


def get_rule_stm(strategy):
    class StrategyStateMachine(RuleBasedStateMachine):
        def __init__(self):
            super(StrategyStateMachine, self).__init__()
            self.model = set()
            self.agenda = Agenda()
            self.strategy = strategy()
            self.fss = set()

        activations = Bundle("activations")

        @rule(target=activations,
              r=st.integers(min_value=0),
              fs=st.sets(st.integers(min_value=0), min_size=1))
        def declare(self, r, fs):
            assume((r, frozenset(fs)) not in self.fss)
            self.fss.add((r, frozenset(fs)))

            fs = [Fact(i, __factid__=i) for i in fs]
            act = Activation(Rule(Fact(r)), facts=tuple(fs))

            # Update agenda
            self.strategy.update_agenda(self.agenda, [act], [])

            # Update model
            self.model |= set([act])

            return act

        @rule(act=consumes(activations))
        def retract(self, act):
            # Update agenda
            self.strategy.update_agenda(self.agenda, [], [act])

            # Update model
            self.model -= set([act])

        @invariant()
        def values_agree(self):
            assert set(self.agenda.activations) == self.model

    return StrategyStateMachine


test_depthstrategy_state_machine = get_rule_stm(DepthStrategy).TestCase
# expert: 10 fixed runs of 20 steps (the release: hypothesis's default, 100
# random runs of up to 50 steps, over five minutes of CPU here).
test_depthstrategy_state_machine.settings = bounded(10, stateful_step_count=20)
