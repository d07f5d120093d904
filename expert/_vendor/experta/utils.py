from functools import singledispatch
import collections.abc

from .fieldconstraint import P


class frozendict(collections.abc.Mapping):
    """An immutable, hashable mapping (expert: replaces the frozendict==1.2
    package, whose class no longer imports on Python 3.10+)."""

    __slots__ = ("_dict", "_hash")

    def __init__(self, *args, **kwargs):
        self._dict = dict(*args, **kwargs)
        self._hash = None

    def __getitem__(self, key):
        return self._dict[key]

    def __iter__(self):
        return iter(self._dict)

    def __len__(self):
        return len(self._dict)

    def __repr__(self):
        return "frozendict(%r)" % (self._dict, )

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(frozenset(self._dict.items()))
        return self._hash


class frozenlist(tuple):
    def __repr__(self):
        return "frozenlist([%s])" % (super().__repr__()[1:-1], )


@singledispatch
def freeze(obj):
    if isinstance(obj, collections.abc.Hashable):
        return obj
    else:
        raise TypeError(
            ("type(%r) => %s is not hashable, "
             "see `experta.utils.freeze` docs to register your "
             "own freeze method") % (obj, type(obj)))


# expert: values freeze() returns unchanged, kept without its dispatch (as
# `Fact` keeps them, fact.py) inside the dicts, lists and sets it freezes.
SCALARS = frozenset({str, int, float, bool, type(None)})


@freeze.register(dict)
@freeze.register(frozendict)
def freeze_dict(obj):
    return frozendict((k, v if type(v) in SCALARS else freeze(v)) for k, v in obj.items())


@freeze.register(list)
@freeze.register(frozenlist)
def freeze_list(obj):
    return frozenlist(v if type(v) in SCALARS else freeze(v) for v in obj)


@freeze.register(set)
@freeze.register(frozenset)
def freeze_set(obj):
    return frozenset(v if type(v) in SCALARS else freeze(v) for v in obj)


@singledispatch
def unfreeze(obj):
    return obj


@unfreeze.register(dict)
@unfreeze.register(frozendict)
def unfreeze_frozendict(obj):
    return {k: unfreeze(v) for k, v in obj.items()}


@unfreeze.register(list)
@unfreeze.register(frozenlist)
def unfreeze_frozenlist(obj):
    return [unfreeze(x) for x in obj]


@unfreeze.register(set)
@unfreeze.register(frozenset)
def unfreeze_frozenset(obj):
    return {unfreeze(x) for x in obj}


def anyof(*what):
    return P(lambda y: y in what)
