"""Provisional consultations: what a question's ``ask_if`` reads before the
consultation is over (the answers so far, the defaults for the rest, and
the requirement and pick the rules conclude from them), kept per knowledge
base so that an answer that leaves the profile as it was costs no run of
the rules. No click in here; used by :mod:`expert.interfaces.consultation`.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..application import run_rules
from ..i18n import Localizer
from ..input import profile as profile_module

# What the questions read of provisional consultations, kept per knowledge base
# (the object, not its files) for as long as it lives: see _Store.
PROVISIONAL_KEPT = 64        # the provisional consultations kept per knowledge base


class _Store:
    """The provisional consultations of one knowledge base, as the questions
    read them: the requirement and pick of the last
    ``PROVISIONAL_KEPT`` profiles (a few small dicts each, not the runs), and
    which answers the rules' helpers read (:func:`helper_reads`).
    An answer that leaves the profile as it was (the default, taken with
    Enter) then costs no run of the rules, nor does the same profile reached
    again (a consultation restored from saved state, "back")."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.envs: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.helper_reads: dict[str, set[str]] | None = None


class Env(Mapping[str, Any]):
    """A provisional consultation as an ``ask_if`` reads it: ``profile`` (the
    answers so far and the defaults), then ``req`` and ``pick``, concluded by
    the rules only if the condition reads them ("profile.deadline_h is not
    None or pick.hours >= 4" with a deadline given runs nothing)."""

    def __init__(self, profile: dict[str, Any], concluded: Callable[[], dict[str, Any]]) -> None:
        self.profile, self._concluded = profile, concluded
        self._made: dict[str, Any] | None = None

    def __getitem__(self, key: str) -> Any:
        if key == "profile":
            return self.profile
        if self._made is None:
            self._made = self._concluded()
        return self._made[key]

    def __iter__(self) -> Iterator[str]:
        return iter(("profile", "req", "pick"))

    def __len__(self) -> int:
        return 3


# id(kb) -> its store, removed when the knowledge base is collected (weakref.finalize), so
# that an id Python gives a later object never finds another knowledge base's store.
_BY_KB: dict[int, _Store] = {}
_BY_KB_LOCK = threading.Lock()


def store_of(kb: Any) -> _Store:
    """The provisional consultations kept for ``kb``, while it lives."""
    with _BY_KB_LOCK:
        store = _BY_KB.get(id(kb))
        if store is None:
            store = _BY_KB[id(kb)] = _Store()
            weakref.finalize(kb, _BY_KB.pop, id(kb), None)
        return store


def helper_reads(kb: Any, defaults: dict[str, Any], tr: Localizer) -> dict[str, set[str]]:
    """The rules whose helper reads each answer, as recorded in a
    consultation of the defaults (once per knowledge base, while it lives:
    the helpers are Python, their reads are seen, not declared)."""
    store = store_of(kb)
    with store.lock:
        reads = store.helper_reads
    if reads is None:
        reads = {}
        profile, _ = profile_module.build(kb, defaults, tr)
        for firing in run_rules(kb, profile).firings:
            for matched in firing.matched:
                if matched["fact"] == "profile":
                    for name in matched["values"]:
                        reads.setdefault(name, set()).add(firing.rule.id)
        with store.lock:
            store.helper_reads = reads
    return reads


def env(kb: Any, given: dict[str, Any], tr: Localizer) -> Env:
    """What a question's ``ask_if`` reads of the provisional consultation
    of the answers ``given``: the profile at once; the requirement and the
    pick from a run of the rules, made when a condition first reads them,
    once per profile (see _Store)."""
    profile, _ = profile_module.build(kb, given, tr)

    def concluded() -> dict[str, Any]:
        key = repr(sorted(profile.items()))
        store = store_of(kb)
        with store.lock:
            found = store.envs.get(key)
            if found is not None:
                store.envs.move_to_end(key)
                return found
        run = run_rules(kb, profile)
        found = {"req": run.req or {}, "pick": run.pick or {}}
        with store.lock:
            store.envs[key] = found
            while len(store.envs) > PROVISIONAL_KEPT:
                store.envs.popitem(last=False)
        return found

    return Env(profile, concluded)
