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
    as good there and better on the first; that one is named as what beats
    it. Each beaten option's ``depth``: how long the longest chain of options
    beating one another down to it is (1: only unbeaten ones beat it), so
    that an option ranks after every option that beats it."""
    depths = _depths([(keys[0], keys[1]) for keys, _ in keyed])
    best: tuple[list[tuple[bool, Any]], dict[str, Any]] | None = None
    for (keys, option), depth in zip(keyed, depths, strict=True):
        if best is not None and (best[0][1] < keys[1] or (best[0][1] == keys[1] and best[0][0] < keys[0])):
            by = best[1]
            yield {"gpu": option["gpu"], "by_gpu": by["gpu"], "by_count": by["count"],
                   "by_total_cost": by["total_cost"], "by_hours": by["hours"], "depth": depth}
        if best is None or (keys[1], keys[0]) < (best[0][1], best[0][0]):
            best = (keys, option)


def _depths(points: list[tuple[Any, Any]]) -> list[int]:
    """For points sorted by (first, second): the longest chain of points each
    beating the next (no worse on both, better on one) that ends at each
    one; 0 where none beats it. One pass in that order, with a tree of
    prefix maxima over the second values (a Fenwick tree): n log n."""
    seconds = sorted({second for _, second in points})
    rank = {value: i + 1 for i, value in enumerate(seconds)}
    tree = [0] * (len(seconds) + 1)

    def best_up_to(i: int) -> int:   # the deepest point so far with a second value of rank <= i
        found = 0
        while i > 0:
            found, i = max(found, tree[i]), i - (i & -i)
        return found

    def note(i: int, depth: int) -> None:
        while i < len(tree):
            tree[i], i = max(tree[i], depth), i + (i & -i)

    depths = [0] * len(points)
    start = 0
    while start < len(points):
        end = start   # the points of one first value, [start, end), in the order of their second
        while end < len(points) and points[end][0] == points[start][0]:
            end += 1
        within, level = 0, start   # beaten within the group: by one with a lower second value
        for i in range(start, end):
            if points[i][1] != points[level][1]:
                within = max([within] + [depths[j] + 1 for j in range(level, i)])
                level = i
            # beaten from before the group: a lower first value, no higher second value
            depths[i] = max(within, best_up_to(rank[points[i][1]]))
        for i in range(start, end):
            note(rank[points[i][1]], depths[i] + 1)
        start = end
    return depths


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
