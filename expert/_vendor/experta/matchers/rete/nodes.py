"""
RETE nodes implementation.

This are the node types needed by this RETE implementation. Some node
types (like `The One-input Node for Testing Variable Bindings) are not
needed in this implementation.

"""
from collections.abc import Mapping
from contextlib import suppress
from itertools import chain

from ...activation import Activation
from ...rule import Rule
from ...watchers import MATCHER, MATCH

from . import mixins
from .abstract import Node, OneInputNode, TwoInputNode
from .check import TypeCheck
from .token import Token


class BusNode(mixins.AnyChild,
              mixins.NoMemory,
              Node):
    """
    The Bus Node.

    The node that reports working memory changes to the rest of the
    network.

    This node cannot be activated in the same manner as the other nodes.
    No tokens can be sent to it since this is the node where the first
    tokens are built.
    """

    def add(self, fact):
        """Create a VALID token and send it to all children."""
        token = Token.valid(fact)
        MATCHER.debug("<BusNode> added %r", token)
        for child in self._children_for(fact):
            child.callback(token)

    def remove(self, fact):
        """Create an INVALID token and send it to all children."""
        token = Token.invalid(fact)
        MATCHER.debug("<BusNode> added %r", token)
        for child in self._children_for(fact):
            child.callback(token)

    def _children_for(self, fact):
        # expert: a child whose test is the fact's type (TypeCheck) gets only
        # facts of that type: the others would fail its test at once. The
        # children a type gets are kept in their order, with every child
        # that tests something else.
        routes = self.__dict__.get("_routes")
        if routes is None or routes[0] != len(self.children):
            routes = self._routes = (len(self.children), {})
        kind = type(fact)
        children = routes[1].get(kind)
        if children is None:
            children = routes[1][kind] = [
                child for child in self.children
                if not isinstance(getattr(child.node, "matcher", None), TypeCheck)
                or child.node.matcher.fact_type is kind]
        return children


class WhereNode(mixins.AnyChild,
                mixins.HasMatcher,
                mixins.NoMemory,
                OneInputNode):
    """
    Check some conditions over a token context.

    """
    def _activate(self, token):
        if self.matcher(token.context):
            for child in self.children:
                child.callback(token)


class FeatureTesterNode(mixins.AnyChild,
                        mixins.HasMatcher,
                        mixins.NoMemory,
                        OneInputNode):
    """
    Feature Tester Node.

    This node implementation represents two different nodes in the
    original paper: `The One-input Node for Testing Constant Features`
    and `The One-input Node for Testing Variable Bindings`.

    The trick here is this node receives a callable object at
    initilization time and uses it for testing the received tokens on
    activation. The given callable can return one of the following
    things:

      - Boolean:

        - `True`: The test pass. The token will be sent to the children
          nodes.

        - `False`: The test failed. Do nothing.

      - Mapping (dict):

        - With content: The test pass. In addition the pairs key-value
          will be added to the token context.

        - Empty: The test failed. Do nothing.

    The only exception here is when the callable returns a mapping with
    some key and some value, and the current context of the token also
    have an entry for this key but with a different value. In this case
    the test do not pass.
    """

    def _activate(self, token):
        """
        Activate this node.

        Test the given token with this token matcher function and iff
        the test pass update the token and pass to all children.

        """
        try:
            assert len(token.data) == 1
        except AssertionError as exc:
            raise ValueError(exc) from exc
        else:
            fact = list(token.data)[0]

        match = self.matcher(fact)

        if match:
            if isinstance(match, Mapping):
                for key, value in match.items():
                    if isinstance(key, tuple):  # Negated condition
                        if key[1] in token.context \
                                and token.context[key[1]] == value:
                            return False
                    else:
                        if token.context.get(key, value) != value:
                            return False
                        if (False, key) in token.context \
                                and token.context[(False, key)] == value:
                            return False
                token = token.copy()  # expert: the only node that changes a token changes its own copy
                token.context.update(match)
            for child in self.children:
                child.callback(token)


class OrdinaryMatchNode(mixins.AnyChild,
                        mixins.HasMatcher,
                        TwoInputNode):
    """
    Ordinary Two-input Node.

    This kind of node receive tokens at two ports (left and right) and
    try to match them.

    The matching function is a callable given as a parameter to __init__
    and stored internally. This functions will receive two contexts, one
    from the left and other from the right, and decides if they match
    together (returning True or False).

    Matching pairs will be combined in one token containing facts from
    both and a combined context. This combined tokens will be sent to
    all children.
    """

    def _reset(self):
        """Wipe node memory."""
        self.left_memory = _Memory()
        self.right_memory = _Memory()
        self.compared = 0

    def __activation(self, token, branch_memory, matching_memory,
                     is_left=True):
        """
        Node activation internal function.

        This is a generalization of both activation functions.

        The given token is added or removed from `branch_memory`
        depending of its tag.

        For any other data in `matching_memory` the match function will
        be called and if a match occurs a new token will be produced and
        sent to all children.

        expert: only the data `matching_memory` holds under the same values
        of the names both sides bind are tried (`_Memory`): the others cannot
        match; `compared` counts the pairs tried.

        """
        info = token.to_info()
        _index(self.left_memory, self.right_memory, branch_memory, token.context)
        if token.is_valid():
            branch_memory.add(info, token.context)
        else:
            branch_memory.discard(info, token.context)

        candidates = matching_memory.candidates(token.context)
        self.compared += len(candidates)
        for other_data, other_context in candidates:
            other_context = dict(other_context)
            if is_left:
                left_context = token.context
                right_context = other_context
            else:
                left_context = other_context
                right_context = token.context

            match = self.matcher(left_context, right_context)

            if match:
                newcontext = {k: v for k, v in token.context.items()
                              if isinstance(k, str)}

                for k, v in other_context.items():
                    if not isinstance(k, tuple):
                        # Negated value are not needed any further
                        newcontext[k] = v

                # expert: made as the tuple it is (Token() checks every fact of data again)
                newtoken = Token._make((token.tag,
                                        token.data | other_data,
                                        newcontext))

                for child in self.children:
                    child.callback(newtoken)

    def _activate_left(self, token):
        """Node left activation."""
        self.__activation(token,
                          self.left_memory,
                          self.right_memory,
                          is_left=True)

    def _activate_right(self, token):
        """Node right activation."""
        self.__activation(token,
                          self.right_memory,
                          self.left_memory,
                          is_left=False)


class _Memory:
    """
    expert: one input's memory of a two-input node, indexed by the values of
    the names both inputs bind (a hashed memory, as Rete implementations
    keep them), so that a token is tried only against the data that can
    match it instead of every datum the other input holds: a join of two
    kinds of fact about the same card costs the number of cards, not its
    square. Until both inputs have bound names, and wherever their contexts
    differ in the names they bind, hold a negated name or an unhashable
    value, it is the plain list it was (every datum tried).
    """

    __slots__ = ("infos", "names", "shared", "buckets")

    def __init__(self):
        self.infos = []          # while not indexed: every datum, in arrival order
        self.names = None        # the names each context binds; False once they differ
        self.shared = None       # the names it is indexed by, once both inputs are known
        self.buckets = None      # values of `shared` -> the data holding them

    def note(self, context):
        """Record the names a context binds; False when they are not always the same."""
        if self.names is False or self.names == context.keys():   # (the same names: nothing to record)
            return
        names = frozenset(context)
        if any(not isinstance(name, str) for name in names):
            self.names = False
        elif self.names is None:
            self.names = names
        elif self.names != names:
            self.names = False

    def index(self, shared):
        self.shared, self.buckets = shared, {}
        for info in self.infos:
            self.buckets.setdefault(self.key(dict(info.context)), []).append(info)
        self.infos = None

    def unindex(self):
        if self.buckets is not None:
            self.infos = [info for bucket in self.buckets.values() for info in bucket]
        self.shared = self.buckets = None

    def key(self, context):
        return tuple(context[name] for name in self.shared)

    def add(self, info, context):
        if self.buckets is None:
            self.infos.append(info)
        else:
            self.buckets.setdefault(self.key(context), []).append(info)

    def discard(self, info, context):
        with suppress(ValueError, KeyError):
            (self.infos if self.buckets is None else self.buckets[self.key(context)]).remove(info)

    def candidates(self, context):
        """The data that may match a token of the other input with `context`."""
        if self.buckets is None:
            return self.infos
        return self.buckets.get(tuple(context[name] for name in self.shared), ())

    def __iter__(self):
        if self.buckets is None:
            return iter(self.infos)
        return chain.from_iterable(self.buckets.values())

    def __len__(self):
        return len(self.infos) if self.buckets is None else sum(map(len, self.buckets.values()))


def _index(left, right, side, context):
    """Note the names `context` binds on `side`; index both memories by the
    names both inputs bind once they are known, or stop indexing them."""
    before = side.names
    side.note(context)
    if side.names is False:
        if before is not False:
            left.unindex()
            right.unindex()
        return
    if left.shared is None and left.names and right.names and (left.names & right.names):
        shared = tuple(sorted(left.names & right.names))
        try:
            left.index(shared)
            right.index(shared)
            hash(side.key(context))
        except TypeError:   # an unhashable value: tried one by one
            left.unindex()
            right.unindex()
            left.names = right.names = False


class ConflictSetNode(mixins.AnyChild,
                      OneInputNode):
    """
    Conflict Set Change Node.

    This node is the final step in the network. Any token activating
    this node will produce an activation (VALID token) or deactivation
    (INVALID token) of the internal `rule` with the token context and
    facts.
    """

    def __init__(self, rule):
        """Initialize the node with the given `rule`."""
        try:
            assert isinstance(rule, Rule)
        except AssertionError as exc:
            raise TypeError(exc) from exc
        else:
            self.rule = rule

        self.added = set()
        self.removed = set()
        self.pending = None   # expert: the matcher's set of the nodes a token reached (ReteMatcher.changes)

        super().__init__()

    def _reset(self):
        """Wipe the node internal memory."""
        self.memory = set()

    def _activate(self, token):
        """Activate this node for the given token."""

        info = token.to_info()
        if self.pending is not None:
            self.pending.add(self)

        activation = Activation(
            self.rule,
            frozenset(info.data),
            {k: v for k, v in info.context if isinstance(k, str)})

        if token.is_valid():
            if info not in self.memory:
                self.memory.add(info)
                if activation in self.removed:
                    self.removed.remove(activation)
                else:
                    self.added.add(activation)
        else:
            try:
                self.memory.remove(info)
            except ValueError:
                pass
            else:
                if activation in self.added:
                    self.added.remove(activation)
                else:
                    self.removed.add(activation)

    def get_activations(self):
        """Return a list of activations."""
        res = (self.added, self.removed)

        self.added = set()
        self.removed = set()

        return res

    def __str__(self):  # pragma: no cover
        return "%s: %s" % (self.__class__.__name__, self.rule.__name__)


class NotNode(mixins.AnyChild,
              mixins.HasMatcher,
              TwoInputNode):
    """
    Not Node.

    This is a special kind of node representing the absence of some
    fact/condition.

    This node is similar to `OrdinaryMatchNode` in the sense it has two
    input ports and try to match tokens arriving in both of them. But
    pass VALID tokens to the children when no matches are found and
    INVALID tokens when they are.
    """

    def _reset(self):
        """Wipe node internal memory."""
        self.left_memory = dict()    # each datum of the left -> how many on the right match it
        self.left_index = _Memory()  # expert: the same data, indexed as OrdinaryMatchNode's are
        self.right_memory = _Memory()
        self.compared = 0

    def _activate_left(self, token):
        """
        Activate from the left.

        In case of a valid token this activations test the right memory
        with the given token and looks for the number of matches. The
        token and the number of occurences are stored in the left
        memory.

        If the number of matches is zero the token activates all children.

        expert: only the right data that can match are tried (`_Memory`).

        """
        info = token.to_info()
        _index(self.left_index, self.right_memory, self.left_index, token.context)
        candidates = self.right_memory.candidates(token.context)
        self.compared += len(candidates)
        if token.is_valid():
            count = 0
            for _, right_context in candidates:
                if self.matcher(token.context, dict(right_context)):
                    count += 1

            if count == 0:
                for child in self.children:
                    child.callback(token)

            self.left_memory[info] = count
            self.left_index.add(info, token.context)
        else:
            count = 0
            for _, right_context in candidates:
                if self.matcher(token.context, dict(right_context)):
                    count += 1
                    break

            if count == 0:
                for child in self.children:
                    child.callback(token)

            del self.left_memory[info]
            self.left_index.discard(info, token.context)

    def _activate_right(self, token):
        """
        Activate from the right.

        Go over the left memory and find matching data, when found
        update the counter (substracting if the given token is invalid
        and adding otherwise). Depending on the result of this operation
        a new token is generated and passing to all children.

        """
        info = token.to_info()
        _index(self.left_index, self.right_memory, self.right_memory, token.context)
        if token.is_valid():
            self.right_memory.add(info, token.context)
            inc = 1
        else:
            inc = -1
            self.right_memory.discard(info, token.context)

        candidates = self.left_index.candidates(token.context)
        self.compared += len(candidates)
        for left in list(candidates):
            if self.matcher(dict(left.context), token.context):
                self.left_memory[left] += inc
                newcount = self.left_memory[left]
                if (newcount == 0 and inc == -1) or \
                        (newcount == 1 and inc == 1):
                    if inc == -1:
                        newtoken = left.to_valid_token()
                    else:
                        newtoken = left.to_invalid_token()

                    for child in self.children:
                        child.callback(newtoken)
