"""Import experta 1.9.4 on Python 3.10+ without side effects on the host.

experta's last release pins ``frozendict==1.2``, whose class is written as
``class frozendict(collections.Mapping)``; the ``collections`` ABC aliases were
removed in Python 3.10, so a plain ``import experta`` fails there. We add the
missing aliases for the duration of the import only, then remove the ones we
added: the class has been created by then and needs them no more.

Importing experta also calls ``logging.basicConfig()``, which would install a
handler on the host application's root logger; we restore the root logger as
it was. And experta logs every rule test at INFO/DEBUG through its
``experta.watchers`` loggers, which would flood a host that logs at DEBUG:
those loggers stay quiet unless someone turns them up (``experta.watch()``).
"""

from __future__ import annotations

import collections
import collections.abc
import logging

_ALIASES = ("Mapping", "MutableMapping", "Sequence", "Iterable", "Hashable", "Callable")


def _import_experta():  # type: ignore[no-untyped-def]
    added = [name for name in _ALIASES if not hasattr(collections, name)]
    for name in added:
        setattr(collections, name, getattr(collections.abc, name))
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import experta
    finally:
        for name in added:
            delattr(collections, name)
        root.handlers[:] = handlers
        root.setLevel(level)
    watchers = logging.getLogger("experta.watchers")
    if watchers.level == logging.NOTSET:
        watchers.setLevel(logging.WARNING)
    return experta


experta = _import_experta()
