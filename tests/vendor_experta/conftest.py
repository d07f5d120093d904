# experta 1.9.4's unit tests (https://github.com/nilp0inter/experta, tag v1.9.4),
# by Roberto Abdelkader Martínez Pérez and contributors; GNU LGPL 3.0, see
# LICENSE beside this file. Run against expert's vendored copy
# (expert._vendor.experta); every change made to them is marked "expert:" and
# listed in expert/_vendor/README.md.
from string import ascii_letters
import os

from hypothesis import strategies as st
import pytest


random_types = st.one_of(st.integers(),
                         st.booleans(),
                         st.floats(),
                         st.complex_numbers(),
                         st.tuples(st.text()),
                         st.lists(st.text()),
                         st.sets(st.text()),
                         st.text(),
                         st.dictionaries(keys=st.text(), values=st.text()))


random_kwargs = st.dictionaries(keys=st.text(alphabet=ascii_letters,
                                             min_size=1),
                                values=st.text())


@pytest.fixture
def TestNode():
    class _TestNode:
        """
        This is a test node only for testing.

        Adds any token passed to the activation function to `self.added`.

        """
        def __init__(self):
            self.added = []
            self.children = []

        def activate(self, token):
            self.added.append(token)
    return _TestNode


# expert: the release's tox run deselects `-m wip` and marks one test `slow`;
# the suite runs with --strict-markers, so the marks are declared here.
def pytest_configure(config):
    config.addinivalue_line("markers", "slow: experta's mark for its slower tests (run here too)")
    config.addinivalue_line("markers", "wip: experta's mark for work in progress")


# expert: the hypothesis tests replay the same bounded examples every run,
# as the rest of the suite's do (docs/development.md, "Tests"); EXPERT_FUZZ=N
# explores N fresh examples instead.
EXPLORE = "EXPERT_FUZZ" in os.environ


def bounded(examples, **more):
    from hypothesis import settings
    return settings(max_examples=int(os.environ.get("EXPERT_FUZZ", examples)),
                    derandomize=not EXPLORE, deadline=None, database=None, **more)


def remember(memory, info):
    """expert: store ``info`` in a two-input node's memory, which is a hashed
    ``_Memory`` (expert/_vendor/README.md, item 15), not the release's list:
    where the release's tests append to the list, they call this."""
    memory.add(info, dict(info.context))
