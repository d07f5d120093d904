"""The facts of working memory: a class per kind of fact (``Profile``,
``Requirement``, ``Card``, ``Candidate``, ``Trial``, ``Option``, ``Verdict``,
``Standing``, ``Market``, ``Beaten``, ``Weight``, ``Ranking``, ``Pick``), the namespace the rules name each by, what each kind of rule
declares, and the stage and salience that order the rules.
"""

from __future__ import annotations

from .._vendor import experta
from ..knowledge import LARGER_BATCH, OFF_LADDER, SCALE_OUT, SPEED_UP, TRIAL_STEPS, RuleDef
from ..knowledge.conditions import FIELDS
from ..knowledge.records import PRECISION_KEPT, PRECISION_UP, SCALE_TRIAL_STEPS, SPEED_TRIAL_STEPS

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
# The stage of the rules over the trials of scaling out: after scale-out, so that
# the trace reads in the order the counts were tried.
SCALE_TRIAL = "scale-trial"
# ... and those over the trials of speeding up, after speed-up.
SPEED_TRIAL = "speed-trial"
# What each kind of rule declares (derive rules: what their helper declares).
DECLARES = {"requirement": "req", "own-card": "card", "propose": "candidate", "configure": "candidate",
            "trial": "candidate", SCALE_TRIAL: "candidate", SPEED_TRIAL: "candidate",
            "option": "option", "standing": "standing", "market": "market", "beaten": "beaten", "rank": "weight",
            "order": "ranking", "pick": "pick", "no-pick": "pick"}
SALIENCE = {"requirement": 100, "own-card": 95, "propose": 90, "configure": 85, "trial": 84, LARGER_BATCH: 83, SPEED_UP: 82, PRECISION_UP: 82, PRECISION_KEPT: 82,
            SPEED_TRIAL: 81, SCALE_OUT: 80, SCALE_TRIAL: 79,
            "option": 75,
            "reject": 60, "standing": 59, "market": 57, "beaten": 56, "demote": 55, "prefer": 50,
            "rank": 46, "order": 45, "pick": 30, "no-pick": 30, "advice": 20, "warning": 10}
INPUT = "input"


def stage(rule: RuleDef) -> str:
    if rule.kind == "derive":
        return str(rule.derive)
    if rule.kind == "configure":
        if rule.step in SCALE_TRIAL_STEPS:
            return SCALE_TRIAL
        if rule.step in SPEED_TRIAL_STEPS:
            return SPEED_TRIAL
        if rule.step in TRIAL_STEPS:
            return "trial"
        return str(rule.step) if rule.step in OFF_LADDER else ("propose" if rule.proposes else "configure")
    return rule.kind


def salience(rule: RuleDef) -> int:
    return SALIENCE[stage(rule)]
