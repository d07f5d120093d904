"""The facts of working memory: a class per kind of fact (``Profile``,
``Requirement``, ``Card``, ``Candidate``, ``Trial``, ``Option``, ``Verdict``,
``Standing``, ``Market``, ``Beaten``, ``Weight``, ``Ranking``, ``Pick``) and
the namespace the rules name each by. What each rule declares is its action's
(:mod:`.actions`); the order the rules fire in is the stages' (rules.toml).
"""

from __future__ import annotations

from .._vendor import experta
from ..knowledge.conditions import FIELDS

Fact = experta.Fact


class Profile(Fact):  # type: ignore[misc,valid-type]
    """The person's answers, after defaults."""


class Requirement(Fact):  # type: ignore[misc,valid-type]
    """What the guide says the run needs."""


class Card(Fact):  # type: ignore[misc,valid-type]
    """A GPU that can be configured: a catalog card or the person's own."""


class Candidate(Fact):  # type: ignore[misc,valid-type]
    """One configuration of one card, proposed by a configuration rule."""


class Trial(Fact):  # type: ignore[misc,valid-type]
    """One count of cards tried for a ladder step, before the rules over trials settle it."""


class Option(Fact):  # type: ignore[misc,valid-type]
    """The configuration that stands for a card."""


class Verdict(Fact):  # type: ignore[misc,valid-type]
    """A ruling on one card's option (reject, demote or prefer), consumed by the ranking."""


class Standing(Fact):  # type: ignore[misc,valid-type]
    """An option no reject verdict ruled out, with its card's place in the catalog."""


class Market(Fact):  # type: ignore[misc,valid-type]
    """The cheapest rented option that fits, the mark a low budget holds the others to."""


class Beaten(Fact):  # type: ignore[misc,valid-type]
    """An option another beats on both money and time, and the first that does."""


class Weight(Fact):  # type: ignore[misc,valid-type]
    """What the ranking compares of a standing option, once every verdict is on it."""


class Ranking(Fact):  # type: ignore[misc,valid-type]
    """The order the ordering rule put the weighed options in."""


class Pick(Fact):  # type: ignore[misc,valid-type]
    """The best option, or found=False."""


FACT_CLASSES = {"profile": Profile, "req": Requirement, "card": Card, "candidate": Candidate, "trial": Trial,
                "option": Option, "verdict": Verdict, "standing": Standing, "market": Market, "beaten": Beaten,
                "weight": Weight, "ranking": Ranking, "pick": Pick}
VERDICTS = ("reject", "demote", "prefer")
# What the options that stand are compared by (conditions.FIELDS): a standing
# option's fields, and those of its weight in the ranking.
STANDING_FIELDS = tuple(name for name in FIELDS["standing"] if name != "order")
WEIGHT_FIELDS = ("gpu", "count", "where", "total_vram_gb", "hours", "total_cost", "devices", "order")
INPUT = "input"

