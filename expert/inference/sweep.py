"""The arithmetic of the rules that collect (rules.toml: market, beaten,
order), over what they collected, already in the order of their ``by`` keys:
one pass each, so that their cost grows with the number of options, not with
its square (no join of every option with every other).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# What a rule that collects gets: each fact it read, with the values of its
# `by` keys for that fact (each key as (no value, value): what has none sorts last).
Keyed = list[tuple[list[tuple[bool, Any]], dict[str, Any]]]


def beaten(keyed: Keyed) -> Iterator[dict[str, Any]]:
    """The options another beats on the first two keys (money and time):
    no worse on both, better on one. In the order of the keys (the first,
    then the second, ascending), an option is beaten exactly when the best
    on the second key of those before it is better on the second key, or
    as good there and better on the first; that one is named as what beats it."""
    best: tuple[list[tuple[bool, Any]], dict[str, Any]] | None = None
    for keys, option in keyed:
        if best is not None and (best[0][1] < keys[1] or (best[0][1] == keys[1] and best[0][0] < keys[0])):
            by = best[1]
            yield {"gpu": option["gpu"], "by_gpu": by["gpu"], "by_count": by["count"],
                   "by_total_cost": by["total_cost"], "by_hours": by["hours"]}
        if best is None or (keys[1], keys[0]) < (best[0][1], best[0][0]):
            best = (keys, option)


def ranking(keyed: Keyed) -> dict[str, Any]:
    """The order the keys put the weighed options in, and its first two."""
    order = [weight for _, weight in keyed]
    ranked: dict[str, Any] = {"order": [weight["gpu"] for weight in order], "options": len(order)}
    for i, which in enumerate(("first", "second")):
        weight = order[i] if i < len(order) else None
        for name in ("gpu", "count", "where", "total_vram_gb", "score", "demotion"):
            ranked[f"{which}_{name}"] = None if weight is None else weight[name]
    first, second = ranked["first_score"], ranked["second_score"]
    ranked["margin"] = (second / first) if second is not None and first else None
    return ranked
