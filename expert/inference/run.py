"""The working record of one consultation: the ``Run`` (the requirement, the
cards, the candidates and options, the ranking, the pick) and its firings
(``Firing``: each fired activation with the facts it matched and declared);
and the conclusions that stand once overriding rules have fired.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..knowledge import Card as CardDef
from ..knowledge import KnowledgeBase, RuleDef


@dataclass
class Firing:
    """One fired activation: the rule, the facts it matched (with the rule
    that declared each) and the facts it declared."""

    rule: RuleDef
    gpu: str | None
    matched: list[dict[str, Any]]
    derived: list[dict[str, Any]]
    env: dict[str, Any]


@dataclass
class Run:
    """The working record of one consultation: what the rules concluded, read
    from working memory once the run is over (``infer``), and the firings."""

    kb: KnowledgeBase
    profile: dict[str, Any]
    basis: str = "checked"
    req: dict[str, Any] | None = None
    cards: dict[str, CardDef] = field(default_factory=dict)
    candidates: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    conclusions: list[tuple[RuleDef, str | None]] = field(default_factory=list)
    ranking: list[str] = field(default_factory=list)
    pick: dict[str, Any] | None = None
    firings: list[Firing] = field(default_factory=list)
    origin: dict[int, str] = field(default_factory=dict)   # fact id -> the rule that declared it
    # The facts about one card by (namespace, gpu) (a verdict's by (namespace, gpu, rule)): the
    # working memory's index, so that an action modifies or retracts the one it means.
    ids: dict[tuple[str | None, ...], int] = field(default_factory=dict, repr=False)
    fired: set[tuple[str, str | None]] = field(default_factory=set, repr=False)   # the conclusions drawn
    plains: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)
    card_ids: dict[str, int] = field(default_factory=dict, repr=False)   # card id -> its fact id
    # The configurations sized so far, with the fields each read (sizing.Sizer: the same one sized again
    # is read back; the profile, requirement and basis are the run's).
    sized: dict[tuple[Any, ...], Any] = field(default_factory=dict, repr=False)
    # The work the run did: the facts declared into working memory, the pairs of
    # facts the Rete network's joins tried (and len(firings), the rules fired).
    declared: int = 0
    compared: int = 0

    def __post_init__(self) -> None:
        self.positions = {card.id: i for i, card in enumerate(self.kb.catalog)}
        self.overriders: dict[str, list[str]] = {}   # rule id -> the rules that override it
        for rule in self.kb.rules:
            for other in rule.overrides:
                self.overriders.setdefault(other, []).append(rule.id)
        self.demotions = [rule.id for rule in self.kb.rules if rule.kind == "demote"]

    def overridden(self, rule_id: str, gpu: str | None) -> bool:
        """Did a rule that overrides ``rule_id`` conclude on the same card?"""
        return any((other, gpu) in self.fired for other in self.overriders.get(rule_id, ()))

    def plain(self, fact: Any) -> dict[str, Any]:
        """A declared fact's fields as a plain dict (made once per fact: facts never change)."""
        key = fact["__factid__"]
        if key not in self.plains:
            self.plains[key] = _plain(fact)
        return self.plains[key]

    def order(self, gpu: str | None) -> int:
        if gpu is None or gpu == "own":
            return -1
        return self.positions.get(gpu, len(self.positions))

    def sorted_firings(self) -> list[Firing]:
        """The firings as a trace reads them: by stage, then by rule (rules.toml's order), then by card;
        but the configuration ladder (the configure rules, from the first proposal to the last trial)
        card by card, each card's steps in the order it climbed them. A ladder goes back to an earlier
        stage's rule when a step fails (a shard that no count of cards holds, then offload), so the
        rules' order would read a later step that fitted before an earlier one that did not. The
        engine's order of firing is the same under any hash seed (tests/test_embedding.py)."""
        position = {id(firing): i for i, firing in enumerate(self.firings)}
        ladder = min(((rule.rank, rule.index) for rule in self.kb.rules if rule.kind == "configure"), default=(0, 0))

        def key(f: Firing) -> tuple[Any, ...]:
            if f.rule.kind == "configure":
                return (*ladder, self.order(f.gpu), position[id(f)], [])
            # (a rule that compares two options fires once per pair: the other card orders those)
            return (f.rule.rank, f.rule.index, self.order(f.gpu), 0, [
                self.order(m["values"]["gpu"]) for m in f.matched if "gpu" in m["values"]])

        return sorted(self.firings, key=key)


def _plain(fact: Any) -> dict[str, Any]:
    return {k: (v if type(v) in _SCALARS else _thawed(v)) for k, v in fact.items()
            if isinstance(k, str) and not k.startswith("__")}


_SCALARS = {str, int, float, bool, type(None)}


def _thawed(value: Any) -> Any:
    # experta freezes lists and dicts it is given; the rest of the package reads plain ones.
    if isinstance(value, Mapping):
        return {k: _thawed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thawed(v) for v in value]
    return value


def effective(conclusions: list[tuple[RuleDef, str | None]]) -> list[tuple[RuleDef, str | None]]:
    """The conclusions that stand: a rule's conclusion is dropped when a rule
    that ``overrides`` it fired on the same card (or both on none)."""
    fired = {(rule.id, gpu) for rule, gpu in conclusions}
    overridden = {(other, gpu) for rule, gpu in conclusions for other in rule.overrides}
    return [(rule, gpu) for rule, gpu in conclusions if (rule.id, gpu) not in overridden or (rule.id, gpu) not in fired]
